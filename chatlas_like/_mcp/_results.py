"""From an MCP ``CallToolResult`` to one :class:`ContentToolResult` with a true outcome.

The rules, block by block (the model reads the blocks in the server's order, in one
tool_result):

====================================  ====================================================
MCP                                   ContentToolResult
====================================  ====================================================
``isError: true``                     outcome ``error``; the server's text is the message
``structuredContent`` (text only)     ``value`` is the structured value, sent as JSON
                                      (``model_format="json"``); the text blocks are kept
                                      in ``extra["content"]``
one text block                        ``value`` is the text
several blocks, or any media          ``value`` is a content list (``model_format="as_is"``)
text                                  :class:`ContentText`
image (PNG, JPEG, GIF, WebP)          :class:`ContentImageInline`, sent natively
image of another type, audio          a text stand-in naming the type and size
embedded text resource                :class:`ContentDocument` titled by its URI
embedded blob: PDF / image / text     :class:`ContentPDF` / image / document
embedded blob of another type         a stand-in naming the URI, type and size
``resource_link``                     a stand-in naming the name, URI, type and size
a block of a type unknown here        a stand-in naming the type
====================================  ====================================================

Nothing here raises on what a server sends: a bad base64 payload, an unexpected MIME
type or an empty resource becomes a stand-in that says so. ``_meta`` of the result is
kept in ``extra["meta"]``. The blocks are read by duck typing (``block.type``...), so
this module imports nothing from ``mcp``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

from .._core.content import Content, ContentDocument, ContentImageInline, ContentPDF, ContentText
from .._core.tool_result import ContentToolResult

__all__ = ["to_tool_result"]

_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_TEXT_APPLICATION_TYPES = frozenset(
    {
        "application/json",
        "application/ld+json",
        "application/xml",
        "application/yaml",
        "application/x-yaml",
        "application/javascript",
        "application/sql",
        "application/toml",
    }
)

Part = str | Content


def to_tool_result(result: Any, tool: str) -> ContentToolResult:
    """The result of one call of the MCP tool ``tool`` (its name on the server)."""
    blocks: Sequence[Any] = list(getattr(result, "content", None) or [])
    extra: dict[str, Any] = {}
    meta = getattr(result, "meta", None)
    if meta:
        extra["meta"] = meta
    if getattr(result, "is_error", False):
        return ContentToolResult(
            error=_error_text(blocks, tool), outcome="error", extra=extra or None
        )
    parts = [_part(block) for block in blocks]
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        if all(isinstance(p, str) for p in parts):
            extra["content"] = parts
            return ContentToolResult(value=structured, model_format="json", extra=extra)
        extra["structured_content"] = structured  # media to show: the blocks are the answer
    if not parts:
        return ContentToolResult(value="", extra=extra or None)
    if len(parts) == 1 and isinstance(parts[0], str):
        return ContentToolResult(value=parts[0], extra=extra or None)
    value = [ContentText(p) if isinstance(p, str) else p for p in parts]
    return ContentToolResult(value=value, model_format="as_is", extra=extra or None)


def _error_text(blocks: Sequence[Any], tool: str) -> str:
    texts = [str(b.text) for b in blocks if getattr(b, "type", None) == "text"]
    text = "\n".join(t for t in texts if t.strip())
    return text or f"The MCP tool `{tool}` reported an error without a message."


def _part(block: Any) -> Part:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind == "image":
        return _image(str(getattr(block, "data", "")), _mime(block, "image"))
    if kind == "audio":
        size = _decoded_size(str(getattr(block, "data", "")))
        return f"[audio ({_mime(block, 'audio')}{_bytes(size)}) returned by the tool: not sent, the model cannot take audio]"
    if kind == "resource":
        return _resource(getattr(block, "resource", None))
    if kind == "resource_link":
        return _link(block)
    return f"[a {kind or 'untyped'} block returned by the tool: a kind of content this client does not know]"


def _mime(item: Any, fallback: str) -> str:
    mime = getattr(item, "mime_type", None)
    return str(mime) if mime else fallback


def _image(data: str, mime: str) -> Part:
    raw = _decode(data)
    if raw is None:
        return f"[an image ({mime}) returned by the tool could not be read: its data is not valid base64]"
    if mime not in _IMAGE_TYPES:
        return f"[an image ({mime}, {len(raw):,} bytes) returned by the tool: not sent, the model takes PNG, JPEG, GIF and WebP images]"
    return ContentImageInline(mime, data)  # pyright: ignore[reportArgumentType]  # checked above


def _resource(resource: Any) -> Part:
    uri = str(getattr(resource, "uri", "") or "(no URI)")
    mime = getattr(resource, "mime_type", None)
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        if not text:
            return f"[resource {uri}: empty]"
        return _document(text.encode(), uri, mime)
    blob = str(getattr(resource, "blob", "") or "")
    raw = _decode(blob)
    if raw is None:
        return f"[resource {uri} ({mime or 'unknown type'}) could not be read: its data is not valid base64]"
    if not raw:
        return f"[resource {uri}: empty]"
    if mime == "application/pdf":
        return ContentPDF(data=raw, filename=uri)
    if mime in _IMAGE_TYPES:
        return ContentImageInline(mime, blob)  # pyright: ignore[reportArgumentType]  # checked above
    if mime is not None and _is_text(mime):
        try:
            raw.decode()
        except UnicodeDecodeError:
            return f"[resource {uri} ({mime}, {len(raw):,} bytes): declared text, but not UTF-8]"
        return _document(raw, uri, mime)
    return f"[resource {uri} ({mime or 'unknown type'}, {len(raw):,} bytes): binary content the model cannot read]"


def _document(data: bytes, uri: str, mime: str | None) -> ContentDocument:
    # Read as plain text whatever its declared type (it is text); the title names it.
    kind = mime if mime is not None and mime.startswith("text/") else "text/plain"
    return ContentDocument(data=data, filename=uri, mime_type=kind)


def _is_text(mime: str) -> bool:
    base = mime.split(";", 1)[0].strip().lower()
    return (
        base.startswith("text/")
        or base in _TEXT_APPLICATION_TYPES
        or base.endswith(("+json", "+xml"))
    )


def _link(block: Any) -> str:
    name = str(getattr(block, "title", None) or getattr(block, "name", "") or "")
    uri = str(getattr(block, "uri", ""))
    details = [str(m) for m in (getattr(block, "mime_type", None),) if m]
    size = getattr(block, "size", None)
    if isinstance(size, int):
        details.append(f"{size:,} bytes")
    described = f" ({', '.join(details)})" if details else ""
    about = getattr(block, "description", None)
    tail = f": {about}" if about else ""
    return (
        f"[resource link: {name} <{uri}>{described}{tail}]"
        if name
        else f"[resource link: <{uri}>{described}{tail}]"
    )


def _decode(data: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _decoded_size(data: str) -> int | None:
    raw = _decode(data)
    return None if raw is None else len(raw)


def _bytes(size: int | None) -> str:
    return f", {size:,} bytes" if size is not None else ""
