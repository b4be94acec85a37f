"""Row 4: streaming 20,000 and 80,000 text deltas, per delta, and whether that is flat.

Each sample streams one answer of N one-word deltas and consumes every chunk: ours
with ``chat.stream()``, the floor iterating ``messages.create(stream=True)`` and
collecting the text by hand, chatlas with ``chat.stream()``. The server sends the
same pre-rendered bytes every time, so its cost is small and equal for all.
"""

from __future__ import annotations

from typing import Any

from .._context import Context
from .._floor import client, stream_message
from .._harness import API_KEY, Line, Metrics, Sampler, timed
from .._server import model_name

ROW = "4"
NAME = "streaming"
PROMPT = "Tell me a long story."
PROFILE_PARAMS: dict[str, Any] = {"deltas": 80_000}
PROFILE_SAMPLES = 5


def _model(params: dict[str, Any]) -> str:
    return model_name("stream", params["deltas"])


def ours(url: str, params: dict[str, Any]) -> Sampler:
    from chatlas_like import ChatAnthropic

    chat = ChatAnthropic(model=_model(params), api_key=API_KEY, base_url=url)

    def sample() -> Metrics:
        chat.set_turns([])
        m: Metrics = {}
        with timed(m):
            for _ in chat.stream(PROMPT):
                pass
        return m

    return sample


profile = ours


def floor(url: str, params: dict[str, Any]) -> Sampler:
    sdk = client(url)
    model = _model(params)

    def sample() -> Metrics:
        m: Metrics = {}
        with timed(m):
            stream_message(sdk, model, [{"role": "user", "content": PROMPT}])
        return m

    return sample


def chatlas(url: str, params: dict[str, Any]) -> Sampler:
    from chatlas import ChatAnthropic  # pyright: ignore[reportMissingImports]

    chat = ChatAnthropic(model=_model(params), api_key=API_KEY, kwargs={"base_url": url})

    def sample() -> Metrics:
        chat.set_turns([])
        m: Metrics = {}
        with timed(m):
            for _ in chat.stream(PROMPT):
                pass
        return m

    return sample


def run(ctx: Context) -> list[Line]:
    sizes = (ctx.size(20_000, 2_000), ctx.size(80_000, 8_000))
    per_delta: dict[int, dict[str, dict[str, float | None]]] = {}
    lines: list[Line] = []
    for deltas, n in zip(sizes, (ctx.n(5, 2), ctx.n(3, 2)), strict=True):
        params = {"deltas": deltas}
        samples = ctx.interleave(
            {
                "ours": ctx.side(NAME, "ours", ours, params),
                "floor": ctx.side(NAME, "floor", floor, params),
                "chatlas": ctx.remote(NAME, params),
            },
            n,
        )
        scale = 1e6 / deltas
        per_delta[deltas] = {}
        for key in ("wall", "cpu"):
            values = {s: samples.median(s, key, scale) for s in ("ours", "floor", "chatlas")}
            per_delta[deltas][key] = values
            lines.append(
                Line(
                    ROW,
                    f"stream {deltas:,} deltas, per delta ({key})",
                    "us",
                    **values,
                    target="<= 1.15x raw SDK",
                    target_ratio=1.15,
                    note=samples.note() if key == "wall" else "",
                    data=samples.to_json() if key == "wall" else {},
                )
            )
    small, large = sizes
    for key in ("wall", "cpu"):
        growth = {
            side: _div(per_delta[large][key][side], per_delta[small][key][side])
            for side in ("ours", "floor", "chatlas")
        }
        lines.append(
            Line(
                ROW,
                f"per-delta cost {large:,} / {small:,} ({key})",
                "x",
                **growth,
                target="flat: <= 1.10",
                target_value=1.10,
            )
        )
    return lines


def _div(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b
