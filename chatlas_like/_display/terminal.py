"""Where a chat's output goes while it happens: a terminal, a notebook, or nowhere.

An :class:`Echo` receives text deltas and finished content (tool requests, results).
The turn loop calls it in one place for all four verbs. Every sink does work
proportional to what it receives: text deltas are written as they come, never
re-rendered with what came before, so 100 tool rounds cost 100 times one round.

On a terminal, a text segment (the text between two tool calls, or the whole answer)
streams as raw deltas while it is open; when it ends, the cursor goes back to where it
began and the segment is drawn again as Markdown (headings, bold, lists, code, links as
text), once. That redraw costs the segment's length, so the whole echo stays linear. A
segment with no Markdown syntax (it would read the same), one taller than the screen
(partly scrolled away), one holding control characters,
``echo="text"`` and output that is not a terminal stay as streamed: plain text.

Tool calls on a terminal: each request is printed as it arrives, and the calls still
running are shown under the output in a transient status area (one line per call with
its elapsed time and latest progress, :mod:`chatlas_like._display.live_status`) once the oldest
has run for a grace period (a call that ends sooner costs no drawing), redrawn on a
clock and erased before anything else is written. The lines stay in call order: a call
that finishes while one asked for before it still runs shows its outcome in its line,
and its result is printed above the area once the calls before it are done, so results
read in call order (completion order is for delivery, not layout). Each method holds
the area's lock while it writes, so the clock's redraws never interleave with it.
Output that is not a terminal (a file, CI) has no status area: the request line, each
progress item once as a plain line, and each result as it comes.

A provider's web searches and fetches are one panel per episode, as chatlas shows them
(:mod:`chatlas_like._display.web_activity`): ``Searching the web…`` in the status area
while the episode runs, and its panel (``Searched the web  (2 results)``) printed once
it ends. Citations that arrive with the text after it are not counted there: a printed
panel is never redrawn.

``echo=`` modes: ``"none"``; ``"text"`` (the model's text); ``"output"`` (text, tool
requests and results, web activity); ``"all"`` (also the user's prompt).

What the model or a tool controls reaches a terminal without control sequences
(:mod:`chatlas_like._core.terminal_safe`): every write below goes through ``safe()`` or
``strip_controls()``.
"""

from __future__ import annotations

import copy
import functools
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, Literal

from .._core.content import (
    Content,
    ContentCitation,
    ContentJson,
    ContentServerToolRequest,
    ContentServerToolResult,
    ContentText,
    ContentThinking,
    ContentThinkingDelta,
    ContentToolRequest,
)
from .._core.terminal_safe import safe, strip_controls
from .._core.tool_result import ContentToolResult, ContentToolResultProgress
from .._run.echo import EchoSink
from .echo_options import EchoOptions
from .live_cards import LiveCalls, progress_line
from .live_status import GRACE_S, LiveArea, StatusLines
from .render import first_lines, format_call, result_rich, server_tool_lines
from .web_activity import WEB_ITEMS, WebActivity, web_activity_rich

if TYPE_CHECKING:
    from .._core.turn import Turn
    from .echo_options import EchoOptions

__all__ = ["ECHO_MODES", "ConsoleEcho", "EchoMode"]

EchoMode = Literal["none", "text", "output", "all"]
ECHO_MODES = ("none", "text", "output", "all")
# Characters that move the cursor in ways a segment's row count cannot follow, or that
# were stripped as it streamed (C1 controls, which start 8-bit escape sequences).
_UNCOUNTABLE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")
# What Markdown would draw differently from the raw text: emphasis, code, headings,
# links, HTML and entities, tables, escapes, lists, quotes, rules and indented code.
_MARKDOWN = re.compile(
    r"[*_`#\[\]<>|~\\&]|^ *(?:[-+]|\d+[.)])(?: |$)|^ *(?:={3,}|-{3,})$|^ {4}", re.M
)


class ConsoleEcho(EchoSink):
    """Writes to a terminal through rich: raw text deltas, compact tool panels.

    Parameters
    ----------
    mode
        ``"text"``, ``"output"`` or ``"all"``.
    console
        A ``rich.console.Console``; a new one on stdout by default.
    thinking
        Show the model's extended thinking as it streams, dimmed (hidden when False).
    options
        Display settings (:meth:`Chat.set_echo_options`).
    live
        Show running tool calls in a status area; None (default): when the output is
        a terminal (and ``mode`` is not ``"text"``).
    auto_refresh
        Redraw the status area on a clock (``refresh_per_second``, one ticker thread);
        off, it is drawn only when the echo receives something (no thread).
    refresh_per_second
        How often elapsed times are redrawn.
    grace
        Seconds a call runs before the status area shows it.
    clock
        The time source for elapsed times (and the grace).
    """

    def __init__(
        self,
        mode: EchoMode = "output",
        console: Any = None,
        thinking: bool = True,
        options: EchoOptions | None = None,
        *,
        live: bool | None = None,
        auto_refresh: bool = True,
        refresh_per_second: float = 8.0,
        grace: float = GRACE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:

        self.mode = mode
        self.options = options if options is not None else EchoOptions()
        if console is None and self.options.rich_console:
            from rich.console import Console

            console = Console(**self.options.rich_console)
        self._console: Any = console
        self._thinking_lines = 0
        self.thinking = thinking and mode != "text"
        self._file: IO[str] = console.file if console is not None else sys.stdout
        self._line_start = True
        if console is not None:
            styled = console.is_terminal and not console.no_color
        else:
            styled = self._file.isatty() and "NO_COLOR" not in os.environ
        self._dim, self._undim = ("\x1b[2m", "\x1b[22m") if styled else ("", "")
        if console is not None:
            terminal = console.is_terminal and not console.is_dumb_terminal
        else:
            terminal = self._file.isatty() and os.environ.get("TERM") != "dumb"
        self._markdown = terminal and mode != "text"
        self._segment: list[str] = []  # the open text segment's deltas (Markdown only)
        self._markdown_template: Any = None
        self._segment_at_line_start = False
        self._calls = LiveCalls(clock)
        self._status = StatusLines(self._calls)
        self._web: WebActivity | None = None  # the web episode still open
        self._area: LiveArea | None = None
        # Held by each method below while it writes or changes what the area shows,
        # and by the area's ticker while it draws.
        self._lock = threading.RLock()
        if live if live is not None else terminal and mode != "text":
            self._area = LiveArea(
                lambda: self.console,
                self._status,
                lock=self._lock,
                auto_refresh=auto_refresh,
                refresh_per_second=refresh_per_second,
                grace=grace,
            )

    @property
    def console(self) -> Any:
        """The rich console, made on first use (plain text never needs one)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self._file)
        return self._console

    def user_turn(self, turn: Turn) -> None:
        if self.mode != "all":
            return
        from rich.text import Text

        with self._lock:
            self._close_web()
            self._hide()
            self._end_line()
            self.console.print(safe(Text("👤 ", style="bold") + Text(turn.text)))
            self._line_start = True

    def inserted_turn(self, turn: Turn) -> None:
        with self._lock:
            if self.mode == "text":
                return
            from rich.text import Text

            self._close_web()
            self._hide()
            self._end_line()
            label = Text(f"↳ inserted {turn.role} message: ", style="bold magenta")
            self.console.print(safe(label + Text(first_lines(turn.text, 3), style="dim")))
            self._show()

    def text(self, delta: str) -> None:
        if not delta:
            return
        with self._lock:
            self._close_web()
            self._hide()  # raw writes must not land inside the status area
            if self._markdown:
                if not self._segment:
                    self._segment_at_line_start = self._line_start
                self._segment.append(delta)
            self._file.write(strip_controls(delta))
            self._line_start = delta.endswith("\n")

    def content(self, item: Content) -> None:
        with self._lock:
            if isinstance(item, WEB_ITEMS):
                if self.mode != "text":  # hidden with the tool calls, as in chatlas
                    self._web_item(item)
                return
            if isinstance(item, ContentCitation):
                if self._web is not None:
                    self._web.cite(item)
                return  # citations stay in the text
            self._close_web()
            if isinstance(item, ContentThinkingDelta):
                self._hide()
                self._thinking_delta(item)
                return
            if isinstance(item, ContentToolResult) and not isinstance(
                item, ContentToolResultProgress
            ):
                self._result(item)
                return
            tracked = self._track(item)
            if self.mode == "text" or isinstance(item, ContentJson):
                if tracked:
                    self._show()  # a quiet echo still shows what runs
                return  # a structured answer was echoed as its text
            if isinstance(item, ContentText):
                self.text(item.text)
                return
            if isinstance(item, ContentToolResultProgress):
                self._progress(item)
                return
            self._hide()
            self._end_line()
            self._print_content(item)
            self._line_start = True
            self._show()

    def _track(self, item: Content) -> bool:
        """Keep the open calls up to date; whether ``item`` is part of a tool call."""
        if isinstance(item, ContentToolRequest):
            self._calls.requested(item)
        elif isinstance(item, ContentToolResultProgress):
            self._calls.progressed(item)
        else:
            return False
        return True

    def _result(self, item: ContentToolResult) -> None:
        """A call's outcome. With a status area, results are printed in call order: one
        that finishes while a call asked for before it still runs is shown finished in
        its status line, in its place, and printed once the calls before it are done.
        Without one (a file, CI), each is printed as it comes."""
        if self._area is None:
            self._calls.finished(item)
            self._print_results([item])
        else:
            self._print_results(self._calls.settle(item))
        self._show()

    def _print_results(self, results: list[ContentToolResult]) -> None:
        # A generator's yields were printed, as in chatlas: its final result only when
        # it failed, so its outcome is seen.
        shown = [r for r in results if r.parts is None or r.outcome != "success"]
        if self.mode == "text":
            shown = []
        if not shown:
            return
        self._hide()
        self._end_line()
        for result in shown:
            self._print_content(result)
        self._line_start = True

    def _print_content(self, item: Content) -> None:
        from rich.text import Text

        if isinstance(item, (ContentServerToolRequest, ContentServerToolResult)):
            self._server_tool(item)
        elif isinstance(item, ContentThinking):
            if self.thinking:  # only redacted thinking arrives whole
                self.console.print(Text("💭 [redacted thinking]", style="dim"))
        elif isinstance(item, ContentToolRequest):
            self.console.print(safe(Text(f"🔧 {format_call(item)}", style="bold cyan")))
        elif isinstance(item, ContentToolResult):
            self.console.print(safe(result_rich(item, self.options.tool_result_max_lines)))
        else:
            self.console.print(safe(Text(str(item), style="dim")))

    def _web_item(self, item: Content) -> None:
        """A web search or fetch block joins the open episode (shown running in the
        status area); its panel is printed once the episode ends."""
        if self._web is None:
            self._web = WebActivity()
            self._status.web, self._status.web_since = self._web, self._calls.clock()
        self._web.add(item)
        self._show()

    def _close_web(self) -> None:
        """End the open web episode, if any: print its panel, as chatlas closes it."""
        web, self._web = self._web, None
        if web is None:
            return
        self._status.web = self._status.web_since = None
        web.is_open = False
        self._hide()
        self._end_line()
        panel = web_activity_rich(web, self.options.web_activity_max_sources)
        self.console.print(safe(panel))
        self._line_start = True

    def _progress(self, item: ContentToolResultProgress) -> None:
        """A generator tool's yield, on a line of its own: the yields are what the echo
        shows of such a call, as in chatlas (its status line, if any, runs on)."""
        from rich.text import Text

        name = item.request.name if item.request is not None else "tool"
        self._hide()
        self._end_line()
        self.console.print(safe(Text(f"  ↳ {name}: {progress_line(item)}", style="dim")))
        self._line_start = True
        self._show()

    def _thinking_delta(self, delta: ContentThinkingDelta) -> None:
        if not self.thinking:
            return
        if delta.phase == "start":
            self._end_line()
            self._file.write(f"{self._dim}💭 {self._undim}")
            self._line_start = False
            self._thinking_lines = 0
        elif delta.phase == "end":
            self._end_line()
        elif delta.thinking:
            self._thinking_text(delta.thinking)

    def _thinking_text(self, text: str) -> None:
        cap = self.options.thinking_max_lines
        if cap is not None:
            if self._thinking_lines >= cap:
                return
            lines = text.split("\n")
            if self._thinking_lines + len(lines) - 1 >= cap:
                text = "\n".join(lines[: cap - self._thinking_lines]) + " …"
                self._thinking_lines = cap
            else:
                self._thinking_lines += len(lines) - 1
        self._file.write(f"{self._dim}{strip_controls(text)}{self._undim}")
        self._line_start = text.endswith("\n")

    def _server_tool(self, item: ContentServerToolRequest | ContentServerToolResult) -> None:

        title, lines, error = server_tool_lines(item, self.options.web_activity_max_sources)
        if not lines:
            self.console.print(safe(title), style="bold red" if error else "bold cyan")
            return
        from rich.panel import Panel
        from rich.text import Text

        body = Text("\n".join(lines), style="dim")
        self.console.print(safe(Panel(body, title=title, title_align="left", expand=False)))

    def open_calls(self) -> frozenset[str]:
        """The ids of the calls whose outcome this echo has not printed yet."""
        with self._lock:
            return frozenset(self._calls.open)

    def tool_started(self, request: ContentToolRequest) -> None:
        with self._lock:
            self._calls.started(request)  # its elapsed time counts from now
            self._show()

    def finish(self) -> None:
        with self._lock:
            self._close_web()
            self._print_results(self._calls.drain())
            self._status.waiting_since = None
            self._hide()
            self._end_line()
            self._file.flush()
        if self._area is not None:
            self._area.close()  # its ticker ends with the chat call (outside the lock it needs)

    def _show(self) -> None:
        """Let the status area be drawn under the output (when there is one and it has
        lines): once its oldest line has been open for the grace period."""
        if self._area is None or not self._status:
            self._hide()
            return
        if not self._area.wanted:
            self._end_line()  # the area is drawn from the start of a line
            self._file.flush()
        self._area.show()

    def _hide(self) -> None:
        if self._area is not None:
            self._area.hide()

    def _end_line(self) -> None:
        self._render_segment()
        if not self._line_start:
            self._file.write("\n")
            self._line_start = True

    def _render_segment(self) -> None:
        """Draw the text segment that just ended again, as Markdown, over its raw text."""
        if not self._segment:
            return
        text = "".join(self._segment)
        self._segment.clear()
        if not self._segment_at_line_start or not text.strip() or _UNCOUNTABLE.search(text):
            return
        if not _MARKDOWN.search(text):
            return  # plain prose: as streamed is already how it reads (and a redraw costs)
        from rich.cells import cell_len

        console = self.console
        width = max(console.width, 1)
        rows = sum(max(1, -(-cell_len(line) // width)) for line in text.split("\n"))
        if rows >= console.height:
            return  # its first rows scrolled out of reach: leave it as streamed
        # Up to the segment's first row (column 0), then clear to the end of the screen.
        self._file.write(f"\x1b[{rows - 1}F\x1b[J" if rows > 1 else "\r\x1b[J")
        console.print(safe(self._as_markdown(text)))
        self._line_start = True

    def _as_markdown(self, text: str) -> Any:
        """``text`` as a rich ``Markdown``, styled by ``set_echo_options(rich_markdown=...)``
        (links stay plain text).

        rich's ``Markdown`` makes a new markdown-it parser for every document, which costs
        more than parsing a segment; here one parser serves them all, and each segment
        is a copy of one styled template. (rich before 13.2 parses with commonmark: built
        the ordinary way.)
        """
        from rich.markdown import Markdown

        styling: dict[str, Any] = {**self.options.rich_markdown, "hyperlinks": False}
        template = self._markdown_template
        if template is None:
            template = self._markdown_template = Markdown("", **styling)
        if type(template.parsed) is not list:
            return Markdown(text, **styling)
        markdown = copy.copy(template)
        markdown.markup = text
        markdown.parsed = _markdown_parser().parse(text)
        return markdown


@functools.cache
def _markdown_parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt().enable("strikethrough").enable("table")  # as rich configures it
