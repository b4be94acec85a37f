"""The cost of one MCP tool call through chatlas_like, against the ``mcp`` client alone.

For stdio and for streamable HTTP, on the same server script (``_mcp_server.py``, one
``echo`` tool), it times one call of ``echo`` three ways, interleaved:

* ``direct``: ``ClientSession.call_tool`` on a session the benchmark opened itself with
  the ``mcp`` package, awaited on the benchmark's event loop (the floor);
* ``tool``: the registered tool's function awaited from that same loop, as an async
  chat calls it: handed to the chat's background loop, where the session lives, and the
  ``CallToolResult`` converted to a ``ContentToolResult``;
* ``runner``: a whole round of one request through the tool runner (a ``ToolRound``
  taken to its last delivery): the argument check against the server's schema, the
  request's ToolInfo, the timeout wrapper, the result.

Medians over the rounds; the ratio is ours over ``direct`` (1.0 = no overhead). Run:
``python -m benchmarks.bench_mcp [--rounds 300] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import orjson

from chatlas_like import ChatAnthropic, ContentToolRequest, Tool
from chatlas_like._tools.runner import ToolContext, ToolRound
from chatlas_like._tools.workers import WorkerPool

SERVER = [sys.executable, "-m", "benchmarks._mcp_server"]
ARGUMENTS = {"text": "hello"}
Call = Callable[[], Awaitable[Any]]


async def measure(transport: str, rounds: int) -> dict[str, Any]:
    async with AsyncExitStack() as stack:
        url = await stack.enter_async_context(_http_server()) if transport == "http" else None
        session = await stack.enter_async_context(_direct_session(url))
        chat = ChatAnthropic(api_key="unused", base_url="http://127.0.0.1:9")
        if url is None:
            await chat.register_mcp_tools_stdio_async(
                command=SERVER[0], args=SERVER[1:], transport_kwargs={"errlog": subprocess.DEVNULL}
            )
        else:
            await chat.register_mcp_tools_http_stream_async(url=url)
        stack.push_async_callback(chat.cleanup_mcp_tools)
        [tool] = [t for t in chat.get_tools() if isinstance(t, Tool)]
        context = ToolContext(tools={tool.name: tool}, pool=WorkerPool(keep_idle=1))

        async def direct() -> Any:
            return await session.call_tool("echo", ARGUMENTS)

        async def via_tool() -> Any:
            return await tool.func(**ARGUMENTS)

        async def via_runner() -> Any:
            request = ContentToolRequest("call-1", "echo", dict(ARGUMENTS))
            tool_round = ToolRound([request], context)
            while not (delivery := await tool_round.next()).done:
                pass
            return delivery

        return await _interleaved(
            {"direct": direct, "tool": via_tool, "runner": via_runner}, rounds
        )


async def _interleaved(calls: dict[str, Call], rounds: int) -> dict[str, Any]:
    names = list(calls)
    for name in names * 20:  # warm-up: connections, caches, the first validator
        await calls[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for n in range(rounds):
        order = names[n % len(names) :] + names[: n % len(names)]
        for name in order:
            start = time.perf_counter()
            await calls[name]()
            samples[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(values) for name, values in samples.items()}
    return {
        "median_ms": {name: round(value * 1000, 4) for name, value in medians.items()},
        "ratio": {
            name: round(medians[name] / medians["direct"], 3) for name in names if name != "direct"
        },
        "samples_ms": {name: [round(v * 1000, 4) for v in vs] for name, vs in samples.items()},
    }


class _http_server:  # an async context manager used like a function
    async def __aenter__(self) -> str:
        self.process = subprocess.Popen(
            [*SERVER, "http"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        assert self.process.stdout is not None
        line = await asyncio.to_thread(self.process.stdout.readline)
        return f"http://127.0.0.1:{int(line.split()[1])}/mcp"

    async def __aexit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        if self.process.stdout is not None:
            self.process.stdout.close()


class _direct_session:
    def __init__(self, url: str | None) -> None:
        self.url = url
        self.stack = AsyncExitStack()

    async def __aenter__(self) -> Any:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client

        if self.url is None:
            params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
            streams = stdio_client(params, errlog=subprocess.DEVNULL)  # type: ignore[arg-type]
        else:
            streams = streamable_http_client(self.url)
        read, write = await self.stack.enter_async_context(streams)
        session = await self.stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        return session

    async def __aexit__(self, *exc: object) -> None:
        await self.stack.aclose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"meta": {"rounds": args.rounds, "python": platform.python_version()}}
    for transport in ("stdio", "http"):
        report[transport] = asyncio.run(measure(transport, args.rounds))
    print(f"one MCP tool call, medians of {args.rounds} interleaved rounds")
    print(
        f"{'transport':<10}{'direct ms':>11}{'tool ms':>10}{'runner ms':>11}{'tool/direct':>13}{'runner/direct':>15}"
    )
    for transport in ("stdio", "http"):
        row = report[transport]
        ms, ratio = row["median_ms"], row["ratio"]
        print(
            f"{transport:<10}{ms['direct']:>11.3f}{ms['tool']:>10.3f}{ms['runner']:>11.3f}"
            f"{ratio['tool']:>13.2f}{ratio['runner']:>15.2f}"
        )
    if args.json:
        with open(args.json, "wb") as f:
            f.write(orjson.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
