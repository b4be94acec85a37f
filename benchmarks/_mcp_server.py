"""The MCP server of ``bench_mcp.py``: one ``echo`` tool, over stdio or streamable HTTP.

``python -m benchmarks._mcp_server`` serves stdio; ``... http`` serves HTTP on a free
127.0.0.1 port, printed first as ``PORT <n>``.
"""

from __future__ import annotations

import asyncio
import socket
import sys

from mcp.server.mcpserver import MCPServer

app = MCPServer("bench", log_level="WARNING")


@app.tool(description="Says the text back.", structured_output=False)
def echo(text: str) -> str:
    return text


def main() -> None:
    if sys.argv[1:] != ["http"]:
        app.run()
        return
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app.streamable_http_app(), log_level="warning")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
