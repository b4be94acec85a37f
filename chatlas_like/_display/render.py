"""Text, Markdown and HTML renderings of content, turns and chats.

One place decides how a tool call looks, for the terminal echo, notebooks
(``_repr_html_`` / ``_repr_markdown_``) and Shiny (``tagify()``): a card with the tool's
name, its arguments, the outcome (success, error, exception, refused or denied, each
marked), a preview of what the model read, and a label on truncated results. A pandas
DataFrame is shown as a table of its first rows (pandas' own HTML, escaped), what the
model read one click away.

Previews are cut to ``PREVIEW_CHARS`` before any rendering work (escaping, styling,
splitting into lines), so a huge result costs the same to show as a small one, however
often it is re-rendered: a result's model-facing value is formatted once, when the
result is finalised, and cached; a preview slices that text. Arguments are cut the same
way (long strings and lists are shortened before they are encoded). Everything the model
or a tool controls is HTML-escaped (model prose is rendered as Markdown with raw HTML
turned off), so a result holding ``<script>`` renders as text; Markdown renderings put
it in code spans and fences it cannot break out of, and model prose there has its raw
HTML escaped and its images turned into text (:mod:`chatlas_like._display.safe_markdown`), as
in HTML. So do server-tool blocks (queries, titles and URLs the model or a web page
chose), and a turn's or a chat's Markdown is made safe once more as a whole (the system
prompt, the model's name and the joins between contents included).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

import orjson

from .._core.content import (
    ContentCitation,
    ContentImageInline,
    ContentImageRemote,
    ContentJson,
    ContentServerToolRequest,
    ContentServerToolResult,
    ContentText,
    ContentThinking,
    ContentToolRequest,
    ContentToolRequestFetch,
    ContentToolRequestSearch,
    ContentToolResponseFetch,
    ContentToolResponseSearch,
    code_span,
)
from .._core.redact import safe_description
from .._core.renderers import register
from .._core.terminal_safe import safe
from .._core.tool_result import ContentToolResult
from .._observe.tokens import format_tokens
from .echo_options import DEFAULT_WEB_ACTIVITY_MAX_SOURCES

if TYPE_CHECKING:
    from markdown_it.renderer import RendererHTML
    from markdown_it.token import Token
    from markdown_it.utils import EnvType, OptionsDict

    from .._core.content import (
        Content,
        ContentServerToolRequest,
        ContentServerToolResult,
        ContentToolRequest,
    )
    from .._core.tool_result import ContentToolResult
    from .._core.turn import Tokens, Turn, Usage
    from ..providers._base import Provider

__all__ = [
    "answered_ids",
    "arguments_html",
    "card_style",
    "chat_html",
    "chat_markdown",
    "chat_text",
    "chatlas_display_value",
    "chatlas_request_text",
    "chatlas_result_html",
    "chatlas_result_text",
    "content_html",
    "content_markdown",
    "cut_sizes",
    "dataframe_html",
    "error_html",
    "first_lines",
    "format_call",
    "format_result",
    "inserted_html",
    "outcome_label",
    "preview",
    "prose_html",
    "record_rows",
    "request_html",
    "request_tag",
    "result_html",
    "result_rich",
    "result_tag",
    "server_tool_lines",
    "shown_contents",
    "truncation_note",
    "turn_html",
    "turn_markdown",
]


class ChatView(Protocol):
    """What a rendering of a whole chat reads of it (a :class:`~chatlas_like.Chat` has it)."""

    @property
    def system_prompt(self) -> str | None: ...
    @property
    def provider(self) -> Provider: ...
    def get_turns(self) -> list[Turn]: ...
    def token_usage(self) -> Usage: ...


PREVIEW_CHARS = 2_000
PREVIEW_LINES = 12
ARGUMENT_CHARS = 300
SUMMARY_ARGUMENT_CHARS = 120
SOURCES_SHOWN = DEFAULT_WEB_ACTIVITY_MAX_SOURCES
_ARGUMENT_ITEMS = 20
_CODE_SPAN = re.compile(r"(`+) ?(.*?) ?\1", re.S)

_OUTCOME_LABELS = {
    "success": ("✔", "result"),
    "error": ("✖", "error"),
    "exception": ("✖", "exception"),
    "refused": ("⊘", "refused"),
    "denied": ("⊘", "denied"),
}
# Colours readable on light and dark notebook themes.
_OUTCOME_COLOURS = {
    "success": "#2e7d32",
    "error": "#c62828",
    "exception": "#c62828",
    "refused": "#e65100",
    "denied": "#8d6e63",
}
_REQUEST_COLOUR = "#1565c0"
_CARD = (
    "border:1px solid rgba(128,128,128,.35);border-left:4px solid {colour};"
    "border-radius:4px;margin:6px 0;padding:4px 10px"
)
_PRE = "white-space:pre-wrap;word-break:break-word;margin:4px 0;max-height:24em;overflow:auto"
_SMALL = "opacity:.7;font-size:85%"


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"


def _dump(value: Any, indent: bool = False) -> str:
    try:
        shown = _shortened(value, PREVIEW_CHARS)
        return orjson.dumps(shown, option=orjson.OPT_INDENT_2 if indent else 0).decode()
    except (TypeError, orjson.JSONEncodeError):
        return _cut(repr(value), PREVIEW_CHARS)


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


def format_call(request: ContentToolRequest, limit: int = ARGUMENT_CHARS) -> str:
    """``name(arg=value, ...)`` for a tool request."""
    return f"{request.name}({format_arguments(request.arguments, limit)})"


def preview(result: ContentToolResult, limit: int = PREVIEW_CHARS, lines: int | None = None) -> str:
    """What the model read (or will read), cut to ``limit`` characters and ``lines`` lines.

    Cuts fall between values, never inside one: a JSON array of records shows whole
    records, one a line; other text shows whole lines, and a line too long for the
    limit is cut at a space or a comma. A last line says what was left out, in words
    ("… 96 more records (9,612 characters)"). Only a single unbroken token longer than
    the limit is cut inside itself.
    """
    try:
        value = result.get_model_value()
    except Exception as e:
        return f"[no model form: {type(e).__name__}: {e}]"
    if isinstance(value, list):
        items: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return _cut(" ".join(_cut(str(item), limit) for item in items[:20]), limit)
    text = value if isinstance(value, str) else str(value)
    most = lines if lines is not None else limit
    return _records_preview(text, limit, most) or _lines_preview(text, limit, most)


# Past what is shown, what is left is counted only this far (the count is said when
# known); a preview's cost stays bounded however large the result.
_COUNT_BUDGET = 32 * 1024
# A JSON string (escapes included), a lone quote (a string that runs past the scan), or
# one of the characters that shape an array of records.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|"|[\[\]{},]')


def _left(characters: int, *, records: int | None = None, lines: int = 0) -> str:
    """The closing line of a cut preview: what was left out, in words (-1: records, uncounted)."""
    if records == -1:
        return f"… more records ({characters:,} characters)"
    if records is not None:
        noun = "record" if records == 1 else "records"
        return f"… {records:,} more {noun} ({characters:,} characters)"
    if lines:
        noun = "line" if lines == 1 else "lines"
        return f"… {lines:,} more {noun} ({characters:,} characters)"
    return f"… {characters:,} more characters"


def _records_preview(text: str, limit: int, most: int) -> str | None:
    """Whole records of a JSON array of objects or arrays, one a line; None otherwise."""
    start = len(text) - len(text.lstrip())
    if not text.startswith("[", start):
        return None
    spans: list[tuple[int, int]] = []  # the records shown
    shown = 0
    counted = 0  # records past those shown
    element = start + 1
    depth = 0
    done = False
    end = min(len(text), start + limit + _COUNT_BUDGET)
    for token in _JSON_TOKEN.finditer(text, start, end):
        mark = token.group()
        if mark == '"':
            break  # a string running past the scan: no boundary can be trusted beyond it
        if mark in "[{":
            depth += 1
            continue
        if mark not in "]},":
            continue
        if mark != "," and depth > 1:
            depth -= 1
            continue
        if mark == "," and depth != 1:
            continue
        piece = (element, token.start())
        element = token.end()
        if mark != ",":  # the array's closing bracket
            depth, done = 0, True
            if not text[piece[0] : piece[1]].strip():
                break  # an empty array, or a trailing empty slot
        first = text[piece[0] : piece[1]].lstrip()[:1]
        if first not in ("{", "["):
            return None  # an array of plain values reads fine as text
        size = piece[1] - piece[0]
        if not counted and len(spans) < most and shown + size <= limit:
            spans.append(piece)
            shown += size
        else:
            counted += 1
        if done:
            break
    if not spans:
        return None
    body = ",\n ".join(text[a:b].strip() for a, b in spans)
    if done and not counted:
        return f"[{body}]"
    rest = len(text) - spans[-1][1]
    return f"[{body},\n{_left(rest, records=counted if done else -1)}"


def _lines_preview(text: str, limit: int, most: int) -> str:
    """Whole lines of ``text``; a first line too long is cut at a space or a comma."""
    if len(text) <= limit and text.count("\n", 0, limit) < most:
        return text
    cut = count = 0
    while count < most:
        newline = text.find("\n", cut, limit)  # a line that fits, its newline included
        if newline < 0:
            break
        cut, count = newline + 1, count + 1
    if not count:
        window = text[: limit + 1]
        boundary = max(window.rfind(" "), window.rfind(","), window.rfind("\t"))
        cut = boundary + 1 if boundary > 0 else limit
    rest = len(text) - cut
    lines = 0
    if count and rest <= _COUNT_BUDGET:
        lines = text.count("\n", cut) + (not text.endswith("\n"))
    return f"{text[:cut].rstrip(chr(10))}\n{_left(rest, lines=lines)}"


def outcome_label(result: ContentToolResult) -> str:
    """A short label such as ``✔ result`` or ``⊘ refused``."""
    mark, word = _OUTCOME_LABELS[result.outcome]
    return f"{mark} {word}"


# The notice the finaliser appends to a cut value (``_finalize.truncation_notice``):
# what the model was told it received, and, when it may page, what the store keeps.
_NOTICE = re.compile(
    r"\[truncated: showing the first ([\d,]+) of ([\d,]+) bytes of this tool result"
    r"(?:; ([\d,]+) bytes are stored)?"
)
_NOTICE_TAIL = 600  # the notice is the value's last line; only its end is searched


@dataclass(frozen=True, slots=True)
class CutSizes:
    """The sizes of a cut result, in UTF-8 bytes: ``sent`` to the model (its notice
    included), the ``kept`` part of the value it shows, the ``original`` value, and
    what the tool-result store keeps (None when the result does not say)."""

    sent: int
    kept: int | None
    original: int
    stored: int | None


def cut_sizes(result: ContentToolResult) -> CutSizes | None:
    """The sizes of a result cut by ``max_result_bytes``, else None.

    ``sent`` and ``original`` are the result's ``stored_length`` and
    ``original_length``; ``kept`` and ``stored`` are read from the notice the model
    received with the value, so a card says what the model was told.
    """
    if not result.is_truncated or result.original_length is None:
        return None
    sent = result.stored_length if result.stored_length is not None else 0
    kept = stored = None
    try:
        value = result.get_model_value()
    except Exception:
        value = None
    if isinstance(value, list) and value:
        items: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        value = getattr(items[-1], "text", items[-1])
    if isinstance(value, str):
        found = _NOTICE.search(value, max(0, len(value) - _NOTICE_TAIL))
        if found is not None and _number(found.group(2)) == result.original_length:
            kept = _number(found.group(1))
            stored = _number(found.group(3)) if found.group(3) else None
    return CutSizes(sent, kept, result.original_length, stored)


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def truncation_note(result: ContentToolResult) -> str | None:
    """A note for a result cut by ``max_result_bytes``, else None: the same numbers
    everywhere (terminal, notebook, Shiny, transcripts), those the model was told."""
    sizes = cut_sizes(result)
    if sizes is None:
        return None
    if sizes.kept is not None:
        note = (
            f"cut for the model: {sizes.sent:,} bytes sent, the first {sizes.kept:,} "
            f"of {sizes.original:,} and a notice"
        )
    else:
        note = f"cut for the model: {sizes.sent:,} of {sizes.original:,} bytes sent"
    if sizes.stored is not None:
        note += f"; {sizes.stored:,} bytes stored"
    return note


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
    max_sources: int | None = SOURCES_SHOWN,
) -> tuple[str, list[str], bool]:
    """A server tool block as (title, source lines, is an error), for a compact panel;
    at most ``max_sources`` sources are listed (None: all)."""

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
        if max_sources is not None and len(lines) > max_sources:
            lines = [*lines[:max_sources], f"… {len(sources) - max_sources} more"]
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


def result_rich(result: ContentToolResult, max_lines: int | None = PREVIEW_LINES) -> Any:
    """A rich renderable for a terminal: outcome, call, and the preview's first
    ``max_lines`` lines (None: the whole preview)."""
    from rich.text import Text

    style = "red" if result.is_error else ("yellow" if result.outcome == "denied" else "green")
    head = Text(outcome_label(result), style=f"bold {style}")
    if result.request is not None:
        head.append(" ")
        head.append(format_call(result.request), style="cyan")
    note = truncation_note(result)
    if note:
        head.append(f" ({note})", style="dim")
    from rich.console import Group

    return Group(head, *_preview_rich(preview(result, lines=max_lines)))


def _preview_rich(text: str) -> list[Any]:
    """The preview's lines for a terminal: a record too wide for the terminal wraps
    between its fields (:class:`_Record`); other lines wrap between words."""
    from rich.text import Text

    return [
        _Record(line) if line.lstrip("[ ").startswith(("{", "[")) else Text(line, style="dim")
        for line in text.split("\n")
    ]


RECORD_INDENT = "   "  # a record's continuation rows, under its first field


def record_rows(line: str, width: int) -> list[str]:
    """A preview's record line as rows of at most ``width`` cells, broken after the
    commas between its fields (never inside a value); a row holds at least one field,
    so a field wider than ``width`` is a row of its own, which the terminal folds."""
    from rich.cells import cell_len

    if cell_len(line) <= width:
        return [line]
    rows: list[str] = []
    row = ""
    for field in _fields(line):
        if row not in ("", RECORD_INDENT) and cell_len(row) + cell_len(field) > width:
            rows.append(row.rstrip())
            row = RECORD_INDENT
        row += field.lstrip() if row == RECORD_INDENT else field
    rows.append(row)
    return rows


def _fields(line: str) -> list[str]:
    """``line`` cut after each comma between the fields of its record (depth 1)."""
    pieces: list[str] = []
    start = depth = 0
    for token in _JSON_TOKEN.finditer(line):
        mark = token.group()
        if mark in "[{":
            depth += 1
        elif mark in "]}":
            depth -= 1
        elif mark == "," and depth == (2 if line.startswith("[") else 1):
            pieces.append(line[start : token.end()])
            start = token.end()
    pieces.append(line[start:])
    return pieces


class _Record:
    """A record line of a preview, wrapped between its fields to the terminal's width."""

    def __init__(self, line: str) -> None:
        self.line = line

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.text import Text

        for row in record_rows(self.line, options.max_width):
            yield Text(row, style="dim", overflow="fold")


# -- Markdown ------------------------------------------------------------------------------


def _fenced(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}\n{text}\n{fence}"


def content_markdown(content: Content) -> str:
    """Markdown for any content; tool calls and data are fenced, never raw."""

    if isinstance(content, ContentText):
        from .safe_markdown import safe_markdown

        return safe_markdown(content.text)  # a notebook renders raw HTML and fetches images
    if isinstance(content, ContentToolRequest):
        return f"🔧 **tool call** {code_span(format_call(content))}"
    if isinstance(content, ContentToolResult):
        call = code_span(format_call(content.request)) if content.request else ""
        note = truncation_note(content)
        head = f"**{outcome_label(content)}** {call}".rstrip()
        if note:
            head += f" *({note})*"
        return f"{head}\n\n{_fenced(preview(content))}"
    if isinstance(content, ContentThinking):  # whole: an export is the conversation
        if content.redacted:
            return "*thinking (redacted by the provider)*"
        return f"*thinking:*\n\n{_fenced(content.thinking)}"
    if isinstance(content, ContentJson):
        return _fenced(content.json_text())
    if isinstance(content, ContentServerToolRequest):
        from .safe_markdown import safe_markdown

        # chatlas's text (``**web search request**: 'query'``), the model's query inert.
        return safe_markdown(_one_line(str(content)))
    if isinstance(content, ContentServerToolResult):
        from .safe_markdown import safe_markdown

        # Titles and URLs are a web page's: one line each, inert.
        title, lines, _ = server_tool_lines(content)
        shown = [f"**{_one_line(title)}**", *(f"- {_one_line(line)}" for line in lines)]
        return safe_markdown("\n".join(shown))
    if isinstance(content, ContentCitation):
        return f"**citation**: {code_span(_label(content).removeprefix('**citation**: '))}"
    return code_span(_label(content))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def turn_markdown(turn: Turn, *, skip: frozenset[str] = frozenset()) -> str:
    """Markdown for one turn, headed by its role (made safe as a whole); nothing for a
    turn with nothing to show (its tool calls are shown by their results' cards)."""
    from .safe_markdown import safe_markdown

    shown = shown_contents(turn, skip)
    if not shown:
        return ""
    body = "\n\n".join(content_markdown(c) for c in shown)
    return safe_markdown(f"**{_role_label(turn)}**\n\n{body}")


def chat_text(label: str, model: str, turns: Sequence[Turn]) -> str:
    """A conversation as chatlas prints it (``str(chat)``): a summary line, then each turn."""
    answers = [t for t in turns if t.role == "assistant" and not t.is_partial]
    counted = [t.tokens for t in answers if t.tokens]
    total: Tokens | None = (
        (sum(t[0] for t in counted), sum(t[1] for t in counted), sum(t[2] for t in counted))
        if counted
        else None
    )
    costs = [t.cost for t in answers if t.cost is not None]
    summary = format_tokens(total, sum(costs) if costs else None)
    out = f"<Chat {label}/{model} turns={len(turns)}" + (f" {summary}" if summary else "") + ">"
    for turn in turns:
        header = f"## {turn.role.capitalize()}"
        if turn.is_partial:
            header += f" [{turn.partial_reason}]"
        elif turn.role == "assistant":
            info = format_tokens(turn.tokens, turn.cost)
            header += f" [{info}]" if info else ""
        out += f"\n\n{header}\n\n{turn}"
    return out + "\n"


def chat_markdown(chat: ChatView) -> str:
    """Markdown for a whole chat: a header line, the system prompt and every turn.

    The system prompt and the model's name may come from a chat file: the whole is made
    safe as the model's prose is (:mod:`chatlas_like._display.safe_markdown`).
    """
    from .safe_markdown import safe_markdown

    parts = [f"**Chat** · {_chat_summary(chat)}"]
    if chat.system_prompt:
        parts.append("> **system:** " + chat.system_prompt.replace("\n", "\n> "))
    turns = chat.get_turns()
    answered = answered_ids(turns)
    parts.extend(filter(None, (turn_markdown(t, skip=answered) for t in turns)))
    return safe_markdown("\n\n".join(parts))


# -- HTML ----------------------------------------------------------------------------------


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def prose_html(text: str) -> str:
    """Model prose as HTML: Markdown with raw HTML disabled (so it is escaped).

    A Markdown image becomes text naming its address: an ``<img>`` would make the
    page fetch any URL a (prompt-injected) model writes, with no click.
    """
    try:
        from markdown_it import MarkdownIt
    except ImportError:  # pragma: no cover - rich depends on markdown-it-py
        return f"<div style='white-space:pre-wrap'>{_esc(text)}</div>"
    md = MarkdownIt("commonmark", {"html": False})
    md.add_render_rule("image", _image_as_text)
    rendered = md.render(text)
    return f"<div class='chatlas-like-text'>{rendered}</div>"


def _image_as_text(
    renderer: RendererHTML,
    tokens: Sequence[Token],
    idx: int,
    options: OptionsDict,
    env: EnvType,
) -> str:
    token = tokens[idx]
    alt = renderer.renderInlineAsText(token.children or [], options, env)
    src = str(token.attrGet("src") or "")
    return f"<span class='chatlas-like-image'>[image: {_esc(alt)}] {_esc(src)}</span>"


def content_html(content: Content) -> str:
    """HTML for any content, everything escaped."""

    if isinstance(content, ContentToolResult):
        return result_html(content)
    if isinstance(content, (ContentServerToolRequest, ContentServerToolResult)):
        title, lines, _ = server_tool_lines(content)
        items = "".join(f"<li>{_esc(line)}</li>" for line in lines)
        return (
            f"<div class='chatlas-like-server-tool'><strong>{_esc(title)}</strong>"
            f"{f'<ul>{items}</ul>' if items else ''}</div>"
        )
    if isinstance(content, ContentToolRequest):
        return request_html(content)
    if isinstance(content, ContentText):
        return prose_html(content.text)
    if isinstance(content, ContentThinking):
        return (
            "<details class='chatlas-like-thinking'><summary style='opacity:.7'>thinking"
            f"</summary><pre style='{_PRE}'>{_esc(content.thinking)}"
            "</pre></details>"
        )
    if isinstance(content, ContentJson):
        return f"<pre style='{_PRE}'>{_esc(content.json_text())}</pre>"
    if isinstance(content, ContentImageInline):
        src = f"data:{_esc(content.image_content_type)};base64,{_esc(content.data)}"
        return f"<img src='{src}' style='max-width:100%' alt='image'>"
    if isinstance(content, ContentImageRemote):
        # Shown as a link, not loaded: a page must not fetch what the model named.
        return f"<div>🖼 remote image: <code>{_esc(content.url)}</code></div>"
    return f"<div><code>{_esc(_label(content))}</code></div>"


def _label(content: Any) -> str:
    """``str(content)`` without the code span it may come in (a PDF's, a document's)."""
    text = str(content)
    found = _CODE_SPAN.fullmatch(text)
    return found.group(2) if found else text


def request_html(request: ContentToolRequest) -> str:
    """A collapsible card for a tool request: name, short call, full arguments."""
    style = _CARD.format(colour=_REQUEST_COLOUR)
    problem = ""
    if request.parse_error:
        problem = (
            f"<div style='color:{_OUTCOME_COLOURS['refused']}'>arguments could not be read: "
            f"{_esc(request.parse_error)}</div>"
        )
    return (
        f"<details class='chatlas-like-tool chatlas-like-tool-request' "
        f"data-tool='{_esc(request.name)}' style='{style}'>"
        f"<summary style='cursor:pointer'><strong style='color:{_REQUEST_COLOUR}'>⚙ tool call"
        f"</strong> <code>{_esc(format_call(request, SUMMARY_ARGUMENT_CHARS))}</code></summary>"
        f"{problem}{arguments_html(request)}</details>"
    )


def card_style(colour: str) -> str:
    """The inline style of a tool card with a ``colour`` edge."""
    return _CARD.format(colour=colour)


def arguments_html(request: ContentToolRequest) -> str:
    """A request's arguments, pretty-printed and cut, escaped."""
    shown = _cut(_dump(request.arguments, indent=True), PREVIEW_CHARS)
    return (
        f"<div class='chatlas-like-arguments'><span style='{_SMALL}'>arguments</span>"
        f"<pre style='{_PRE}'>{_esc(shown)}</pre></div>"
    )


def result_html(result: ContentToolResult) -> str:
    """A collapsible card: outcome, tool name and arguments, truncation, preview.

    Failed results (error, exception, refused) open by default, so they are seen.
    """
    colour = _OUTCOME_COLOURS[result.outcome]
    request = result.request
    call = format_call(request, SUMMARY_ARGUMENT_CHARS) if request is not None else "tool"
    name = request.name if request is not None else ""
    note = truncation_note(result)
    note_html = (
        f" <span class='chatlas-like-truncated' style='color:{_OUTCOME_COLOURS['refused']}'>"
        f"✂ {_esc(note)}</span>"
        if note
        else ""
    )
    open_attr = " open" if result.is_error else ""
    what = "what the model read" if result.outcome == "success" else "message to the model"
    arguments = arguments_html(request) if request is not None else ""
    read = f"<pre style='{_PRE}'>{_esc(preview(result))}</pre>"
    table = dataframe_html(result.value) if result.outcome == "success" else None
    if table is None:
        shown = (
            f"<div class='chatlas-like-preview'><span style='{_SMALL}'>{what}</span>{read}</div>"
        )
    else:  # the value as a table; what the model read (records) one click away
        shown = (
            f"{table}<details class='chatlas-like-preview'><summary style='cursor:pointer'>"
            f"<span style='{_SMALL}'>{what}</span></summary>{read}</details>"
        )
    return (
        f"<details class='chatlas-like-tool chatlas-like-tool-result outcome-{result.outcome}' "
        f"data-tool='{_esc(name)}' data-outcome='{result.outcome}'{open_attr} "
        f"style='{_CARD.format(colour=colour)}'>"
        f"<summary style='cursor:pointer'><strong class='chatlas-like-outcome' "
        f"style='color:{colour}'>{_esc(outcome_label(result))}</strong> "
        f"<code>{_esc(call)}</code>{note_html}</summary>{arguments}{shown}</details>"
    )


TABLE_ROWS = 10
TABLE_COLUMNS = 20
CELL_CHARS = 80
_TABLE_STYLE = (
    "<style>.chatlas-like-dataframe{border-collapse:collapse;font-size:90%}"
    ".chatlas-like-dataframe th,.chatlas-like-dataframe td{padding:2px 8px;"
    "border-bottom:1px solid rgba(128,128,128,.25);text-align:right;vertical-align:top}"
    "</style>"
)


def dataframe_html(value: Any) -> str | None:
    """A pandas DataFrame as a table, else None: pandas' own HTML with every label and
    cell escaped, its first ``TABLE_ROWS`` rows and ``TABLE_COLUMNS`` columns (text
    cells cut to ``CELL_CHARS``), and a count of the rest.

    pandas is not imported for it: a DataFrame exists only once pandas is loaded.
    """
    import sys

    pd: Any = sys.modules.get("pandas")
    if pd is None or not isinstance(value, pd.DataFrame):
        return None
    from pandas.api.types import is_datetime64_any_dtype, is_numeric_dtype

    frame: Any = value
    rows, columns = frame.shape
    head = frame.head(TABLE_ROWS)
    plain = [is_numeric_dtype(t) or is_datetime64_any_dtype(t) for t in head.dtypes]
    try:
        table = head.to_html(
            escape=True,
            border=0,
            max_cols=TABLE_COLUMNS,
            classes="chatlas-like-dataframe",
            formatters=[None if kept else _cell for kept in plain],
        )
    except Exception:  # an odd frame: shown as the model read it, as any value
        return None
    return (
        f"<div class='chatlas-like-table'>{_TABLE_STYLE}"
        f"<div style='overflow:auto;max-height:24em'>{table}</div>"
        f"<div style='{_SMALL}'>{_count(rows, TABLE_ROWS, 'row')} · "
        f"{_count(columns, TABLE_COLUMNS, 'column')}</div></div>"
    )


def _count(total: int, shown: int, noun: str) -> str:
    """``4 rows``, or ``first 10 of 1,200 rows`` when only ``shown`` are."""
    if total > shown:
        return f"first {shown:,} of {total:,} {noun}s"
    return f"{total:,} {noun}{'' if total == 1 else 's'}"


def _cell(value: Any) -> str:
    text = str(value)
    return text if len(text) <= CELL_CHARS else f"{text[:CELL_CHARS]}…"


def inserted_html(turn: Turn) -> str:
    """A collapsed card for a turn a message expansion inserted."""
    text = _cut(turn.text, PREVIEW_CHARS)
    return (
        f"<details class='chatlas-like-inserted' style='{_CARD.format(colour='#6a1b9a')}'>"
        f"<summary style='cursor:pointer'>↳ inserted {_esc(turn.role)} message</summary>"
        f"<pre style='{_PRE}'>{_esc(text)}</pre></details>"
    )


def error_html(error: BaseException) -> str:
    """A marked box for a failed answer (Shiny shows it in the chat)."""

    return (
        "<div class='chatlas-like-error' role='alert' "
        f"style='{_CARD.format(colour=_OUTCOME_COLOURS['error'])}'>"
        f"<strong style='color:{_OUTCOME_COLOURS['error']}'>⚠ The answer failed</strong> "
        f"<code>{_esc(_cut(safe_description(error), PREVIEW_CHARS))}</code>"
        "<div style='opacity:.7'>The conversation is intact; you can ask again.</div></div>"
    )


def _role_label(turn: Turn) -> str:
    if turn.role == "user" and turn.contents and len(turn.tool_results) == len(turn.contents):
        return "🔧 tool results"
    return {"user": "👤 user", "assistant": "🤖 assistant", "system": "⚙ system"}[turn.role]


def answered_ids(turns: Sequence[Turn]) -> frozenset[str]:
    """The ids of the tool requests ``turns`` hold a result for."""
    return frozenset(
        result.request.id
        for turn in turns
        for result in turn.tool_results
        if result.request is not None
    )


def shown_contents(turn: Turn, skip: frozenset[str]) -> list[Content]:
    """The contents to show: requests in ``skip`` (answered later) are shown by their
    result's card."""

    return [c for c in turn.contents if not (isinstance(c, ContentToolRequest) and c.id in skip)]


def turn_html(turn: Turn, *, skip: frozenset[str] = frozenset()) -> str:
    """HTML for one turn, headed by its role; nothing for a turn with nothing to show
    (its tool calls are shown by their results' cards)."""
    shown = shown_contents(turn, skip)
    if not shown:
        return ""
    body = "".join(content_html(c) for c in shown)
    return (
        f"<div class='chatlas-like-turn role-{turn.role}' style='margin:8px 0'>"
        f"<div style='{_SMALL};font-weight:bold'>{_esc(_role_label(turn))}</div>{body}</div>"
    )


def _chat_summary(chat: ChatView) -> str:
    tokens = chat.token_usage()
    provider = chat.provider
    return (
        f"{provider.name}/{provider.model} · {len(chat.get_turns())} turns · "
        f"{tokens.input + tokens.cache_read + tokens.cache_creation:,} input / "
        f"{tokens.output:,} output tokens"
    )


def chat_html(chat: ChatView) -> str:
    """HTML for a whole chat: a header, the system prompt and every turn."""
    turns = chat.get_turns()
    answered = answered_ids(turns)
    system = ""
    if chat.system_prompt:
        system = (
            f"<details class='chatlas-like-system'><summary style='{_SMALL}'>system prompt"
            f"</summary><pre style='{_PRE}'>{_esc(chat.system_prompt)}</pre></details>"
        )
    body = "".join(turn_html(t, skip=answered) for t in turns)
    return (
        "<div class='chatlas-like-chat'>"
        f"<div style='{_SMALL}'><strong>Chat</strong> · {_esc(_chat_summary(chat))}</div>"
        f"{system}{body}</div>"
    )


def request_tag(request: ContentToolRequest) -> Any:
    """An htmltools tag for a tool request."""
    from htmltools import HTML

    return HTML(request_html(request))


def result_tag(result: ContentToolResult) -> Any:
    """An htmltools tag for a tool result."""
    from htmltools import HTML

    return HTML(result_html(result))


# -- chatlas's own text and markup (``str()``, ``to_html()``) --------------------------------


def chatlas_request_text(request: ContentToolRequest) -> str:
    """``str(request)`` as chatlas gives it: a fenced block naming the call."""
    arguments: Any = request.arguments
    if isinstance(arguments, dict):
        named: dict[str, Any] = arguments  # pyright: ignore[reportUnknownVariableType]
        shown = ", ".join(
            f'{k}="{v}"' if isinstance(v, str) else f"{k}={v}" for k, v in named.items()
        )
    else:
        shown = str(arguments)
    return f"```python\n# 🔧 tool request ({request.id})\n{request.name}({shown})\n```\n"


def chatlas_result_text(result: ContentToolResult) -> str:
    """``str(result)`` as chatlas gives it (its ``to_display_markdown()``). A result not
    yet attached to its request has no id to name (chatlas raises ``ValueError``: a
    tool printing the result it builds would crash)."""
    mark = "✅ tool result" if result.outcome == "success" else "❌ tool error"
    if result.request is not None:
        mark += f" ({result.request.id})"
    return f"```python\n# {mark}\n{chatlas_display_value(result)}\n```"


def chatlas_display_value(result: ContentToolResult) -> str:
    """The value as chatlas displays it: data pretty-printed (a string holding JSON
    too), anything else as ``str()``. For a failure, what the model read: chatlas's
    ``Tool call failed with error: '...'``, here with known secrets redacted."""
    from pprint import pformat

    if result.outcome != "success":
        said = result.get_model_value()
        return said if isinstance(said, str) else str(said)
    value: Any = result.value
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return result.value
    if isinstance(value, (dict, list)):
        return pformat(cast(Any, value), indent=2, sort_dicts=False)
    return str(value)


def chatlas_result_html(result: ContentToolResult) -> str:
    """``result.to_html()`` as chatlas writes it (``chatlas-tool-result``), escaped."""

    def pre_code(code: str, label: str | None = None) -> str:
        shown = f"<span class='input-parameter-label'>{_plain(label)}</span>" if label else ""
        return f"<pre>{shown}<code>{_plain(code)}</code></pre>"

    arguments: Any = (result.request.arguments if result.request is not None else None) or {}
    if isinstance(arguments, dict):
        named: dict[str, Any] = arguments  # pyright: ignore[reportUnknownVariableType]
        given = "".join(pre_code(str(v), label=str(k)) for k, v in named.items())
    else:
        given = pre_code(str(arguments))
    params = f"<strong>Input parameters:</strong>{given}" if given else ""
    value = f"<strong>Result:</strong>{pre_code(chatlas_display_value(result))}"
    name = _plain(result.request.name if result.request is not None else "")
    if result.outcome == "success":
        header = f"Result from tool call: <code>{name}</code>"
    else:
        header = f"❌ Failed to call tool <code>{name}</code>"
    return (
        f'<div class="chatlas-tool-result"><details><summary>{header}</summary>'
        f'<div class="chatlas-tool-result-content">{value}{params}</div></details></div>'
    )


def _plain(text: str) -> str:
    return html.escape(text, quote=False)


def _printable_result(result: ContentToolResult) -> Any:
    """``result.__rich__()``: printed by whoever holds the result, so made safe here."""
    return safe(result_rich(result))


# Content types reach these through the table (they never import this module).
# ``format_call``, ``format_result`` and ``result_html`` are what ``str(request)``,
# ``str(result)`` and ``result.to_html()`` return: chatlas's text and markup, which code
# may match on; the displays (cards, the echo) are this module's own.
register(
    content_html=content_html,
    content_markdown=content_markdown,
    format_call=chatlas_request_text,
    format_result=chatlas_result_text,
    request_tag=request_tag,
    result_html=chatlas_result_html,
    result_rich=_printable_result,
    result_tag=result_tag,
)
