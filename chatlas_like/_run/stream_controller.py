"""Stop a running stream from elsewhere: a Shiny "stop" button, another thread, a timer."""

from __future__ import annotations

import threading
import warnings

__all__ = ["StreamController"]


class StreamController:
    """A handle that stops a stream cleanly.

    Pass it to :meth:`~chatlas_like.Chat.stream` or
    :meth:`~chatlas_like.Chat.stream_async` as ``controller=``, then call
    :meth:`cancel` from anywhere (it is thread-safe). The stream ends before the next
    chunk, without an exception: the connection is closed, what arrived is kept in the
    history as a partial turn (``partial_reason`` set) and tool calls left open are
    answered, exactly as when the stream is closed, so the next call sends a valid
    request.

    A chunk already on its way is still delivered; a stream waiting for the model's
    first byte ends when that byte arrives. Reuse a controller after :meth:`reset`.

    Examples
    --------
    ```python
    controller = StreamController()
    for chunk in chat.stream("Write a long story", controller=controller):
        print(chunk, end="")
        if stop_button_pressed():
            controller.cancel()
    ```
    """

    __slots__ = ("_event", "_reason")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._reason: str | None = None

    def cancel(self, reason: str = "cancelled") -> None:
        """Stop the stream at its next chunk; ``reason`` is kept for the caller."""
        self._reason = reason
        self._event.set()

    def reset(self) -> None:
        """Clear the cancellation, to use the controller for another stream."""
        self._event.clear()
        self._reason = None

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called (since the last :meth:`reset`)."""
        return self._event.is_set()

    @property
    def reason(self) -> str | None:
        """The reason given to :meth:`cancel`, or None."""
        return self._reason

    def _start(self) -> None:
        """Called when a stream starts: a controller cancelled earlier is reset, with a warning."""
        if self.cancelled:
            warnings.warn(
                "this StreamController was already cancelled; it was reset so the new stream "
                "can run. Call controller.reset() before reusing it.",
                UserWarning,
                stacklevel=4,
            )
            self.reset()
