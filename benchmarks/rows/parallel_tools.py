"""Row 7: 8 tool calls in one turn, each sleeping 0.25 s: wall time of the whole ``chat()``.

Four variants: sync and async tools, through ``chat`` and ``chat_async``. The ideal is
0.25 s plus two quick model calls. The floor runs the calls by hand, concurrently: a
thread pool of 8 for sync tools, ``asyncio.gather`` for async ones. Async variants
reuse one event loop across samples (the SDK's async client belongs to a loop).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .._context import Context
from .._floor import async_client, client, schema, tool_loop, tool_loop_async
from .._harness import API_KEY, Line, Metrics, Sampler, timed
from .._server import model_name

ROW = "7"
NAME = "parallel_tools"
CALLS = 8
SLEEP = 0.25
TARGET_S = 0.30
PROMPT = "Fetch all eight items at once."
VARIANTS = (("sync", "chat"), ("async", "chat"), ("sync", "chat_async"), ("async", "chat_async"))
PROFILE_PARAMS: dict[str, Any] = {"tools": "sync", "verb": "chat"}


def sleep_sync(i: int) -> str:
    """Fetch item i (takes a quarter of a second).

    Parameters
    ----------
    i
        The item's number.
    """
    time.sleep(SLEEP)
    return f"item {i}"


async def sleep_async(i: int) -> str:
    """Fetch item i (takes a quarter of a second).

    Parameters
    ----------
    i
        The item's number.
    """
    await asyncio.sleep(SLEEP)
    return f"item {i}"


def _tool(params: dict[str, Any]) -> Callable[..., Any]:
    return sleep_sync if params["tools"] == "sync" else sleep_async


def _model(params: dict[str, Any]) -> str:
    return model_name("parallel", _tool(params).__name__, CALLS)


def _chat_sampler(chat: Any, verb: str) -> Sampler:
    loop = asyncio.new_event_loop() if verb == "chat_async" else None

    def sample() -> Metrics:
        chat.set_turns([])
        m: Metrics = {}
        with timed(m):
            if loop is None:
                chat.chat(PROMPT, echo="none")
            else:
                loop.run_until_complete(chat.chat_async(PROMPT, echo="none"))
        return m

    return sample


def ours(url: str, params: dict[str, Any]) -> Sampler:
    from chatlas_like import ChatAnthropic

    chat = ChatAnthropic(model=_model(params), api_key=API_KEY, base_url=url)
    chat.register_tool(_tool(params))
    return _chat_sampler(chat, params["verb"])


profile = ours


def chatlas(url: str, params: dict[str, Any]) -> Sampler:
    from chatlas import ChatAnthropic  # pyright: ignore[reportMissingImports]

    chat = ChatAnthropic(model=_model(params), api_key=API_KEY, kwargs={"base_url": url})
    chat.register_tool(_tool(params))
    return _chat_sampler(chat, params["verb"])


def floor(url: str, params: dict[str, Any]) -> Sampler:
    tool = _tool(params)
    tools = {tool.__name__: tool}
    schemas = [schema(tool.__name__, "Fetch item i.", {"i": {"type": "integer"}})]
    pool = ThreadPoolExecutor(CALLS)
    model = _model(params)
    if params["verb"] == "chat":
        sdk = client(url)

        def sample() -> Metrics:
            m: Metrics = {}
            with timed(m):
                if params["tools"] == "sync":
                    tool_loop(sdk, model, PROMPT, tools, schemas, pool)
                else:
                    asyncio.run(
                        tool_loop_async(async_client(url), model, PROMPT, tools, schemas, pool)
                    )
            return m

        return sample
    loop = asyncio.new_event_loop()
    asdk = async_client(url)

    def sample_async() -> Metrics:
        m: Metrics = {}
        with timed(m):
            loop.run_until_complete(tool_loop_async(asdk, model, PROMPT, tools, schemas, pool))
        return m

    return sample_async


def run(ctx: Context) -> list[Line]:
    lines: list[Line] = []
    for tools, verb in VARIANTS:
        params = {"tools": tools, "verb": verb}
        samples = ctx.interleave(
            {
                "ours": ctx.side(NAME, "ours", ours, params),
                "floor": ctx.side(NAME, "floor", floor, params),
                "chatlas": ctx.remote(NAME, params),
            },
            ctx.n(3, 1),
        )
        lines.append(
            Line(
                ROW,
                f"{CALLS} x {SLEEP} s {tools} tools in one turn, {verb}",
                "s",
                ours=samples.median("ours"),
                floor=samples.median("floor"),
                chatlas=samples.median("chatlas"),
                target=f"<= {TARGET_S} s (ideal {SLEEP} s)",
                target_value=TARGET_S,
                note=samples.note(),
                data=samples.to_json(),
            )
        )
    return lines
