"""Row 5: the last 50 of 300 tool rounds in one ``chat()``, per round; and its growth.

One ``chat()`` in which the model asks for a tool 300 times in a row
(``max_tool_rounds=None``). The tool notes the clock at every call; a round is the
time from one call to the next (result handling, encoding the request, the model
call, parsing the answer). What length adds is the median round of the last 50 less
the median round of the first 50: for the raw SDK that is what copying and encoding
a longer request costs, so ours should add no more than that. (The growth factor,
last / first, is in the note: it flatters a client whose short rounds are slow.)
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from .._context import Context
from .._floor import client, schema, tool_loop
from .._harness import API_KEY, Line, Metrics, Sampler, median
from .._server import model_name

ROW = "5"
NAME = "long_chat"
PROMPT = "Process every item, one tool call per item."
WINDOW = 50
PROFILE_PARAMS: dict[str, Any] = {"rounds": 300}
PROFILE_SAMPLES = 2
TARGET = 1.05
SCHEMAS = [schema("step", "Process item number i.", {"i": {"type": "integer"}})]


class Recorder:
    """The tool, and the clock readings of its calls."""

    def __init__(self) -> None:
        self.marks: list[tuple[float, float]] = []

    def step(self, i: int) -> dict[str, Any]:
        """Process item number i.

        Parameters
        ----------
        i
            The item's number.
        """
        self.marks.append((time.perf_counter(), time.process_time()))
        return {"item": i, "status": "ok", "checked": ["name", "size", "owner"], "warnings": []}

    def metrics(self, rounds: int, window: int) -> Metrics:
        marks, self.marks = self.marks, []
        if len(marks) != rounds:
            raise RuntimeError(f"expected {rounds} tool calls, got {len(marks)}")
        wall = [b[0] - a[0] for a, b in itertools.pairwise(marks)]
        cpu = [b[1] - a[1] for a, b in itertools.pairwise(marks)]
        return {
            "first_wall": median(wall[:window]),
            "first_cpu": median(cpu[:window]),
            "last_wall": median(wall[-window:]),
            "last_cpu": median(cpu[-window:]),
            "total_wall": marks[-1][0] - marks[0][0],
        }


def _window(rounds: int) -> int:
    return min(WINDOW, max(1, (rounds - 1) // 3))


def ours(url: str, params: dict[str, Any]) -> Sampler:
    from chatlas_like import ChatAnthropic

    rounds = params["rounds"]
    recorder = Recorder()
    chat = ChatAnthropic(model=model_name("rounds", rounds), api_key=API_KEY, base_url=url)
    chat.register_tool(recorder.step, name="step")

    def sample() -> Metrics:
        chat.set_turns([])
        chat.chat(PROMPT, echo="none", max_tool_rounds=None)
        return recorder.metrics(rounds, _window(rounds))

    return sample


profile = ours


def floor(url: str, params: dict[str, Any]) -> Sampler:
    sdk = client(url)
    rounds = params["rounds"]
    recorder = Recorder()
    model = model_name("rounds", rounds)

    def sample() -> Metrics:
        tool_loop(sdk, model, PROMPT, {"step": recorder.step}, SCHEMAS)
        return recorder.metrics(rounds, _window(rounds))

    return sample


def chatlas(url: str, params: dict[str, Any]) -> Sampler:
    from chatlas import ChatAnthropic  # pyright: ignore[reportMissingImports]

    rounds = params["rounds"]
    recorder = Recorder()
    chat = ChatAnthropic(
        model=model_name("rounds", rounds), api_key=API_KEY, kwargs={"base_url": url}
    )
    chat.register_tool(recorder.step, name="step")

    def sample() -> Metrics:
        chat.set_turns([])
        started = time.perf_counter()
        chat.chat(PROMPT, echo="none")
        return {**recorder.metrics(rounds, _window(rounds)), "wall": time.perf_counter() - started}

    return sample


def run(ctx: Context) -> list[Line]:
    rounds = ctx.size(300, 30)
    window = _window(rounds)
    params = {"rounds": rounds}
    samples = ctx.interleave(
        {
            "ours": ctx.side(NAME, "ours", ours, params),
            "floor": ctx.side(NAME, "floor", floor, params),
            "chatlas": ctx.remote(NAME, params),
        },
        ctx.n(3, 1),
    )
    note = samples.note()
    lines: list[Line] = []
    for key in ("wall", "cpu"):
        lines.append(
            Line(
                ROW,
                f"last {window} of {rounds} tool rounds, per round ({key})",
                "ms",
                ours=samples.median("ours", f"last_{key}", 1e3),
                floor=samples.median("floor", f"last_{key}", 1e3),
                chatlas=samples.median("chatlas", f"last_{key}", 1e3),
                target=f"<= {TARGET}x raw SDK",
                target_ratio=TARGET,
                note=note if key == "wall" else "",
                data=samples.to_json() if key == "wall" else {},
            )
        )
    factors = {
        side: _div(samples.median(side, "last_cpu"), samples.median(side, "first_cpu"))
        for side in ("ours", "floor", "chatlas")
    }
    shown = ", ".join(f"{side} {f:.2f}x" for side, f in factors.items() if f is not None)
    for key in ("wall", "cpu"):
        added = {
            side: _sub(samples.median(side, f"last_{key}"), samples.median(side, f"first_{key}"))
            for side in ("ours", "floor", "chatlas")
        }
        lines.append(
            Line(
                ROW,
                f"cost per round added by length: last {window} - first {window} ({key})",
                "ms",
                **{side: None if v is None else v * 1e3 for side, v in added.items()},
                target="<= 1.1x the floor's (encoding)",
                target_ratio=1.1,
                note=f"growth factor last/first (cpu): {shown}" if key == "cpu" else "",
            )
        )
    return lines


def _sub(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _div(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b
