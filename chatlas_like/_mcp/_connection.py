"""One MCP server session, living on the private background loop while it is open.

Why that loop: an MCP session (its transport's task groups) must be entered and left
in one task, and must outlive the event loop of whoever registered it: a sync chat
registers with ``asyncio.run(...)``, whose loop ends right after, and runs its tools on
the background loop anyway. So each session has an owner task there, which opens the
transport and the session, lists the tools, and holds them open until it is told to
stop. Calls from any loop or thread are handed to that loop; a call cancelled on its
side (a tool timeout, an interrupt) is cancelled there too.

A call never waits on a session that is gone: it races the owner's end, so a server
that crashes or drops the connection mid-call answers at once with a clear error.
``notifications/tools/list_changed`` starts a re-listing there; a call that brought one
about waits for it, so the next turn sees the new tools.

Registering has a deadline of its own (``register_timeout``, :data:`REGISTER_SECONDS`
by default): starting the server, initialising the session and listing its tools must
finish in time, and a listing may name at most :data:`MAX_TOOLS` tools, so a server that
lists forever is stopped instead of growing memory without end.

Sessions still open when the interpreter exits are closed then (their servers stopped).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
from collections.abc import Callable, Coroutine
from contextlib import AbstractAsyncContextManager, AsyncExitStack, suppress
from typing import Any, TypeVar

from .._core.errors import McpServerError
from .._core.terminal_safe import strip_controls
from .._observe.log import child
from .._tools.workers import background_loop
from ._stdio import StreamBroken

__all__ = [
    "MAX_TOOLS",
    "REGISTER_SECONDS",
    "McpConnection",
    "McpUnavailable",
    "on_background",
    "on_background_blocking",
]

T = TypeVar("T")
Transport = Callable[[], AbstractAsyncContextManager[Any]]
_log = child("mcp")
_EXIT_SECONDS = 10.0
REGISTER_SECONDS = 60.0
MAX_TOOLS = 10_000


class McpUnavailable(Exception):
    """The session is not open (closed, or the server went away)."""


async def on_background(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Await ``factory()`` run on the background loop, from whichever loop we are on.

    Cancelled here, it is cancelled there, and this returns (raising CancelledError)
    only once it has finished: a registration given up on has stopped its server.
    """
    loop = background_loop()
    caller = asyncio.get_running_loop()
    if caller is loop:
        return await factory()
    outcome: asyncio.Future[T] = caller.create_future()
    tasks: list[asyncio.Task[T]] = []

    def start() -> None:
        task = loop.create_task(factory())
        tasks.append(task)
        task.add_done_callback(lambda done: _hand_back(caller, outcome, done))

    loop.call_soon_threadsafe(start)
    try:
        return await asyncio.shield(outcome)
    except asyncio.CancelledError:
        loop.call_soon_threadsafe(lambda: tasks[0].cancel())  # start() has run by then
        with suppress(BaseException):
            await outcome
        raise


def _hand_back(
    caller: asyncio.AbstractEventLoop, outcome: asyncio.Future[T], done: asyncio.Task[T]
) -> None:
    """Copy a background task's outcome to the caller's future, on the caller's loop."""

    def settle() -> None:
        if outcome.done():
            return
        if done.cancelled():
            outcome.cancel()
        elif done.exception() is not None:
            outcome.set_exception(done.exception())  # pyright: ignore[reportArgumentType]
        else:
            outcome.set_result(done.result())

    with suppress(RuntimeError):  # the caller's loop is closed: nobody waits any more
        caller.call_soon_threadsafe(settle)


def on_background_blocking(
    factory: Callable[[], Coroutine[Any, Any, T]], timeout: float | None = None
) -> T | None:
    """Run ``factory()`` on the background loop and wait for it; from that loop's own
    thread (where waiting would deadlock) it is started and not waited for."""
    loop = background_loop()
    future = asyncio.run_coroutine_threadsafe(factory(), loop)
    if _running_loop() is loop:
        return None
    return future.result(timeout)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class McpConnection:
    """An open MCP client session and the tools its server lists.

    Parameters
    ----------
    transport
        Opens the transport (stdio or streamable HTTP): an async context manager that
        yields the read and write streams.
    where
        The command or URL, for messages.
    name
        The session's name; None to take the server's own.
    register_timeout
        Seconds that starting, initialising and listing the tools may take.
    """

    def __init__(
        self,
        transport: Transport,
        where: str,
        name: str | None,
        register_timeout: float = REGISTER_SECONDS,
    ) -> None:
        self.transport = transport
        self.where = where
        self.name = name or ""
        self.register_timeout = register_timeout
        self.tools: list[Any] = []  # the server's listing (mcp Tool objects)
        self.version = 0  # bumped by each re-listing
        self.ended: BaseException | None = None
        self._session: Any = None
        self._stop: asyncio.Event | None = None
        self._closed: asyncio.Event | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stale = False
        self._relisting: asyncio.Task[None] | None = None

    @property
    def is_open(self) -> bool:
        """Whether calls can be made."""
        return self._session is not None

    # -- on the background loop ------------------------------------------------------

    async def open(self) -> None:
        """Connect, initialise and list the tools; raises McpServerError if that fails."""
        loop = asyncio.get_running_loop()
        self._stop, self._closed = asyncio.Event(), asyncio.Event()
        ready: asyncio.Future[None] = loop.create_future()
        ready.add_done_callback(_consume)  # read below, unless this wait is cancelled
        self._owner = loop.create_task(self._own(ready), name=f"mcp-{self.where}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.register_timeout)
        except asyncio.CancelledError:
            await self.close()
            raise
        except TimeoutError:
            await self.close()  # stops the server: a listing without end grows no more
            raise McpServerError(
                f"the MCP server {self.where} did not start, initialise and list its tools "
                f"within {self.register_timeout:g} s (transport_kwargs register_timeout); "
                "it was stopped"
            ) from None
        except Exception as e:
            raise McpServerError(
                f"could not connect to the MCP server {self.where}: {_describe(e)}"
            ) from e
        _LIVE.add(self)

    async def _own(self, ready: asyncio.Future[None]) -> None:
        from mcp import ClientSession

        assert self._stop is not None and self._closed is not None
        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self.transport())
                session = await stack.enter_async_context(
                    ClientSession(read, write, message_handler=self._on_message)
                )
                started = await session.initialize()
                self.name = self.name or str(started.server_info.name or "mcp")
                self.tools = await _list_tools(session)
                self._session = session
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as e:  # the owner records how the session ended; never raises
            if not ready.done():
                if isinstance(e, asyncio.CancelledError):
                    ready.cancel()
                else:
                    ready.set_exception(_plain(e))
            elif self.ended is None and not self._stop.is_set():
                self.ended = _plain(e)
                _log.warning("MCP server %r ended: %s", self.name, _describe(self.ended))
        finally:
            self._session = None
            self._closed.set()
            _LIVE.discard(self)

    async def close(self) -> None:
        """Stop the session (and a stdio server's process); waits until it is done."""
        if self._stop is not None:
            self._stop.set()
        owner = self._owner
        if owner is not None and not owner.done():
            if self._session is None:  # still connecting (or dead): nothing to wind down
                owner.cancel()
            await asyncio.wait([owner])
        _LIVE.discard(self)

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """``tools/call`` on the server: its CallToolResult, or an exception."""
        session = self._session
        if session is None or self._closed is None:
            raise McpUnavailable(self._gone())
        call = asyncio.ensure_future(session.call_tool(tool, arguments))
        call.add_done_callback(_consume)
        ended = asyncio.ensure_future(self._closed.wait())
        try:
            await asyncio.wait([call, ended], return_when=asyncio.FIRST_COMPLETED)
        finally:
            ended.cancel()
            if not call.done():
                call.cancel()  # a timeout or an interrupt on our side, or the session ended
        if call.cancelled():
            raise McpUnavailable(self._gone())
        error = call.exception()
        if error is not None:
            if _connection_closed(error):  # the server is gone: later calls say so at once
                self._end(error)
            raise error
        await self._settle()
        return call.result()

    def _end(self, why: BaseException) -> None:
        """The session is dead: record why, and let the owner release the transport."""
        if self._session is not None:
            self.ended = why
            self._session = None
        if self._stop is not None:
            self._stop.set()

    async def _settle(self) -> None:
        """Let a re-listing the call brought about finish, so the next turn sees it."""
        await asyncio.sleep(0)  # the notification's handler runs before the reply's waiter
        if self._relisting is not None and not self._relisting.done():
            await asyncio.shield(self._relisting)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, StreamBroken):  # no later answer can be trusted
            _log.warning("MCP server %r broke its session: %s", self.name, message)
            self._end(message)
            return
        if isinstance(message, Exception):  # a stray line: the session goes on
            _log.warning("MCP server %r sent something unreadable: %s", self.name, message)
            return
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self._stale = True
            if self._relisting is None or self._relisting.done():
                self._relisting = asyncio.get_running_loop().create_task(self._relist())

    async def _relist(self) -> None:
        while self._stale and self._session is not None:
            self._stale = False
            try:
                self.tools = await _list_tools(self._session)
            except Exception as e:  # keep the tools we have
                _log.warning("MCP server %r: re-listing its tools failed: %s", self.name, e)
                return
            self.version += 1

    def _gone(self) -> str:
        if isinstance(self.ended, StreamBroken):
            return f"the MCP server {self.name!r} broke its session: {self.ended}"
        why = f": {_describe(self.ended)}" if self.ended is not None else ""
        state = "closed the connection" if self.ended is not None else "is closed"
        return f"the MCP server {self.name!r} {state}{why}"


async def _list_tools(session: Any) -> list[Any]:
    from mcp.types import PaginatedRequestParams

    listed: list[Any] = []
    cursor: str | None = None
    while True:
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        listed.extend(page.tools)
        if len(listed) > MAX_TOOLS:
            raise ValueError(f"it lists more than {MAX_TOOLS:,} tools")
        cursor = page.next_cursor
        if not cursor:
            return listed


def _connection_closed(error: BaseException) -> bool:
    from mcp.shared.exceptions import MCPError
    from mcp.types import CONNECTION_CLOSED

    return isinstance(error, MCPError) and error.code == CONNECTION_CLOSED


def _consume(task: asyncio.Future[Any]) -> None:
    """Retrieve an abandoned call's outcome, so asyncio does not log it as lost."""
    if not task.cancelled():
        task.exception()


def _plain(error: BaseException) -> BaseException:
    """The first leaf of an exception group (what a transport's task group raises)."""
    leaves: Any = getattr(error, "exceptions", None)
    if leaves and isinstance(leaves, tuple) and isinstance(leaves[0], BaseException):
        return _plain(leaves[0])
    return error


def _describe(error: BaseException | None) -> str:
    if error is None:
        return "no reason given"
    if isinstance(error, asyncio.CancelledError):
        return "the connection was cancelled"
    message = strip_controls(str(error).strip())  # a server's words, printed with errors
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


# -- sessions still open at exit ------------------------------------------------------------

_LIVE: set[McpConnection] = set()


def _close_all_at_exit() -> None:
    live = list(_LIVE)
    if not live:
        return

    async def close_all() -> None:
        await asyncio.gather(*(c.close() for c in live), return_exceptions=True)

    # Exiting anyway: a server not stopped in time sees its stdin close.
    with suppress(concurrent.futures.TimeoutError, RuntimeError):
        on_background_blocking(close_all, timeout=_EXIT_SECONDS)


atexit.register(_close_all_at_exit)
