"""Anthropic's published prices, per model, in USD per million tokens.

Our own table, taken on ``PRICES_TAKEN`` from Anthropic's pricing page and model pages.
Three prices per model, as chatlas keeps them: input, output and cached input (a cache
read). A cache write costs the input price times 1.25 (5-minute cache) or 2 (1-hour
cache); the turn's ``tokens`` already count writes at that multiplier, so the input
price prices them. Long-context and batch discounts are not modelled.
"""

from __future__ import annotations

from .._types import TokenPrice

__all__ = ["ANTHROPIC_PRICES", "PRICES_TAKEN"]

PRICES_TAKEN = "2026-12-01"

_OPUS_4 = TokenPrice(15.0, 75.0, 1.5)
_OPUS_4_5 = TokenPrice(5.0, 25.0, 0.5)
_SONNET = TokenPrice(3.0, 15.0, 0.3)
_SONNET_5 = TokenPrice(2.0, 10.0, 0.2)
_FABLE_5 = TokenPrice(10.0, 50.0, 1.0)
_FABLE_5_1 = TokenPrice(10.0, 50.0, 0.25)

ANTHROPIC_PRICES: dict[str, TokenPrice] = {
    "claude-fable-5-1": _FABLE_5_1,
    "claude-mythos-5-1": _FABLE_5_1,
    "claude-fable-5": _FABLE_5,
    "claude-mythos-5": _FABLE_5,
    "claude-mythos-preview": _FABLE_5,
    "claude-opus-5-5": TokenPrice(4.0, 20.0, 0.2),
    "claude-opus-5": _OPUS_4_5,
    "claude-opus-4-8": _OPUS_4_5,
    "claude-opus-4-7": _OPUS_4_5,
    "claude-opus-4-6": _OPUS_4_5,
    "claude-opus-4-5": _OPUS_4_5,
    "claude-opus-4-1": _OPUS_4,
    "claude-opus-4-0": _OPUS_4,
    "claude-opus-4": _OPUS_4,
    "claude-3-opus": _OPUS_4,
    "claude-sonnet-5-5": _SONNET_5,
    "claude-sonnet-5": _SONNET_5,
    "claude-sonnet-4-6": _SONNET,
    "claude-sonnet-4-5": _SONNET,
    "claude-sonnet-4-0": _SONNET,
    "claude-sonnet-4": _SONNET,
    "claude-3-7-sonnet": _SONNET,
    "claude-3-5-sonnet": _SONNET,
    # Haiku 5.5 below 100,000 prompt tokens; longer prompts cost five times as much.
    "claude-haiku-5-5": TokenPrice(0.10, 0.50, 0.01),
    "claude-haiku-4-5": TokenPrice(1.0, 5.0, 0.1),
    "claude-3-5-haiku": TokenPrice(0.8, 4.0, 0.08),
    "claude-3-haiku": TokenPrice(0.25, 1.25, 0.03),
}
