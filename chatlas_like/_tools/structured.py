"""Structured data, provider-neutral: a pydantic model's JSON Schema, and the answer back.

What a provider's API accepts of that schema is the provider's rule (Anthropic's:
:mod:`chatlas_like.providers._anthropic.schema`). The answer lives in the history as a
:class:`~chatlas_like.ContentJson`; :func:`extract_value` finds it in the last assistant
turn.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .._core.content import ContentJson
from .._core.finish import incomplete_message
from .._core.turn import Turn

__all__ = ["extract_value", "model_schema"]


def model_schema(data_model: type[Any]) -> dict[str, Any]:
    """The JSON Schema of a pydantic model class (cached per class: treat it as
    read-only); ``TypeError`` for anything else."""
    from pydantic import BaseModel

    if not (isinstance(data_model, type) and issubclass(data_model, BaseModel)):
        raise TypeError(
            f"data_model must be a pydantic BaseModel subclass, not {data_model!r}; "
            "wrap a list in a model field (e.g. `people: list[Person]`)"
        )
    return _schema_of(data_model)


@lru_cache(maxsize=256)
def _schema_of(data_model: type[Any]) -> dict[str, Any]:
    return data_model.model_json_schema()


def extract_value(turn: Turn | None) -> Any:
    """The one structured answer of an assistant turn (a ``ContentJson``'s value)."""
    unfinished = incomplete_message(turn)
    if unfinished is not None:  # the cause, not the parse error it would lead to
        raise ValueError(f"Data extraction failed: {unfinished}")
    found = [c for c in turn.contents if isinstance(c, ContentJson)] if turn is not None else []
    if len(found) != 1:
        text = turn.text.strip() if turn is not None else ""
        detail = f"; the model answered: {text[:200]!r}" if text else ""
        stop = f" (finish reason {turn.finish_reason})" if turn and turn.finish_reason else ""
        raise ValueError(
            f"Data extraction failed: {len(found)} structured results received{stop}{detail}"
        )
    return found[0].value
