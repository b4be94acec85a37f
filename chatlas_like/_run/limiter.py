"""One gate for a chat's model calls: a request rate, and pauses a 429 asks for.

Shared by a chat and its copies (so a whole ``parallel_chat`` batch slows down together
when the provider answers 429). It never sleeps itself: ``reserve()`` says how long the
caller must wait before sending, and the drivers sleep (``time.sleep`` or
``asyncio.sleep``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["Limiter"]


class Limiter:
    """Spaces requests to ``rpm`` per minute and honours provider-requested pauses.

    Parameters
    ----------
    rpm
        Requests per minute; None for no rate limit.
    clock
        The monotonic clock (for tests).
    """

    def __init__(
        self, rpm: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if rpm is not None and rpm <= 0:
            raise ValueError("rpm must be positive")
        self.rpm = rpm
        self._interval = 60.0 / rpm if rpm else 0.0
        self._clock = clock
        self._lock = threading.Lock()
        self._next_slot = 0.0
        self._paused_until = 0.0

    def reserve(self) -> float:
        """Book the next send; returns the seconds to wait before making it."""
        with self._lock:
            now = self._clock()
            start = max(now, self._next_slot, self._paused_until)
            self._next_slot = start + self._interval
            return start - now

    def paused_for(self) -> float:
        """Seconds left of a pause (0 when none), without booking a send."""
        with self._lock:
            return max(0.0, self._paused_until - self._clock())

    def pause(self, seconds: float) -> None:
        """Hold every send for ``seconds`` from now (e.g. a 429's retry-after)."""
        with self._lock:
            self._paused_until = max(self._paused_until, self._clock() + seconds)
