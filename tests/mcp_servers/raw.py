"""An MCP server written by hand (JSON-RPC over stdio) that sends what a good server never
would: malformed results, unknown block types, bad base64, stray lines, a bad schema.

No ``mcp`` import: the point is to send bytes the SDK would not let a server send.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

EMPTY = {"type": "object", "properties": {}}
TOOLS = [
    {"name": "malformed", "description": "Content that is not a list.", "inputSchema": EMPTY},
    {"name": "hologram", "description": "A block of an unknown type.", "inputSchema": EMPTY},
    {"name": "bad_base64", "description": "An image that is not base64.", "inputSchema": EMPTY},
    {"name": "noisy", "description": "A stray line, then an answer.", "inputSchema": EMPTY},
    {"name": "rpc_error", "description": "Answers with a JSON-RPC error.", "inputSchema": EMPTY},
    {
        "name": "bad_schema",
        "description": "A schema that is not valid JSON Schema.",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "no-such-type"}}},
    },
]
RESULTS: dict[str, Any] = {
    "malformed": {"content": "not a list"},
    "hologram": {"content": [{"type": "hologram", "data": "3d"}]},
    "bad_base64": {
        "content": [{"type": "image", "data": "%%not base64%%", "mimeType": "image/png"}]
    },
    "noisy": {"content": [{"type": "text", "text": "still fine"}]},
}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "raw", "version": "0"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "ping":
        return {}
    if method == "tools/call":
        name = params.get("name")
        if name == "noisy":
            sys.stdout.write("this line is not JSON-RPC\n")
        return RESULTS.get(name)  # rpc_error has none: a JSON-RPC error answers it
    return None


def main() -> None:
    pid_file = os.environ.get("MCP_PID_FILE")
    if pid_file:  # written whole, then renamed: a reader never sees it half-written
        with open(f"{pid_file}.tmp", "w") as f:
            f.write(str(os.getpid()))
        os.replace(f"{pid_file}.tmp", pid_file)
    silent = sys.argv[1:] == ["silent"]  # reads everything, answers nothing
    for line in sys.stdin:
        if silent:
            continue
        request = json.loads(line)
        if "id" not in request:
            continue  # a notification
        result = answer(request)
        if result is None:
            error = (
                {"code": -32603, "message": "the tool broke"}
                if request.get("method") == "tools/call"
                else {"code": -32601, "message": f"unknown method {request.get('method')}"}
            )
            send({"jsonrpc": "2.0", "id": request["id"], "error": error})
        else:
            send({"jsonrpc": "2.0", "id": request["id"], "result": result})


if __name__ == "__main__":
    main()
