"""MCP servers the tests start: the kitchen server over stdio and over streamable HTTP.

Test modules say ``pytest_plugins = ["tests.support.mcp"]``. ``kitchen_tools`` is one
stdio session for a whole module (its tools are handed to each test's chat with
``set_tools``); tests that crash, hang, change or close a server start their own.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from chatlas_like import Chat, ChatAnthropic, ContentToolResult, Tool, ToolBuiltIn
from chatlas_like.testing import LoopbackServer

from ..conftest import TEST_KEY, Reply, make_chat

SERVERS = Path(__file__).parent.parent / "mcp_servers"
KITCHEN = str(SERVERS / "kitchen.py")
RAW = str(SERVERS / "raw.py")
QUIET: dict[str, Any] = {"errlog": subprocess.DEVNULL}  # the servers' logs, unread


def offline_chat() -> Chat:
    """A chat that never talks to a model (it only holds MCP sessions)."""
    return ChatAnthropic(api_key=TEST_KEY, base_url="http://127.0.0.1:9")


def kitchen_session(transport: str) -> Iterator[list[Tool | ToolBuiltIn]]:
    """The kitchen server's tools from one session over ``transport`` (a fixture's body)."""
    owner = offline_chat()
    server = HttpKitchen() if transport == "http" else None
    try:
        if server is None:
            registering = owner.register_mcp_tools_stdio_async(
                command=sys.executable, args=[KITCHEN], transport_kwargs=QUIET
            )
        else:
            registering = owner.register_mcp_tools_http_stream_async(url=server.url)
        asyncio.run(registering)
        yield owner.get_tools()
    finally:
        owner.close()
        if server is not None:
            server.stop()


@pytest.fixture(scope="module")
def kitchen_tools() -> Iterator[list[Tool | ToolBuiltIn]]:
    """The kitchen server's tools, from one stdio session for the module."""
    yield from kitchen_session("stdio")


@pytest.fixture(scope="module", params=["stdio", "http"])
def kitchen_over_each(request: pytest.FixtureRequest) -> Iterator[list[Tool | ToolBuiltIn]]:
    """The kitchen server's tools, from one session per transport for the module."""
    yield from kitchen_session(request.param)


def converse(
    serve: Callable[..., LoopbackServer],
    tools: Sequence[Tool | ToolBuiltIn],
    *calls: tuple[str, dict[str, Any]],
    **options: Any,
) -> tuple[Chat, LoopbackServer]:
    """One turn in which the model calls ``calls``, then answers "done"."""
    server = serve([Reply.tool_calls(calls), Reply.text("done")])
    chat = make_chat(server, **options)
    chat.set_tools(tools)
    chat.chat("Go", echo="none")
    return chat, server


def results_of(chat: Chat) -> list[ContentToolResult]:
    """Every tool result of the conversation, in order."""
    return [r for turn in chat.get_turns() for r in turn.tool_results]


def sent_results(server: LoopbackServer, request: int = 1) -> list[dict[str, Any]]:
    """The tool_result blocks the model received in request ``request``."""
    content = server.message_requests()[request]["messages"][-1]["content"]
    return [b for b in content if b["type"] == "tool_result"]


def pid_from(path: Path) -> int:
    return int(path.read_text())


def process_gone(pid: int) -> bool:
    """Whether the process has exited and been reaped (a zombie is not gone)."""
    return not Path(f"/proc/{pid}").exists()


def open_connections_to(port: int) -> int:
    """This process's TCP connections to 127.0.0.1:``port`` that are not closed."""
    ours = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            ours.add(target[8:-1])
    count = 0
    for line in Path("/proc/self/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        remote, state, inode = fields[2], fields[3], fields[9]
        if inode in ours and int(remote.split(":")[1], 16) == port and state != "07":
            count += 1
    return count


class HttpKitchen:
    """The kitchen server over streamable HTTP, in a subprocess on a free loopback port."""

    def __init__(self, pid_file: Path | None = None) -> None:
        env = {**os.environ}
        if pid_file is not None:
            env["MCP_PID_FILE"] = str(pid_file)
        self.process = subprocess.Popen(
            [sys.executable, KITCHEN, "http"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("PORT "):
            self.stop()
            raise RuntimeError(f"the HTTP kitchen server did not start: {line!r}")
        self.port = int(line.split()[1])
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(timeout=30)
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture
def http_kitchen() -> Iterator[HttpKitchen]:
    """A fresh HTTP kitchen server for the test, stopped at teardown."""
    server = HttpKitchen()
    yield server
    server.stop()


__all__ = [
    "KITCHEN",
    "QUIET",
    "RAW",
    "HttpKitchen",
    "converse",
    "offline_chat",
    "open_connections_to",
    "pid_from",
    "process_gone",
    "results_of",
    "sent_results",
]
