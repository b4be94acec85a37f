"""Tools from Model Context Protocol servers (the ``mcp`` extra), imported on first use.

- :mod:`._connection`: one session, owned by a task on the private background loop;
- :mod:`._tools`: the tools a server lists, as :class:`~chatlas_like.Tool` objects;
- :mod:`._results`: a ``CallToolResult`` as one :class:`~chatlas_like.ContentToolResult`;
- :mod:`._registry`: a chat's sessions: registration, re-listing, cleanup, copies.

Nothing here is imported by ``import chatlas_like``; the ``mcp`` package is imported
when a server is first registered.
"""

from __future__ import annotations

import importlib

from ._registry import McpTools, http_connection, stdio_connection
from ._tools import McpTool, ToolFilter

__all__ = ["McpTool", "McpTools", "ToolFilter", "http_connection", "stdio_connection"]


# Imported by the sessions on the background loop, unless imported before (see below).
_USED = (
    "anyio._backends._asyncio",
    "anyio._core._sockets",
    "anyio.streams.stapled",
    "anyio.streams.tls",
    "jsonschema",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "chatlas_like._mcp._results",
)


def require_mcp() -> None:
    """Import what the sessions use, here, or raise a clear ImportError.

    On the caller's thread, before anything runs on the background loop: a module
    compiled there while another thread compiles one can break CPython 3.11's parser
    ("AST constructor recursion depth mismatch", fixed in later releases), and with
    PYTHONDONTWRITEBYTECODE every import compiles.
    """
    try:
        import mcp  # noqa: F401  # pyright: ignore[reportUnusedImport]
    except ImportError:
        raise ImportError(
            "MCP tools need the `mcp` package: pip install 'chatlas_like[mcp]'"
        ) from None
    for name in _USED:
        importlib.import_module(name)
