"""What a durable turn records, as plain data: prompts, turns, tool results, errors, items.

Everything a step returns or a workflow takes is plain data (dicts, lists, strings,
numbers), so what is stored never depends on our class layout when it is read back.
Turns and content use the chat file's JSON shape (:mod:`chatlas_like._persist.serialize`):
a tool result is recorded as the model reads it (its model-facing value, outcome and
request), the same form whether the run goes on live or is replayed after a crash.
An error is recorded as its class's name, its scrubbed message and a provider error's
status, never as a pickle: a key quoted by a provider's refusal is not saved, and
reading a row back runs no code it names.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, cast

from .._core.content import Content
from .._core.errors import ChatlasLikeError, ProviderError
from .._core.redact import safe_error_message
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


def encode_error(error: BaseException) -> dict[str, Any]:
    """``error`` as plain data: where its class lives, its message (secrets, paths and
    tracebacks scrubbed) and, for a provider error, what the provider said of it."""
    cls = type(error)
    data: dict[str, Any] = {
        "module": cls.__module__,
        "type": cls.__qualname__,
        "message": safe_error_message(error),
    }
    if isinstance(error, ProviderError):
        data.update({name: getattr(error, name) for name in _PROVIDER_FIELDS})
    return data


_PROVIDER_FIELDS = ("status_code", "retry_after", "error_type")


def decode_error(data: Any) -> BaseException:
    """The error ``data`` records: of its own class when that class is loaded in this
    process (nothing is imported for a row), otherwise a :class:`ChatlasLikeError`
    naming it. Only the message and a provider error's fields are restored."""
    if not isinstance(data, dict):  # an older version recorded a pickle: never unpickled
        return ChatlasLikeError("the turn failed; its error was recorded in an older format")
    data = cast("dict[str, Any]", data)
    name, message = str(data.get("type", "Exception")), str(data.get("message", ""))
    cls = _loaded_class(str(data.get("module", "")), name)
    error: BaseException | None = None
    if cls is not None:
        try:
            error = cls.__new__(cls, message)
            BaseException.__init__(error, *([message] if message else []))
        except Exception:  # a class whose construction needs more than a message
            error = None
    if error is None:
        return ChatlasLikeError(f"{name}: {message}" if message else name)
    if isinstance(error, ProviderError):
        error.message = message
        for field in _PROVIDER_FIELDS:
            setattr(error, field, data.get(field))
    return error


def _loaded_class(module: str, qualname: str) -> type[BaseException] | None:
    found: Any = sys.modules.get(module)
    for part in qualname.split("."):
        if found is None or part.startswith("<"):
            return None
        found = getattr(found, part, None)
    if isinstance(found, type) and issubclass(found, BaseException):
        return found
    return None
