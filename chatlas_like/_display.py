"""Text, Markdown and HTML renderings of content, shared by echo, notebooks and Shiny.

Previews are cut to ``PREVIEW_CHARS`` before any rendering work (escaping, styling,
splitting into lines), so a huge result costs the same to show as a small one, however
often it is re-rendered: a result's model-facing value is formatted once, when the
result is finalised, and cached; a preview slices that text. Arguments are cut the same
way (long strings and lists are shortened before they are encoded). Everything the
model or a tool controls is HTML-escaped, and Markdown renderings put it in code spans
and fences it cannot break out of.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Any, cast

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
    "result_rich",
    "result_tag",
    "server_tool_lines",
]

PREVIEW_CHARS = 2_000
PREVIEW_LINES = 12
ARGUMENT_CHARS = 300
SOURCES_SHOWN = 8
_ARGUMENT_ITEMS = 20

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


def _shortened(value: Any, limit: int) -> Any:
    """``value`` with long strings and containers cut, so encoding it stays cheap."""
    if isinstance(value, str):
        return value if len(value) <= limit else f"{value[:limit]}…"
    if isinstance(value, dict):
        items = list(cast(dict[Any, Any], value).items())[:_ARGUMENT_ITEMS]
        return {str(k): _shortened(v, limit) for k, v in items}
    if isinstance(value, (list, tuple)):
        return [_shortened(v, limit) for v in cast(Any, value)[:_ARGUMENT_ITEMS]]
    return value


def format_arguments(arguments: Any, limit: int = ARGUMENT_CHARS) -> str:
    """Arguments as ``name=value`` pairs, cut to ``limit`` characters."""
    if isinstance(arguments, dict):
        parts: list[str] = []
        named: dict[str, Any] = arguments  # pyright: ignore[reportUnknownVariableType]
        for name, value in list(named.items())[:_ARGUMENT_ITEMS]:
            try:
                shown = orjson.dumps(_shortened(value, limit)).decode()
            except (TypeError, orjson.JSONEncodeError):
                shown = _cut(repr(value), limit)
            parts.append(f"{name}={shown}")
            if sum(len(p) for p in parts) > limit:
                break
        return _cut(", ".join(parts), limit)
    return _cut(repr(_shortened(arguments, limit)), limit)


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
        return _cut(" ".join(_cut(str(item), limit) for item in items[:20]), limit)
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


def first_lines(text: str, count: int = PREVIEW_LINES) -> str:
    """The first ``count`` lines of ``text`` (an ellipsis line when there are more)."""
    lines = text.split("\n", count)
    if len(lines) > count:
        return "\n".join(lines[:count]) + "\n…"
    return text


def result_rich(result: ContentToolResult) -> Any:
    """A rich renderable for a terminal: outcome, call, and the preview's first lines."""
    from rich.text import Text

    style = "red" if result.is_error else ("yellow" if result.outcome == "denied" else "green")
    head = Text(outcome_label(result), style=f"bold {style}")
    if result.request is not None:
        head.append(" ")
        head.append(format_call(result.request), style="cyan")
    note = truncation_note(result)
    if note:
        head.append(f" ({note})", style="dim")
    head.append("\n")
    head.append(first_lines(preview(result)), style="dim")
    return head


# -- Markdown and HTML ---------------------------------------------------------------------


def _code_span(text: str) -> str:
    """Inline code that shows ``text`` literally in Markdown and in HTML."""
    return f"<code>{html.escape(text)}</code>"


def _fenced(text: str) -> str:
    """A fenced code block longer than any run of backticks inside ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


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
        return f"🔧 {_code_span(format_call(content))}"
    if isinstance(content, ContentToolResult):
        call = f" {_code_span(format_call(content.request))}" if content.request else ""
        return f"**{outcome_label(content)}**{call}\n\n{_fenced(preview(content))}"
    if isinstance(content, (ContentServerToolRequest, ContentServerToolResult)):
        title, lines, _ = server_tool_lines(content)
        return "\n".join([f"**{title}**", *(f"- {line}" for line in lines)])
    return _code_span(str(content))


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
