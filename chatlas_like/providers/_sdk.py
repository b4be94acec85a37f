"""What every provider built on an official SDK needs around its client, SDK-neutral.

The response as events (:class:`Events`, :class:`AsyncEvents`), the one sync client
(:class:`SyncClient`), an async client per event loop (:class:`LoopClients`), the
``http_client`` split between the sync and the async client, and SDK errors made
instances of our provider errors as well (:func:`bridged`). No SDK is imported here.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterator,
)
from contextlib import contextmanager, suppress
from typing import Any

from .._core.errors import ProviderError

__all__ = [
    "AsyncEvents",
    "Events",
    "LoopClients",
    "SyncClient",
    "bridged",
    "close_quietly",
    "raised_as_ours",
    "retry_after",
    "split_http_client",
]


class Events:
    """A response as events; ``close()`` releases the connection."""

    __slots__ = ("_close", "_source")

    def __init__(self, source: Iterator[dict[str, Any]], close: Callable[[], Any]) -> None:
        self._source = source
        self._close = close

    def __iter__(self) -> Events:
        return self

    def __next__(self) -> dict[str, Any]:
        return next(self._source)

    def close(self) -> None:
        with suppress(Exception):  # the connection is being dropped anyway
            self._close()


class AsyncEvents:
    """The async twin of :class:`Events`."""

    __slots__ = ("_close", "_source")

    def __init__(
        self, source: AsyncIterator[dict[str, Any]], close: Callable[[], Awaitable[Any]]
    ) -> None:
        self._source = source
        self._close = close

    def __aiter__(self) -> AsyncEvents:
        return self

    async def __anext__(self) -> dict[str, Any]:
        return await anext(self._source)

    async def aclose(self) -> None:
        with suppress(Exception):  # the connection is being dropped anyway
            await self._close()


class SyncClient:
    """A provider's one sync SDK client, made on first use and closed by :meth:`close`.

    Made once even when threads race for it (a durable worker starts its queued turns
    together): each racer would otherwise make a client, with its own connection pool.
    It holds no reference to its provider, so ``weakref.finalize(provider, sync.close)``
    closes the pool with the provider.
    """

    __slots__ = ("_client", "_lock")

    def __init__(self) -> None:
        self._client: Any = None
        self._lock = threading.Lock()

    def get(self, make: Callable[[], Any]) -> Any:
        """The client, made by ``make`` if there is none yet."""
        client = self._client
        if client is None:
            with self._lock:
                if self._client is None:
                    self._client = make()
                client = self._client
        return client

    @property
    def made(self) -> bool:
        """Whether a client is open now."""
        return self._client is not None

    def close(self) -> None:
        """Close the client's pooled connections (the next :meth:`get` makes another)."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            close_quietly(client)


class LoopClients:
    """One async SDK client per event loop, made by ``factory`` in a worker thread.

    Connections belong to the loop that opened them, so each loop gets its own client,
    closed by that loop's shutdown (``asyncio.run``, a notebook kernel exiting). The
    first import of an SDK takes seconds: it happens in a worker thread, so every
    other coroutine of the loop (a Shiny app's) goes on meanwhile.
    """

    __slots__ = ("_clients", "_factory")

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self._clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[Any, AsyncGenerator[None]]
        ] = weakref.WeakKeyDictionary()

    async def get(self) -> Any:
        """The running loop's client (made on first use)."""
        loop = asyncio.get_running_loop()
        entry = self._clients.get(loop)
        if entry is None:
            client = await asyncio.to_thread(self._factory)
            raced = self._clients.get(loop)
            if raced is not None:  # another call of this loop made one meanwhile
                await client.close()
                return raced[0]
            closer = _close_with_loop(client)
            await anext(closer)
            entry = self._clients[loop] = (client, closer)
        return entry[0]

    def current(self) -> Any | None:
        """The running loop's client, if it made one."""
        entry = self._clients.get(asyncio.get_running_loop())
        return entry[0] if entry is not None else None

    def __len__(self) -> int:
        return len(self._clients)

    async def close_current(self) -> None:
        """Close the running loop's client, if it has one."""
        entry = self._clients.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[1].aclose()  # its `finally` closes the client


async def _close_with_loop(client: Any) -> AsyncGenerator[None]:
    """An async generator left suspended: the loop's ``shutdown_asyncgens`` closes it."""
    try:
        yield
    finally:
        await client.close()


@contextmanager
def raised_as_ours(
    translate: Callable[[BaseException], BaseException],
) -> Generator[None, None, None]:
    """Raise an SDK or transport error as ``translate`` makes it one of the library's
    provider errors (one ``translate`` returns unchanged, a bug, is raised as it is)."""
    try:
        yield
    except (ProviderError, StopIteration, StopAsyncIteration):
        raise
    except Exception as e:
        translated = translate(e)
        if translated is e:
            raise
        raise translated from e


def close_quietly(client: Any) -> None:
    """Close a sync client, whatever state it is in."""
    with suppress(Exception):
        client.close()


def split_http_client(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The SDK client arguments for the sync and the async client: an ``http_client``
    goes only to the client of its kind (an httpx ``AsyncClient`` to the async one, a
    ``Client`` to the sync one), as chatlas splits them, so a sync client never breaks
    ``chat_async()``."""
    client = kwargs.get("http_client")
    kinds = {cls.__name__ for cls in type(client).__mro__ if _from_httpx(cls)}
    rest = {k: v for k, v in kwargs.items() if k != "http_client"}
    if "AsyncClient" in kinds:
        return rest, kwargs
    if "Client" in kinds:
        return kwargs, rest
    return kwargs, kwargs


def _from_httpx(cls: type) -> bool:
    return str(getattr(cls, "__module__", "")).partition(".")[0] in ("httpx", "httpx2")


def retry_after(headers: Any) -> float | None:
    """Seconds the server asked to wait (``retry-after-ms`` or ``retry-after``), if any."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return float(raw) * scale
        except ValueError:
            continue
    return None


_BRIDGES: dict[tuple[type[BaseException], type[BaseException]], type[ProviderError]] = {}
_OURS = ("message", "status_code", "retry_after", "error_type")


def bridged(ours: ProviderError, sdk_error: BaseException) -> ProviderError:
    """``ours``, made an instance of ``sdk_error``'s class as well.

    Its class subclasses both (made on first use and cached, one per pair); it carries
    the SDK error's attributes (``response``, ``body``, ``request``, ``request_id``...)
    and ours (``message``, ``status_code``, ``retry_after``, ``error_type``; ``message``
    is ours, as ``str(error)`` is). So chatlas code catching the SDK's classes
    (``except openai.RateLimitError``) keeps working. Pickled or copied, it is our class
    alone: the SDK's objects (an HTTP response) do not travel.
    """
    key = (type(ours), type(sdk_error))
    cls = _BRIDGES.get(key)
    if cls is None:
        cls = _BRIDGES.setdefault(key, _bridge_class(*key))
    made = cls.__new__(cls, *ours.args)
    Exception.__init__(made, *ours.args)
    made.__dict__.update(sdk_error.__dict__)
    made.__dict__.update(ours.__dict__)
    return made


def _bridge_class(ours: type[BaseException], sdk: type[BaseException]) -> type[ProviderError]:
    def __reduce__(self: ProviderError) -> tuple[Any, ...]:
        state = {k: v for k, v in self.__dict__.items() if k in _OURS}
        return _plain_error, (ours, self.args, state)

    namespace = {
        "__module__": ours.__module__,
        "__qualname__": ours.__qualname__,
        "__doc__": ours.__doc__,
        "__reduce__": __reduce__,
    }
    made: Any = type(ours.__name__, (ours, sdk), namespace)
    return made


def _plain_error(
    cls: type[ProviderError], args: tuple[Any, ...], state: dict[str, Any]
) -> ProviderError:
    """An error of our class alone, from a bridged one's arguments and our attributes."""
    error = cls.__new__(cls, *args)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error
