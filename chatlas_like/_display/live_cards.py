"""Live tool cards: one card per call, from running to its outcome, in every display.

While a turn's tools run, a display receives, per call: the request (the model asked),
``tool_started`` (it runs; refused and denied calls never start), zero or more
:class:`ContentToolResultProgress` (a generator tool's yields) and the call's one final
:class:`ContentToolResult`, calls interleaved in the order they finish. :class:`LiveCalls`
keeps what each display needs of the calls still open: when each started and its latest
progress. The terminal draws them as status lines (:mod:`chatlas_like._display.live_status`);
notebooks update one output per call in place; Shiny cannot change a message it has
streamed, so each newer card of a call carries a one-rule stylesheet hiding the card it
supersedes (:func:`superseding_style`), so the page shows one card per call however
its messages were built, a replayed history included.

Everything the model or a tool controls is escaped here as in :mod:`chatlas_like._display.render`;
the key a stylesheet names is a hex digest of the call id, never the id itself.
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._core.terminal_safe import strip_controls
from .render import (
    SUMMARY_ARGUMENT_CHARS,
    arguments_html,
    card_style,
    first_lines,
    format_call,
    preview,
)

if TYPE_CHECKING:
    from .._core.content import ContentToolRequest
    from .._core.tool_result import ContentToolResult, ContentToolResultProgress

__all__ = [
    "LiveCall",
    "LiveCalls",
    "call_key",
    "progress_line",
    "running_card_html",
    "superseding_style",
]

PROGRESS_CHARS = 80  # of the latest progress, on a status line or a card's summary
_RUNNING_COLOUR = "#1565c0"


def call_key(request_id: str) -> str:
    """A short hex key for a call id, safe in an HTML attribute and a CSS selector."""
    return hashlib.sha256(request_id.encode("utf-8", "replace")).hexdigest()[:16]


def progress_line(progress: ContentToolResult, limit: int = PROGRESS_CHARS) -> str:
    """The first line of a progress item's preview, cut to ``limit`` characters, with
    no control characters (it goes on a terminal's status line too)."""
    text = strip_controls(preview(progress, limit=limit + 1, lines=1))
    line = first_lines(text, 1).split("\n", 1)[0]
    return line if len(line) <= limit else f"{line[: limit - 1]}…"


@dataclass(slots=True)
class LiveCall:
    """A call that has not finished: its request, when it was asked for and started,
    its latest progress and how many progress items came."""

    request: ContentToolRequest
    requested: float
    started: float | None = None
    progress: ContentToolResultProgress | None = None
    steps: int = 0

    def elapsed(self, now: float) -> float:
        """Seconds it has run (since it was asked for, until it is known to start)."""
        return now - (self.started if self.started is not None else self.requested)


class LiveCalls:
    """The open calls of a display, by call id, in the order they were asked for."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.open: dict[str, LiveCall] = {}

    def requested(self, request: ContentToolRequest) -> LiveCall:
        call = LiveCall(request, self.clock())
        self.open[request.id] = call
        return call

    def started(self, request: ContentToolRequest) -> LiveCall:
        call = self.open.get(request.id) or self.requested(request)
        call.started = self.clock()
        return call

    def progressed(self, item: ContentToolResultProgress) -> LiveCall | None:
        """The call ``item`` belongs to, with ``item`` as its latest progress."""
        if item.request is None:
            return None
        call = self.open.get(item.request.id) or self.requested(item.request)
        if call.started is None:  # a call that yields runs
            call.started = self.clock()
        call.progress = item
        call.steps += 1
        return call

    def finished(self, result: ContentToolResult) -> LiveCall | None:
        """The call ``result`` closes (no longer open), or None if it was not open."""
        if result.request is None:
            return None
        return self.open.pop(result.request.id, None)

    def clear(self) -> None:
        self.open.clear()


def running_card_html(call: LiveCall) -> str:
    """A call's card while it runs: its call, its arguments and its latest progress.

    It carries ``chatlas-like-tool-request`` (it shows the request) and
    ``chatlas-like-live`` with the call's key and step, which is what a newer card
    of the same call hides (:func:`superseding_style`).
    """
    request = call.request
    call_text = format_call(request, SUMMARY_ARGUMENT_CHARS)
    latest = ""
    body = ""
    if call.progress is not None:
        latest = (
            f" <span class='chatlas-like-progress-line' style='opacity:.7'>· "
            f"{html.escape(progress_line(call.progress))}</span>"
        )
        body = (
            "<div class='chatlas-like-preview chatlas-like-progress'>"
            f"<span style='opacity:.7;font-size:85%'>progress ({call.steps})</span>"
            f"<pre style='white-space:pre-wrap;word-break:break-word;margin:4px 0;"
            f"max-height:24em;overflow:auto'>{html.escape(preview(call.progress))}</pre></div>"
        )
    return (
        "<details class='chatlas-like-tool chatlas-like-tool-request chatlas-like-live' "
        f"data-tool='{html.escape(request.name, quote=True)}' data-call='{call_key(request.id)}' "
        f"data-step='{call.steps}' style='{card_style(_RUNNING_COLOUR)}'>"
        f"<summary style='cursor:pointer'><strong class='chatlas-like-outcome' "
        f"style='color:{_RUNNING_COLOUR}'>⏳ running</strong> <code>{html.escape(call_text)}"
        f"</code>{latest}</summary>{arguments_html(request)}{body}</details>"
    )


def superseding_style(request_id: str, step: int | None = None) -> str:
    """A stylesheet hiding the live card of call ``request_id`` at ``step`` (its
    running card is step 0), or every live card of the call when ``step`` is None."""
    selector = f".chatlas-like-live[data-call='{call_key(request_id)}']"
    if step is not None:
        selector += f"[data-step='{int(step)}']"
    return f"<style>{selector}{{display:none}}</style>"
