"""Work run after a delay unless called off first, on one thread for every turn.

A durable turn publishes what it emitted before a step only when the step lasts long
enough for a reader to be waiting (see :class:`~._driver.Recorder`): the write is
scheduled here when the step starts and called off when it ends. Calling it off
waits for a write already under way, so no write of a step lands after the step.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable

__all__ = ["Later", "later"]


class Later:
    """``fn()`` at most once, from the timer thread, unless :meth:`cancel` comes first."""

    __slots__ = ("_fn", "_lock", "_settled")

    def __init__(self, fn: Callable[[], None]) -> None:
        self._fn = fn
        self._lock = threading.Lock()
        self._settled = False

    def fire(self) -> None:
        with self._lock:
            if self._settled:
                return
            self._settled = True
            self._fn()

    def cancel(self) -> None:
        """Call it off; if it runs now, once it has run."""
        with self._lock:
            self._settled = True


class _Timer:
    def __init__(self) -> None:
        self._due: list[tuple[float, int, Later]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def schedule(self, delay: float, job: Later) -> None:
        with self._wake:
            heapq.heappush(self._due, (time.monotonic() + delay, next(self._order), job))
            if self._thread is None or not self._thread.is_alive():  # also after a fork
                self._thread = threading.Thread(
                    target=self._run, name="chatlas-like-durable-later", daemon=True
                )
                self._thread.start()
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._due:
                    self._wake.wait()
                when, _, job = self._due[0]
                wait = when - time.monotonic()
                if wait > 0:
                    self._wake.wait(wait)
                    continue
                heapq.heappop(self._due)
            job.fire()


_TIMER = _Timer()


def later(delay: float, fn: Callable[[], None]) -> Later:
    """``fn()`` in ``delay`` seconds, unless the returned job is cancelled first."""
    job = Later(fn)
    _TIMER.schedule(delay, job)
    return job
