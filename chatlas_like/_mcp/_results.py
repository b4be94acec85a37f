"""From an MCP ``CallToolResult`` to one :class:`ContentToolResult`, as chatlas sends it.

One conversion serves both ways MCP tools come in: the servers a chat registers
(:func:`to_tool_result`) and ``Tool.from_mcp`` (:mod:`.from_mcp`). The model reads what
chatlas 0.23.0 sends:

* each block becomes a part (:func:`block_part`): a text block its text; an image
  (PNG, JPEG, GIF, WebP) a :class:`ContentImageInline`; an embedded PDF a
  :class:`ContentPDF`;
* the parts become the value (:func:`combine`): one part is the value; several texts
  are joined with ``"\n"``; otherwise the list of parts;
* ``isError``: the server's message (:func:`error_message`: the first block's text, or
  ``Error executing tool <name>.``) as a ``RuntimeError``, which the model reads as
  chatlas's ``Tool call failed with error: '<message>'``;
* ``structuredContent`` is not what the model reads (chatlas ignores it): code finds it
  in ``extra["structured_content"]``, and ``_meta`` in ``extra["meta"]``.

Where chatlas raises, and so fails the whole call and loses the rest of the answer
(another image type, audio, an embedded resource other than a PDF, a resource link, a
block type it does not know), the registered servers' results keep the answer and put
a part that says what was there (``lenient``); ``Tool.from_mcp`` raises chatlas's
errors, as its users' code expects:

====================================  ====================================================
MCP block (lenient)                   part
====================================  ====================================================
image of another type, audio          a text stand-in naming the type and size
embedded text resource                :class:`ContentDocument` titled by its URI
embedded blob: PDF / image / text     :class:`ContentPDF` / image / document
embedded blob of another type         a stand-in naming the URI, type and size
``resource_link``                     a stand-in naming the name, URI, type and size
a block of a type unknown here        a stand-in naming the type
====================================  ====================================================

Nothing here raises on what a server sends in the lenient way: a bad base64 payload,
an unexpected MIME type or an empty resource becomes a stand-in that says so. The
blocks are read by duck typing (``block.type``...), so this module imports nothing
from ``mcp``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any, cast

from .._core.content import Content, ContentDocument, ContentImageInline, ContentPDF
from .._core.redact import warn_tool_failure
from .._core.tool_result import ContentToolResult

__all__ = ["block_part", "combine", "error_message", "to_tool_result"]

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
    """The result of one call of a registered server's tool ``tool`` (its name there).

    An ``isError`` answer is an ``error`` outcome whose ``error`` is chatlas's
    ``RuntimeError`` (and chatlas's ``ToolFailureWarning``, naming the tool by its name
    on the server); anything else succeeds, its blocks read leniently.
    """
    blocks: Sequence[Any] = list(getattr(result, "content", None) or [])
    extra: dict[str, Any] = {}
    meta = getattr(result, "meta", None)
    if meta:
        extra["meta"] = meta
    if getattr(result, "is_error", False):
        error = RuntimeError(error_message(blocks, tool))
        warn_tool_failure(tool, error)
        return ContentToolResult(error=error, outcome="error", extra=extra or None)
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        extra["structured_content"] = structured
    value = combine([block_part(block, tool, lenient=True) for block in blocks])
    return ContentToolResult(value=value, extra=extra or None)


def combine(parts: Sequence[Part]) -> Part | list[Part]:
    """chatlas's value of a call: one part as it is, texts joined with newlines, or the
    list of parts (``""`` for none)."""
    if len(parts) == 1:
        return parts[0]
    if all(isinstance(part, str) for part in parts):
        return "\n".join(cast(Sequence[str], parts))
    return list(parts)


def error_message(blocks: Sequence[Any], tool: str) -> str:
    """What a server's ``isError`` answer says, as chatlas reads it: the first block's
    text, or ``Error executing tool <name>.``"""
    text = getattr(blocks[0], "text", None) if blocks else None
    return str(text) if text is not None else f"Error executing tool {tool}."


def block_part(block: Any, tool: str, *, lenient: bool) -> Part:
    """One content block as a part of the value (see the module docstring).

    Not ``lenient``: chatlas's ``ValueError`` for an image or resource type it does not
    take, ``RuntimeError`` for another block, and an image's data passed on as given.
    """
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind == "image":
        mime = _mime(block, "image")
        if not lenient:
            if mime not in _IMAGE_TYPES:
                raise ValueError(f"Unsupported image MIME type: {block.mime_type}")
            return ContentImageInline(mime, block.data)  # pyright: ignore[reportArgumentType]  # checked above
        return _image(str(getattr(block, "data", "")), mime)
    if kind == "resource":
        if not lenient:
            return _pdf_resource(block.resource, tool)
        return _resource(getattr(block, "resource", None))
    if not lenient:
        raise RuntimeError(f"Unexpected content type: {kind}")
    if kind == "audio":
        size = _decoded_size(str(getattr(block, "data", "")))
        return f"[audio ({_mime(block, 'audio')}{_bytes(size)}) returned by the tool: not sent, the model cannot take audio]"
    if kind == "resource_link":
        return _link(block)
    return f"[a {kind or 'untyped'} block returned by the tool: a kind of content this client does not know]"


def _pdf_resource(resource: Any, tool: str) -> ContentPDF:
    """chatlas's one embedded resource: a PDF (a text one's text as its bytes, a blob
    decoded; chatlas takes the base64 text itself, which no reader opens)."""
    if resource.mime_type != "application/pdf":
        raise ValueError(f"Unsupported resource MIME type: {resource.mime_type}")
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        data = text.encode("utf-8")
    else:
        blob = str(resource.blob)
        data = _decode(blob)
        if data is None:
            data = blob.encode("utf-8")  # not base64 after all: the text, as chatlas takes it
    return ContentPDF(data=data, filename=f"{tool}-result.pdf")


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
