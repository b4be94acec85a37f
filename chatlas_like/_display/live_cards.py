"""Live tool cards: one card per call, from running to its outcome, in every display.

While a turn's tools run, a display receives, per call: the request (the model asked),
``tool_started`` (it runs; refused and denied calls never start), zero or more
:class:`ContentToolResultProgress` (a generator tool's yields) and the call's one final
:class:`ContentToolResult`, calls interleaved in the order they finish. :class:`LiveCalls`
keeps what each display needs of the calls still open: when each started and its latest
progress. Every display keeps the calls in call order, each updated in place:
completion order is for delivery, not layout. The terminal draws them as status lines
(:mod:`chatlas_like._display.live_status`), printing results in call order; notebooks
update one output per call in place; Shiny cannot change a message it has streamed, so
each newer card of a call carries a one-rule stylesheet hiding the card it supersedes
(:func:`superseding_style`), so the page shows one card per call however its messages
were built, a replayed history included, and a page script (:data:`CARD_PLACE_JS`)
shows it in the place of the call's first card.

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
    "CARD_PLACE_JS",
    "LiveCall",
    "LiveCalls",
    "call_key",
    "in_place",
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
    """A call still shown as open: its request, when it was asked for and started, its
    latest progress and how many progress items came, and its result once it finished
    while a call asked for before it still runs (:meth:`LiveCalls.settle`)."""

    request: ContentToolRequest
    requested: float
    started: float | None = None
    progress: ContentToolResultProgress | None = None
    steps: int = 0
    result: ContentToolResult | None = None
    ended: float | None = None

    def elapsed(self, now: float) -> float:
        """Seconds it has run (since it was asked for, until it is known to start),
        until it ended."""
        end = self.ended if self.ended is not None else now
        return end - (self.started if self.started is not None else self.requested)


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

    def settle(self, result: ContentToolResult) -> list[ContentToolResult]:
        """Record ``result`` for its call; the results now due, in call order.

        A result is due once every call asked for before its own has one: completion
        order is for delivery, call order for layout. Until then its call stays open,
        holding it (a display shows it finished, in its place). A result for a call
        that is not open is due at once.
        """
        call = self.open.get(result.request.id) if result.request is not None else None
        if call is None:
            return [result]
        call.result, call.ended = result, self.clock()
        due: list[ContentToolResult] = []
        for call_id, held in list(self.open.items()):
            if held.result is None:
                break
            due.append(held.result)
            del self.open[call_id]
        return due

    def unfinished(self, besides: str | None = None) -> bool:
        """Whether a call other than ``besides`` has no result yet."""
        return any(c.result is None for i, c in self.open.items() if i != besides)

    def drain(self) -> list[ContentToolResult]:
        """The results held, in call order; no call is open afterwards."""
        held = [c.result for c in self.open.values() if c.result is not None]
        self.open.clear()
        return held

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


# Keeps each call's card in its call's place on a page (Shiny): the first card a call
# streamed (its running card) is its place, and shows a copy of the newest one (a
# progress card, its result). A later card's own content is put in an inert <template>
# where it arrived, so the page holds one card per call, and a copy is taken from it
# again if the page redraws the place. Idempotent: it re-applies whenever the page
# redraws a message. Keyed by call_key() digests only. Without it, the superseding
# stylesheets still show one card per call, where its newest card arrived.
CARD_PLACE_JS = """(() => {
  if (window.chatlasLikeCards) return;
  const KEY = /^[0-9a-f]{16}$/, SLOT = "div.chatlas-like-call[data-chatlas-like-call]";
  const stashed = (card) => {
    let kept = card.querySelector(":scope > template.chatlas-like-stash");
    if (!kept) {
      kept = document.createElement("template");
      kept.className = "chatlas-like-stash";
      kept.content.append(...card.childNodes);
      card.append(kept);
    }
    card.hidden = true;
    return kept.content;
  };
  const arrange = (key) => {
    if (!KEY.test(key)) return;
    const cards = document.querySelectorAll(`div.chatlas-like-call[data-chatlas-like-call="${key}"]`);
    if (cards.length < 2) return;
    const place = cards[0], newest = cards[cards.length - 1];
    for (let i = 1; i < cards.length - 1; i++) stashed(cards[i]);
    const shown = stashed(newest), step = newest.getAttribute("data-chatlas-like-step");
    if (place.getAttribute("data-chatlas-like-shows") === step) return;
    const opened = place.querySelector(":scope > details")?.open;
    place.replaceChildren(shown.cloneNode(true));
    place.setAttribute("data-chatlas-like-shows", step);
    if (opened) place.querySelector(":scope > details")?.setAttribute("open", "");
  };
  const arrangeIn = (nodes) => {
    const keys = new Set();
    for (const node of nodes) {
      if (node.nodeType !== 1) continue;
      if (node.matches(SLOT)) keys.add(node.getAttribute("data-chatlas-like-call"));
      for (const card of node.querySelectorAll(SLOT)) keys.add(card.getAttribute("data-chatlas-like-call"));
    }
    keys.forEach(arrange);
  };
  window.chatlasLikeCards = new MutationObserver((records) =>
    arrangeIn(records.flatMap((record) => Array.from(record.addedNodes))));
  window.chatlasLikeCards.observe(document.documentElement, { childList: true, subtree: true });
  arrangeIn([document.documentElement]);
})();"""


def in_place(request_id: str, step: int | str, card: str) -> str:
    """``card`` (HTML), a card of call ``request_id`` at ``step`` (0: running; a
    progress number; ``"end"``: its outcome), wrapped so :data:`CARD_PLACE_JS` keeps
    the call's newest card in the place of its first."""
    return (
        f"<div class='chatlas-like-call' data-chatlas-like-call='{call_key(request_id)}' "
        f"data-chatlas-like-step='{html.escape(str(step), quote=True)}'>{card}</div>"
    )


def superseding_style(request_id: str, step: int | None = None) -> str:
    """A stylesheet hiding the live card of call ``request_id`` at ``step`` (its
    running card is step 0), or every live card of the call when ``step`` is None."""
    selector = f".chatlas-like-live[data-call='{call_key(request_id)}']"
    if step is not None:
        selector += f"[data-step='{int(step)}']"
    return f"<style>{selector}{{display:none}}</style>"
