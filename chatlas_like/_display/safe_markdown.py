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
_CODE_BLOCKS = frozenset({"fence", "code_block"})
# A code span: a run of backticks, closed by the next run of the same length.
_CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)


def safe_markdown(text: str) -> str:
    """``text`` with raw HTML escaped and images turned into text (see the module)."""
    if "<" not in text and "![" not in text:
        return text  # nothing to neutralise: the common case costs a scan
    parser = _parser()
    if parser is None:
        return _escape_everywhere(text)
    tokens = parser.parse(text)
    if not any(_unsafe(tokens)):
        return text
    code_lines = {
        line
        for token in tokens
        if token.type in _CODE_BLOCKS and token.map is not None
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
