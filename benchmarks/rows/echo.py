"""Row 6: 100 tool rounds with ``echo="output"`` to a rich Console, against the same run silent.

The console is what a terminal user has: ``force_terminal=True``, width 100, writing
to a null sink (which counts what it is given). chatlas gets it through
``set_echo_options(rich_console=...)``. chatlas_like has no option to pass a console
to ``chat()``, so its own ``Console()`` is steered by the environment rich reads
(``FORCE_COLOR``, ``COLUMNS``, ``TERM``) and ``sys.stdout`` is swapped for the sink.

chatlas re-renders everything on each chunk, so at 100 rounds it takes minutes: it
runs once at two reduced sizes, and its echo overhead is extrapolated to 100 rounds
with the power law those two sizes show (the exponent is in the note).
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import time
from collections.abc import Iterator
from typing import Any

from .._context import CHATLAS_BUDGET_S, Context
from .._harness import API_KEY, Line, Metrics, Sampler, timed
from .._server import model_name

ROW = "6"
NAME = "echo"
PROMPT = "Check every item, one tool call per item."
TARGET = 1.5
PROFILE_PARAMS: dict[str, Any] = {"rounds": 100, "echo": "output"}
PROFILE_SAMPLES = 5
CONSOLE_ENV = {
    "FORCE_COLOR": "1",
    "COLUMNS": "100",
    "TERM": "xterm-256color",
    "COLORTERM": "truecolor",
}


class NullSink(io.TextIOBase):
    """A text stream that keeps nothing but the count of characters written."""

    def __init__(self) -> None:
        self.chars = 0

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        self.chars += len(s)
        return len(s)

    def isatty(self) -> bool:
        return True


def step(i: int) -> str:
    """Check item number i.

    Parameters
    ----------
    i
        The item's number.
    """
    return f"item {i}: ok, 3 fields checked, no warnings"


@contextlib.contextmanager
def terminal(sink: NullSink) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in CONSOLE_ENV}
    os.environ.update(CONSOLE_ENV)
    try:
        with contextlib.redirect_stdout(sink):
            yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def ours(url: str, params: dict[str, Any]) -> Sampler:
    from chatlas_like import ChatAnthropic

    rounds, echo = params["rounds"], params["echo"]
    chat = ChatAnthropic(model=model_name("echo", rounds), api_key=API_KEY, base_url=url)
    chat.register_tool(step)

    def sample() -> Metrics:
        chat.set_turns([])
        sink = NullSink()
        m: Metrics = {}
        with terminal(sink), timed(m):
            chat.chat(PROMPT, echo=echo, max_tool_rounds=None)
        return {**m, "chars": sink.chars}

    return sample


profile = ours


def chatlas(url: str, params: dict[str, Any]) -> Sampler:
    from chatlas import ChatAnthropic  # pyright: ignore[reportMissingImports]

    rounds, echo = params["rounds"], params["echo"]
    chat = ChatAnthropic(
        model=model_name("echo", rounds), api_key=API_KEY, kwargs={"base_url": url}
    )
    chat.register_tool(step)

    def sample() -> Metrics:
        chat.set_turns([])
        sink = NullSink()
        chat.set_echo_options(rich_console={"file": sink, "force_terminal": True, "width": 100})
        m: Metrics = {}
        with timed(m):
            chat.chat(PROMPT, echo=echo)
        return {**m, "chars": sink.chars}

    return sample


def run(ctx: Context) -> list[Line]:
    rounds = ctx.size(100, 10)
    samples = ctx.interleave(
        {
            "echo": ours(ctx.url, {"rounds": rounds, "echo": "output"}),
            "silent": ours(ctx.url, {"rounds": rounds, "echo": "none"}),
        },
        ctx.n(5, 1),
        optional=(),
    )
    chatlas_fit = _chatlas(ctx, rounds) if ctx.has_chatlas else {}
    echo, silent = samples.median("echo"), samples.median("silent")
    chars = samples.median("echo", "chars")
    line = Line(
        ROW,
        f"{rounds} tool rounds, echo to rich Console (floor: silent)",
        "s",
        ours=echo,
        floor=silent,
        chatlas=chatlas_fit.get("echo"),
        chatlas_floor=chatlas_fit.get("silent"),
        target=f"<= {TARGET}x silent",
        target_ratio=TARGET,
        note=f"ours wrote {chars or 0:,.0f} chars to the console; " + chatlas_fit.get("note", ""),
        data={**samples.to_json(), "chatlas": chatlas_fit},
    )
    return [line]


def _chatlas(ctx: Context, rounds: int) -> dict[str, Any]:
    """chatlas echo vs silent; at reduced sizes with a power-law fit when too slow."""
    measured: dict[int, dict[str, float]] = {}
    spent, exponent = 0.0, 2.0
    sizes = sorted({max(2, rounds // 10), max(3, rounds // 5), max(4, 3 * rounds // 10), rounds})
    for i, size in enumerate(sizes):
        row: dict[str, float] = {}
        for echo in ("none", "output"):
            sampler = ctx.remote(NAME, {"rounds": size, "echo": echo})
            if sampler is None:
                return {}
            started = time.perf_counter()
            try:
                m = sampler()
            except Exception as e:  # chatlas's failure is reported, not fatal
                return {"note": f"chatlas failed: {str(e).strip().splitlines()[-1]}"}
            spent += time.perf_counter() - started
            row["silent" if echo == "none" else "echo"] = m["wall"]
            row[f"chars_{echo}"] = m["chars"]
        measured[size] = row
        if size == rounds:
            return {
                "echo": row["echo"],
                "silent": row["silent"],
                "measured": measured,
                "note": f"chatlas measured once at {rounds} rounds",
            }
        if len(measured) >= 2:
            exponent = _exponent(measured)
        # The next size only if its echo (growing as rounds^exponent) fits the budget.
        following = sizes[i + 1]
        if spent + row["echo"] * (following / size) ** max(exponent, 1.0) > CHATLAS_BUDGET_S:
            break
    sizes = sorted(measured)
    if len(sizes) < 2:
        return {"measured": measured, "note": "chatlas: too slow to measure twice"}
    n1, n2 = sizes[-2:]
    r2 = measured[n2]
    exponent = _exponent(measured)
    silent = r2["silent"] * rounds / n2
    echo = silent + max(r2["echo"] - r2["silent"], 0.0) * (rounds / n2) ** exponent
    points = ", ".join(f"{n}: {measured[n]['echo']:.1f} s" for n in sizes)
    return {
        "echo": echo,
        "silent": silent,
        "exponent": exponent,
        "measured": measured,
        "note": (
            f"chatlas is too slow for {rounds} rounds: echo measured once at reduced sizes "
            f"(rounds {points}); its overhead over silent grew as rounds^{exponent:.2f} "
            f"from {n1} to {n2}, extrapolated to {rounds} (silent scaled linearly)"
        ),
    }


def _exponent(measured: dict[int, dict[str, float]]) -> float:
    """How echo overhead (echo - silent) grows with rounds, from the two largest sizes."""
    n1, n2 = sorted(measured)[-2:]
    o1 = measured[n1]["echo"] - measured[n1]["silent"]
    o2 = measured[n2]["echo"] - measured[n2]["silent"]
    if o1 <= 0 or o2 <= 0:
        return 2.0
    return math.log(o2 / o1) / math.log(n2 / n1)
