"""chatlas's JSON shape for turns and contents: ``model_dump()`` and ``model_validate()``.

chatlas (pydantic models) saves a turn as ``{"contents": [...], "role": ..., "tokens":
[...], "finish_reason": ..., "cost": ..., "partial_reason": ...}`` and each content as
``{"content_type": ..., <its fields>}``; this module writes and reads that shape for
our dataclasses, so a history saved by chatlas loads here and ours loads in chatlas.

Where our content holds more than chatlas's (a text's citations, a result's outcome,
an upload's file name, the four token counts), it goes under keys chatlas does not
have, which chatlas ignores when it reads them; data chatlas wrote gives back exactly
what chatlas wrote. :func:`~chatlas_like.to_json` stays the complete format.

This module imports nothing of the package at run time: the classes to build come in
as arguments (``content_classes()``), so content and turns can call it lazily without
an import circle.
"""

from __future__ import annotations

import base64
import json
import warnings
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar, cast

import orjson

from .tool_info import ToolInfo

# Contents and turns arrive as arguments, and their classes as mappings from the caller:
# content and turns import this module (lazily), never the other way round.
Content = Any
Turn = Any

__all__ = ["dump_content", "dump_turn", "dumps", "load_content", "load_turn", "loads", "select"]

CONTENT_SENTINEL = "__chatlas_content__"
"""How chatlas tags content nested in a tool result's value."""

C = TypeVar("C")
T = TypeVar("T")

# -- text ------------------------------------------------------------------------------


def dumps(data: Any, indent: int | None) -> str:
    """JSON text: compact (as pydantic writes it), or indented."""
    if indent is None:
        return orjson.dumps(data).decode()
    return json.dumps(data, indent=indent, ensure_ascii=False)


def loads(text: str | bytes | bytearray) -> Any:
    """Parsed JSON; a ``ValueError`` naming the problem otherwise."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as e:
        raise ValueError(f"not a JSON document: {e}") from None


def select(
    data: dict[str, Any],
    include: Iterable[str] | None,
    exclude: Iterable[str] | None,
    exclude_none: bool,
) -> dict[str, Any]:
    """``data`` with only the top-level keys asked for."""
    kept = set(include) if include is not None else None
    dropped = set(exclude or ())
    return {
        k: v
        for k, v in data.items()
        if (kept is None or k in kept) and k not in dropped and not (exclude_none and v is None)
    }


# -- turns -----------------------------------------------------------------------------


def dump_turn(turn: Turn, *, json_mode: bool) -> dict[str, Any]:
    """A turn as chatlas's data."""
    data: dict[str, Any] = {
        "contents": [dump_content(c, json_mode=json_mode) for c in turn.contents],
        "role": turn.role,
    }
    if turn.role != "assistant":
        return data
    tokens = turn.tokens
    data["tokens"] = (list(tokens) if json_mode else tokens) if tokens is not None else None
    data["finish_reason"] = turn.finish_reason
    data["cost"] = turn.cost
    data["partial_reason"] = turn.partial_reason
    if turn.usage is not None:  # ours: the four counts chatlas folds into three
        data["usage"] = turn.usage._asdict()
    return data


def load_turn(
    cls: type[T],
    obj: Any,
    turn_classes: Mapping[str, type[Turn]],
    classes: Mapping[str, type[Any]],
) -> T:
    """A turn from chatlas's data, of ``cls`` or (on the base class) of its role's class."""
    data = _mapping(obj, "a turn")
    role = data.get("role")
    target: Any = turn_classes.get(role) if isinstance(role, str) else None
    if target is None:
        raise ValueError(f"a turn's role must be 'user', 'assistant' or 'system', not {role!r}")
    if not issubclass(target, cls):
        raise ValueError(f"{cls.__name__} cannot hold a turn of role {role!r}")
    raw_contents = data.get("contents", [])
    if not isinstance(raw_contents, list):
        raise ValueError("a turn's contents must be a list")
    base = classes["content"]
    contents = [load_content(base, c, classes) for c in cast(list[Any], raw_contents)]
    make: Any = target  # the role's class: UserTurn(contents), AssistantTurn(contents, ...)
    if role != "assistant":
        return make(contents)
    tokens: Any = data.get("tokens")
    usage: Any = data.get("usage")
    return make(
        contents,
        tokens=tuple(cast(list[int], tokens)) if isinstance(tokens, list | tuple) else None,
        finish_reason=data.get("finish_reason"),
        cost=data.get("cost"),
        partial_reason=data.get("partial_reason"),
        usage=_usage(classes, cast(dict[str, Any], usage)) if isinstance(usage, dict) else None,
    )


def _usage(classes: Mapping[str, type[Any]], usage: dict[str, Any]) -> Any:
    return classes["usage"](**{k: int(v) for k, v in usage.items() if isinstance(v, int)})


# -- contents ---------------------------------------------------------------------------


def dump_content(content: Content, *, json_mode: bool) -> dict[str, Any]:
    """One content object as chatlas's data."""
    kind = content.content_type
    dump = _DUMPERS.get(kind)
    if dump is None:
        raise ValueError(f"{type(content).__name__} has no chatlas form")
    data: dict[str, Any] = {"content_type": kind}
    data.update(dump(content, json_mode))
    return data


def load_content(cls: type[C], obj: Any, classes: Mapping[str, type[Any]]) -> C:
    """Content from chatlas's data, of ``cls`` (on ``Content``, the class its type names)."""
    data = _mapping(obj, "content")
    kind = data.get("content_type", getattr(cls, "content_type", None))
    target = classes.get(kind) if isinstance(kind, str) else None
    load = _LOADERS.get(kind) if isinstance(kind, str) else None
    if target is None or load is None:
        raise ValueError(f"unknown content type: {kind!r}")
    if not issubclass(target, cls):
        raise ValueError(f"{cls.__name__} cannot hold content of type {kind!r}")
    try:
        return cast(C, load(target, data, classes))
    except KeyError as e:
        raise ValueError(f"{kind} content is missing the field {e}") from None
    except TypeError as e:
        raise ValueError(f"{kind} content could not be read: {e}") from None


def _mapping(obj: Any, what: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ValueError(f"{what} must be a JSON object (a dict), not {type(obj).__name__}")
    return cast(dict[str, Any], obj)


def _b64(data: bytes | None) -> str | None:
    return base64.b64encode(data).decode() if data is not None else None


def _unb64(data: Any) -> bytes | None:
    if data is None:
        return None
    if isinstance(data, bytes):
        return data
    return base64.b64decode(str(data), validate=True)


def _text(c: Any, json_mode: bool) -> dict[str, Any]:
    data: dict[str, Any] = {"text": c.text}
    if c.extra:  # ours: e.g. the citations sent back with the text
        data["extra"] = c.extra
    return data


def _tool_request(c: Any, json_mode: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": c.id,
        "name": c.name,
        "arguments": c.arguments,
        "tool": _tool_info(getattr(c, "tool", None)),
        "extra": c.extra or {},
    }
    if c.parse_error is not None:
        data["parse_error"] = c.parse_error
    return data


def _tool_info(tool: ToolInfo | None) -> dict[str, Any] | None:
    return tool.to_dict() if tool is not None else None


def _thinking(c: Any, json_mode: bool) -> dict[str, Any]:
    extra: dict[str, Any] | None = c.extra
    if extra and extra.get("type") == "thinking":
        # chatlas keeps only the signature; the rest is the thinking itself.
        extra = {"signature": extra.get("signature", "")}
    return {"thinking": c.thinking, "extra": extra}


def _pdf(c: Any, json_mode: bool) -> dict[str, Any]:
    return {"data": _b64(c.data), "filename": c.filename, "url": c.url}


def _document(c: Any, json_mode: bool) -> dict[str, Any]:
    return {"data": _b64(c.data), "filename": c.filename, "mime_type": c.mime_type, "url": c.url}


def _uploaded(c: Any, json_mode: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": c.id,
        "mime_type": c.mime_type,
        "provider": c.provider,
        "extra": c.extra or {},
    }
    if c.filename is not None:
        data["filename"] = c.filename
    return data


def _source(source: Any) -> dict[str, Any] | None:
    if source is None:
        return None
    return {"type": source.type, "url": source.url, "title": source.title}


def _search_results(c: Any, json_mode: bool) -> dict[str, Any]:
    return {"sources": [_source(s) for s in c.sources], "extra": c.block}


def _fetch_results(c: Any, json_mode: bool) -> dict[str, Any]:
    return {"url": c.url, "status": c.status, "extra": c.block}


def _citation(c: Any, json_mode: bool) -> dict[str, Any]:
    return {
        "source": _source(c.source),
        "grounded_span": c.grounded_span,
        "cited_quote": c.cited_quote,
        "extra": c.extra,
    }


def _tool_result(c: Any, json_mode: bool) -> dict[str, Any]:
    notes: list[str] = []
    error = c.error
    data: dict[str, Any] = {
        "value": _value(c, json_mode, notes),
        "model_format": c.model_format,
        "error": str(error) if error is not None else None,
        "extra": c.extra,
        "request": dump_content(c.request, json_mode=json_mode) if c.request else None,
    }
    if json_mode and not _encodable(c.extra):
        data["extra"] = None
        notes.append(f"`extra` ({type(c.extra).__name__})")
    if c.outcome != ("success" if error is None else "error"):
        data["outcome"] = c.outcome  # ours: refused, denied and exception read back as such
    if notes:
        warnings.warn(
            "Not in the dump (no JSON form): " + "; ".join(notes), UserWarning, stacklevel=4
        )
    return data


def _value(result: Any, json_mode: bool, notes: list[str]) -> Any:
    value = _tagged(result.value, json_mode)
    if not json_mode or _encodable(value):
        return value
    # What the model read of it, which a reloaded chat sends again.
    notes.append(f"the value ({type(result.value).__name__}), saved as what the model read")
    model_value = result.get_model_value()
    return model_value if isinstance(model_value, str) else str(result.value)


def _tagged(value: Any, json_mode: bool) -> Any:
    """Content nested in a result's value, tagged as chatlas tags it."""
    if hasattr(value, "content_type") and hasattr(value, "model_dump"):
        return {CONTENT_SENTINEL: dump_content(value, json_mode=json_mode)}
    if isinstance(value, list | tuple):
        items = [_tagged(v, json_mode) for v in cast(Iterable[Any], value)]
        return items if json_mode or isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {k: _tagged(v, json_mode) for k, v in cast(dict[Any, Any], value).items()}
    return value


def _encodable(value: Any) -> bool:
    try:
        orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):
        return False
    return True


def _fields(*names: str, **renamed: str) -> Any:
    """A dumper of these attributes (``key=attribute`` for those under another key)."""

    def dump(c: Any, json_mode: bool) -> dict[str, Any]:
        data = {n: getattr(c, n) for n in names}
        data.update({key: getattr(c, attribute) for key, attribute in renamed.items()})
        return data

    return dump


def _server_request(field: str) -> Any:
    def dump(c: Any, json_mode: bool) -> dict[str, Any]:
        return {field: getattr(c, field), "extra": c.block}

    return dump


_DUMPERS: dict[str, Any] = {
    "text": _text,
    "image_remote": _fields("url", "detail"),
    "image_inline": _fields("image_content_type", "data"),
    "tool_request": _tool_request,
    "tool_result": _tool_result,
    "json": _fields("value"),
    "pdf": _pdf,
    "document": _document,
    "uploaded": _uploaded,
    "thinking": _thinking,
    "thinking_delta": _fields("thinking", "phase"),
    "web_search_request": _server_request("query"),
    "web_search_results": _search_results,
    "web_fetch_request": _server_request("url"),
    "web_fetch_results": _fetch_results,
    "citation": _citation,
    # Ours, with no chatlas counterpart (chatlas cannot read these back).
    "server_tool_request": _fields("id", "name", "arguments", extra="block"),
    "server_tool_result": _fields(extra="block"),
    "unknown": _fields(extra="block"),
}


# -- reading ----------------------------------------------------------------------------


def _load_text(cls: Any, d: dict[str, Any], classes: Mapping[str, Any]) -> Any:
    return cls(str(d["text"]), d.get("extra") or None)


def _load_tool_request(cls: Any, d: dict[str, Any], classes: Mapping[str, Any]) -> Any:
    tool = d.get("tool")
    return cls(
        id=str(d["id"]),
        name=str(d["name"]),
        arguments=d.get("arguments", {}),
        extra=d.get("extra") or None,
        parse_error=d.get("parse_error"),
        tool=ToolInfo.from_dict(cast(dict[str, Any], tool)) if isinstance(tool, dict) else None,
    )


def _load_tool_result(cls: Any, d: dict[str, Any], classes: Mapping[str, Any]) -> Any:
    request = d.get("request")
    return cls(
        value=_untagged(d.get("value"), classes),
        model_format=d.get("model_format", "auto"),
        error=d.get("error"),
        extra=d.get("extra"),
        request=load_content(classes["tool_request"], request, classes) if request else None,
        outcome=d.get("outcome"),
    )


def _untagged(value: Any, classes: Mapping[str, Any]) -> Any:
    if isinstance(value, list):
        return [_untagged(v, classes) for v in cast(list[Any], value)]
    if isinstance(value, dict):
        data = cast(dict[str, Any], value)
        if set(data) == {CONTENT_SENTINEL} and isinstance(data[CONTENT_SENTINEL], dict):
            return load_content(classes["content"], data[CONTENT_SENTINEL], classes)
        return {k: _untagged(v, classes) for k, v in data.items()}
    return value


def _load_thinking(cls: Any, d: dict[str, Any], classes: Mapping[str, Any]) -> Any:
    thinking = str(d["thinking"])
    extra: dict[str, Any] | None = d.get("extra")
    if extra and "type" not in extra:
        # chatlas keeps only the signature: the block goes back to the API whole.
        extra = {"type": "thinking", "thinking": thinking, **extra}
    return cls(thinking, extra or None)


def _load_pdf(cls: Any, d: dict[str, Any], classes: Mapping[str, Any]) -> Any:
    return cls(data=_unb64(d.get("data")), filename=str(d["filename"]), url=d.get("url"))


def _load_document(cls: Any, d: dict[str, Any], classes: Mapping[str, Any]) -> Any:
    return cls(
        data=_unb64(d.get("data")),
        filename=str(d["filename"]),
        mime_type=str(d["mime_type"]),
        url=d.get("url"),
    )


def _load_uploaded(cls: Any, d: dict[str, Any], classes: Mapping[str, Any]) -> Any:
    return cls(
        id=str(d["id"]),
        mime_type=str(d["mime_type"]),
        provider=str(d.get("provider", "anthropic")),
        filename=d.get("filename"),
        extra=d.get("extra") or None,
    )


def _block(d: dict[str, Any], default: dict[str, Any]) -> dict[str, Any]:
    extra = d.get("extra")
    return cast(dict[str, Any], extra) if isinstance(extra, dict) and extra else default


def _load_search(cls: Any, d: dict[str, Any], classes: Mapping[str, Any]) -> Any:
    query = str(d["query"])
    block = _block(
        d, {"type": "server_tool_use", "id": "", "name": "web_search", "input": {"query": query}}
    )
    return cls(str(block.get("id", "")), "web_search", block.get("input", {}), block)


def _load_fetch(cls: Any, d: dict[str, Any], classes: Mapping[str, Any]) -> Any:
    url = str(d["url"])
    block = _block(
        d, {"type": "server_tool_use", "id": "", "name": "web_fetch", "input": {"url": url}}
    )
    return cls(str(block.get("id", "")), "web_fetch", block.get("input", {}), block)


def _load_server_result(cls: Any, d: dict[str, Any], classes: Mapping[str, Any]) -> Any:
    block = _block(d, {})
    return cls(str(block.get("tool_use_id", "")), block)


def _load_fetch_result(cls: Any, d: dict[str, Any], classes: Mapping[str, Any]) -> Any:
    block = _block(d, {})
    if block:
        return cls(str(block.get("tool_use_id", "")), block, status=d.get("status"))
    return cls(url=str(d.get("url") or ""), status=d.get("status"))  # built by hand in chatlas


def _load_server_request(cls: Any, d: dict[str, Any], classes: Mapping[str, Any]) -> Any:
    return cls(str(d["id"]), str(d["name"]), d.get("arguments", {}), _block(d, {}))


def _load_citation(cls: Any, d: dict[str, Any], classes: Mapping[str, Any]) -> Any:
    source: Any = d.get("source")
    if isinstance(source, dict):
        raw = cast(dict[str, Any], source)
        kind = classes.get(f"source:{raw.get('type')}")
        if kind is None:
            raise ValueError(f"unknown citation source type: {raw.get('type')!r}")
        source = kind(url=str(raw.get("url", "")), title=raw.get("title"))
    return cls(
        source=source,
        cited_quote=d.get("cited_quote"),
        grounded_span=d.get("grounded_span"),
        extra=d.get("extra"),
    )


def _load_unknown(cls: Any, d: dict[str, Any], classes: Mapping[str, Any]) -> Any:
    return cls(_block(d, {}))


def _load_fields(*names: str, **defaults: Any) -> Any:
    def load(cls: Any, d: dict[str, Any], classes: Mapping[str, Any]) -> Any:
        values = {n: d[n] for n in names}
        values.update({k: d.get(k, v) for k, v in defaults.items()})
        return cls(**values)

    return load


_LOADERS: dict[str, Any] = {
    "text": _load_text,
    "image_remote": _load_fields("url", detail="auto"),
    "image_inline": _load_fields("image_content_type", "data"),
    "tool_request": _load_tool_request,
    "tool_result": _load_tool_result,
    "json": _load_fields("value"),
    "pdf": _load_pdf,
    "document": _load_document,
    "uploaded": _load_uploaded,
    "thinking": _load_thinking,
    "thinking_delta": _load_fields("thinking", phase="body"),
    "web_search_request": _load_search,
    "web_search_results": _load_server_result,
    "web_fetch_request": _load_fetch,
    "web_fetch_results": _load_fetch_result,
    "citation": _load_citation,
    "server_tool_request": _load_server_request,
    "server_tool_result": _load_server_result,
    "unknown": _load_unknown,
}
