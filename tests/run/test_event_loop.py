"""``chat_async`` never blocks the event loop: not while a document downloads, not while
the provider's SDK is imported the first time.

A ticker coroutine runs beside the call and records the gaps between its ticks; a call
that blocked the loop shows as one gap as long as the block (the download takes 1.5 s,
the first SDK import two to three). The bound is far below those and far above what a
loaded machine adds to a 10 ms sleep.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from chatlas_like import content_document_url
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat, run_in_child

SLOW_SECONDS = 1.5
BLOCKED = 0.5  # a gap this long means the loop was held (the blocks last 1.5 s and more)


class _Slow(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        time.sleep(SLOW_SECONDS)
        body = b"region,q3\nMidwest,264\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def slow_document() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/{uuid.uuid4().hex}/report.csv"
    httpd.shutdown()
    httpd.server_close()


async def longest_gap(call: Any) -> float:
    """The longest the loop went without running the ticker while ``call`` ran."""
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)  # the ticker ticks before the call starts
    try:
        await call
    finally:
        done.set()
        await task
    return max(gaps)


async def test_chat_async_keeps_the_loop_running_while_a_document_downloads(
    serve: Any, slow_document: str
) -> None:
    server: LoopbackServer = serve(lambda body: Reply.text("Midwest: 264."))
    chat = make_chat(server)
    await chat.chat_async("warm the client up", echo="none")
    document = content_document_url(slow_document, allow_private=True)
    started = time.perf_counter()
    gap = await longest_gap(chat.chat_async("Summarise this.", document, echo="none"))
    assert time.perf_counter() - started >= SLOW_SECONDS  # the download did take its time
    assert gap < BLOCKED
    sent = server.message_requests()[-1]["messages"][-1]["content"]
    assert any(b.get("source", {}).get("data", "").startswith("region,q3") for b in sent)


def test_the_first_chat_async_of_a_process_imports_the_sdk_off_the_loop() -> None:
    code = """
import asyncio, sys, time
from chatlas_like import ChatAnthropic
from chatlas_like.testing import LoopbackServer, Reply

async def main():
    gaps, done = [], asyncio.Event()

    async def ticker():
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    with LoopbackServer(lambda body: Reply.text("hi")) as server:
        chat = ChatAnthropic(model="claude-haiku-4-5", base_url=server.url, api_key="k-123456")
        task = asyncio.create_task(ticker())
        await asyncio.sleep(0.05)
        loaded_before = "anthropic" in sys.modules
        started = time.perf_counter()
        await chat.chat_async("hello", echo="none")
        took = time.perf_counter() - started
        done.set()
        await task
    print(loaded_before, "anthropic" in sys.modules, round(max(gaps), 3), round(took, 3))

asyncio.run(main())
"""
    child = run_in_child(code)
    assert child.returncode == 0, child.stderr
    loaded_before, loaded_after, gap, _took = child.stdout.split()
    assert (loaded_before, loaded_after) == ("False", "True")
    assert float(gap) < BLOCKED
