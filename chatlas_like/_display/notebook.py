"""Echo into a Jupyter notebook: one output, updated in place, in linear time.

The streamed text is re-sent to the front end only when it has grown by a fixed share
since the last update, so the bytes sent for an answer of n characters stay
proportional to n however many deltas it arrives in. When a text segment ends it is
sent once more, rendered as Markdown (raw HTML escaped). Each tool call is one
collapsible card below the text it follows: shown running when the model asks for it,
updated in place with each progress item, and replaced by its outcome, as in the
finished transcript (:func:`chatlas_like._display.render.chat_html`). A provider's web
searches and fetches are one collapsed panel per episode, as chatlas shows them
(:mod:`chatlas_like._display.web_activity`), updated in place as the episode grows,
ends, and has its sources cited.
"""

from __future__ import annotations

import html
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any

from .._core.content import (
    Content,
    ContentCitation,
    ContentJson,
    ContentText,
    ContentThinkingDelta,
    ContentToolRequest,
)
from .._core.tool_result import ContentToolResult, ContentToolResultProgress
from .._run.echo import EchoSink
from .live_cards import LiveCalls, running_card_html
from .render import content_html, inserted_html
from .web_activity import WEB_ITEMS, WebActivity, web_activity_html

if TYPE_CHECKING:
    from .._core.turn import Turn
    from .echo_options import EchoOptions
    from .terminal import EchoMode

__all__ = ["NotebookEcho"]

# Thinking deltas would each become an output; a structured answer is already in the
# streamed text.
_NOT_SHOWN = (ContentThinkingDelta, ContentJson)
DEFAULT_CARD_HEIGHT = "24em"  # what a card's preview is bounded by already
GROWTH = 0.05  # re-render when the text grew by this share...
MIN_GROWTH = 64  # ...and by at least this many characters


class NotebookEcho(EchoSink):
    """Renders a streaming answer into notebook outputs, each text segment updated in place.

    Parameters
    ----------
    mode
        ``"text"``, ``"output"`` or ``"all"``.
    display
        ``display(html, handle) -> handle``: shows ``html`` as a new output when
        ``handle`` is None, otherwise replaces that output; IPython's by default.
    options
        Display settings (:meth:`Chat.set_echo_options`): ``css_styles`` style the
        text, ``tool_result_max_height`` bounds each tool card.
    """

    def __init__(
        self, mode: EchoMode = "output", display: Any = None, *, options: EchoOptions | None = None
    ) -> None:
        from .echo_options import EchoOptions

        self.mode = mode
        self.options = options if options is not None else EchoOptions()
        self._display = display or _ipython_display
        self._handle: Any = None  # the output of the text segment being streamed
        self._parts: list[str] = []
        self._length = 0
        self._shown = 0
        self.updates = 0
        self.bytes_sent = 0
        self._calls = LiveCalls(lambda: 0.0)  # no clock: a card shows no elapsed time
        self._cards: dict[str, Any] = {}  # call id -> the output of its card
        # The latest web episode and its output: a citation may still mark it once it
        # has ended (its is_open says whether it still runs).
        self._web: tuple[WebActivity, Any] | None = None

    def user_turn(self, turn: Turn) -> None:
        if self.mode == "all":
            self._close_text()
            self._show(
                f"<div class='chatlas-like-user'><strong>👤</strong> {html.escape(turn.text)}</div>",
                None,
            )

    def inserted_turn(self, turn: Turn) -> None:
        if self.mode == "text":
            return
        self._close_text()
        self._close_web()
        self._show(inserted_html(turn), None)

    def text(self, delta: str) -> None:
        if delta:
            self._close_web()
        self._parts.append(delta)
        self._length += len(delta)
        if self._length - self._shown >= max(MIN_GROWTH, int(self._shown * GROWTH)):
            self._render_text()

    def content(self, item: Content) -> None:
        if self.mode == "text" or isinstance(item, _NOT_SHOWN):
            return
        if isinstance(item, ContentCitation):
            if self._web is not None and self._web[0].cite(item):
                self._show_web()  # a citation marks its source, the episode open or not
            return  # otherwise it is in the streamed text already
        if isinstance(item, ContentText):
            self.text(item.text)
            return
        self._close_text()
        if isinstance(item, WEB_ITEMS):
            if self._web is None or not self._web[0].is_open:
                self._web = (WebActivity(), None)
            self._web[0].add(item)
            self._show_web()
            return
        self._close_web()
        if isinstance(item, ContentToolRequest):
            self._card(item.id, running_card_html(self._calls.requested(item)))
        elif isinstance(item, ContentToolResultProgress):
            call = self._calls.progressed(item)
            if call is not None:
                self._card(call.request.id, running_card_html(call))
        elif isinstance(item, ContentToolResult) and item.request is not None:
            self._calls.finished(item)
            self._card(item.request.id, content_html(item), last=True)
        else:
            self._show(self._bounded(content_html(item)), None)

    def tool_started(self, request: ContentToolRequest) -> None:
        pass  # its card shows it running from the request on

    def _card(self, call_id: str, card: str, *, last: bool = False) -> None:
        """Show a call's card in its own output, replacing what it showed before."""
        handle = self._cards.pop(call_id, None) if last else self._cards.get(call_id)
        shown = self._show(self._bounded(card), handle)
        if not last:
            self._cards[call_id] = shown

    def _bounded(self, card: str) -> str:
        height = self.options.tool_result_max_height
        if height is not None and height != DEFAULT_CARD_HEIGHT:
            return f"<div style='max-height:{height};overflow:auto'>{card}</div>"
        return card

    def finish(self) -> None:
        self._close_text()
        self._close_web()
        self._calls.clear()
        self._cards.clear()
        self._web = None

    def _show_web(self) -> None:
        """Show the web episode in its own output, updated in place."""
        assert self._web is not None
        activity, handle = self._web
        self._web = (activity, self._show(web_activity_html(activity), handle))

    def _close_web(self) -> None:
        """End the open web episode: its heading says what it did (chatlas's words)."""
        if self._web is not None and self._web[0].is_open:
            self._web[0].is_open = False
            self._show_web()

    def _render_text(self) -> None:
        joined = "".join(self._parts)
        self._parts = [joined]
        self._shown = self._length
        self._handle = self._show(self._styled(_text_html(joined)), self._handle)

    def _close_text(self) -> None:
        if self._length:
            from .render import prose_html

            self._handle = self._show(self._styled(prose_html("".join(self._parts))), self._handle)
        self._parts = []
        self._length = self._shown = 0
        self._handle = None

    def _styled(self, payload: str) -> str:
        css = self.options.css()
        return f"<div style='{html.escape(css)}'>{payload}</div>" if css else payload

    def _show(self, payload: str, handle: Any) -> Any:
        self.updates += 1
        self.bytes_sent += len(payload)
        return self._display(payload, handle)


def _ipython_display(payload: str, handle: Any) -> Any:
    from IPython.display import display  # pyright: ignore

    # With its text, so a front end without HTML (jupyter console, nbconvert to text)
    # shows what the output says, not ``<IPython.core.display.HTML object>``.
    bundle = {"text/html": payload, "text/plain": plain_text(payload)}
    if handle is None:
        return display(bundle, raw=True, display_id=True)  # pyright: ignore
    handle.update(bundle, raw=True)
    return handle


class _TextOf(HTMLParser):
    """The text an HTML payload shows: its characters, a line break per block, no
    style or script (the payloads are ours, so no malformed-markup recovery is needed)."""

    _BLOCKS = frozenset({"div", "p", "pre", "br", "li", "tr", "summary", "h1", "h2", "h3"})
    _HIDDEN = frozenset({"style", "script"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._HIDDEN:
            self._hidden += 1
        elif tag in self._BLOCKS:
            self.parts.append("\n")
        elif tag in ("td", "th"):
            self.parts.append("  ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        elif tag in self._BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def plain_text(payload: str) -> str:
    """What ``payload`` (an output's HTML) reads as in plain text."""
    parser = _TextOf()
    parser.feed(payload)
    parser.close()
    lines = (line.rstrip() for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line.strip())


def _text_html(text: str) -> str:
    return f"<div class='chatlas-like-text' style='white-space:pre-wrap'>{html.escape(text)}</div>"
