"""Token usage of this process, per provider and model."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ._turn import TokenUsage

__all__ = ["ModelUsage", "record_usage", "reset_token_usage", "token_usage"]

_lock = threading.Lock()
_usage: dict[tuple[str, str], TokenUsage] = {}


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """Tokens one model used in this process."""

    provider: str
    model: str
    tokens: TokenUsage


def record_usage(provider: str, model: str, tokens: TokenUsage) -> None:
    """Add one call's tokens to the process's totals."""
    with _lock:
        key = (provider, model)
        _usage[key] = _usage.get(key, TokenUsage()) + tokens


def token_usage() -> list[ModelUsage]:
    """Tokens used in this process, one entry per provider and model.

    Returns
    -------
    list[ModelUsage]
        Per model, in the order first used; empty when nothing was sent yet.
    """
    with _lock:
        return [ModelUsage(p, m, t) for (p, m), t in _usage.items()]


def reset_token_usage() -> None:
    """Forget the process's token totals."""
    with _lock:
        _usage.clear()
