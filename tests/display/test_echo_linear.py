"""Echo stays linear: work per text delta and per tool round is constant, never re-rendered.

Counted, not timed: display updates and bytes sent for the notebook sink, writes and
bytes for the terminal sinks (a rich Console writing to a counting file).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rich.console import Console

from chatlas_like import ContentToolRequest, ContentToolResult
from chatlas_like._display.console import ProgressEcho
from chatlas_like._display.notebook import NotebookEcho
from chatlas_like._display.terminal import ConsoleEcho
from chatlas_like._run.echo import EchoSink as Echo

DELTA = "word "


class CountingSink:
    """A file that counts what is written to it."""

    def __init__(self) -> None:
        self.writes = 0
        self.bytes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        self.bytes += len(text.encode())
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


class CountingDisplay:
    """Stands in for IPython's display: counts outputs, updates and bytes."""

    def __init__(self) -> None:
        self.outputs = 0
        self.updates = 0
        self.bytes = 0

    def __call__(self, payload: str, handle: Any) -> Any:
        self.bytes += len(payload.encode())
        if handle is None:
            self.outputs += 1
            return object()
        self.updates += 1
        return handle


def terminal() -> tuple[Console, CountingSink]:
    sink = CountingSink()
    return Console(file=sink, force_terminal=True, width=100), sink  # pyright: ignore[reportArgumentType]


def console_echo() -> tuple[Echo, Callable[[], tuple[int, int]]]:
    console, sink = terminal()
    return ConsoleEcho("output", console), lambda: (sink.writes, sink.bytes)


def progress_echo() -> tuple[Echo, Callable[[], tuple[int, int]]]:
    console, sink = terminal()
    echo = ProgressEcho("output", console, auto_refresh=False, clock=lambda: 0.0)
    return echo, lambda: (sink.writes, sink.bytes)


def notebook_echo() -> tuple[Echo, Callable[[], tuple[int, int]]]:
    display = CountingDisplay()
    return NotebookEcho("output", display), lambda: (
        display.outputs + display.updates,
        display.bytes,
    )


SINKS = {"console": console_echo, "progress": progress_echo, "notebook": notebook_echo}


def stream_answer(
    make: Callable[[], tuple[Echo, Callable[[], tuple[int, int]]]], deltas: int
) -> tuple[int, int]:
    echo, counts = make()
    for _ in range(deltas):
        echo.text(DELTA)
    echo.finish()
    return counts()


@pytest.mark.parametrize("sink", SINKS)
def test_bytes_written_grow_linearly_with_the_deltas(sink: str) -> None:
    make = SINKS[sink]
    _, small = stream_answer(make, 2_000)
    _, large = stream_answer(make, 20_000)
    assert 9.0 <= large / small <= 11.0, (small, large)


@pytest.mark.parametrize("sink", ["console", "progress"])
def test_a_terminal_writes_each_delta_once(sink: str) -> None:
    make = SINKS[sink]
    writes_small, bytes_small = stream_answer(make, 1_000)
    writes_large, bytes_large = stream_answer(make, 2_000)
    assert writes_large - writes_small == 1_000
    assert bytes_large - bytes_small == 1_000 * len(DELTA)


def test_a_notebook_updates_its_output_a_logarithmic_number_of_times() -> None:
    display = CountingDisplay()
    echo = NotebookEcho("output", display)
    for _ in range(100_000):
        echo.text(DELTA)
    echo.finish()
    assert display.outputs == 1  # one output, updated in place
    assert display.updates < 200  # not one per delta
    assert display.bytes < 25 * 100_000 * len(DELTA)  # re-sends stay a constant factor


def tool_round(echo: Echo, n: int) -> None:
    request = ContentToolRequest(id=f"toolu_{n}", name="lookup", arguments={"n": n % 10})
    echo.text("Let me look that up. ")
    echo.content(request)
    echo.content(ContentToolResult(value=f"result {n % 10}", request=request))


@pytest.mark.parametrize("sink", SINKS)
def test_each_tool_round_costs_the_same_however_many_came_before(sink: str) -> None:
    echo, counts = SINKS[sink]()
    costs: list[tuple[int, int]] = []
    for n in range(100):
        before = counts()
        tool_round(echo, n)
        after = counts()
        costs.append((after[0] - before[0], after[1] - before[1]))
    echo.finish()
    assert len(set(costs[1:])) == 1, costs[:3]  # the first round may open the first output
