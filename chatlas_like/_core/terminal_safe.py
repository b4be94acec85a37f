"""Text the model or a tool controls, made safe to write to a terminal.

A terminal obeys control sequences in what it prints: OSC 52 writes the clipboard, OSC 0
sets the window title, OSC 8 hides a link behind any text, CSI clears the screen or
moves the cursor, DCS and APC talk to the terminal itself. Model text, thinking, tool
names, results, error messages and server-tool titles are all controlled by the model
or a tool, so before the echo or the console chat writes them, :func:`strip_controls`
removes every escape sequence (7- and 8-bit), every C0 control but tab and newline,
DEL and the C1 controls; text UTF-8 cannot encode becomes U+FFFD, so a write cannot
fail either. :func:`safe` wraps a rich renderable the same way: the text of each
segment is cleaned, rich's own styling (kept apart from the text) is untouched.

A sequence split across two stream deltas leaves no escape character behind, only
harmless text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .utf8 import replace_surrogates

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions
    from rich.segment import Segment

__all__ = ["SafeRenderable", "safe", "strip_controls"]

_CONTROLS = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: cursor, erase, styles...
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, to BEL or ST (or the end)
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?"  # DCS, SOS, PM, APC
    r"|\x1b[ -/]*[0-~]?"  # any other escape (ESC c resets the terminal), or a lone ESC
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # other controls; tab and newline stay
)
_MAYBE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_controls(text: str) -> str:
    """``text`` without control sequences or characters a terminal could act on."""
    if _MAYBE.search(text) is not None:
        text = _CONTROLS.sub("", text)
    if not text.isascii():
        text = replace_surrogates(text)[0]
    return text


class SafeRenderable:
    """A rich renderable whose text is passed through :func:`strip_controls`."""

    __slots__ = ("renderable",)

    def __init__(self, renderable: Any) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        from rich.segment import Segment

        for segment in console.render(self.renderable, options):
            if segment.control:  # rich's own cursor moves (a live display), never content
                yield segment
            else:
                yield Segment(strip_controls(segment.text), segment.style)


def safe(renderable: Any) -> SafeRenderable:
    """``renderable`` made safe to print; a string is taken as text, never as markup."""
    if isinstance(renderable, str):
        from rich.text import Text

        renderable = Text(renderable)
    return SafeRenderable(renderable)
