"""``Tool.from_mcp(session, mcp_tool)``: chatlas's tool for one tool of an MCP session.

The caller holds the session (``mcp.ClientSession``, opened and closed by them); the
tool calls it as chatlas's does. Registered servers
(``chat.register_mcp_tools_stdio_async``...) go through :mod:`._tools` instead, with
their own sessions. What a call returns, as in chatlas 0.23.0:

* the server's ``isError``: ``RuntimeError`` with the server's first text (or
  ``"Error executing tool <name>."``), which the chat turns into an error result;
* a text block: its text; an image (PNG, JPEG, WebP, GIF): a
  :class:`~chatlas_like.ContentImageInline` (another type: ``ValueError``); a PDF
  resource: a :class:`~chatlas_like.ContentPDF` (another type: ``ValueError``); any
  other block: ``RuntimeError``;
* one part is the value; several texts are joined with newlines; else the list.

The blocks are read by :mod:`._results`, the conversion the registered servers' tools
use too (there, leniently: what chatlas raises for becomes a part that says what was
there). One difference: a PDF sent as a base64 ``blob`` is decoded (chatlas sends the
base64 text itself as the PDF's bytes, which no reader opens).

The schema is the server's ``inputSchema`` without ``title`` keywords (at the top and
on each property), closed with ``additionalProperties: false`` unless it says
otherwise; the annotations are the server's, by their MCP names, unset ones left out.
Nothing here imports ``mcp``: its objects are read by attribute.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from .._core.tool_result import ContentToolResult
from ._results import block_part, combine, error_message

__all__ = ["tool_from_mcp"]

_T = TypeVar("_T")


def tool_from_mcp(make: Callable[..., _T], session: Any, mcp_tool: Any) -> _T:
    """A tool (built by ``make``, the ``Tool`` class) that calls ``mcp_tool`` through
    ``session``."""
    name = str(mcp_tool.name)

    async def call(**arguments: Any) -> ContentToolResult:
        result = await session.call_tool(name, arguments)
        blocks = list(result.content or [])
        if result.is_error:
            raise RuntimeError(error_message(blocks, name))
        return ContentToolResult(
            value=combine([block_part(block, name, lenient=False) for block in blocks])
        )

    call.__name__ = name
    schema = getattr(mcp_tool, "input_schema", None) or getattr(mcp_tool, "inputSchema", {})
    return make(
        call,
        name,
        str(mcp_tool.description or ""),
        _parameters(schema),
        annotations=_annotations(getattr(mcp_tool, "annotations", None)),
    )


def _parameters(schema: Mapping[str, Any]) -> dict[str, Any]:
    params = _untitled(schema)
    params.setdefault("additionalProperties", False)
    return params


def _untitled(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` without ``title`` at its top and on each property (chatlas's cut)."""
    params = {k: v for k, v in schema.items() if k != "title"}
    properties = params.get("properties")
    if isinstance(properties, Mapping):
        params["properties"] = {
            key: _untitled(cast(Mapping[str, Any], prop)) if isinstance(prop, Mapping) else prop
            for key, prop in cast(Mapping[str, Any], properties).items()
        }
    return params


def _annotations(annotations: Any) -> dict[str, Any] | None:
    if not annotations:
        return None
    dump = getattr(annotations, "model_dump", None)
    if callable(dump):
        return cast(dict[str, Any], dump(by_alias=True, exclude_none=True))
    return {k: v for k, v in cast(Mapping[str, Any], annotations).items() if v is not None}
