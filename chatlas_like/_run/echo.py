"""The echo interface: everything a chat shows while it runs goes to one sink.

The turn loop calls the sink in one place for all four verbs. The terminal
(:class:`~chatlas_like._display.terminal.ConsoleEcho`), the notebook
(:class:`~chatlas_like._display.notebook.NotebookEcho`) and Shiny
(:class:`~chatlas_like.shiny.ShinyEcho`) implement it, and so can you: pass an
instance as ``echo=`` wherever a mode string (``"output"``...) is taken today.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .._core.content import Content, ContentToolRequest
    from .._core.turn import Turn

__all__ = ["NULL_ECHO", "EchoSink", "NullEcho"]


@runtime_checkable
class EchoSink(Protocol):
    """Where a chat's output goes while it happens: pass one as ``echo=``.

    Every method is called on the thread that drives the chat, in the order things
    happen, and must return quickly (a slow sink slows the chat). Subclass it to
    inherit a do-nothing default for each method and override the ones you need; any
    object with these six methods works too. A sink sees everything: the ``echo``
    modes (``"text"``, ``"output"``, ``"all"``) are the built-in sinks' settings.

    Examples
    --------
    ```python
    import logging

    from chatlas_like import EchoSink


    class LogSink(EchoSink):
        def content(self, item):
            logging.getLogger("chat").info("%s", item)


    chat.chat("What's the weather?", echo=LogSink())
    ```
    """

    def user_turn(self, turn: Turn) -> None:
        """The prompt of this call, as it joins the conversation."""
        return None

    def inserted_turn(self, turn: Turn) -> None:
        """A message a tool result inserted (a message expansion)."""
        return None

    def text(self, delta: str) -> None:
        """A piece of the model's text, as it streams."""
        return None

    def content(self, item: Content) -> None:
        """A finished piece of the answer: a tool request or result (and each progress
        item of a generator tool), a server tool block, thinking. A generator tool's
        final result comes too, with its ``parts`` set: its yields were what it showed
        (the built-in sinks show nothing more for it, as chatlas does)."""
        return None

    def tool_started(self, request: ContentToolRequest) -> None:
        """A tool call began to run (after review; calls run concurrently)."""
        return None

    def finish(self) -> None:
        """The call is over (also after an error): flush, close what was opened."""
        return None


class NullEcho(EchoSink):
    """Shows nothing (``echo="none"``)."""


NULL_ECHO = NullEcho()
