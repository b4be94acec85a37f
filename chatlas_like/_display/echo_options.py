"""How echoed output looks: the settings of :meth:`Chat.set_echo_options`.

chatlas's names and meaning; each call replaces every setting (one left out goes back
to its default). Applied where they mean something here:

- terminal: ``rich_console`` (``rich.console.Console`` arguments), ``rich_markdown``
  (``rich.markdown.Markdown`` arguments for the answer's text, redrawn as Markdown once
  a segment ends; links stay plain text),
  ``tool_result_max_lines`` (lines of a result shown), ``thinking_max_lines`` (lines of
  each thinking block shown: the first ones, since the echo never rewrites what it
  has written), ``web_activity_max_sources`` (sources listed for a web search);
- notebook: ``css_styles`` (CSS on the answer's text), ``tool_result_max_height`` (a
  CSS length bounding each tool card, which scrolls beyond it).

``image_max_lines`` is kept for chatlas code; the terminal shows an image as a line
naming it, so it changes nothing there today.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._core.missing import MISSING, MISSING_TYPE

__all__ = ["EchoOptions", "echo_options"]

DEFAULT_TOOL_RESULT_MAX_LINES = 12
DEFAULT_TOOL_RESULT_MAX_HEIGHT = "24em"
DEFAULT_THINKING_MAX_LINES: int | None = None
DEFAULT_WEB_ACTIVITY_MAX_SOURCES = 4  # chatlas 0.23.0's
DEFAULT_IMAGE_MAX_LINES = 20


@dataclass(frozen=True)
class EchoOptions:
    """The echo settings of a chat (see :meth:`Chat.set_echo_options`)."""

    rich_markdown: Mapping[str, Any] = field(default_factory=lambda: {})
    rich_console: Mapping[str, Any] = field(default_factory=lambda: {})
    css_styles: Mapping[str, str] = field(default_factory=lambda: {})
    tool_result_max_lines: int | None = DEFAULT_TOOL_RESULT_MAX_LINES
    tool_result_max_height: str | None = DEFAULT_TOOL_RESULT_MAX_HEIGHT
    thinking_max_lines: int | None = DEFAULT_THINKING_MAX_LINES
    web_activity_max_sources: int | None = DEFAULT_WEB_ACTIVITY_MAX_SOURCES
    image_max_lines: int | None = DEFAULT_IMAGE_MAX_LINES

    def css(self) -> str:
        """``css_styles`` as an inline ``style`` value."""
        return ";".join(f"{name}:{value}" for name, value in self.css_styles.items())


def echo_options(
    rich_markdown: Mapping[str, Any] | None = None,
    rich_console: Mapping[str, Any] | None = None,
    css_styles: Mapping[str, str] | None = None,
    tool_result_max_lines: int | MISSING_TYPE | None = MISSING,
    tool_result_max_height: str | MISSING_TYPE | None = MISSING,
    thinking_max_lines: int | MISSING_TYPE | None = MISSING,
    web_activity_max_sources: int | MISSING_TYPE | None = MISSING,
    image_max_lines: int | MISSING_TYPE | None = MISSING,
) -> EchoOptions:
    """Checked settings; a MISSING one takes its default."""
    counts = {
        "tool_result_max_lines": (tool_result_max_lines, DEFAULT_TOOL_RESULT_MAX_LINES),
        "thinking_max_lines": (thinking_max_lines, DEFAULT_THINKING_MAX_LINES),
        "web_activity_max_sources": (web_activity_max_sources, DEFAULT_WEB_ACTIVITY_MAX_SOURCES),
        "image_max_lines": (image_max_lines, DEFAULT_IMAGE_MAX_LINES),
    }
    resolved: dict[str, int | None] = {}
    for name, (value, default) in counts.items():
        chosen = default if isinstance(value, MISSING_TYPE) else value
        if chosen is not None and (isinstance(chosen, bool) or not isinstance(chosen, int)):
            raise TypeError(f"{name} must be a whole number or None, got {chosen!r}")
        if chosen is not None and chosen < 1:
            raise ValueError(f"{name} must be at least 1, got {chosen}")
        resolved[name] = chosen
    height = (
        DEFAULT_TOOL_RESULT_MAX_HEIGHT
        if isinstance(tool_result_max_height, MISSING_TYPE)
        else tool_result_max_height
    )
    if height is not None and (not isinstance(height, str) or any(c in height for c in ";'\"<>")):
        raise ValueError(f"tool_result_max_height must be a CSS length, got {height!r}")
    for name, styles in (("css_styles", css_styles or {}),):
        for key, value in styles.items():
            if any(c in f"{key}{value}" for c in ";'\"<>{}"):
                raise ValueError(f"{name}: {key!r}: {value!r} is not a plain CSS declaration")
    return EchoOptions(
        rich_markdown=dict(rich_markdown or {}),
        rich_console=dict(rich_console or {}),
        css_styles=dict(css_styles or {}),
        tool_result_max_height=height,
        **resolved,  # pyright: ignore[reportArgumentType]
    )
