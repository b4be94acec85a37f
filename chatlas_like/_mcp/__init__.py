"""Tools from Model Context Protocol servers (the ``mcp`` extra), imported on first use.

- :mod:`._connection`: one session, owned by a task on the private background loop;
- :mod:`._tools`: the tools a server lists, as :class:`~chatlas_like.Tool` objects;
- :mod:`._results`: a ``CallToolResult`` as one :class:`~chatlas_like.ContentToolResult`;
- :mod:`._registry`: a chat's sessions: registration, re-listing, cleanup, copies.

Nothing here is imported by ``import chatlas_like``; the ``mcp`` package is imported
when a server is first registered.
"""

from __future__ import annotations

from ._registry import McpTools, http_connection, stdio_connection
from ._tools import McpTool, ToolFilter

__all__ = ["McpTool", "McpTools", "ToolFilter", "http_connection", "stdio_connection"]


def require_mcp() -> None:
    """Raise a clear ImportError when the ``mcp`` package is missing."""
    try:
        import mcp  # noqa: F401  # pyright: ignore[reportUnusedImport]
    except ImportError:
        raise ImportError(
            "MCP tools need the `mcp` package: pip install 'chatlas_like[mcp]'"
        ) from None
