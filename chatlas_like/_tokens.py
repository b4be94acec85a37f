"""Token usage of this process, per provider and model (the model that answered)."""

from __future__ import annotations

import threading
from typing import TypedDict

from ._turn import TokenUsage

__all__ = ["ModelUsage", "record_usage", "reset_token_usage", "token_usage"]

_lock = threading.Lock()
_usage: dict[tuple[str, str], TokenUsage] = {}


class ModelUsage(TypedDict):
    """Tokens one model used in this process (chatlas's ``TokenUsage`` keys, and more).

    ``input`` is uncached input; ``cached_input`` was read from the prompt cache and
    ``cache_creation`` written to it. ``cost`` is None: no price table is kept.
    """

    name: str
    model: str
    input: int
    output: int
    cached_input: int
    cache_creation: int
    cost: float | None


def record_usage(provider: str, model: str, tokens: TokenUsage) -> None:
    """Add one call's tokens to the process's totals."""
    with _lock:
        key = (provider, model)
        _usage[key] = _usage.get(key, TokenUsage()) + tokens


def token_usage() -> list[ModelUsage] | None:
    """Tokens used in this process, one entry per provider and model.

    Returns
    -------
    list[ModelUsage] | None
        Per model, in the order first used; None when nothing was sent yet (as chatlas).
    """
    with _lock:
        items = list(_usage.items())
    if not items:
        return None
    return [
        ModelUsage(
            name=provider,
            model=model,
            input=t.input,
            output=t.output,
            cached_input=t.cache_read,
            cache_creation=t.cache_creation,
            cost=None,
        )
        for (provider, model), t in items
    ]


def reset_token_usage() -> None:
    """Forget the process's token totals."""
    with _lock:
        _usage.clear()
