"""What a durable turn records, as plain data: prompts, turns, tool results, errors, items.

Everything a step returns or a workflow takes is plain data (dicts, lists, strings,
numbers), so what is stored never depends on our class layout when it is read back.
Turns and content use the chat file's JSON shape (:mod:`chatlas_like._persist.serialize`):
a tool result is recorded as the model reads it (its model-facing value, outcome and
request), the same form whether the run goes on live or is replayed after a crash.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any, cast

from .._core.content import Content
from .._core.errors import ChatlasLikeError
from .._core.tool_result import ContentToolResult
from .._core.turn import Turn
from .._persist.serialize import content_from_data, content_to_data, turns_from_data, turns_to_data

__all__ = [
    "decode_error",
    "decode_item",
    "decode_prompt",
    "decode_result",
    "decode_turns",
    "encode_error",
    "encode_item",
    "encode_prompt",
    "encode_result",
    "encode_turns",
]


def encode_prompt(args: Sequence[Content | str]) -> list[Any]:
    """A prompt's parts: strings as they are, content objects as data."""
    return [a if isinstance(a, str) else content_to_data(a) for a in args]


def decode_prompt(data: Sequence[Any]) -> list[Content | str]:
    return [a if isinstance(a, str) else content_from_data(a) for a in data]


def encode_turns(turns: Sequence[Turn]) -> dict[str, Any]:
    return turns_to_data(turns)


def decode_turns(data: Any) -> list[Turn]:
    return turns_from_data(data)


def encode_result(result: ContentToolResult) -> dict[str, Any]:
    """A tool result as the model reads it (the value computed once, here)."""
    return content_to_data(result)


def decode_result(data: dict[str, Any]) -> ContentToolResult:
    return cast(ContentToolResult, content_from_data(data))


def encode_item(item: Any) -> Any:
    """A streamed item (a text chunk or a content object) for a durable stream."""
    return item if isinstance(item, str) else content_to_data(item)


def decode_item(data: Any) -> Any:
    return data if isinstance(data, str) else content_from_data(data)


def encode_error(error: BaseException) -> bytes:
    """``error`` as bytes that give back the same exception type, or a
    :class:`ChatlasLikeError` with its message when it cannot be pickled."""
    try:
        data = pickle.dumps(error)
        pickle.loads(data)  # an exception whose __init__ needs more than its args fails here
    except Exception:
        data = pickle.dumps(ChatlasLikeError(f"{type(error).__name__}: {error}"))
    return data


def decode_error(data: bytes) -> BaseException:
    error = pickle.loads(data)
    if not isinstance(error, BaseException):
        return ChatlasLikeError(repr(error))
    return error
