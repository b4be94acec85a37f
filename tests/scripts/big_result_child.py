"""Run by test_truncation in a fresh process: a tool returning a 50 MB string.

Prints one JSON object: the bytes of the tool result the model received, the size of
that request, every response status, and the growth of the process's peak RSS
(``resource.getrusage``) from just before the tool built its value to the end.
Usage: ``python tests/scripts/big_result_child.py [--store DIR] [--size BYTES]``.
"""

from __future__ import annotations

import argparse
import resource
import sys
from pathlib import Path
from typing import Any

import orjson

from chatlas_like import ChatAnthropic, SqliteStore
from chatlas_like.testing import LoopbackServer, Reply


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=50_000_000)
    parser.add_argument("--store", default=None, help="attach a SQLite store in this folder")
    args = parser.parse_args()
    size: int = args.size
    calls = {"n": 0}

    def produce() -> str:
        """Returns a very large text."""
        calls["n"] += 1
        return "x" * (size if calls["n"] > 1 else 10)

    script = [Reply.tool_call("produce", {}), Reply.text("ok")] * 2
    with LoopbackServer(script) as server:
        options: dict[str, Any] = {}
        if args.store:
            options = {"store": SqliteStore(Path(args.store) / "r.db"), "paging": True}
        chat = ChatAnthropic(
            base_url=server.url, api_key="test", model="claude-haiku-4-5", **options
        )
        chat.register_tool(produce)
        chat.chat("warm up", echo="none")  # imports, client, connection: before the baseline
        before = peak_rss_bytes()
        chat.chat("now the big one", echo="none")
        after = peak_rss_bytes()
        request = [r for r in server.requests if r.path == "/v1/messages"][3]
        block = request.body["messages"][-1]["content"][0]
        print(
            orjson.dumps(
                {
                    "result_bytes": size,
                    "tool_result_bytes": len(block["content"].encode()),
                    "request_bytes": len(request.raw),
                    "statuses": [r.response_status for r in server.requests],
                    "max_result_bytes": chat.options.max_result_bytes,
                    "peak_rss_before": before,
                    "peak_rss_after": after,
                    "peak_rss_growth": after - before,
                }
            ).decode()
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
