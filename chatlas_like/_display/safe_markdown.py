"""Model-written Markdown made safe for a notebook: no raw HTML, no remote images.

A notebook renders a ``_repr_markdown_`` with raw HTML on and fetches every image it
names, so Markdown from a (prompt-injected) model could run markup or make the page
load any URL with no click. :func:`safe_markdown` neutralises both the way the HTML
rendering does (:func:`chatlas_like._display.render.prose_html`): raw HTML is escaped (shown
as text) and an image becomes text naming its address. Code blocks and code spans are
left alone (they never render HTML), so text without HTML or images comes back
unchanged.

The text is parsed as CommonMark (markdown-it) to find what needs escaping and where
code is; the result is parsed again, and if anything would still render as HTML or as
an image, every ``<`` and ``![`` is escaped, code included: safety first, looks second.

The result stays inert when pasted next to other Markdown (a turn joins the Markdown of
its contents): a fenced code block left open at the end is closed, so it cannot swallow
what follows and turn a later fence inside out, and ``<`` in an indented code block is
escaped too, since the same lines after a list item would be read as prose.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it.token import Token

__all__ = ["safe_markdown"]

_UNSAFE = frozenset({"html_block", "html_inline", "image"})
# A code span: a run of backticks, closed by the next run of the same length.
_CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
_FENCES = ("```", "~~~")


def safe_markdown(text: str) -> str:
    """``text`` with raw HTML escaped and images turned into text (see the module)."""
    if "<" not in text and "![" not in text and not any(f in text for f in _FENCES):
        return text  # nothing to neutralise: the common case costs a scan
    parser = _parser()
    if parser is None:
        return _escape_everywhere(text)
    tokens = parser.parse(text)
    closing = _open_fence(tokens, text)
    if closing is not None:
        text = (text if text.endswith("\n") else text + "\n") + closing
        tokens = parser.parse(text)
    if not any(_unsafe(tokens)):
        return text
    code_lines = {
        line
        for token in tokens
        if token.type == "fence" and token.map is not None
        for line in range(*token.map)
    }
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    prose: list[str] = []
    for number, line in enumerate(lines):
        if number in code_lines:
            out.append(_escape_prose("".join(prose)))
            prose = []
            out.append(line)
        else:
            prose.append(line)
    out.append(_escape_prose("".join(prose)))
    safe = "".join(out)
    if any(_unsafe(parser.parse(safe))):
        return _escape_everywhere(text)
    return safe


def _open_fence(tokens: list[Token], text: str) -> str | None:
    """The line that closes a top-level fenced block left open at the end, if any."""
    last = next((t for t in reversed(tokens) if t.level == 0 and t.map is not None), None)
    if last is None or last.type != "fence" or last.map is None:
        return None
    lines = text.splitlines()
    if last.map[1] < len(lines):
        return None
    end = lines[last.map[1] - 1].strip() if last.map[1] - 1 > last.map[0] else ""
    marker = last.markup[0]
    if len(end) >= len(last.markup) and end == marker * len(end):
        return None  # closed by its last line
    return last.markup


def _escape_prose(text: str) -> str:
    """Escape ``<`` and ``![`` outside the code spans of ``text``."""
    pieces: list[str] = []
    start = 0
    for span in _CODE_SPAN.finditer(text):
        pieces.append(_escape_everywhere(text[start : span.start()]))
        pieces.append(span.group())
        start = span.end()
    pieces.append(_escape_everywhere(text[start:]))
    return "".join(pieces)


def _escape_everywhere(text: str) -> str:
    # ``&lt;`` shows "<" and starts no tag; ``!\[`` shows "![" and starts no image.
    return text.replace("<", "&lt;").replace("![", "!\\[")


def _unsafe(tokens: list[Token]) -> Iterator[bool]:
    for token in tokens:
        if token.type in _UNSAFE:
            yield True
        elif token.type == "code_block" and ("<" in token.content or "![" in token.content):
            yield True  # prose again after a list item (see the module docstring)
        for child in token.children or ():
            if child.type in _UNSAFE:
                yield True


@cache
def _parser() -> Any:
    try:
        from markdown_it import MarkdownIt
    except ImportError:  # pragma: no cover - rich depends on markdown-it-py
        return None
    return MarkdownIt("commonmark")
