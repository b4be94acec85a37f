"""An interactive chat in the terminal: ``Chat.console()`` and ``python -m chatlas_like chat``
(whose command is :mod:`chatlas_like._cli.chat_command`).

The session keeps its history across questions. Ctrl-C interrupts the answer being
given, not the session: the turn loop repairs the history (the partial answer is kept,
open tool calls are answered), and the next question works. Ctrl-D or ``exit`` ends it.

Long work shows progress in a transient status area under the output
(:class:`ProgressEcho`): a spinner until the first token of an answer, then one line
per running tool with its elapsed time and latest progress, in call order; each is
replaced by its result when done, results printed in call order. The status area is the echo's own (:mod:`chatlas_like._display.live_status`):
it appears once the wait or a call has lasted a grace period (a quarter of a second),
so a quick answer or call draws nothing, and it is redrawn on a clock, never per text
delta, so output stays linear in what the model sends.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal, Protocol

from .._core.content import Content, ContentToolRequest
from .._core.errors import ChatlasLikeError
from .._core.terminal_safe import safe
from .._core.tool_result import ContentToolResult, ContentToolResultProgress
from .._core.turn import Turn, UserTurn
from .._run.loop import TURN_SEPARATOR
from .echo_options import EchoOptions
from .live_status import GRACE_S
from .terminal import ConsoleEcho, EchoMode

__all__ = ["ProgressEcho", "ask", "run_chat"]

EXIT_WORDS = frozenset({"exit", "exit()", "quit", "/exit", "/quit", ":q"})  # chatlas: exit, exit()


class ProgressEcho(ConsoleEcho):
    """A :class:`ConsoleEcho` that also shows a spinner while the model is thinking.

    The spinner shares the echo's status area (the running tool calls,
    :mod:`chatlas_like._display.live_status`): one area, drawn on one clock.

    Parameters
    ----------
    mode
        ``"text"``, ``"output"`` or ``"all"``.
    console
        A ``rich.console.Console``; a new one on stdout by default.
    auto_refresh
        Redraw the status area on a clock (``refresh_per_second``, one ticker thread);
        off, it is drawn only when the echo receives something (no thread).
    refresh_per_second
        How often the spinner and elapsed times are redrawn.
    grace
        Seconds the wait or a call lasts before the status area shows it.
    clock
        The time source for elapsed times (and the grace).
    """

    def __init__(
        self,
        mode: EchoMode = "output",
        console: Any = None,
        *,
        auto_refresh: bool = True,
        refresh_per_second: float = 8.0,
        grace: float = GRACE_S,
        clock: Callable[[], float] = time.monotonic,
        options: EchoOptions | None = None,
    ) -> None:
        # The spinner shows even when the answer is not echoed (``_Quiet``).
        terminal = None if console is None else console.is_terminal and not console.is_dumb_terminal
        super().__init__(
            mode,
            console,
            options=options,
            live=terminal,
            auto_refresh=auto_refresh,
            refresh_per_second=refresh_per_second,
            grace=grace,
            clock=clock,
        )

    # -- the Echo protocol -------------------------------------------------------------

    def user_turn(self, turn: Turn) -> None:
        super().user_turn(turn)
        self.waiting()

    def text(self, delta: str) -> None:
        if not delta or (delta is TURN_SEPARATOR and self._line_start):
            # The loop's own separator object (model text of blank lines is written):
            # after a tool's lines the next answer is set apart already, as chat() shows it.
            return
        with self._lock:  # what the area shows changes under its lock
            self._status.waiting_since = None
            super().text(delta)

    def content(self, item: Content) -> None:
        with self._lock:
            self._status.waiting_since = None
            if (
                isinstance(item, ContentToolResult)
                and not isinstance(item, ContentToolResultProgress)
                and item.request is not None
                and not self._calls.unfinished(besides=item.request.id)
            ):
                # The last call: the model is next.
                self._status.waiting_since = self._calls.clock()
            super().content(item)
            if isinstance(item, ContentToolRequest):
                # A stream does not say when a call starts: this echo counts a call as
                # running from its request (a review step before it is counted in).
                self._calls.started(item)
                self._show()

    # -- the status area ---------------------------------------------------------------

    def waiting(self) -> None:
        """Show the spinner until the first token (or tool call) arrives."""
        with self._lock:
            self._status.waiting_since = self._calls.clock()
            self._show()


class _Streams(Protocol):
    """What the console chat needs of a chat: its stream and its history (a
    :class:`~chatlas_like.Chat`)."""

    def stream(
        self, *args: str, content: Literal["all"], kwargs: dict[str, Any] | None = None
    ) -> Iterator[Any]: ...

    def get_turns(self) -> list[Turn]: ...


class _Quiet(ProgressEcho):
    """``echo="none"``: progress and errors only, none of the answer."""

    def text(self, delta: str) -> None:
        pass


def ask(
    chat: _Streams,
    prompt: str,
    echo: ProgressEcho,
    kwargs: Mapping[str, Any] | None = None,
    errors: Any = None,
) -> bool:
    """Send ``prompt`` and echo the answer; False when it was interrupted or failed.

    ``kwargs`` are extra request parameters for the answer; a failure is printed on the
    rich console ``errors`` (the echo's own by default).
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
        if stream is not None:
            stream.close()  # repairs the history if the interrupt landed outside the stream
            _echo_answered(chat, echo)
        echo.finish()
        echo.console.print(
            "[bold yellow]⏹ interrupted[/] [dim]— what arrived is kept; ask the next question.[/]"
        )
        return False
    except ChatlasLikeError as e:
        echo.finish()
        from rich.text import Text

        from .._core.redact import safe_error_message

        # The message is not markup: ``[/path]`` in it would make rich raise here.
        (errors or echo.console).print(
            safe(Text.assemble((f"✖ {type(e).__name__}:", "bold red"), " ", safe_error_message(e))),
            highlight=False,
        )
        return False
    echo.finish()
    return True


def _echo_answered(chat: _Streams, echo: ProgressEcho) -> None:
    """Echo how the calls still open in ``echo`` ended: a Ctrl-C that lands outside the
    stream (in the echo's own code) leaves their answers to the stream's repair, which
    puts them in the history but cannot yield them."""
    waiting = echo.open_calls()
    if not waiting:
        return
    turns = chat.get_turns()
    for result in turns[-1].tool_results if turns else []:
        if result.request is not None and result.request.id in waiting:
            echo.content(result)


def _typed() -> bool:
    """Whether the prompt is read from a terminal, which echoes what is typed."""
    import sys

    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):  # replaced or closed
        return False


def run_chat(
    chat: _Streams,
    *,
    console: Any = None,
    banner: str | None = None,
    echo: EchoMode = "output",
    kwargs: Mapping[str, Any] | None = None,
    options: EchoOptions | None = None,
) -> int:
    """Chat with ``chat`` in the terminal until Ctrl-D or ``exit``; the exit status (1
    when questions were piped in and an answer failed).

    ``echo`` is what is shown of each answer (``"text"``, ``"output"`` or ``"all"``;
    ``"none"`` shows nothing); ``kwargs`` are extra request parameters; ``options`` the
    chat's echo settings (``set_echo_options()``: its console, result lines...).
    """
    from rich.console import Console

    from .terminal import ECHO_MODES

    if echo not in ECHO_MODES:
        raise ValueError(f"echo must be one of {', '.join(ECHO_MODES)}; got {echo!r}")
    with contextlib.suppress(ImportError):  # not on every platform
        import readline  # noqa: F401  # pyright: ignore[reportUnusedImport]  # line editing for input()
    if console is None:
        console = Console(**options.rich_console) if options is not None else Console()
    # Failures go to stderr when the answers go to stdout, so `chat > answers.txt` and
    # a script reading the answers see no error text among them.
    errors = Console(stderr=True, highlight=False) if console.file is sys.stdout else console
    shown = (
        ProgressEcho(echo, console, options=options) if echo != "none" else _Quiet("text", console)
    )
    if banner:
        console.print(banner)
    console.print("[dim]Ctrl-C stops an answer; Ctrl-D or 'exit' ends the chat.[/]\n")
    failed = False
    while True:
        try:
            prompt = console.input("[bold green]you>[/] ")
        except EOFError:
            console.print()
            return 1 if failed else 0
        except KeyboardInterrupt:
            console.print("\n[dim](Ctrl-D or 'exit' ends the chat)[/]")
            continue
        if not _typed():
            # Piped input is not echoed: show it, so the answer starts on a line of its own.
            from rich.text import Text

            console.print(safe(Text(prompt)), highlight=False)
        if not prompt.strip():
            continue
        if prompt.strip().lower() in EXIT_WORDS:
            return 1 if failed else 0
        if not ask(chat, prompt, shown, kwargs, errors) and not _typed():
            failed = True  # a script piping questions in learns that an answer failed
        console.print()
