"""The terminal's transient status area: one line per running tool call, and a spinner
while the model is thinking.

Used by the echo (:class:`chatlas_like._echo.ConsoleEcho`) and the console chat. The
area is a ``rich.live.Live`` drawn under the output on a clock (never per text delta,
so the echo stays linear in what it receives) and erased when hidden: the echo hides
it before it writes anything and shows it again afterwards, so what is printed stays
in order and the area is always last. Each line shows a call, its elapsed time and its
latest progress; names, arguments and progress come from the model or a tool and go
through :func:`chatlas_like._terminal_safe.safe`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._live_cards import LiveCalls, progress_line
from ._terminal_safe import safe

__all__ = ["LiveArea", "StatusLines"]

CALL_CHARS = 60  # of a call's arguments on its status line


class StatusLines:
    """What the area shows: a spinner while waiting for the model, then the open calls."""

    def __init__(self, calls: LiveCalls) -> None:
        self.calls = calls
        self.waiting_since: float | None = None
        self._spinners: dict[str, Any] = {}
        self._waiting_spinner: Any = None

    def __bool__(self) -> bool:
        return self.waiting_since is not None or bool(self.calls.open)

    def __rich__(self) -> Any:
        from rich.console import Group
        from rich.spinner import Spinner
        from rich.text import Text

        from ._display import format_call

        now = self.calls.clock()
        lines: list[Any] = []
        if self.waiting_since is not None:
            if self._waiting_spinner is None:
                self._waiting_spinner = Spinner("dots", style="dim")
            self._waiting_spinner.update(
                text=Text(f"thinking… {now - self.waiting_since:.1f}s", style="dim")
            )
            lines.append(self._waiting_spinner)
        for spinner_id in [i for i in self._spinners if i not in self.calls.open]:
            del self._spinners[spinner_id]  # spinners live as long as their call
        for call_id, call in self.calls.open.items():
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


class LiveArea:
    """Shows and hides :class:`StatusLines` under a console's output."""

    def __init__(
        self,
        console: Callable[[], Any],
        lines: StatusLines,
        *,
        auto_refresh: bool = True,
        refresh_per_second: float = 8.0,
    ) -> None:
        self._console = console
        self.lines = lines
        self.auto_refresh = auto_refresh
        self.refresh_per_second = refresh_per_second
        self._live: Any = None

    @property
    def shown(self) -> bool:
        return self._live is not None

    def show(self) -> None:
        """Draw the area (again) if it has anything to show."""
        if not self.lines:
            self.hide()
            return
        if self._live is not None:
            if not self.auto_refresh:
                self._live.refresh()
            return  # else the clock draws it
        from rich.live import Live

        self._live = Live(
            safe(self.lines),
            console=self._console(),
            transient=True,
            auto_refresh=self.auto_refresh,
            refresh_per_second=self.refresh_per_second,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        # On a clock, the first draw waits for its first tick: a call that ends sooner
        # (most do) never costs a render.
        self._live.start(refresh=not self.auto_refresh)

    def hide(self) -> None:
        """Erase the area, so that what is written next lands where it belongs."""
        live, self._live = self._live, None
        if live is not None:
            from rich.text import Text

            live.update(Text(""), refresh=False)  # stop() draws once more: let that be nothing
            live.stop()
