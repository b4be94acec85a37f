"""Threads for sync tools, and the private event loop that runs the tool runner for ``chat()``.

``WorkerPool`` reuses idle threads and starts another when none is idle. Concurrency is
bounded by the runner's semaphore, not by the pool: a sync tool that timed out keeps
its thread (a thread cannot be killed) but leaves the concurrency count, so it never
starves later calls.

``background_loop()`` is one event loop in a daemon thread per process. The sync
driver hands the (async) tool runner to it, which is also why ``chat()`` works inside
Jupyter's already-running loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import queue
import signal
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["WorkerPool", "background_loop", "leave_signals_to_main_thread", "submit_to_background"]

T = TypeVar("T")
_IDLE_SECONDS = 30.0
_MAIN_THREAD_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def leave_signals_to_main_thread() -> None:
    """Block Ctrl-C in the calling (helper) thread.

    The kernel delivers a process signal to any thread that does not block it; if a
    helper thread took SIGINT, a main thread blocked on a socket or a lock would only
    see the KeyboardInterrupt once that wait ended on its own.
    """
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, _MAIN_THREAD_SIGNALS)


class WorkerPool:
    """Threads for blocking calls; keeps up to ``keep_idle`` idle threads for reuse."""

    def __init__(self, keep_idle: int, name: str = "chatlas-like-tool") -> None:
        self._keep_idle = keep_idle
        self._name = name
        self._work: queue.SimpleQueue[tuple[Callable[[], Any], concurrent.futures.Future[Any]]]
        self._work = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._count = 0

    def submit(self, fn: Callable[[], T]) -> concurrent.futures.Future[T]:
        """Run ``fn()`` in a worker thread; its outcome lands in the returned future.

        ``fn`` runs in a copy of the submitter's context (as ``asyncio.to_thread``
        does), so context variables, the current OpenTelemetry span among them, carry
        over into the thread.
        """
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._work.put((functools.partial(contextvars.copy_context().run, fn), future))
        with self._lock:
            if self._idle > 0:
                self._idle -= 1  # that idle worker is now reserved for this item
                return future
            self._count += 1
            number = self._count
        threading.Thread(target=self._worker, name=f"{self._name}-{number}", daemon=True).start()
        return future

    def _worker(self) -> None:
        leave_signals_to_main_thread()
        while True:
            try:
                fn, future = self._work.get(timeout=_IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:
                        self._idle -= 1
                        return
                continue  # reserved by a submit whose item is on its way
            if future.set_running_or_notify_cancel():
                try:
                    result = fn()
                except BaseException as e:  # the tool's outcome, whatever it is, is data
                    future.set_exception(e)
                else:
                    future.set_result(result)
            del fn, future
            with self._lock:
                if self._idle >= self._keep_idle:
                    return
                self._idle += 1


_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def background_loop() -> asyncio.AbstractEventLoop:
    """The process's private event loop for sync chats, started on first use."""
    global _loop
    with _loop_lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                leave_signals_to_main_thread()
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            threading.Thread(target=run, name="chatlas-like-loop", daemon=True).start()
            ready.wait()
            _loop = loop
        return _loop


def submit_to_background(
    factory: Callable[[], Coroutine[Any, Any, T]],
) -> tuple[concurrent.futures.Future[T], Callable[[], None]]:
    """Start ``factory()`` as a task on the background loop.

    Returns the future of its outcome and a thread-safe ``cancel()`` that cancels the
    task itself (not only the future), so the coroutine stops where it waits; the
    future then reports what the task ended with. A ``KeyboardInterrupt`` or
    ``SystemExit`` the coroutine raises (a user's callback may) reaches the future,
    not the loop: raised out of a task, it would stop the loop every sync chat uses.
    """
    loop = background_loop()
    result: concurrent.futures.Future[T] = concurrent.futures.Future()
    tasks: list[asyncio.Task[T]] = []

    async def contained() -> T:
        try:
            return await factory()
        except (KeyboardInterrupt, SystemExit) as e:
            raise _Escaping(e) from None

    def start() -> None:
        task = loop.create_task(contained())
        tasks.append(task)
        task.add_done_callback(lambda t: _copy_outcome(t, result))

    def cancel() -> None:
        def cancel_task() -> None:
            if tasks:
                tasks[0].cancel()

        loop.call_soon_threadsafe(cancel_task)

    loop.call_soon_threadsafe(start)
    return result, cancel


class _Escaping(Exception):
    """Carries a ``KeyboardInterrupt`` or ``SystemExit`` out of a background task."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(type(error).__name__)
        self.error = error


def _copy_outcome(task: asyncio.Task[T], future: concurrent.futures.Future[T]) -> None:
    if task.cancelled():
        future.cancel()
        return
    error = task.exception()
    if isinstance(error, _Escaping):
        future.set_exception(error.error)
    elif error is not None:
        future.set_exception(error)
    else:
        future.set_result(task.result())
