"""Row 3: one tool round (user, tool_use, tool_result, text), per round.

Each sample is one ``chat()`` on a chat whose history was cleared first (the client
and its connections stay warm): two model calls and one tool call. Measured twice:
with JSON responses (``stream=False``; the floor calls ``messages.create`` without
streaming) and streamed (SSE; the floor iterates ``messages.create(stream=True)``).
"""

from __future__ import annotations

from typing import Any

from .._context import Context
from .._floor import client, schema, tool_loop
from .._harness import API_KEY, Line, Metrics, Sampler, timed
from .._server import model_name

ROW = "3"
NAME = "tool_round"
MODEL = model_name("tool_round")
PROMPT = "What is the value stored under alpha?"
PROFILE_PARAMS: dict[str, Any] = {"stream": False}
PROFILE_SAMPLES = 200
TARGET = 1.05


def lookup(key: str) -> str:
    """Look up the value stored under a key.

    Parameters
    ----------
    key
        The key to look up.
    """
    return f"the value stored under {key} is 42"


SCHEMAS = [schema("lookup", "Look up the value stored under a key.", {"key": {"type": "string"}})]


def ours(url: str, params: dict[str, Any]) -> Sampler:
    from chatlas_like import ChatAnthropic

    chat = ChatAnthropic(model=MODEL, api_key=API_KEY, base_url=url)
    chat.register_tool(lookup)
    stream = params.get("stream", True)

    def sample() -> Metrics:
        chat.set_turns([])
        m: Metrics = {}
        with timed(m):
            chat.chat(PROMPT, echo="none", stream=stream)
        return m

    return sample


profile = ours


def floor(url: str, params: dict[str, Any]) -> Sampler:
    sdk = client(url)
    stream = params.get("stream", True)

    def sample() -> Metrics:
        m: Metrics = {}
        with timed(m):
            tool_loop(sdk, MODEL, PROMPT, {"lookup": lookup}, SCHEMAS, stream=stream)
        return m

    return sample


def chatlas(url: str, params: dict[str, Any]) -> Sampler:
    from chatlas import ChatAnthropic  # pyright: ignore[reportMissingImports]

    chat = ChatAnthropic(model=MODEL, api_key=API_KEY, kwargs={"base_url": url})
    chat.register_tool(lookup)
    stream = params.get("stream", True)

    def sample() -> Metrics:
        chat.set_turns([])
        m: Metrics = {}
        with timed(m):
            chat.chat(PROMPT, echo="none", stream=stream)
        return m

    return sample


def run(ctx: Context) -> list[Line]:
    lines: list[Line] = []
    for stream, label in ((False, "JSON responses"), (True, "streaming")):
        params = {"stream": stream}
        sides = {
            "ours": ctx.side(NAME, "ours", ours, params),
            "floor": ctx.side(NAME, "floor", floor, params),
            "chatlas": ctx.remote(NAME, params),
        }
        if ctx.tracer_provider and stream:
            from .._tracing import with_tracer_provider

            sides["ours+otel"] = with_tracer_provider(ours(ctx.url, params))
        samples = ctx.interleave(sides, ctx.n(100, 8), warmup=3)
        for key in ("wall", "cpu"):
            lines.append(
                Line(
                    ROW,
                    f"one tool round, {label}, per round ({key})",
                    "ms",
                    ours=samples.median("ours", key, 1e3),
                    floor=samples.median("floor", key, 1e3),
                    chatlas=samples.median("chatlas", key, 1e3),
                    target=f"<= {TARGET}x raw SDK",
                    target_ratio=TARGET,
                    note=samples.note() if key == "wall" else "",
                    data=samples.to_json() if key == "wall" else {},
                )
            )
        if ctx.tracer_provider and stream:
            lines.extend(_tracing_lines(samples))
    return lines


def _tracing_lines(samples: Any) -> list[Line]:
    """Ours with a tracer provider against ours without, from the same interleaved run."""
    return [
        Line(
            ROW,
            f"one tool round with a tracer provider ({key}); floor: ours without",
            "ms",
            ours=samples.median("ours+otel", key, 1e3),
            floor=samples.median("ours", key, 1e3),
            target="<= 1.05x without a provider",
            target_ratio=1.05,
        )
        for key in ("wall", "cpu")
    ]
