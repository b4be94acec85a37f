"""Text, Markdown and HTML renderings of content, shared by echo, notebooks and Shiny.

Previews are cut to ``PREVIEW_CHARS`` before any formatting work, so a huge result
costs the same to show as a small one. Everything the model or a tool controls is
HTML-escaped.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from ._content import (
        Content,
        ContentServerToolRequest,
        ContentServerToolResult,
        ContentToolRequest,
    )
    from ._tool_result import ContentToolResult

__all__ = [
    "content_html",
    "content_markdown",
    "format_call",
    "format_result",
    "preview",
    "request_tag",
    "result_tag",
    "server_tool_lines",
]

PREVIEW_CHARS = 2_000
ARGUMENT_CHARS = 300
SOURCES_SHOWN = 8

_OUTCOME_LABELS = {
    "success": ("✔", "result"),
    "error": ("✖", "error"),
    "exception": ("✖", "exception"),
    "refused": ("⊘", "refused"),
    "denied": ("⊘", "denied"),
}


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"


def format_arguments(arguments: Any, limit: int = ARGUMENT_CHARS) -> str:
    """Arguments as ``name=value`` pairs, cut to ``limit`` characters."""
    if isinstance(arguments, dict):
        parts: list[str] = []
        named: dict[str, Any] = arguments  # pyright: ignore[reportUnknownVariableType]
        for name, value in named.items():
            try:
                shown = orjson.dumps(value).decode()
            except (TypeError, orjson.JSONEncodeError):
                shown = repr(value)
            parts.append(f"{name}={shown}")
        return _cut(", ".join(parts), limit)
    return _cut(repr(arguments), limit)


def format_call(request: ContentToolRequest) -> str:
    """``name(arg=value, ...)`` for a tool request."""
    return f"{request.name}({format_arguments(request.arguments)})"


def preview(result: ContentToolResult, limit: int = PREVIEW_CHARS) -> str:
    """The first ``limit`` characters of what the model read (or will read)."""
    try:
        value = result.get_model_value()
    except Exception as e:
        return f"[no model form: {type(e).__name__}: {e}]"
    if isinstance(value, str):
        return _cut(value, limit)
    if isinstance(value, list):
        items: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return _cut(" ".join(str(item) for item in items[:20]), limit)
    return _cut(str(value), limit)


def outcome_label(result: ContentToolResult) -> str:
    """A short label such as ``✔ result`` or ``⊘ refused``."""
    mark, word = _OUTCOME_LABELS[result.outcome]
    return f"{mark} {word}"


def truncation_note(result: ContentToolResult) -> str | None:
    """A note for a result cut by ``max_result_bytes``, else None."""
    if not result.is_truncated:
        return None
    return (
        f"truncated for the model: {result.stored_length:,} of "
        f"{result.original_length:,} bytes sent"
    )


def format_result(result: ContentToolResult) -> str:
    """A plain-text rendering: outcome, call and preview."""
    head = outcome_label(result)
    if result.request is not None:
        head += f" {format_call(result.request)}"
    note = truncation_note(result)
    if note:
        head += f" ({note})"
    return f"{head}\n{preview(result)}"


def server_tool_lines(
    item: ContentServerToolRequest | ContentServerToolResult,
) -> tuple[str, list[str], bool]:
    """A server tool block as (title, source lines, is an error), for a compact panel."""
    from ._content import (
        ContentServerToolRequest,
        ContentToolRequestFetch,
        ContentToolRequestSearch,
        ContentToolResponseFetch,
        ContentToolResponseSearch,
    )

    if isinstance(item, ContentToolRequestSearch):
        return f"🔎 web search: {_cut(item.query, ARGUMENT_CHARS)!r}", [], False
    if isinstance(item, ContentToolRequestFetch):
        return f"🌐 web fetch: {_cut(item.url, ARGUMENT_CHARS)}", [], False
    if isinstance(item, ContentServerToolRequest):
        return f"🔧 {item.name}({format_arguments(item.arguments)}) [server]", [], False
    if isinstance(item, ContentToolResponseSearch):
        if item.error_code:
            return f"✖ web search failed: {item.error_code}", [], True
        sources = item.sources
        lines = [f"{s.title or s.url} — {s.url}" if s.title else s.url for s in sources]
        if len(lines) > SOURCES_SHOWN:
            lines = [*lines[:SOURCES_SHOWN], f"… {len(sources) - SOURCES_SHOWN} more"]
        return f"✔ web search: {len(sources)} sources", lines or ["(no results)"], False
    if isinstance(item, ContentToolResponseFetch):
        if item.status == "error":
            return f"✖ web fetch failed: {item.error_code}", [], True
        return f"✔ fetched {item.url}", [item.title] if item.title else [], False
    return f"[{item.block_type}]", [], False


# -- Markdown and HTML ---------------------------------------------------------------------


def content_markdown(content: Content) -> str:
    """Markdown for any content (fenced where it is not prose)."""
    from ._content import (
        ContentServerToolRequest,
        ContentServerToolResult,
        ContentText,
        ContentToolRequest,
    )
    from ._tool_result import ContentToolResult

    if isinstance(content, ContentText):
        return content.text
    if isinstance(content, ContentToolRequest):
        return f"🔧 `{format_call(content)}`"
    if isinstance(content, ContentToolResult):
        body = preview(content).replace("```", "``\u200b`")
        return f"**{outcome_label(content)}**\n\n```\n{body}\n```"
    if isinstance(content, (ContentServerToolRequest, ContentServerToolResult)):
        title, lines, _ = server_tool_lines(content)
        return "\n".join([f"**{title}**", *(f"- {line}" for line in lines)])
    return f"`{content}`"


def content_html(content: Content) -> str:
    """HTML for any content, everything escaped."""
    from ._content import (
        ContentServerToolRequest,
        ContentServerToolResult,
        ContentText,
        ContentToolRequest,
    )
    from ._tool_result import ContentToolResult

    if isinstance(content, ContentToolResult):
        return result_html(content)
    if isinstance(content, (ContentServerToolRequest, ContentServerToolResult)):
        title, lines, _ = server_tool_lines(content)
        items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
        return (
            f"<div class='chatlas-like-server-tool'><strong>{html.escape(title)}</strong>"
            f"{f'<ul>{items}</ul>' if items else ''}</div>"
        )
    if isinstance(content, ContentToolRequest):
        return request_html(content)
    if isinstance(content, ContentText):
        return f"<div class='chatlas-like-text' style='white-space:pre-wrap'>{html.escape(content.text)}</div>"
    return f"<code>{html.escape(str(content))}</code>"


def request_html(request: ContentToolRequest) -> str:
    """A one-line card for a tool request."""
    return (
        "<div class='chatlas-like-tool-request'>🔧 <code>"
        f"{html.escape(format_call(request))}</code></div>"
    )


def result_html(result: ContentToolResult) -> str:
    """A collapsible card: tool name and arguments, outcome, preview."""
    call = format_call(result.request) if result.request is not None else "tool"
    note = truncation_note(result)
    note_html = f" <em>({html.escape(note)})</em>" if note else ""
    open_attr = " open" if result.is_error else ""
    return (
        f"<details class='chatlas-like-tool-result outcome-{result.outcome}'{open_attr}>"
        f"<summary><strong>{html.escape(outcome_label(result))}</strong> "
        f"<code>{html.escape(call)}</code>{note_html}</summary>"
        f"<pre style='white-space:pre-wrap'>{html.escape(preview(result))}</pre></details>"
    )


def request_tag(request: ContentToolRequest) -> Any:
    """An htmltools tag for a tool request."""
    from htmltools import HTML

    return HTML(request_html(request))


def result_tag(result: ContentToolResult) -> Any:
    """An htmltools tag for a tool result."""
    from htmltools import HTML

    return HTML(result_html(result))
