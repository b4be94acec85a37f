"""``Chat.export()``: a conversation as a Markdown or HTML transcript.

chatlas's signature and layout (a heading per turn, the system prompt at the end in a
``<details>`` block). Unlike chatlas, the HTML file is self-contained (no scripts or
stylesheets fetched from a CDN when it is opened) and everything in it is escaped
through :mod:`chatlas_like._display.render`: model prose is rendered as Markdown with raw HTML
turned off, tool calls and results are escaped cards. In Markdown, tool calls and data
are fenced as in ``_repr_markdown_``, and each turn (server-tool blocks included) and
the title go through :func:`~chatlas_like._display.safe_markdown.safe_markdown` whole:
raw HTML is escaped and images become text outside code, so opening the transcript in
a viewer runs nothing and fetches nothing.
"""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .._core.content import ContentText
from .._core.terminal_safe import strip_controls
from .._core.turn import Turn

if TYPE_CHECKING:
    from .render import ChatView

__all__ = ["export_chat"]

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:760px;margin:2em auto;padding:0 1em;"
    "line-height:1.5}pre{white-space:pre-wrap}.turn{margin:1.2em 0}"
    ".role{font-weight:bold;opacity:.7}"
)


def export_chat(
    chat: ChatView,
    filename: str | os.PathLike[str],
    *,
    turns: Sequence[Turn] | None = None,
    title: str | None = None,
    content: Literal["text", "all"] = "text",
    include_system_prompt: bool = True,
    overwrite: bool = False,
) -> Path:
    """Write ``chat``'s transcript to ``filename`` (``.md`` or ``.html``); its path."""
    if content not in ("text", "all"):
        raise ValueError(f"content must be 'text' or 'all', got {content!r}")
    turns = list(turns) if turns else chat.get_turns()
    if not turns:
        raise ValueError("there are no turns to export")
    path = Path(filename).resolve()
    if path.suffix not in (".md", ".html"):
        raise ValueError(f"export to a .md or .html file, not {path.name!r}")
    if path.exists() and not overwrite:
        raise ValueError(f"{path} exists already; pass overwrite=True to replace it")
    system = chat.system_prompt if include_system_prompt else None
    if path.suffix == ".html":
        text = _html(turns, title, content == "all", system)
    else:
        text = _markdown(turns, title, content == "all", system)
    # No control sequence of the model's reaches the file: `cat chat.md` would act on it.
    path.write_text(strip_controls(text), encoding="utf-8")
    return path


def _shown(turn: Turn, everything: bool) -> Turn | None:
    if everything:
        return turn
    texts = [c for c in turn.contents if isinstance(c, ContentText) and c.text.strip()]
    return turn.copy_with(texts) if texts else None


# -- Markdown ------------------------------------------------------------------------------


def _markdown(turns: list[Turn], title: str | None, everything: bool, system: str | None) -> str:
    from .render import content_markdown
    from .safe_markdown import safe_markdown

    parts: list[str] = []
    if title:
        parts.append(safe_markdown(f"# {' '.join(title.split())}"))
    for turn in turns:
        shown = _shown(turn, everything)
        if shown is None:
            continue
        body = "\n\n".join(content_markdown(c) for c in shown.contents)
        parts.append(safe_markdown(f"## {turn.role.capitalize()}\n\n{body}"))
    if system:
        parts.append(
            "<details><summary>System prompt</summary>\n\n"
            f"<pre>{html.escape(system)}</pre>\n\n</details>"
        )
    return "\n\n".join(parts) + "\n"


# -- HTML ----------------------------------------------------------------------------------


def _html(turns: list[Turn], title: str | None, everything: bool, system: str | None) -> str:
    from .render import content_html, prose_html

    esc = html.escape
    body: list[str] = []
    if title:
        body.append(f"<h1>{esc(title)}</h1>")
    for turn in turns:
        shown = _shown(turn, everything)
        if shown is None:
            continue
        inner = "".join(
            prose_html(c.text) if isinstance(c, ContentText) else content_html(c)
            for c in shown.contents
        )
        body.append(
            f"<section class='turn role-{esc(turn.role)}'>"
            f"<div class='role'>{esc(turn.role.capitalize())}</div>{inner}</section>"
        )
    if system:
        body.append(f"<details><summary>System prompt</summary><pre>{esc(system)}</pre></details>")
    head_title = f"<title>{esc(title)}</title>" if title else ""
    return (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' "
        "content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">"
        f"{head_title}<style>{_STYLE}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
