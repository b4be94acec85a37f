"""Turns to JSON and back; what is never persisted is decided here, once.

Never persisted (``NEVER_PERSISTED``): a result's ``exception`` object (``outcome``
survives, so ``is_exception`` stays true, and ``error`` comes back as a
:class:`~chatlas_like.RestoredToolError` with the type name and message; the message,
like an error given as text, is saved as :func:`~chatlas_like._core.redact.scrub` leaves
it: without paths or secrets, as the model read it), pending
``message_expansion`` requests (so a restored chat cannot insert the same material
twice), and values orjson cannot encode (a result's ``value`` when it is not plain
data, and ``extra``, dropped with one warning). What the model read of each result is
kept exactly, so a restored chat sends the same next request, byte for byte.
"""

from __future__ import annotations

import base64
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import asdict, fields
from typing import Any, cast

import orjson

from .._core.content import (
    Content,
    ContentCitation,
    ContentDocument,
    ContentImageInline,
    ContentImageRemote,
    ContentJson,
    ContentPDF,
    ContentServerToolRequest,
    ContentServerToolResult,
    ContentText,
    ContentThinking,
    ContentToolRequest,
    ContentToolRequestFetch,
    ContentToolRequestSearch,
    ContentToolResponseFetch,
    ContentToolResponseSearch,
    ContentUnknown,
    ContentUploaded,
    WebSource,
)
from .._core.errors import PersistenceError, RestoredToolError, ToolRejectError
from .._core.redact import safe_error_message
from .._core.tool_info import ToolInfo
from .._core.tool_result import ContentToolResult
from .._core.turn import Turn, Usage, make_turn
from .shape import check_fields, mismatch

__all__ = [
    "NEVER_PERSISTED",
    "TURNS_FORMAT",
    "TURNS_VERSION",
    "from_json",
    "to_json",
    "turns_from_data",
    "turns_to_data",
]

TURNS_FORMAT = "chatlas_like.turns"
TURNS_VERSION = 2
# Version 1 kept the four token counts as "tokens" and Anthropic's stop reasons.
_V1_FINISH = {"end_turn": "success", "refusal": "content_filter"}
# Fields no content type ever writes, whatever its class (a result is written field by
# field in ``_result_data``, which leaves them out too).
NEVER_PERSISTED = frozenset({"exception", "message_expansion"})

_SIMPLE: dict[str, type[Content]] = {
    cls.content_type: cls
    for cls in (
        ContentText,
        ContentJson,
        ContentImageInline,
        ContentImageRemote,
        ContentThinking,
        ContentToolRequest,
        ContentServerToolRequest,
        ContentServerToolResult,
        ContentToolRequestSearch,
        ContentToolRequestFetch,
        ContentToolResponseSearch,
        ContentToolResponseFetch,
        ContentUploaded,
        ContentUnknown,
    )
}
_BINARY: dict[str, type[Content]] = {
    ContentPDF.content_type: ContentPDF,
    ContentDocument.content_type: ContentDocument,
}


class _Warnings:
    """Collects what was dropped, to warn once per save."""

    def __init__(self) -> None:
        self.dropped: set[str] = set()


def to_json(turns: Sequence[Turn]) -> str:
    """The turns as a versioned JSON document (see the module docstring)."""
    return orjson.dumps(turns_to_data(turns)).decode()


def from_json(text: str | bytes) -> list[Turn]:
    """Turns from :func:`to_json`'s output; a clear :class:`PersistenceError` otherwise."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as e:
        raise PersistenceError(f"not a JSON document: {e}") from None
    return turns_from_data(data)


def turns_to_data(
    turns: Sequence[Turn], known_tools: Mapping[str, ToolInfo] | None = None
) -> dict[str, Any]:
    """The turns as plain data (JSON-ready).

    Each distinct :class:`ToolInfo` of the requests is written once, in ``tool_infos``,
    and requests refer to it by index; one equal to ``known_tools[name]`` (the tools a
    saved chat stores beside its turns) is referred to by its name instead.
    """
    notes = _Warnings()
    data: dict[str, Any] = {
        "format": TURNS_FORMAT,
        "version": TURNS_VERSION,
        "turns": [_turn_data(t, notes) for t in turns],
    }
    infos = _share_tool_infos(data["turns"], known_tools or {})
    if infos:
        data["tool_infos"] = infos
    if notes.dropped:
        warnings.warn(
            "Not saved (orjson cannot encode them): " + "; ".join(sorted(notes.dropped)),
            UserWarning,
            stacklevel=3,
        )
    return data


def turns_from_data(
    data: Any, known_tools: Mapping[str, ToolInfo] | None = None, *, at: str = ""
) -> list[Turn]:
    """Turns from :func:`turns_to_data`'s output (``known_tools`` as given to it).

    Every field is checked as it is read: a malformed one raises
    :class:`PersistenceError` naming it (``turns[2].contents[0]: text: expected str``),
    prefixed by ``at`` (where the document sits in a larger one).
    """

    def named(field: str) -> str:
        return f"{at}.{field}" if at else field

    if not isinstance(data, dict) or data.get("format") != TURNS_FORMAT:  # pyright: ignore[reportUnknownMemberType]
        raise PersistenceError(f"{at or 'the document'}: not a {TURNS_FORMAT} document")
    document = cast(dict[str, Any], data)
    version: Any = document.get("version")
    if not _is_int(version) or version < 1:
        raise PersistenceError(f"{named('version')}: must be a positive integer, got {version!r}")
    if version > TURNS_VERSION:
        raise PersistenceError(
            f"this document has format version {version}; this chatlas_like reads up to "
            f"version {TURNS_VERSION}: upgrade chatlas_like to load it"
        )
    turns = document.get("turns")
    if not isinstance(turns, list):
        raise PersistenceError(f"{named('turns')}: must be a list of turns")
    rows = [cast(dict[str, Any], t) for t in cast(list[Any], turns) if isinstance(t, dict)]
    with suppress(AttributeError, TypeError):  # a malformed turn: the checks below name it
        _resolve_tool_infos(rows, document.get("tool_infos"), known_tools or {})
    try:
        return [
            _turn_from(t, version, f"{named('turns')}[{i}]")
            for i, t in enumerate(cast(list[Any], turns))
        ]
    except _Malformed as e:
        raise PersistenceError(f"a turn could not be read: {e.where}: {e.problem}") from None


class _Malformed(Exception):
    """A field of a document that is not what it must be."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# -- turns ------------------------------------------------------------------------------------


def _turn_data(turn: Turn, notes: _Warnings) -> dict[str, Any]:
    data: dict[str, Any] = {
        "role": turn.role,
        "contents": [content_to_data(c, notes) for c in turn.contents],
    }
    if turn.tokens is not None:
        data["tokens"] = list(turn.tokens)
    if turn.usage is not None:
        data["usage"] = list(turn.usage)
    for key in ("finish_reason", "stop_reason", "cost", "partial_reason"):
        value = getattr(turn, key)
        if value is not None:
            data[key] = value
    if turn.completion_data:
        data["completion"] = turn.completion_data
    return data


_ROLES = ("user", "assistant", "system")
# The other fields of a turn, with the type each must have.
_TURN_FIELDS = {
    "finish_reason": "str | None",
    "stop_reason": "str | None",
    "partial_reason": "str | None",
    "cost": "float | None",
    "completion": "dict[str, Any] | None",
}


def _counts(value: Any) -> bool:
    """Whether ``value`` is a list of up to four integers (token counts)."""
    return isinstance(value, list) and len(value) <= 4 and all(_is_int(n) for n in value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]


def _turn_from(data: Any, version: int, where: str) -> Turn:
    if not isinstance(data, dict):
        raise _Malformed(where, "must be an object")
    turn_data = cast(dict[str, Any], data)
    role = turn_data.get("role")
    if role not in _ROLES:
        found = "missing" if role is None else f"got {role!r}"
        raise _Malformed(f"{where}.role", f"must be user, assistant or system ({found})")
    raw_contents = turn_data.get("contents")
    if not isinstance(raw_contents, list):
        raise _Malformed(f"{where}.contents", "must be a list of contents")
    for name in ("tokens", "usage"):
        if turn_data.get(name) is not None and not _counts(turn_data[name]):
            raise _Malformed(f"{where}.{name}", "must be a list of up to four integers")
    for name, annotation in _TURN_FIELDS.items():
        problem = mismatch(turn_data.get(name), annotation)
        if problem is not None:
            raise _Malformed(f"{where}.{name}", problem)
    contents = [
        _content_at(c, f"{where}.contents[{j}]")
        for j, c in enumerate(cast(list[Any], raw_contents))
    ]
    if role != "assistant":
        return make_turn(role, contents)
    tokens = turn_data.get("tokens")
    usage = turn_data.get("usage")
    finish = turn_data.get("finish_reason")
    if version == 1:  # "tokens" held the four counts then
        usage, tokens = tokens, None
        finish = _V1_FINISH.get(finish, finish) if isinstance(finish, str) else finish
    try:
        turn = make_turn(
            "assistant",
            contents,
            tokens=tokens,
            usage=Usage(*usage) if usage is not None else None,
            finish_reason=finish,
            stop_reason=turn_data.get("stop_reason"),
            cost=turn_data.get("cost"),
            partial_reason=turn_data.get("partial_reason"),
        )
    except (TypeError, ValueError) as e:
        raise _Malformed(where, f"{type(e).__name__}: {e}") from None
    turn.completion_data = turn_data.get("completion")
    return turn


def _content_at(data: Any, where: str) -> Content:
    try:
        return content_from_data(data)
    except (KeyError, TypeError, ValueError) as e:  # binascii.Error is a ValueError
        raise _Malformed(where, f"{type(e).__name__}: {e}") from None


# -- what each request knew of its tool, written once ------------------------------------------


def _request_data(turns: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The data of every tool request: in assistant turns and inside results."""
    for turn in turns:
        for content in turn.get("contents") or ():
            if not isinstance(content, dict):
                continue
            item = cast(dict[str, Any], content)
            if item.get("type") == ContentToolRequest.content_type:
                yield item
            request = item.get("request")
            if item.get("type") == ContentToolResult.content_type and isinstance(request, dict):
                yield cast(dict[str, Any], request)


def _share_tool_infos(
    turns: list[dict[str, Any]], known: Mapping[str, ToolInfo]
) -> list[dict[str, Any]]:
    known_data = {name: info.to_dict() for name, info in known.items()}
    table: list[dict[str, Any]] = []
    index: dict[bytes, int] = {}
    for request in _request_data(turns):
        info = request.get("tool")
        if not isinstance(info, dict):
            continue
        name = cast(dict[str, Any], info).get("name")
        if isinstance(name, str) and known_data.get(name) == info:
            request["tool"] = name
            continue
        key = orjson.dumps(info, option=orjson.OPT_SORT_KEYS)
        if key not in index:
            index[key] = len(table)
            table.append(cast(dict[str, Any], info))
        request["tool"] = index[key]
    return table


def _resolve_tool_infos(
    turns: list[dict[str, Any]], table: Any, known: Mapping[str, ToolInfo]
) -> None:
    """Refs back to ToolInfo data; one that points nowhere is dropped (it only informs)."""
    infos: list[Any] = cast(list[Any], table) if isinstance(table, list) else []
    for request in _request_data(turns):
        ref = request.get("tool")
        if isinstance(ref, bool) or ref is None or isinstance(ref, dict):
            continue
        if isinstance(ref, int) and 0 <= ref < len(infos) and isinstance(infos[ref], dict):
            request["tool"] = infos[ref]
        elif isinstance(ref, str) and ref in known:
            request["tool"] = known[ref].to_dict()
        else:
            del request["tool"]


# -- content ----------------------------------------------------------------------------------


def content_to_data(content: Content, notes: _Warnings | None = None) -> dict[str, Any]:
    """One content object as plain data."""
    notes = notes or _Warnings()
    if isinstance(content, ContentToolResult):
        return _result_data(content, notes)
    data: dict[str, Any] = {"type": content.content_type}
    for f in fields(content):
        if f.name in NEVER_PERSISTED:
            continue
        value = getattr(content, f.name)
        if isinstance(value, bytes):
            value = base64.b64encode(value).decode()
        elif isinstance(value, WebSource):
            value = asdict(value)
        elif isinstance(value, ToolInfo):
            value = value.to_dict()
        elif value is None and f.name == "tool":
            continue  # an unregistered tool's request: written as before ToolInfo existed
        data[f.name] = value
    return data


def content_from_data(data: dict[str, Any]) -> Content:
    """One content object from :func:`content_to_data`'s output.

    Raises ``TypeError`` or ``ValueError`` naming the field that is malformed.
    """
    if not isinstance(data, dict):  # pyright: ignore[reportUnnecessaryIsInstance]  # data from a file
        raise TypeError(f"a content must be an object, got {type(data).__name__}")
    kind = data.get("type")
    if not isinstance(kind, str):
        raise ValueError(f"type: must be a string, got {kind!r}")
    values = {k: v for k, v in data.items() if k != "type"}
    if kind == ContentToolResult.content_type:
        return _result_from(values)
    if kind == ContentCitation.content_type:
        source = values.get("source")
        values["source"] = (
            WebSource(**cast(dict[str, Any], source)) if isinstance(source, dict) else None
        )
        return ContentCitation(**values)
    if kind in _BINARY:
        if isinstance(values.get("data"), str):
            values["data"] = base64.b64decode(values["data"], validate=True)
        check_fields(_BINARY[kind], values)
        return _BINARY[kind](**values)
    if isinstance(values.get("tool"), dict):
        values["tool"] = ToolInfo.from_dict(values["tool"])
    elif values.get("tool") is not None:
        raise ValueError("tool: must be an object or null")
    if kind in _SIMPLE:
        check_fields(_SIMPLE[kind], values)
        return _SIMPLE[kind](**values)
    return ContentUnknown(dict(data))


def _result_data(result: ContentToolResult, notes: _Warnings) -> dict[str, Any]:
    data: dict[str, Any] = {
        "type": result.content_type,
        "outcome": result.outcome,
        "model_format": result.model_format,
        "model_value": _model_value_data(result.get_model_value(), notes),
    }
    if result.request is not None:
        data["request"] = content_to_data(result.request, notes)
    if result.error is not None:
        data["error"] = _error_data(result.error)
    value = result.value
    if value is not None and not isinstance(value, str) and _encodable(value):
        data["value"] = value
    _maybe(
        data,
        "extra",
        result.extra,
        notes,
        f"`extra` of a result of type {type(result.extra).__name__}",
    )
    if result.options:
        data["options"] = dict(result.options)
    if result.original_length is not None:
        data["original_length"] = result.original_length
        data["stored_length"] = result.stored_length
    if result.is_truncated:
        data["is_truncated"] = True
    return data


_RESULT_FIELDS = {
    "outcome": "str",
    "model_format": "str",
    "request": "dict[str, Any] | None",
    "error": "str | dict[str, Any] | None",
    "model_value": "str | dict[str, Any] | None",
    "options": "dict[str, Any] | None",
    "original_length": "int | None",
    "stored_length": "int | None",
    "is_truncated": "bool",
    "value": "Any",
    "extra": "Any",
}


def _result_from(data: dict[str, Any]) -> ContentToolResult:
    for name, value in data.items():
        annotation = _RESULT_FIELDS.get(name)
        if annotation is None:
            raise ValueError(f"{name}: not a field of a tool result")
        problem = mismatch(value, annotation)
        if problem is not None:
            raise ValueError(f"{name}: {problem}")
    request = data.get("request")
    if request is not None and request.get("type") != ContentToolRequest.content_type:
        raise ValueError("request: must be a tool request")
    model_value = _model_value_from(data.get("model_value"))
    error = data.get("error")
    result = ContentToolResult(
        value=data.get("value", model_value),
        model_format=data.get("model_format", "auto"),
        error=_error_from(error) if error is not None else None,
        extra=data.get("extra"),
        request=content_from_data(request) if request is not None else None,  # pyright: ignore[reportArgumentType]
        options=data.get("options"),
        outcome=data.get("outcome", "success"),
        original_length=data.get("original_length"),
        stored_length=data.get("stored_length"),
        is_truncated=bool(data.get("is_truncated", False)),
    )
    return result.with_model_value(model_value)


def _error_data(error: BaseException | str) -> Any:
    # Scrubbed as what the model read was: a file must not hold a secret a failure quoted.
    if isinstance(error, str):
        return safe_error_message(error)
    if isinstance(error, ToolRejectError):  # a rejection is saved as what the model read
        return safe_error_message(error.reason)
    name = error.type_name if isinstance(error, RestoredToolError) else type(error).__name__
    return {"type": name, "message": safe_error_message(error)}


def _error_from(data: Any) -> BaseException | str:
    if isinstance(data, str):
        return data
    name, message = data.get("type"), data.get("message")
    if not isinstance(name, str) or not isinstance(message, str):
        raise ValueError("error: must hold a string type and message")
    return RestoredToolError(name, message)


def _model_value_data(value: Any, notes: _Warnings) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        items: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {"items": [_item_data(item, notes) for item in items]}
    return {"items": [_item_data(value, notes)]}


def _item_data(item: Any, notes: _Warnings) -> dict[str, Any]:
    if isinstance(item, Content):
        return content_to_data(item, notes)
    if isinstance(item, (str, dict)):
        return {"type": "raw", "value": item}
    return {"type": "raw", "value": orjson.loads(orjson.dumps(item, default=str))}


def _model_value_from(data: Any) -> Any:
    if isinstance(data, str) or data is None:
        return data
    items = data.get("items")
    if not isinstance(items, list):
        raise ValueError("model_value: must hold a list of items")
    return [_item_from(item) for item in items]  # pyright: ignore[reportUnknownVariableType]


def _item_from(item: Any) -> Any:
    if not isinstance(item, dict):
        raise ValueError("model_value: every item must be an object")
    block = cast(dict[str, Any], item)
    if block.get("type") == "raw":
        return block["value"]
    return content_from_data(block)


def _encodable(value: Any) -> bool:
    try:
        orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):
        return False
    return True


def _maybe(data: dict[str, Any], key: str, value: Any, notes: _Warnings, what: str) -> None:
    if value is None:
        return
    if _encodable(value):
        data[key] = value
    else:
        notes.dropped.add(what)
