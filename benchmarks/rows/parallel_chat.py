"""Row 9: many conversations at once: ``parallel_chat`` against ``asyncio.gather`` by hand.

1,000 short conversations (a prompt, one tool call, an answer: two model calls each)
against the bench server, at most ``CAP`` at a time: ours is
``parallel_chat(chat, prompts, max_active=CAP, rpm=None)``; the floor is the raw
``AsyncAnthropic`` client, a hand-written tool loop per conversation and
``asyncio.gather`` over all of them behind an ``asyncio.Semaphore(CAP)``, sync tools
in the default thread pool, both streaming. Each run is a fresh process (imports and
a warm-up batch of 20 first), so that its peak RSS (``ru_maxrss``) is its own; runs
of the two sides alternate.

Reported: wall time of the batch, peak RSS of the process, and the memory each
conversation keeps once the batch is done (the RSS the results hold after a
collection, less the RSS before the batch, per conversation: ours keeps 1,000 chats,
the floor 1,000 message lists).
"""

from __future__ import annotations

import sys
from typing import Any

from .._context import Context
from .._harness import API_KEY, Line, last_json, median, run_python
from .._server import model_name

ROW = "9"
NAME = "parallel_chat"
MODEL = model_name("tool_round")
CAP = 10
WALL_TARGET = 1.1
MEMORY_TARGET = 1.5

_COMMON = """
import asyncio, gc, json, resource, sys, time
MODEL, KEY, URL, COUNT, CAP = {model!r}, {key!r}, {url!r}, {count!r}, {cap!r}
PROMPT = "What is the value stored under alpha?"

def lookup(key: str) -> str:
    \"\"\"Look up the value stored under a key.

    Parameters
    ----------
    key
        The key to look up.
    \"\"\"
    return f"the value stored under {{key}} is 42"

def rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() // 1024

def measure(run):
    asyncio.run(run(20))  # imports, connections, thread pools
    gc.collect()
    before = rss_kb()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    kept = asyncio.run(run(COUNT))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    gc.collect()
    after = rss_kb()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({{"wall": wall, "cpu": cpu, "peak_kb": peak, "before_kb": before,
                      "kept_kb": after - before, "count": len(kept)}}))
"""

OURS = """
from chatlas_like import ChatAnthropic, parallel_chat
chat = ChatAnthropic(model=MODEL, api_key=KEY, base_url=URL)
chat.register_tool(lookup)

async def run(count):
    chats = await parallel_chat(chat, [PROMPT] * count, max_active=CAP, rpm=None)
    failed = [c for c in chats if isinstance(c, BaseException) or c is None]
    if failed:
        raise RuntimeError(f"{{len(failed)}} conversations failed: {{failed[0]!r}}")
    return chats

measure(run)
"""

FLOOR = """
from anthropic import AsyncAnthropic
from benchmarks._floor import schema, tool_loop_async
SCHEMAS = [schema("lookup", "Look up the value stored under a key.", {{"key": {{"type": "string"}}}})]

async def run(count):
    sdk = AsyncAnthropic(api_key=KEY, base_url=URL, max_retries=0)
    gate = asyncio.Semaphore(CAP)

    async def one():
        async with gate:
            return await tool_loop_async(sdk, MODEL, PROMPT, {{"lookup": lookup}}, SCHEMAS, None)

    return await asyncio.gather(*(one() for _ in range(count)))

measure(run)
"""


def _script(side: str, url: str, count: int) -> str:
    body = OURS if side == "ours" else FLOOR
    return (_COMMON + body).format(model=MODEL, key=API_KEY, url=url, count=count, cap=CAP)


def _run_side(side: str, url: str, count: int) -> dict[str, Any]:
    _, done = run_python(sys.executable, _script(side, url, count), timeout=600)
    return last_json(done.stdout)


def run(ctx: Context) -> list[Line]:
    count = ctx.size(1000, 60)
    runs = ctx.n(2, 1)
    samples: dict[str, list[dict[str, Any]]] = {"ours": [], "floor": []}
    for i in range(runs):
        for side in ("ours", "floor") if i % 2 == 0 else ("floor", "ours"):
            samples[side].append(_run_side(side, ctx.url, count))

    def med(side: str, key: str, scale: float = 1.0) -> float:
        return median([s[key] for s in samples[side]]) * scale

    data = {"count": count, "cap": CAP, "samples": samples}
    return [
        Line(
            ROW,
            f"parallel_chat: {count:,} tool-calling conversations, {CAP} at a time (wall)",
            "s",
            ours=med("ours", "wall"),
            floor=med("floor", "wall"),
            target=f"<= {WALL_TARGET}x AsyncAnthropic + gather",
            target_ratio=WALL_TARGET,
            data=data,
        ),
        Line(
            ROW,
            "  the same batch, client CPU time",
            "s",
            ours=med("ours", "cpu"),
            floor=med("floor", "cpu"),
            target="(for information)",
        ),
        Line(
            ROW,
            "  peak RSS of the process",
            "MB",
            ours=med("ours", "peak_kb", 1 / 1024),
            floor=med("floor", "peak_kb", 1 / 1024),
            target=f"<= {MEMORY_TARGET}x",
            target_ratio=MEMORY_TARGET,
        ),
        Line(
            ROW,
            "  memory kept per conversation after the batch",
            "KB",
            ours=med("ours", "kept_kb") / count,
            floor=med("floor", "kept_kb") / count,
            target="(for information)",
        ),
    ]
