"""Answers the model did not finish as it meant to: a warning, or an error for data.

An answer cut at ``max_tokens``, cut by a full context window, or refused still goes
into the history and is handed back, with a ``UserWarning`` naming the cause (as
chatlas warns). Structured data cannot be read from such an answer, so there the cause
is raised as a ``ValueError`` instead of a confusing JSON or validation error.
"""

from __future__ import annotations

import warnings

from .callers import caller_stacklevel
from .turn import Turn

__all__ = ["INCOMPLETE", "check_finish", "incomplete_message"]

INCOMPLETE: dict[str, str] = {
    "max_tokens": (
        "The model's answer was cut off at the `max_tokens` limit: raise `max_tokens` "
        "to let it finish."
    ),
    "context_window": (
        "The model's answer was cut off: the conversation filled the model's context window."
    ),
    "content_filter": "The model declined to answer: the provider's safety filter stopped it.",
}


def incomplete_message(turn: Turn | None) -> str | None:
    """Why ``turn``'s answer is not the one the model set out to give, or None."""
    reason = turn.finish_reason if turn is not None else None
    return INCOMPLETE.get(reason) if isinstance(reason, str) else None


def check_finish(turn: Turn, *, structured: bool) -> None:
    """Warn about an unfinished answer; raise instead when data was asked for.

    Raises
    ------
    ValueError
        ``structured`` and the answer is unfinished: the data cannot be read.
    """
    message = incomplete_message(turn)
    if message is None:
        return
    if structured:
        raise ValueError(f"Data extraction failed: {message}")
    warnings.warn(message, UserWarning, stacklevel=caller_stacklevel())
