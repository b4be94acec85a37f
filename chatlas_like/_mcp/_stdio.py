"""Our stdio transport: the server's process as the ``mcp`` package runs it, and a reader
that stands up to what a broken or hostile server writes.

The ``mcp`` package's own reader (``mcp.client.stdio``) re-joins everything it buffered
with each new chunk of a line, so a line of n bytes costs time in n squared (a 60 MB
answer took 28 to 81 s, the session stuck meanwhile), and it drops a line it cannot read,
so the call that line answered waits for its timeout, forever by default. This reader:

- splits lines in time linear in their length and accepts at most ``max_message_bytes``
  per line (:data:`MAX_MESSAGE_BYTES` by default); the rest of a longer line is read
  and thrown away, never kept;
- answers a call whose answer cannot be read (over the limit, not UTF-8, too deep to
  parse, not a valid JSON-RPC message) with an error naming why, at once: the answer's
  id is taken from the line, or from its first bytes;
- takes a line that looks like JSON but cannot be read and names no id as a corrupted
  stream: every call waiting is answered with an error, the handler is given
  :class:`StreamBroken`, and reading stops (the session is closed as broken);
- passes a stray line of text (a server printing to its standard output) on as an
  error the session logs and skips, as the ``mcp`` package does.

Errors this reader makes up carry ``data={"chatlas_like": "unreadable"}`` (or
``"broken"``), so the call's result can say what happened. On Windows the ``mcp``
package's own transport is used.
"""

from __future__ import annotations

import re
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager, suppress
from typing import Any, TextIO

import orjson

__all__ = ["MAX_MESSAGE_BYTES", "UNREADABLE", "StreamBroken", "stdio_transport"]

# The most one message from a server may hold: more than Anthropic takes in a whole
# request, so nothing larger could reach the model anyway.
MAX_MESSAGE_BYTES = 32 * 1024 * 1024
UNREADABLE = -32700  # JSON-RPC's "parse error", on the answers this reader makes up
_HEAD = 512  # the first bytes of a line kept to find its id
# A response's id near its start, as every SDK writes it: {"jsonrpc": "2.0", "id": ...}
_ID = re.compile(
    rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,20}|"(?:[^"\\]|\\.){0,200}")'
)
_EXIT_SECONDS = 2.0
_FLUSH_SECONDS = 0.5


class StreamBroken(Exception):
    """The server wrote something that cannot be read and belongs to no call: the
    stream can no longer be trusted."""


@asynccontextmanager
async def stdio_transport(
    params: Any, errlog: TextIO | int, max_message_bytes: int = MAX_MESSAGE_BYTES
) -> AsyncGenerator[tuple[Any, Any]]:
    """Start the server ``params`` describes (a ``StdioServerParameters``); yield the
    session's read and write streams; stop the server (and its children) on exit."""
    if sys.platform == "win32":  # pragma: no cover - the mcp package's job objects
        from mcp.client.stdio import stdio_client

        async with stdio_client(params, errlog) as streams:  # pyright: ignore[reportArgumentType]
            yield streams
        return
    import anyio
    from mcp.client.stdio import get_default_environment

    process = await anyio.open_process(
        [params.command, *params.args],
        env=get_default_environment() | (params.env or {}),
        stderr=errlog,
        cwd=params.cwd,
        start_new_session=True,  # its own process group: stopping it stops its children
    )
    pipe = _Pipe(process, params.encoding, params.encoding_error_handler, max_message_bytes)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(pipe.read)
        tasks.start_soon(pipe.write)
        try:
            yield pipe.read_stream, pipe.write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await pipe.shutdown()
            tasks.cancel_scope.cancel()


class _Pipe:
    """The two tasks between the server's pipes and the session's streams."""

    def __init__(self, process: Any, encoding: str, errors: str, limit: int) -> None:
        import anyio
        from mcp.shared.message import SessionMessage

        self.process = process
        self.encoding = encoding
        self.errors = errors
        self.limit = limit
        self.pending: set[Any] = set()  # ids of our requests not answered yet
        self.to_session, self.read_stream = anyio.create_memory_object_stream[
            SessionMessage | Exception
        ](0)
        self.write_stream, self.from_session = anyio.create_memory_object_stream[SessionMessage](0)
        self.writer_done = anyio.Event()

    # -- the server's standard output -----------------------------------------------------

    async def read(self) -> None:
        import anyio

        try:
            async with self.to_session:
                await self._lines()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # the session is gone
        finally:
            await self._drain()

    async def _lines(self) -> None:
        buffer = bytearray()
        head: bytes | None = None  # the start of a line past the limit, being skipped
        async for chunk in self.process.stdout:
            start = 0
            while True:
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                if head is None and len(buffer) + len(piece) > self.limit:
                    head = bytes(buffer[:_HEAD]) + piece[: max(0, _HEAD - len(buffer))]
                    buffer.clear()
                elif head is None:
                    buffer += piece
                if end < 0:
                    break
                start = end + 1
                item = self._item(bytes(buffer), head)
                buffer.clear()
                head = None
                if not await self._deliver(item):
                    return

    def _item(self, line: bytes, head: bytes | None) -> Any:
        """What one line is for the session; never raises (a reader that died would
        leave every call waiting)."""
        try:
            if head is not None:
                why = f"a message over the {self.limit:,}-byte limit"
                return self._unreadable(head, why, whole=False)
            return self._parsed(line)
        except Exception as e:  # a bug of ours must not hang the calls either
            return StreamBroken(f"its output could not be read ({type(e).__name__}: {e})")

    def _parsed(self, line: bytes) -> Any:
        from mcp.shared.message import SessionMessage
        from mcp.types import jsonrpc_message_adapter

        try:
            text = line.decode(self.encoding, self.errors)
        except UnicodeDecodeError as e:
            return self._unreadable(line, f"not {self.encoding} ({e.reason} at byte {e.start})")
        if not text.strip():
            return None
        try:
            return SessionMessage(jsonrpc_message_adapter.validate_json(text, by_name=False))
        except ValueError as e:  # pydantic's ValidationError, JSON errors included
            return self._unreadable(line, _first_problem(e))

    def _unreadable(self, line: bytes, why: str, whole: bool = True) -> Any:
        """An error answering the call ``line`` was meant to answer; a stray line as an
        error to log; or :class:`StreamBroken` when nothing tells which call it was."""
        parsed = _json(line) if whole else None
        if isinstance(parsed, dict):
            message: dict[str, Any] = parsed  # pyright: ignore[reportUnknownVariableType]
            found = message.get("id") if "method" not in message else None
        else:
            found = _id_near_start(line)
        if found is not None and found in self.pending:
            return _error(found, f"its answer could not be read: {why}", "unreadable")
        if found is not None:
            return ValueError(f"an answer to a call no longer waited for ({why})")
        if parsed is not None or line.lstrip()[:1] not in (b"{", b"["):
            return ValueError(f"a line that is not a JSON-RPC message ({why})")
        return StreamBroken(f"it sent a line that could not be read ({why}) and is no answer")

    async def _deliver(self, item: Any) -> bool:
        """Pass ``item`` to the session; False once the stream is broken."""
        if item is None:
            return True
        if isinstance(item, StreamBroken):
            for request_id in sorted(self.pending, key=str):
                await self.to_session.send(_error(request_id, str(item), "broken"))
            self.pending.clear()
            await self.to_session.send(item)
            return False
        answered = getattr(getattr(item, "message", None), "id", None)
        if answered is not None and not hasattr(item.message, "method"):
            self.pending.discard(answered)
        await self.to_session.send(item)
        return True

    async def _drain(self) -> None:
        """Read and drop what the server still writes, so it never blocks on a full pipe
        and can exit when told to."""
        import anyio

        with anyio.CancelScope(shield=True), suppress(Exception):
            while True:
                await self.process.stdout.receive()

    # -- the server's standard input ------------------------------------------------------

    async def write(self) -> None:
        import anyio

        try:
            async with self.from_session:
                async for sent in self.from_session:
                    self._note(sent.message)
                    data = sent.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await self.process.stdin.send(f"{data}\n".encode(self.encoding, self.errors))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await self.to_session.aclose()  # the session sees the end, not a hang
        finally:
            self.writer_done.set()

    def _note(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if method is None:
            return
        if method == "notifications/cancelled":
            params: Any = getattr(message, "params", None) or {}
            self.pending.discard(params.get("requestId"))
        elif getattr(message, "id", None) is not None:
            self.pending.add(message.id)

    # -- stopping --------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """Stop traffic, let accepted messages out, stop the server, release the streams
        (the order and bounds of the mcp package's own transport)."""
        import anyio

        self.read_stream.close()
        self.write_stream.close()
        with anyio.move_on_after(_FLUSH_SECONDS):
            await self.writer_done.wait()
        await self._stop_process()
        for stream in (self.read_stream, self.write_stream, self.to_session, self.from_session):
            await stream.aclose()

    async def _stop_process(self) -> None:
        import anyio
        from mcp.os.posix.utilities import terminate_posix_process_tree

        process = self.process
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()  # a well-behaved server exits on end of input
        if not await _exited(process, _EXIT_SECONDS):
            await terminate_posix_process_tree(process, _EXIT_SECONDS)
            await _exited(process, _EXIT_SECONDS)
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdout.aclose()
        # Not process.aclose(): it waits for the pipes' end too, which a child that kept
        # them open would put off forever. The transport is closed as the mcp package does.
        transport = getattr(getattr(process, "_process", None), "_transport", None)
        close = getattr(transport, "close", None)
        if callable(close):
            with suppress(PermissionError):
                close()


async def _exited(process: Any, seconds: float) -> bool:
    import anyio

    with anyio.move_on_after(seconds):
        while process.returncode is None:
            await anyio.sleep(0.01)
    return process.returncode is not None


def _error(request_id: Any, message: str, kind: str) -> Any:
    from mcp.shared.message import SessionMessage
    from mcp.types import ErrorData, JSONRPCError

    error = ErrorData(code=UNREADABLE, message=message, data={"chatlas_like": kind})
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def _json(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:  # too deep, not UTF-8, cut short, not JSON
        return None


def _id_near_start(line: bytes) -> Any:
    found = _ID.match(line[:_HEAD])
    return None if found is None else _json(found.group(1))


def _first_problem(error: ValueError) -> str:
    """What is wrong with a message, in a line: an answer's own problem before those of
    the message kinds it is not (a request, a notification)."""
    errors: Any = getattr(error, "errors", None)
    if callable(errors):
        problems: Any = errors(include_url=False, include_input=False)
        answers = [p for p in problems if (p.get("loc") or ("",))[0] in _ANSWER_KINDS]
        for problem in answers or problems:
            where = ".".join(str(p) for p in (problem.get("loc") or ())[1 if answers else 0 :])
            message = str(problem.get("msg", "invalid"))
            return f"{where}: {message}" if where else message
    return str(error).splitlines()[0] if str(error) else type(error).__name__


_ANSWER_KINDS = ("JSONRPCResponse", "JSONRPCError")
