"""What models cost per token, for ``get_cost()``, ``turn.cost``, ``token_usage()`` and
``list_models()``: each provider's table (its class's ``prices``, found through the
registry), and the prices a user set.

Prices change without notice: treat every cost as an estimate, and give a model the
table lacks (or a price that changed) with :func:`set_token_price`.

Three prices per model, as chatlas keeps them: input, output and cached input (a cache
read). A cache write costs the input price times 1.25 (5-minute cache) or 2 (1-hour
cache); the turn's ``tokens`` already count writes at that multiplier, so the input
price prices them. Long-context and batch discounts are not modelled.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping

from ._anthropic.prices import PRICES_TAKEN
from ._registry import provider_class
from ._types import TokenPrice

__all__ = [
    "PRICES_TAKEN",
    "TokenPrice",
    "get_token_price",
    "set_token_price",
    "token_cost",
]


_custom: dict[tuple[str, str], TokenPrice] = {}
# Each model's price once looked up: a turn's cost is one dict read (set_token_price clears it).
_resolved: dict[tuple[str, str], TokenPrice | None] = {}
_lock = threading.Lock()
_DATED = re.compile(r"-(\d{8}|latest)$")


def set_token_price(
    model: str,
    *,
    input: float,
    output: float,
    cached_input: float = 0.0,
    provider: str = "anthropic",
) -> None:
    """Price ``model`` (USD per million tokens) for costs from now on in this process.

    For a model the table lacks, or a price that changed since ``PRICES_TAKEN``. Turns
    already made keep the cost they were given.

    Examples
    --------
    ```python
    set_token_price("claude-new-model", input=3.0, output=15.0, cached_input=0.3)
    ```
    """
    if min(input, output, cached_input) < 0:
        raise ValueError("token prices cannot be negative")
    with _lock:
        _custom[(provider.lower(), model)] = TokenPrice(
            float(input), float(output), float(cached_input)
        )
        _resolved.clear()


def get_token_price(model: str, provider: str = "anthropic") -> TokenPrice | None:
    """The prices of ``model``, or None when neither the table nor ``set_token_price`` has it.

    A dated model id (``claude-haiku-4-5-20251001``) or a ``-latest`` alias costs what its
    model does.
    """
    key = (provider, model)
    try:
        return _resolved[key]
    except KeyError:
        pass
    provider = provider.lower()
    undated = _DATED.sub("", model)
    cls = provider_class(provider)
    table: Mapping[str, TokenPrice] = cls.prices if cls is not None else {}
    with _lock:
        custom = _custom.get((provider, model)) or _custom.get((provider, undated))
        price = custom or table.get(model) or table.get(undated)
        _resolved[key] = price
    return price


def token_cost(provider: str, model: str, tokens: tuple[int, int, int]) -> float | None:
    """The cost in USD of chatlas's ``(input, output, cached)`` tokens, if ``model`` is priced."""
    price = get_token_price(model, provider)
    if price is None:
        return None
    # Each count times its price per token, summed in this order (chatlas's figures).
    return (
        tokens[0] * (price.input / 1e6)
        + tokens[1] * (price.output / 1e6)
        + tokens[2] * (price.cached_input / 1e6)
    )
