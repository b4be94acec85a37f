"""The sink an ``echo=`` argument stands for: a mode in the current environment, or the
user's own :class:`~chatlas_like.EchoSink`."""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any

from .._core.content import Content, ContentText
from .._run.echo import NULL_ECHO, EchoSink
from .terminal import ECHO_MODES, ConsoleEcho

if TYPE_CHECKING:
    from .._core.content import ContentToolRequest
    from .._core.turn import Turn
    from .echo_options import EchoOptions

__all__ = ["CurrentDisplay", "in_notebook", "make_echo", "tee"]


def in_notebook() -> bool:
    """Whether we run inside a Jupyter kernel."""
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    get_ipython = getattr(shell, "get_ipython", None)
    ip = get_ipython() if callable(get_ipython) else None
    # A subclass counts: Colab's shell is one (google.colab._shell.Shell).
    return ip is not None and any(k.__name__ == "ZMQInteractiveShell" for k in type(ip).__mro__)


def make_echo(
    mode: str | EchoSink,
    console: Any = None,
    *,
    thinking: bool = True,
    options: EchoOptions | None = None,
) -> EchoSink:
    """The sink for ``mode`` in the current environment (``thinking``: show thinking;
    ``options``: display settings)."""
    if not isinstance(mode, str):
        if not isinstance(mode, EchoSink):
            raise TypeError(
                "echo must be one of 'none', 'text', 'output', 'all' or an EchoSink, "
                f"not {type(mode).__name__}"
            )
        return mode
    if mode not in ECHO_MODES:
        raise ValueError(f"echo must be one of {', '.join(ECHO_MODES)}; got {mode!r}")
    if mode == "none":
        return NULL_ECHO
    if console is None and in_notebook():
        from .notebook import NotebookEcho

        return NotebookEcho(mode, options=options)  # pyright: ignore[reportArgumentType]
    return ConsoleEcho(mode, console, thinking, options)  # pyright: ignore[reportArgumentType]


def tee(*sinks: EchoSink) -> EchoSink:
    """One sink that hands everything to each of ``sinks``, in order."""
    return _Tee(sinks)


class _Tee(EchoSink):
    def __init__(self, sinks: tuple[EchoSink, ...]) -> None:
        self.sinks = sinks

    def user_turn(self, turn: Turn) -> None:
        for sink in self.sinks:
            sink.user_turn(turn)

    def inserted_turn(self, turn: Turn) -> None:
        for sink in self.sinks:
            sink.inserted_turn(turn)

    def text(self, delta: str) -> None:
        for sink in self.sinks:
            sink.text(delta)

    def content(self, item: Content) -> None:
        for sink in self.sinks:
            sink.content(item)

    def tool_started(self, request: ContentToolRequest) -> None:
        for sink in self.sinks:
            sink.tool_started(request)

    def finish(self) -> None:
        for sink in self.sinks:
            sink.finish()


class CurrentDisplay(EchoSink):
    """Where a chat call shows its output, while it runs: ``chat.current_display``.

    It stands in front of the call's sink: the chat writes through it, and a tool adds
    to it with :meth:`echo`, as chatlas's display does. A tool may run in a worker
    thread while the chat writes, so every call takes one lock: the sink sees one call
    at a time (``echo()`` runs it on the tool's thread).

    Parameters
    ----------
    sink
        The call's sink (``echo="none"`` gives one that shows nothing).
    """

    def __init__(self, sink: EchoSink) -> None:
        self.sink = sink
        self._lock = threading.RLock()

    def echo(self, content: str | Content) -> None:
        """Show ``content`` where the chat's output goes (nothing with ``echo="none"``).

        Parameters
        ----------
        content
            A Markdown string (shown with the model's text, also with ``echo="text"``),
            or a content object, shown as the chat shows one (a
            :class:`~chatlas_like.ContentToolResult`, an image...).
        """
        with self._lock:
            if isinstance(content, ContentText):
                self.sink.text(content.text)
            elif isinstance(content, Content):
                self.sink.content(content)
            else:
                self.sink.text(str(content))

    def user_turn(self, turn: Turn) -> None:
        with self._lock:
            self.sink.user_turn(turn)

    def inserted_turn(self, turn: Turn) -> None:
        with self._lock:
            self.sink.inserted_turn(turn)

    def text(self, delta: str) -> None:
        with self._lock:
            self.sink.text(delta)

    def content(self, item: Content) -> None:
        with self._lock:
            self.sink.content(item)

    def tool_started(self, request: ContentToolRequest) -> None:
        with self._lock:
            self.sink.tool_started(request)

    def finish(self) -> None:
        with self._lock:
            self.sink.finish()
