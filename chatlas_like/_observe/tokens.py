"""Token usage of this process, per provider and model (the model that answered)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal, TypedDict

from .._core.turn import Tokens, Usage

__all__ = [
    "ModelUsage",
    "TokenUsage",
    "TokensDict",
    "format_tokens",
    "record_usage",
    "reset_token_usage",
    "token_usage",
]

_lock = threading.Lock()


@dataclass(slots=True)
class _Totals:
    usage: Usage
    tokens: Tokens
    cost: float | None


_usage: dict[tuple[str, str], _Totals] = {}


class TokenUsage(TypedDict):
    """Tokens one model used in this process (chatlas's ``TokenUsage``, and one key more).

    ``input``, ``output`` and ``cached_input`` add up the turns' ``tokens`` as chatlas
    counts them: ``input`` includes cache writes at their price multiplier, and
    ``cached_input`` is what was read from the prompt cache. ``cache_creation`` counts
    the tokens written to the cache. ``cost`` is in USD, None when no price is known
    for the model (see :func:`~chatlas_like.set_token_price`).
    """

    name: str
    model: str
    input: int
    output: int
    cached_input: int
    cache_creation: int
    cost: float | None


ModelUsage = TokenUsage
"""The earlier name of :class:`TokenUsage`."""


class TokensDict(TypedDict):
    """One turn's tokens, as ``Chat.get_tokens()`` reports them (chatlas's shape).

    ``tokens`` is what is new in the turn, ``tokens_total`` all that was sent (user) or
    produced (assistant), ``tokens_cached`` the input read from the prompt cache.
    """

    role: Literal["user", "assistant"]
    tokens: int
    tokens_cached: int
    tokens_total: int


def format_tokens(tokens: Tokens | None, cost: float | None) -> str:
    """``input=12+3 output=5 cost=$0.0001`` (cached input after the ``+``), or ""."""
    if tokens is None:
        return ""
    text = f"input={tokens[0]}" + (f"+{tokens[2]}" if tokens[2] else "")
    text += f" output={tokens[1]}"
    return text + (f" cost=${cost:.4f}" if cost is not None else "")


def record_usage(
    provider: str, model: str, usage: Usage, tokens: Tokens, cost: float | None
) -> None:
    """Add one call's tokens and cost to the process's totals."""
    with _lock:
        key = (provider, model)
        seen = _usage.get(key)
        if seen is None:
            _usage[key] = _Totals(usage, tokens, cost)
            return
        seen.usage = seen.usage + usage
        seen.tokens = (
            seen.tokens[0] + tokens[0],
            seen.tokens[1] + tokens[1],
            seen.tokens[2] + tokens[2],
        )
        if cost is not None:
            seen.cost = cost if seen.cost is None else seen.cost + cost


def token_usage() -> list[TokenUsage] | None:
    """Tokens used in this process, one entry per provider and model.

    Returns
    -------
    list[TokenUsage] | None
        Per model, in the order first used, with its cost where the price is known;
        None when nothing was sent yet (as chatlas).
    """
    with _lock:
        items = [(key, _Totals(t.usage, t.tokens, t.cost)) for key, t in _usage.items()]
    if not items:
        return None
    return [
        TokenUsage(
            name=provider,
            model=model,
            input=t.tokens[0],
            output=t.tokens[1],
            cached_input=t.tokens[2],
            cache_creation=t.usage.cache_creation,
            cost=t.cost,
        )
        for (provider, model), t in items
    ]


def reset_token_usage() -> None:
    """Forget the process's token totals."""
    with _lock:
        _usage.clear()
