"""A chat's MCP sessions and the tools they gave it.

A chat *owns* the sessions it registered: ``cleanup_mcp_tools()``, ``close()`` and
leaving a ``with`` / ``async with`` block close them. ``chat.copy()`` gives the copy
*links* to the same sessions and owns none: the copy calls the same servers (a Shiny
app's per-session copies need that), its ``cleanup_mcp_tools()`` only removes the tools
from the copy, and only the chat that registered a server closes it; once it has, the
copy's calls to that server answer with an error saying the server is closed.

A server's ``tools/list_changed`` is applied at the start of the next chat call
(``sync``), to this chat and to its copies: tools it dropped are removed, new ones
added (a new name that clashes with a tool the chat has is left out, with a warning).
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from .._core.tool_result import ContentToolResult
from .._tools.tool import Tool, ToolBuiltIn
from ._connection import (
    REGISTER_SECONDS,
    McpConnection,
    McpUnavailable,
    Transport,
    on_background,
)
from ._stdio import MAX_MESSAGE_BYTES
from ._tools import McpTool, ToolFilter, build_tools, warn_unmatched

__all__ = ["McpTools", "http_connection", "stdio_connection"]

Tools = dict[str, Tool | ToolBuiltIn]
_STDIO_CLIENT_OPTIONS = frozenset({"errlog", "max_message_bytes"})


@dataclass(slots=True)
class _Link:
    """One session as this chat uses it: its options, and the tools it gave the chat."""

    connection: McpConnection
    options: ToolFilter
    tools: dict[str, McpTool] = field(default_factory=lambda: {})
    version: int = 0


class McpTools:
    """The MCP sessions of one chat (see the module docstring)."""

    def __init__(self) -> None:
        self._links: dict[str, _Link] = {}
        self._owned: set[str] = set()

    def copy(self) -> McpTools:
        """Links to the same sessions, owning none of them."""
        new = McpTools()
        for name, link in self._links.items():
            new._links[name] = _Link(link.connection, link.options, dict(link.tools), link.version)
        return new

    @property
    def names(self) -> list[str]:
        """The names of the sessions this chat uses."""
        return list(self._links)

    async def register(
        self,
        tools: Tools,
        connection: McpConnection,
        options: ToolFilter,
        force: bool,
    ) -> None:
        """Open ``connection`` and add its tools to ``tools``; closes it again on a clash."""
        if connection.name and connection.name in self._links:
            raise ValueError(_already(connection.name))
        await on_background(connection.open)
        clashes: list[str] = []
        try:
            if connection.name in self._links:
                raise ValueError(_already(connection.name))
            warn_unmatched(connection.tools, connection.name, options)
            link = _Link(connection, options, version=connection.version)
            link.tools = build_tools(connection.tools, connection.name, options, _caller(link))
            clashes = sorted(n for n in link.tools if n in tools)
            if clashes and not force:
                raise ValueError(
                    f"MCP server {connection.name!r}: tools named {', '.join(clashes)} are "
                    "registered already; give a namespace= to tell them apart, or force=True "
                    "to replace them"
                )
        except BaseException:
            await on_background(connection.close)
            raise
        for other in self._links.values():  # a replaced tool leaves the session that gave it
            for name in clashes:
                other.tools.pop(name, None)
        tools.update(link.tools)
        self._links[connection.name] = link
        self._owned.add(connection.name)

    def sync(self, tools: Tools) -> None:
        """Apply the servers' re-listings (``tools/list_changed``) to ``tools``."""
        for link in self._links.values():
            connection = link.connection
            if connection.version == link.version:
                continue
            link.version = connection.version
            fresh = build_tools(connection.tools, connection.name, link.options, _caller(link))
            for name, tool in link.tools.items():
                if tools.get(name) is tool:
                    del tools[name]
            kept: dict[str, McpTool] = {}
            for name, tool in fresh.items():
                if name in tools:
                    warnings.warn(
                        f"MCP server {connection.name!r} now lists {name!r}, a name the chat "
                        "already has: it is not registered",
                        UserWarning,
                        stacklevel=3,
                    )
                    continue
                tools[name] = kept[name] = tool
            link.tools = kept

    async def cleanup(self, tools: Tools, names: Sequence[str] | str | None) -> None:
        """Remove the tools of sessions ``names`` (all by default); close the owned ones."""
        wanted = [names] if isinstance(names, str) else list(names or self._links)
        for name in wanted:
            link = self._links.pop(name, None)
            if link is None:
                warnings.warn(
                    f"no MCP session named {name!r} to clean up; sessions: "
                    f"{', '.join(map(repr, self._links)) or 'none'}",
                    UserWarning,
                    stacklevel=3,
                )
                continue
            _remove(tools, link)
            if name in self._owned:
                self._owned.discard(name)
                await on_background(link.connection.close)

    def close(self, tools: Tools) -> None:
        """:meth:`cleanup` of every session, waiting (from sync code) for the owned ones."""
        from ._connection import on_background_blocking

        links, owned = self._links, self._owned
        self._links, self._owned = {}, set()
        for link in links.values():
            _remove(tools, link)
        connections = [links[name].connection for name in owned]

        async def close_all() -> None:
            await asyncio.gather(*(c.close() for c in connections))

        if connections:
            on_background_blocking(close_all)


def _remove(tools: Tools, link: _Link) -> None:
    for name, tool in link.tools.items():
        if tools.get(name) is tool:
            del tools[name]


def _already(name: str) -> str:
    return (
        f"an MCP server named {name!r} is registered already; give another name= "
        "or clean it up first"
    )


def _caller(link: _Link) -> Any:
    connection = link.connection

    async def call(mcp_name: str, arguments: dict[str, Any]) -> ContentToolResult:
        from ._results import to_tool_result

        try:
            result = await on_background(lambda: connection.call(mcp_name, arguments))
        except McpUnavailable as e:
            return _failure(f"Not run: {e}.")
        except Exception as e:
            return _failure(_call_failed(connection.name, mcp_name, e))
        return to_tool_result(result, mcp_name)

    return call


def _failure(message: str) -> ContentToolResult:
    return ContentToolResult(error=message, outcome="error")


def _call_failed(server: str, tool: str, error: Exception) -> str:
    from mcp.shared.exceptions import MCPError
    from mcp.types import CONNECTION_CLOSED
    from pydantic import ValidationError

    if isinstance(error, MCPError):
        data: Any = error.data
        made_up = cast(dict[str, Any], data).get("chatlas_like") if isinstance(data, dict) else None
        if made_up == "unreadable":  # by our reader (see _stdio)
            return (
                f"The MCP server {server!r} sent an answer to `{tool}` that could not be "
                f"read: {error.message.removeprefix('its answer could not be read: ')}. "
                f"`{tool}` may have run."
            )
        if made_up == "broken":
            return (
                f"The MCP server {server!r} broke its session while `{tool}` ran: "
                f"{error.message}. The session is closed, and `{tool}` may have run."
            )
        if error.code == CONNECTION_CLOSED:
            return (
                f"The MCP server {server!r} closed the connection during the call "
                f"({error.message}); it may have crashed, and `{tool}` may have partly run."
            )
        return f"The MCP server {server!r} answered `{tool}` with an error: {error.message} (code {error.code})."
    if isinstance(error, ValidationError):
        return (
            f"The MCP server {server!r} sent a malformed result for `{tool}`: {_malformed(error)}."
        )
    if isinstance(error, RuntimeError):  # the SDK's check of structured output and schema
        return (
            f"The MCP server {server!r} sent a result for `{tool}` that the client refused: {error}"
        )
    return (
        f"The call of `{tool}` on the MCP server {server!r} failed: {type(error).__name__}: {error}"
    )


def _malformed(error: Any) -> str:
    """What is wrong with a result, in a line (a bad block fails every block type: say so)."""
    problems = error.errors(include_url=False, include_input=False)
    locations = [tuple(p["loc"]) for p in problems]
    blocks = {loc[1] for loc in locations if len(loc) > 2 and loc[0] == "content"}
    if len(blocks) == 1 and all(len(loc) > 2 and loc[0] == "content" for loc in locations):
        return f"content block {blocks.pop()} is not of any MCP content type"
    first = problems[0]
    where = ".".join(str(part) for part in first["loc"]) or "the result"
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{where}: {first['msg']}{more}"


# -- transports ---------------------------------------------------------------------------------


def stdio_connection(
    command: str, args: Sequence[str], name: str | None, transport_kwargs: Mapping[str, Any]
) -> McpConnection:
    """A session with the server ``command args`` starts, over its stdin and stdout.

    Besides the server process's options, ``transport_kwargs`` takes ``errlog``,
    ``max_message_bytes`` (the most one message may hold) and ``register_timeout``
    (seconds to start, initialise and list the tools).
    """
    options = dict(transport_kwargs)
    deadline = _register_timeout(options.pop("register_timeout", REGISTER_SECONDS))
    where = " ".join([command, *args])
    return McpConnection(_stdio_transport(command, args, options), where, name, deadline)


def http_connection(
    url: str, name: str | None, transport_kwargs: Mapping[str, Any]
) -> McpConnection:
    """A session with the server at ``url``, over streamable HTTP (``transport_kwargs``
    as for :func:`stdio_connection`, with the HTTP client's options)."""
    options = dict(transport_kwargs)
    deadline = _register_timeout(options.pop("register_timeout", REGISTER_SECONDS))
    return McpConnection(_http_transport(url, options), url, name, deadline)


def _register_timeout(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"register_timeout must be a positive number of seconds, got {value!r}")
    return float(value)


def _stdio_transport(
    command: str, args: Sequence[str], transport_kwargs: Mapping[str, Any]
) -> Transport:
    """The server's process over its stdin and stdout, read by our reader (see
    :mod:`._stdio`); ``errlog`` and ``max_message_bytes`` are the client's options."""
    import sys

    from mcp import StdioServerParameters

    from ._stdio import stdio_transport

    client_options = {k: v for k, v in transport_kwargs.items() if k in _STDIO_CLIENT_OPTIONS}
    server_options = {k: v for k, v in transport_kwargs.items() if k not in _STDIO_CLIENT_OPTIONS}
    params = StdioServerParameters(command=command, args=list(args), **server_options)
    errlog = client_options.get("errlog", sys.stderr)
    limit = _message_limit(client_options.get("max_message_bytes", MAX_MESSAGE_BYTES))
    return lambda: stdio_transport(params, errlog, limit)


def _message_limit(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"max_message_bytes must be a positive int, got {value!r}")
    return value


def _http_transport(url: str, transport_kwargs: Mapping[str, Any]) -> Transport:
    """Streamable HTTP to ``url``; ``headers=``/``auth=`` build the HTTP client."""
    from contextlib import asynccontextmanager

    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    options = dict(transport_kwargs)
    # The mcp package reads at most 1 MiB per server-sent event: an image of a few MB
    # would fail the call. The same cap as over stdio instead.
    limit = _message_limit(options.pop("max_message_bytes", MAX_MESSAGE_BYTES))
    options.setdefault("max_sse_event_size", limit)
    client_options = {k: options.pop(k) for k in ("headers", "auth", "timeout") if k in options}
    if client_options and "http_client" in options:
        raise ValueError(
            "give headers=/auth=/timeout= or http_client= in transport_kwargs, not both"
        )

    @asynccontextmanager
    async def open_transport() -> AsyncGenerator[Any]:
        if not client_options:
            async with streamable_http_client(url, **options) as streams:
                yield streams
            return
        async with (
            create_mcp_http_client(**client_options) as client,
            streamable_http_client(url, http_client=client, **options) as streams,
        ):
            yield streams

    return open_transport
