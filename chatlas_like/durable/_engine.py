"""What the durable chat needs to know of DBOS's state, and running blocking work off a loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypeVar

from .._core.errors import ChatlasLikeError

__all__ = [
    "DurableError",
    "dbos_instance",
    "dbos_launched",
    "ensure_launched",
    "in_thread",
    "iterate_in_thread",
]

T = TypeVar("T")


class DurableError(ChatlasLikeError):
    """A durable chat that cannot run as asked (DBOS not launched, a name taken...)."""


def dbos_instance() -> Any:
    """The process's DBOS instance, or None (DBOS has no public accessor for it)."""
    from dbos import _dbos  # pyright: ignore[reportPrivateUsage]  # no public accessor

    return getattr(_dbos, "_dbos_global_instance", None)


def dbos_launched() -> bool:
    """Whether ``DBOS.launch()`` has run in this process (and no ``destroy()`` since)."""
    return bool(getattr(dbos_instance(), "_launched", False))


def ensure_launched() -> None:
    if not dbos_launched():
        raise DurableError(
            "DBOS is not launched: configure it with DBOS(config=...), create every "
            "DurableChat, then call DBOS.launch()"
        )


async def in_thread(fn: Callable[[], T]) -> T:
    """``fn()`` in a thread of its own, awaited. Cancelling the wait leaves ``fn`` running
    (a durable turn goes on to its end)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if future.done():
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def run() -> None:
        try:
            value = fn()
        except BaseException as e:
            loop.call_soon_threadsafe(settle, False, e)
        else:
            loop.call_soon_threadsafe(settle, True, value)

    threading.Thread(target=run, name="chatlas-like-durable", daemon=True).start()
    return await future


async def iterate_in_thread(items: Callable[[], Iterator[T]]) -> AsyncIterator[T]:
    """The items of a blocking iterator, read in a thread of its own, as they come."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def put(kind: str, value: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, (kind, value))

    def run() -> None:
        try:
            for item in items():
                put("item", item)
        except BaseException as e:
            put("error", e)
        else:
            put("end", None)

    threading.Thread(target=run, name="chatlas-like-durable", daemon=True).start()
    while True:
        kind, value = await queue.get()
        if kind == "item":
            yield value
        elif kind == "error":
            raise value
        else:
            return
