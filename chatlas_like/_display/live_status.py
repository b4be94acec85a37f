"""The terminal's transient status area: one line per running tool call, and a spinner
while the model is thinking.

Used by the echo (:class:`chatlas_like._display.terminal.ConsoleEcho`) and the console chat. Most
calls finish in milliseconds, and an area drawn and erased for each of them would cost
more than the call; so the area appears only once its oldest line (a call, or the wait
for the model) has been open for a grace period (a quarter of a second by default).
From then on it is a ``rich.live.Live`` under the output, redrawn on a clock (never per
text delta, so the echo stays linear in what it receives) by one ticker thread per
area: started the first time the area may be shown and stopped by :meth:`LiveArea.close`
(the end of a chat call), not a thread per call. Without a clock (``auto_refresh=False``)
there is no thread: the area is drawn when the echo asks, once the grace has passed by
the echo's clock, which keeps it deterministic.

The echo hides the area before it writes anything, holding the area's lock (which the
ticker holds to draw), so a tick never lands between a hide and a write; it shows the
area again afterwards, so what is printed stays in order and the area is always last.
Each line shows a call, its elapsed time and its latest progress; names, arguments and
progress come from the model or a tool and go through
:func:`chatlas_like._core.terminal_safe.safe`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from .._core.terminal_safe import safe
from .._tools.workers import leave_signals_to_main_thread
from .live_cards import LiveCall, LiveCalls, progress_line
from .render import format_call, outcome_label
from .web_activity import WebActivity

__all__ = ["GRACE_S", "LiveArea", "StatusLines"]

CALL_CHARS = 60  # of a call's arguments on its status line
GRACE_S = 0.25  # how long something is open before the area shows it


class StatusLines:
    """What the area shows: a spinner while waiting for the model, then the open calls."""

    def __init__(self, calls: LiveCalls) -> None:
        self.calls = calls
        self.waiting_since: float | None = None
        self.web: WebActivity | None = None  # a web episode still open, since web_since
        self.web_since: float | None = None
        self._web_spinner: Any = None
        self._spinners: dict[str, Any] = {}
        self._waiting_spinner: Any = None

    def __bool__(self) -> bool:
        return self.waiting_since is not None or self.web is not None or any(self._running())

    def _running(self) -> Iterator[tuple[str, LiveCall]]:
        # Only calls that run or are done: one asked for may still be under review, and
        # a review hook may be asking the user at this terminal.
        return (
            (i, call)
            for i, call in self.calls.open.items()
            if call.started is not None or call.result is not None
        )

    def opened(self) -> float | None:
        """When the oldest line opened, by the calls' clock; None when there is none."""
        times = [call.started for _, call in self._running() if call.started is not None]
        if self.waiting_since is not None:
            times.append(self.waiting_since)
        if self.web_since is not None:
            times.append(self.web_since)
        return min(times, default=None)

    def __rich__(self) -> Any:
        from rich.console import Group
        from rich.spinner import Spinner
        from rich.text import Text

        now = self.calls.clock()
        lines: list[Any] = []
        if self.waiting_since is not None:
            if self._waiting_spinner is None:
                self._waiting_spinner = Spinner("dots", style="dim")
            self._waiting_spinner.update(
                text=Text(f"thinking… {now - self.waiting_since:.1f}s", style="dim")
            )
            lines.append(self._waiting_spinner)
        if self.web is not None:
            lines.append(self._web_line())
        for spinner_id in [i for i in self._spinners if i not in self.calls.open]:
            del self._spinners[spinner_id]  # spinners live as long as their call
        for call_id, call in self._running():
            if call.result is not None:  # done: printed once the calls before it are
                lines.append(self._finished_line(call, now))
                continue
            spinner = self._spinners.get(call_id)
            if spinner is None:
                spinner = self._spinners[call_id] = Spinner("dots", style="cyan")
            text = Text(
                f"running {format_call(call.request, CALL_CHARS)}  {call.elapsed(now):.1f}s",
                style="cyan",
            )
            if call.progress is not None:
                text.append(f"  · {progress_line(call.progress)}", style="dim")
            spinner.update(text=text)
            lines.append(spinner)
        return Group(*lines)

    def _web_line(self) -> Any:
        """The open web episode: chatlas's heading and what it does last."""
        from rich.spinner import Spinner
        from rich.text import Text

        web = self.web
        assert web is not None
        if self._web_spinner is None:
            self._web_spinner = Spinner("dots", style="cyan")
        latest = f"🔍 {web.queries[-1]}" if web.queries else ""
        if web.fetches and not latest:
            latest = f"🌐 {web.fetches[-1].url}"
        line = Text(f"{web.header()}  {latest}", style="cyan", no_wrap=True, overflow="ellipsis")
        self._web_spinner.update(text=line)
        return self._web_spinner

    @staticmethod
    def _finished_line(call: LiveCall, now: float) -> Any:
        from rich.text import Text

        result = call.result
        assert result is not None
        style = "red" if result.is_error else "green"
        return Text(
            f"{outcome_label(result)} {format_call(call.request, CALL_CHARS)}  "
            f"{call.elapsed(now):.1f}s",
            style=style,
        )


class LiveArea:
    """Shows and hides :class:`StatusLines` under a console's output.

    Parameters
    ----------
    console
        Returns the ``rich.console.Console`` to draw on (made on first use).
    lines
        What the area shows; it changes only while ``lock`` is held.
    lock
        Held by whoever writes to the console or changes ``lines``; the ticker holds it
        to draw. A new one by default.
    auto_refresh
        Redraw on a clock, from a ticker thread; off, draw only in :meth:`show`.
    refresh_per_second
        How often the ticker wakes.
    grace
        Seconds the oldest line is open before the area is drawn.
    """

    def __init__(
        self,
        console: Callable[[], Any],
        lines: StatusLines,
        *,
        lock: threading.RLock | None = None,
        auto_refresh: bool = True,
        refresh_per_second: float = 8.0,
        grace: float = GRACE_S,
    ) -> None:
        self._console = console
        self.lines = lines
        self.lock = lock if lock is not None else threading.RLock()
        self.auto_refresh = auto_refresh
        self.refresh_per_second = refresh_per_second
        self.grace = grace
        self._wanted = False  # the output is at a line start: the area may be drawn
        self._live: Any = None
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()

    @property
    def shown(self) -> bool:
        """Whether the area is on the screen now."""
        return self._live is not None

    @property
    def wanted(self) -> bool:
        """Whether the area is to be drawn (once its grace has passed)."""
        return self._wanted

    @property
    def ticking(self) -> bool:
        """Whether the ticker thread runs."""
        return self._ticker is not None

    def show(self) -> None:
        """Let the area be drawn under the output: now, if it has waited its grace and
        there is no clock; by the ticker otherwise."""
        with self.lock:
            if not self.lines:
                self.hide()
                return
            self._wanted = True
            if self.auto_refresh:
                if self._ticker is None:
                    self._start_ticker()
            else:
                self._draw()

    def hide(self) -> None:
        """Erase the area, so that what is written next lands where it belongs."""
        with self.lock:
            self._wanted = False
            live, self._live = self._live, None
            if live is not None:
                from rich.text import Text

                live.update(Text(""), refresh=False)  # stop() draws once more: nothing
                live.stop()

    def close(self) -> None:
        """Erase the area and stop its ticker; :meth:`show` starts a new one.

        Not to be called with ``lock`` held: it waits for the ticker, which may be
        waiting for the lock.
        """
        with self.lock:
            self.hide()
            ticker, self._ticker = self._ticker, None
            self._stop.set()
        if ticker is not None:
            ticker.join()

    def _start_ticker(self) -> None:
        self._stop = stop = threading.Event()
        self._ticker = threading.Thread(
            target=self._tick, args=(stop,), name="chatlas_like-live-area", daemon=True
        )
        self._ticker.start()

    def _tick(self, stop: threading.Event) -> None:
        leave_signals_to_main_thread()
        period = 1.0 / self.refresh_per_second
        while not stop.wait(period):
            with self.lock:
                if stop.is_set():
                    return
                try:
                    self._draw()
                except Exception:  # a status line must never print a traceback: stop it
                    self._wanted = False
                    with contextlib.suppress(Exception):
                        self.hide()
                    return

    def _draw(self) -> None:
        """Draw the area if it is wanted and has waited its grace; redraw it if shown.

        Called with ``lock`` held.
        """
        if not self._wanted:
            return
        if not self.lines:
            self.hide()
            return
        if self._live is not None:
            self._live.refresh()
            return
        opened = self.lines.opened()
        if opened is None or self.lines.calls.clock() - opened < self.grace:
            return
        from rich.live import Live

        # Refreshed here only (by the ticker or the echo): one thread, not rich's own.
        self._live = Live(
            safe(self.lines),
            console=self._console(),
            transient=True,
            auto_refresh=False,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start(refresh=True)
