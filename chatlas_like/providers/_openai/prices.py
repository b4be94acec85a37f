"""OpenAI's published prices, per model and service tier, in USD per million tokens.

Three prices per model (input, output, cached input). A response served at the
``priority`` or ``flex`` tier costs that tier's price (its key is ``model@tier``);
``default``, ``auto`` and ``scale`` cost the standard price. Batch discounts and the
long-context surcharge are not modelled. Give a model the table lacks with
``set_token_price(model, ..., provider="openai")``.
"""

from __future__ import annotations

import re

from .._prices import token_cost
from .._types import TokenPrice

__all__ = ["OPENAI_PRICES", "tier_cost"]

_P = TokenPrice
OPENAI_PRICES: dict[str, TokenPrice] = {
    "gpt-5.6": _P(4.0, 20.0, 0.4),
    "gpt-5.6@priority": _P(8.0, 40.0, 0.8),
    "gpt-5.6@flex": _P(2.0, 10.0, 0.2),
    "gpt-5.6-terra": _P(2.0, 12.0, 0.2),
    "gpt-5.6-terra@priority": _P(4.0, 24.0, 0.4),
    "gpt-5.6-terra@flex": _P(1.0, 6.0, 0.1),
    "gpt-5.5": _P(5.0, 30.0, 0.5),
    "gpt-5.5@priority": _P(10.0, 60.0, 1.0),
    "gpt-5.5@flex": _P(2.5, 15.0, 0.25),
    "gpt-5.4": _P(2.5, 15.0, 0.25),
    "gpt-5.4@priority": _P(5.0, 30.0, 0.5),
    "gpt-5.4@flex": _P(1.25, 7.5, 0.13),
    "gpt-5.4-mini": _P(0.75, 4.5, 0.075),
    "gpt-5.4-mini@priority": _P(1.5, 9.0, 0.15),
    "gpt-5.4-mini@flex": _P(0.375, 2.25, 0.0375),
    "gpt-5": _P(1.25, 10.0, 0.125),
    "gpt-5@priority": _P(2.5, 20.0, 0.25),
    "gpt-5@flex": _P(0.625, 5.0, 0.0625),
    "gpt-5-mini": _P(0.25, 2.0, 0.025),
    "gpt-5-mini@priority": _P(0.45, 3.6, 0.045),
    "gpt-5-mini@flex": _P(0.125, 1.0, 0.0125),
    "gpt-5-nano": _P(0.05, 0.4, 0.005),
    "gpt-5-nano@flex": _P(0.025, 0.2, 0.0025),
    "gpt-4.1": _P(2.0, 8.0, 0.5),
    "gpt-4.1@priority": _P(3.5, 14.0, 0.875),
    "gpt-4.1-mini": _P(0.4, 1.6, 0.1),
    "gpt-4.1-mini@priority": _P(0.7, 2.8, 0.175),
    "gpt-4.1-nano": _P(0.1, 0.4, 0.025),
    "gpt-4.1-nano@priority": _P(0.2, 0.8, 0.05),
    "gpt-4o": _P(2.5, 10.0, 1.25),
    "gpt-4o@priority": _P(4.25, 17.0, 2.125),
    "gpt-4o-mini": _P(0.15, 0.6, 0.075),
    "gpt-4o-mini@priority": _P(0.25, 1.0, 0.125),
    "o3": _P(2.0, 8.0, 0.5),
    "o3@priority": _P(3.5, 14.0, 0.875),
    "o3@flex": _P(1.0, 4.0, 0.25),
    "o4-mini": _P(1.1, 4.4, 0.275),
    "o4-mini@priority": _P(2.0, 8.0, 0.5),
    "o4-mini@flex": _P(0.55, 2.2, 0.1375),
}
_DATED = re.compile(r"-\d{4}-\d{2}-\d{2}$")  # gpt-5.4-2026-03-05 costs what gpt-5.4 does
_TIERS = ("priority", "flex")


def tier_cost(provider: str, model: str, tier: str, tokens: tuple[int, int, int]) -> float | None:
    """The cost of ``tokens`` of ``model`` served at ``tier`` (the response's
    ``service_tier``), falling back to the standard price."""
    undated = _DATED.sub("", model)
    if tier in _TIERS:
        cost = token_cost(provider, f"{undated}@{tier}", tokens)
        if cost is not None:
            return cost
    return token_cost(provider, undated, tokens)
