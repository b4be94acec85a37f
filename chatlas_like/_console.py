"""An interactive chat in the terminal: ``Chat.console()`` and ``python -m chatlas_like chat``
(whose command is :mod:`chatlas_like._console_command`).

The session keeps its history across questions. Ctrl-C interrupts the answer being
given, not the session: the turn loop repairs the history (the partial answer is kept,
open tool calls are answered), and the next question works. Ctrl-D or ``exit`` ends it.

Long work shows progress in a transient status area under the output
(:class:`ProgressEcho`): a spinner until the first token of an answer, then one line
per running tool with its elapsed time; each is cleared when done. The status area is
redrawn on a clock, never per text delta, so output stays linear in what the model
sends.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ._content import Content, ContentToolRequest
from ._echo import ConsoleEcho, EchoMode
from ._errors import ChatlasLikeError
from ._tool_result import ContentToolResult
from ._turn import Turn, UserTurn

if TYPE_CHECKING:
    from ._chat import Chat

__all__ = ["ProgressEcho", "ask", "run_chat"]

EXIT_WORDS = frozenset({"exit", "quit", "/exit", "/quit", ":q"})


class _Status:
    """The transient status area: a spinner line, or one line per running tool.

    Spinners live as long as what they show, so they animate between redraws.
    """

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.waiting_since: float | None = None
        self.running: dict[str, tuple[ContentToolRequest, float, Any]] = {}
        self._spinner: Any = None

    def wait(self) -> None:
        self.waiting_since = self.clock()

    def start(self, request: ContentToolRequest) -> None:
        from rich.spinner import Spinner

        self.running[request.id] = (request, self.clock(), Spinner("dots", style="cyan"))

    def __rich__(self) -> Any:
        from rich.console import Group
        from rich.spinner import Spinner
        from rich.text import Text

        from ._display import format_call

        now = self.clock()
        lines: list[Any] = []
        if self.waiting_since is not None:
            if self._spinner is None:
                self._spinner = Spinner("dots", style="dim")
            self._spinner.update(
                text=Text(f"thinking… {now - self.waiting_since:.1f}s", style="dim")
            )
            lines.append(self._spinner)
        for request, started, spinner in self.running.values():
            spinner.update(
                text=Text(f"running {format_call(request, 60)}  {now - started:.1f}s", style="cyan")
            )
            lines.append(spinner)
        return Group(*lines)


class ProgressEcho(ConsoleEcho):
    """A :class:`ConsoleEcho` with a status area for long work.

    Parameters
    ----------
    mode
        ``"text"``, ``"output"`` or ``"all"``.
    console
        A ``rich.console.Console``; a new one on stdout by default.
    auto_refresh
        Redraw the status area on a clock (``refresh_per_second``); off, it is drawn
        only when it changes.
    refresh_per_second
        How often the spinner and elapsed times are redrawn.
    clock
        The time source for elapsed times.
    """

    def __init__(
        self,
        mode: EchoMode = "output",
        console: Any = None,
        *,
        auto_refresh: bool = True,
        refresh_per_second: float = 8.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(mode, console)
        self._status = _Status(clock)
        self._auto_refresh = auto_refresh
        self._refresh_per_second = refresh_per_second
        self._live: Any = None

    # -- the Echo protocol -------------------------------------------------------------

    def user_turn(self, turn: Turn) -> None:
        super().user_turn(turn)
        self.waiting()

    def inserted_turn(self, turn: Turn) -> None:
        self._hide()
        super().inserted_turn(turn)

    def text(self, delta: str) -> None:
        if not delta:
            return
        if self._live is not None:
            self._status.waiting_since = None
            self._hide()
        super().text(delta)

    def content(self, item: Content) -> None:
        self._hide()
        self._status.waiting_since = None
        super().content(item)
        if isinstance(item, ContentToolRequest):
            self._status.start(item)
            self._show()
        elif isinstance(item, ContentToolResult) and item.request is not None:
            self._status.running.pop(item.request.id, None)
            if not self._status.running:
                self._status.wait()  # the model is next
            self._show()

    def finish(self) -> None:
        self._status.waiting_since = None
        self._status.running.clear()
        self._hide()
        super().finish()

    # -- the status area ---------------------------------------------------------------

    def waiting(self) -> None:
        """Show the spinner until the first token (or tool call) arrives."""
        self._status.wait()
        self._show()

    def _show(self) -> None:
        if self._status.waiting_since is None and not self._status.running:
            return
        if self._live is not None:
            self._live.refresh()
            return
        from rich.live import Live

        self._end_line()
        self._file.flush()
        self._live = Live(
            self._status,
            console=self.console,
            transient=True,
            auto_refresh=self._auto_refresh,
            refresh_per_second=self._refresh_per_second,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start(refresh=True)

    def _hide(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            live.stop()


class _Quiet(ProgressEcho):
    """``echo="none"``: progress and errors only, none of the answer."""

    def text(self, delta: str) -> None:
        pass


def ask(
    chat: Chat,
    prompt: str,
    echo: ProgressEcho,
    kwargs: Mapping[str, Any] | None = None,
) -> bool:
    """Send ``prompt`` and echo the answer; False when it was interrupted or failed.

    ``kwargs`` are extra request parameters for the answer.
    """
    stream: Any = None
    try:  # Ctrl-C may land anywhere in here, the echo's own writes included
        echo.user_turn(UserTurn(prompt))
        stream = chat.stream(prompt, content="all", kwargs=dict(kwargs or {}))
        for item in stream:
            if isinstance(item, str):
                echo.text(item)
            elif isinstance(item, Turn):
                echo.inserted_turn(item)
            else:
                echo.content(item)
    except KeyboardInterrupt:
        echo.finish()
        if stream is not None:
            stream.close()  # repairs the history if the interrupt landed outside the stream
        echo.console.print(
            "[bold yellow]⏹ interrupted[/] [dim]— what arrived is kept; ask the next question.[/]"
        )
        return False
    except ChatlasLikeError as e:
        echo.finish()
        from rich.text import Text

        # The message is not markup: ``[/path]`` in it would make rich raise here.
        echo.console.print(
            Text.assemble((f"✖ {type(e).__name__}:", "bold red"), " ", str(e)), highlight=False
        )
        return False
    echo.finish()
    return True


def run_chat(
    chat: Chat,
    *,
    console: Any = None,
    banner: str | None = None,
    echo: EchoMode = "output",
    kwargs: Mapping[str, Any] | None = None,
) -> int:
    """Chat with ``chat`` in the terminal until Ctrl-D or ``exit``; the exit status.

    ``echo`` is what is shown of each answer (``"text"``, ``"output"`` or ``"all"``;
    ``"none"`` shows nothing); ``kwargs`` are extra request parameters.
    """
    from rich.console import Console

    from ._echo import ECHO_MODES

    if echo not in ECHO_MODES:
        raise ValueError(f"echo must be one of {', '.join(ECHO_MODES)}; got {echo!r}")
    with contextlib.suppress(ImportError):  # not on every platform
        import readline  # noqa: F401  # pyright: ignore[reportUnusedImport]  # line editing for input()
    console = console if console is not None else Console()
    shown = ProgressEcho(echo, console) if echo != "none" else _Quiet("text", console)
    if banner:
        console.print(banner)
    console.print("[dim]Ctrl-C stops an answer; Ctrl-D or 'exit' ends the chat.[/]\n")
    while True:
        try:
            prompt = console.input("[bold green]you>[/] ")
        except EOFError:
            console.print()
            return 0
        except KeyboardInterrupt:
            console.print("\n[dim](Ctrl-D or 'exit' ends the chat)[/]")
            continue
        if not prompt.strip():
            continue
        if prompt.strip().lower() in EXIT_WORDS:
            return 0
        ask(chat, prompt, shown, kwargs)
        console.print()
