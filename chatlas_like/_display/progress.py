"""Progress of long work: ``parallel_chat``, ``batch_chat``, code waiting on many results.

One reporter (:class:`ProgressReporter`) keeps the numbers: how many items of how many
are finished, and a count per outcome (``done``, ``failed``, ``retried``...). A view,
chosen once when the reporter is made, shows them where the output goes:

- a terminal: one line drawn with rich, the columns chatlas shows (spinner,
  description, bar, percentage, elapsed time) followed by the counts
  (``⠋ Answering 3 prompts ━━━━━━╺━━━━  67% 0:00:04 2 done | 0 failed | 1 retried``).
  It is redrawn when the numbers change, and on a clock (a ticker thread, which leaves
  Ctrl-C to the main thread) so the spinner and the time move while nothing else does.
  The last frame stays on screen, a check mark (or a cross, when the work ended by an
  error) in place of the spinner;
- a Jupyter notebook: one output (IPython's ``display`` with a ``display_id``) updated
  in place, HTML with a ``<progress>`` bar and a plain-text twin; no thread, it is
  updated when the numbers change;
- anything else (a pipe, CI, a log file): no animation and no control characters, a
  plain line now and then (at most every :data:`PLAIN_EVERY` seconds, when something
  happens) and a last line with the final numbers.

The output goes to standard error, so progress never mixes with what a script prints
on standard output (``python script.py > answers.txt`` still shows it). Nothing is
shown with ``echo="none"``, nor when rich's global console is quiet
(``rich.reconfigure(quiet=True)``, the only switch chatlas has). rich is imported only
when a terminal view starts.

Redraws are bounded: at most one every :data:`MIN_GAP` seconds when changes come in a
burst (the terminal's ticker draws the last of them; a notebook shows it at the next
change or at the end), so thousands of results arriving at once cost a handful of
redraws, not thousands.

Code that waits on several results drives a reporter with three calls::

    from chatlas_like._display.progress import progress_reporter

    with progress_reporter("Waiting for 12 conversations", 12) as progress:  # start()
        for ok in results_as_they_come():
            progress.advance("done" if ok else "failed")
    # leaving the block calls finish(): the last frame, a cross if it raised

:meth:`~ProgressReporter.tally` counts an event that finishes no item (a retry), and
:meth:`~ProgressReporter.update` sets the numbers outright (a status polled from
somewhere else, as ``batch_chat`` does).
"""

from __future__ import annotations

import contextlib
import html
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import IO, Any, Protocol

from .._core.terminal_safe import strip_controls
from .._tools.workers import leave_signals_to_main_thread
from .sinks import in_notebook
from .terminal import ECHO_MODES, EchoMode

__all__ = [
    "MIN_GAP",
    "PLAIN_EVERY",
    "ProgressReporter",
    "ProgressSnapshot",
    "progress_reporter",
]

PLAIN_EVERY = 30.0  # seconds between two lines of plain output, at the most often
MIN_GAP = 0.1  # seconds between two redraws caused by changes (rich's refresh period)
REFRESH_PER_SECOND = 10.0  # the terminal's clock: spinner and elapsed time
BAR_WIDTH = 40  # as rich's BarColumn
STYLES = {"done": "green", "failed": "red", "retried": "yellow", "not started": "dim"}
HTML_COLORS = {"done": "green", "failed": "#c00", "retried": "#b58900", "not started": "gray"}


@dataclass(frozen=True, slots=True)
class ProgressSnapshot:
    """What a reporter shows at one moment (views draw these, never the live numbers).

    Attributes
    ----------
    description
        What the work is ("Answering 300 prompts").
    total
        Items in all; None when unknown (no bar, no percentage).
    completed
        Items finished, whatever their outcome.
    counts
        ``(outcome, count)`` pairs in the order shown: the outcomes named when the
        reporter was made (even at 0), then any other that has been counted.
    started
        When the work began (``time.time()``).
    ended
        When it ended, or None while it runs.
    ok
        False when it ended by an error (or an interrupt).
    note
        What the work is waiting on now ("waiting on the rate limit..."), or "".
    """

    description: str
    total: int | None
    completed: int
    counts: tuple[tuple[str, int], ...]
    started: float
    ended: float | None = None
    ok: bool = True
    note: str = ""

    def elapsed(self, now: float | None = None) -> float:
        """Seconds since the work began (until it ended)."""
        end = self.ended if self.ended is not None else now if now is not None else time.time()
        return max(0.0, end - self.started)

    def percent(self) -> int | None:
        """Whole percent finished, or None without a total."""
        if not self.total:
            return None
        return min(100, self.completed * 100 // self.total)

    def counts_text(self) -> str:
        """``"2 done | 0 failed | 1 retried"``."""
        return " | ".join(f"{count} {outcome}" for outcome, count in self.counts)

    def line(self, now: float | None = None) -> str:
        """The plain-text line: ``"Answering 3 prompts: 2/3 (67%), 0:00:04, 2 done | ..."``."""
        parts = [clock_text(self.elapsed(now))]
        if self.total is not None:
            parts.insert(0, f"{self.completed}/{self.total} ({self.percent()}%)")
        if self.counts:
            parts.append(self.counts_text())
        if self.note:
            parts.append(self.note)
        return f"{strip_controls(self.description)}: {', '.join(parts)}"

    def key(self) -> tuple[Any, ...]:
        """What the line shows but the spinner and the clock: a change means a redraw."""
        return (self.description, self.total, self.completed, self.counts, self.ended, self.note)


def clock_text(seconds: float) -> str:
    """``0:00:04``: elapsed time as rich's ``TimeElapsedColumn`` writes it."""
    return str(timedelta(seconds=int(seconds)))


class _View(Protocol):
    """How a reporter is shown: told when it starts, changes and ends (never under its lock)."""

    def begin(self, reporter: ProgressReporter) -> None: ...
    def changed(self, reporter: ProgressReporter) -> None: ...
    def end(self, reporter: ProgressReporter) -> None: ...


class ProgressReporter:
    """The numbers of work on many items, shown by a view (see the module docstring).

    Made by :func:`progress_reporter`, which picks the view. Safe to call from several
    threads; the view draws from snapshots, outside the reporter's lock.

    Parameters
    ----------
    description
        What the work is, shown first.
    total
        Items in all (None: unknown).
    outcomes
        The outcomes always shown, in this order, even at 0 (chatlas shows
        ``0 failed``). Other outcomes appear once counted.
    view
        Where the numbers are shown.
    """

    def __init__(
        self,
        description: str,
        total: int | None,
        outcomes: Sequence[str],
        view: _View,
    ) -> None:
        self._lock = threading.Lock()
        self._description = description
        self._total = total
        self._completed = 0
        self._counts: dict[str, int] = dict.fromkeys(outcomes, 0)
        self._started = time.time()
        self._ended: float | None = None
        self._ok = True
        self._running = False
        self._view = view
        self._note = ""

    @property
    def running(self) -> bool:
        """Whether :meth:`start` was called and :meth:`finish` not yet."""
        return self._running

    def snapshot(self) -> ProgressSnapshot:
        """The numbers now."""
        with self._lock:
            return ProgressSnapshot(
                self._description,
                self._total,
                self._completed,
                tuple(self._counts.items()),
                self._started,
                self._ended,
                self._ok,
                self._note if self._ended is None else "",
            )

    def start(self, *, since: float | None = None) -> ProgressReporter:
        """Show the work as begun; returns the reporter.

        Parameters
        ----------
        since
            When it began (``time.time()``), if before now: work picked up again, e.g.
            a batch submitted by an earlier process. Now by default.
        """
        with self._lock:
            if self._running:
                return self
            self._running = True
            self._started = since if since is not None else time.time()
            self._ended = None
        self._view.begin(self)
        return self

    def advance(self, outcome: str = "done", amount: int = 1) -> None:
        """``amount`` items finished, each with ``outcome`` (``"done"``, ``"failed"``...)."""
        with self._lock:
            self._completed += amount
            self._counts[outcome] = self._counts.get(outcome, 0) + amount
        self._changed()

    def tally(self, outcome: str, amount: int = 1) -> None:
        """Count ``amount`` events that finish no item (``"retried"``)."""
        if amount == 0:
            return
        with self._lock:
            self._counts[outcome] = self._counts.get(outcome, 0) + amount
        self._changed()

    def note(self, text: str) -> None:
        """Say what the work waits on now (``""``: nothing), shown after the counts."""
        with self._lock:
            if text == self._note:
                return
            self._note = text
        self._changed()

    def update(self, completed: int, counts: Mapping[str, int]) -> None:
        """Set the numbers outright: ``completed`` items finished, and these counts."""
        with self._lock:
            self._completed = completed
            self._counts.update(counts)
        self._changed()

    def finish(self, *, ok: bool = True) -> None:
        """The work is over: draw the last frame (``ok=False``: it ended by an error)."""
        with self._lock:
            if not self._running:
                return
            self._running = False
            self._ended = time.time()
            self._ok = ok
        self._view.end(self)

    def _changed(self) -> None:
        if self._running:
            self._view.changed(self)

    def __enter__(self) -> ProgressReporter:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self.finish(ok=kind is None)


def progress_reporter(
    description: str,
    total: int | None,
    outcomes: Sequence[str] = ("done", "failed"),
    *,
    echo: EchoMode = "output",
    stream: IO[str] | None = None,
    plain_every: float = PLAIN_EVERY,
) -> ProgressReporter:
    """A reporter for work on ``total`` items, shown where the output goes.

    Parameters
    ----------
    description
        What the work is ("Waiting for 12 conversations").
    total
        Items in all; None when unknown.
    outcomes
        Outcomes always shown, in order (others appear once counted).
    echo
        ``"none"`` shows nothing (the numbers are still kept); any other mode shows
        the progress (the chat verbs' vocabulary, so a caller's setting passes through).
    stream
        Where to write; standard error by default, or the notebook's output when
        running in Jupyter. A terminal gets the live line, anything else plain lines.
    plain_every
        Seconds between two plain lines, at the most often.

    Returns
    -------
    ProgressReporter
        Not started: call :meth:`~ProgressReporter.start`, or use it as a context
        manager.
    """
    if echo not in ECHO_MODES:
        raise ValueError(f"echo must be one of {', '.join(ECHO_MODES)}; got {echo!r}")
    return ProgressReporter(description, total, outcomes, _view_for(echo, stream, plain_every))


def _view_for(echo: EchoMode, stream: IO[str] | None, plain_every: float) -> _View:
    if echo == "none" or _rich_is_quiet():
        return _SILENT
    if stream is None:
        if in_notebook():
            return NotebookView()
        stream = sys.stderr
        if stream is None:  # pythonw: nowhere to write
            return _SILENT
    if _is_terminal(stream):
        return TerminalView(stream)
    return PlainView(stream, plain_every)


def _rich_is_quiet() -> bool:
    """Whether rich's global console was silenced (only code that imported rich could)."""
    if "rich" not in sys.modules:
        return False
    from rich import get_console

    return bool(get_console().quiet)


def _is_terminal(stream: IO[str]) -> bool:
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream
        return False
    return tty and os.environ.get("TERM") != "dumb"


# -- views -----------------------------------------------------------------------------------


class _Silent:
    """Shows nothing."""

    def begin(self, reporter: ProgressReporter) -> None:
        pass

    def changed(self, reporter: ProgressReporter) -> None:
        pass

    def end(self, reporter: ProgressReporter) -> None:
        pass


_SILENT = _Silent()


class _Throttle:
    """Lets a change be drawn when it shows something new, at most once per ``gap``."""

    def __init__(self, gap: float = MIN_GAP, clock: Callable[[], float] = time.monotonic) -> None:
        self.gap = gap
        self.clock = clock
        self._last = -gap
        self._key: Any = None

    def due(self, key: Any) -> bool:
        if key == self._key:
            return False
        now = self.clock()
        if now - self._last < self.gap:
            return False
        self._key, self._last = key, now
        return True


class PlainView:
    """Plain lines on a stream that is no terminal: now and then, and one at the end.

    Parameters
    ----------
    stream
        Where the lines go.
    every
        Seconds between two lines, at the most often (a line is written when something
        changes once that long has passed).
    clock
        The time source of ``every``.
    """

    def __init__(
        self,
        stream: IO[str],
        every: float = PLAIN_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.every = every
        self.clock = clock
        self._last = 0.0
        self._lock = threading.Lock()

    def begin(self, reporter: ProgressReporter) -> None:
        self._last = self.clock()  # no line at the start: the first comes after `every`

    def changed(self, reporter: ProgressReporter) -> None:
        with self._lock:
            now = self.clock()
            if now - self._last < self.every:
                return
            self._last = now
            self._write(reporter.snapshot())

    def end(self, reporter: ProgressReporter) -> None:
        with self._lock:
            self._write(reporter.snapshot())

    def _write(self, snapshot: ProgressSnapshot) -> None:
        with contextlib.suppress(OSError, ValueError):  # a closed pipe must not end the work
            self.stream.write(snapshot.line() + "\n")
            self.stream.flush()


class NotebookView:
    """One notebook output, updated in place (no thread: when the numbers change).

    Parameters
    ----------
    display
        ``display(bundle, handle) -> handle``: shows the MIME ``bundle`` as a new output
        when ``handle`` is None, otherwise replaces that output; IPython's by default.
    """

    def __init__(self, display: Callable[[dict[str, str], Any], Any] | None = None) -> None:
        self._display = display or _ipython_display
        self._handle: Any = None
        self._throttle = _Throttle()
        self._lock = threading.Lock()
        self.updates = 0

    def begin(self, reporter: ProgressReporter) -> None:
        with self._lock:
            self._show(reporter.snapshot())

    def changed(self, reporter: ProgressReporter) -> None:
        snapshot = reporter.snapshot()
        # The clock moves only when something happens (no thread), in whole seconds.
        with self._lock:
            if self._throttle.due((snapshot.key(), int(snapshot.elapsed()))):
                self._show(snapshot)

    def end(self, reporter: ProgressReporter) -> None:
        with self._lock:
            self._show(reporter.snapshot())

    def _show(self, snapshot: ProgressSnapshot) -> None:
        bundle = {"text/html": progress_html(snapshot), "text/plain": snapshot.line()}
        self._handle = self._display(bundle, self._handle)
        self.updates += 1


def _ipython_display(bundle: dict[str, str], handle: Any) -> Any:
    from IPython.display import display  # pyright: ignore

    if handle is None:
        return display(bundle, raw=True, display_id=True)  # pyright: ignore
    handle.update(bundle, raw=True)
    return handle


def progress_html(snapshot: ProgressSnapshot) -> str:
    """The notebook's HTML for ``snapshot``: mark, description, bar, percentage, time, counts."""
    mark = "⏳" if snapshot.ended is None else "✔" if snapshot.ok else "✘"
    cells = [f"<span>{mark}</span>", f"<span>{html.escape(snapshot.description)}</span>"]
    if snapshot.total:
        cells.append(
            f"<progress max='{snapshot.total}' value='{snapshot.completed}' "
            "style='width:16em'></progress>"
            f"<span>{snapshot.percent()}%</span>"
        )
    cells.append(f"<span>{clock_text(snapshot.elapsed())}</span>")
    counts = " | ".join(
        f"<span style='color:{HTML_COLORS.get(o, 'inherit')}'>{n} {html.escape(o)}</span>"
        for o, n in snapshot.counts
    )
    if counts:
        cells.append(f"<span>{counts}</span>")
    if snapshot.note:
        cells.append(f"<span style='color:#b58900'>{html.escape(snapshot.note)}</span>")
    return (
        "<div class='chatlas-like-progress' style='display:flex;gap:0.6em;"
        "align-items:center;font-family:monospace'>" + "".join(cells) + "</div>"
    )


class TerminalView:
    """The live line on a terminal, drawn with rich.

    Parameters
    ----------
    stream
        The terminal to draw on.
    refresh_per_second
        How often the ticker redraws (spinner and elapsed time).
    """

    def __init__(self, stream: IO[str], refresh_per_second: float = REFRESH_PER_SECOND) -> None:
        self.stream = stream
        self.refresh_per_second = refresh_per_second
        self._live: Any = None
        self._lock = threading.Lock()  # a refresh never races the last frame
        self._throttle = _Throttle()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def begin(self, reporter: ProgressReporter) -> None:
        from rich.console import Console
        from rich.live import Live

        # Prints to stdout during the work land above the line when stdout is this
        # terminal too; piped stdout is left alone (never moved to this stream).
        live = Live(
            _Frame(reporter),
            console=Console(file=self.stream),
            auto_refresh=False,  # our ticker, which leaves Ctrl-C to the main thread
            transient=False,
            redirect_stdout=_is_terminal(sys.stdout),
            redirect_stderr=sys.stderr is self.stream,
        )
        try:
            live.start(refresh=True)
        except Exception:  # a display rich will not start (progress never breaks the work)
            return
        self._live = live
        self._stop = stop = threading.Event()
        self._ticker = threading.Thread(
            target=self._tick, args=(stop,), name="chatlas_like-progress", daemon=True
        )
        self._ticker.start()

    def changed(self, reporter: ProgressReporter) -> None:
        if self._throttle.due(reporter.snapshot().key()):
            self._refresh()

    def end(self, reporter: ProgressReporter) -> None:
        self._stop.set()
        ticker, self._ticker = self._ticker, None
        if ticker is not None:
            ticker.join()  # outside the lock, which the ticker may be waiting for
        with self._lock:
            live, self._live = self._live, None
            if live is not None:
                with contextlib.suppress(Exception):
                    live.stop()  # draws the last frame, which stays

    def _tick(self, stop: threading.Event) -> None:
        leave_signals_to_main_thread()
        while not stop.wait(1.0 / self.refresh_per_second):
            self._refresh()

    def _refresh(self) -> None:
        with self._lock:
            if self._live is not None:
                with contextlib.suppress(Exception):  # progress must never break the work
                    self._live.refresh()


class _Frame:
    """The terminal line, rendered from a fresh snapshot at each refresh."""

    def __init__(self, reporter: ProgressReporter) -> None:
        self.reporter = reporter
        self._spinner: Any = None

    def __rich__(self) -> Any:
        from rich.progress_bar import ProgressBar
        from rich.spinner import Spinner
        from rich.table import Table
        from rich.text import Text

        snapshot = self.reporter.snapshot()
        if self._spinner is None:
            self._spinner = Spinner("dots", style="progress.spinner")
        row: list[Any] = [
            self._spinner
            if snapshot.ended is None
            else Text("✔", style="green")
            if snapshot.ok
            else Text("✘", style="red"),
            Text(strip_controls(snapshot.description), style="progress.description"),
        ]
        if snapshot.total:
            row.append(
                ProgressBar(total=snapshot.total, completed=snapshot.completed, width=BAR_WIDTH)
            )
            row.append(Text(f"{snapshot.percent():>3}%", style="progress.percentage"))
        row.append(Text(clock_text(snapshot.elapsed()), style="progress.elapsed"))
        if snapshot.counts:
            counts = Text()
            for i, (outcome, count) in enumerate(snapshot.counts):
                if i:
                    counts.append(" | ")
                counts.append(f"{count} {strip_controls(outcome)}", style=STYLES.get(outcome, ""))
            row.append(counts)
        if snapshot.note:
            row.append(Text(strip_controls(snapshot.note), style="yellow"))
        grid = Table.grid(padding=(0, 1))
        grid.add_row(*row)
        return grid
