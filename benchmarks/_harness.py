"""Measuring: samplers, interleaved runs, medians, and one table line per measurement.

A *sampler* is a zero-argument callable that does one unit of work and returns its
metrics (``{"wall": seconds, "cpu": seconds, ...}``); setup happens when it is made.
``Context.interleave`` calls the samplers of one row in turn (A B C, B C A, ...), so a
noisy neighbour on the machine hits every side alike. CPU time is the client
process's own (all its threads); the server runs in another process.

Stdlib only: the chatlas worker imports this in a venv without chatlas_like.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "API_KEY",
    "REPO",
    "Line",
    "Metrics",
    "Sampler",
    "end_process",
    "median",
    "run_python",
    "timed",
]

REPO = Path(__file__).resolve().parent.parent
API_KEY = "bench-key-not-a-secret"
Metrics = dict[str, float]
Sampler = Callable[[], Metrics]


class Clock:
    """Wall and CPU time of this process (all its threads) since ``start``."""

    __slots__ = ("cpu0", "wall0")

    def __init__(self) -> None:
        self.wall0 = time.perf_counter()
        self.cpu0 = time.process_time()

    def read(self) -> Metrics:
        return {"wall": time.perf_counter() - self.wall0, "cpu": time.process_time() - self.cpu0}


@contextmanager
def timed(into: Metrics) -> Iterator[None]:
    """Add ``wall`` and ``cpu`` of the block to ``into``."""
    clock = Clock()
    yield
    into.update(clock.read())


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def medians(samples: Sequence[Metrics], key: str) -> float:
    return median([s[key] for s in samples])


def end_process(process: subprocess.Popen[Any], timeout: float) -> None:
    """Wait up to ``timeout`` seconds for a child told to stop, kill it past that, and
    close its stdout pipe."""
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()


def run_python(
    python: str | os.PathLike[str],
    code: str | None,
    *args: str,
    env: Mapping[str, str] | None = None,
    flags: Sequence[str] = (),
    timeout: float = 300,
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run ``python [flags] -c code args`` in the repo root; return (wall seconds, result).

    With ``code=None`` there is no ``-c``: ``flags`` and ``args`` say what to run.
    """
    command = [str(python), *flags, *(("-c", code) if code is not None else ()), *args]
    start = time.perf_counter()
    done = subprocess.run(
        command,
        cwd=REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(
            f"{python} -c ... exited {done.returncode}:\n{done.stderr[-3000:]}{done.stdout[-1000:]}"
        )
    return wall, done


def last_json(stdout: str) -> Any:
    """The last line of ``stdout`` that parses as JSON."""
    for line in reversed(stdout.strip().splitlines()):
        try:
            return json.loads(line)
        except ValueError:
            continue
    raise ValueError(f"no JSON line in output: {stdout[-500:]!r}")


@dataclass
class Line:
    """One line of the table: a measurement of ours, the floor and chatlas."""

    row: str
    what: str
    unit: str
    ours: float | None
    floor: float | None = None
    chatlas: float | None = None
    target: str = ""
    chatlas_floor: float | None = None  # chatlas's own floor, where it differs from ours
    target_ratio: float | None = None  # met when ours / floor <= this
    target_value: float | None = None  # met when ours <= this
    met: bool | None = None
    note: str = ""
    data: dict[str, Any] = field(default_factory=lambda: {})

    def __post_init__(self) -> None:
        if self.met is None:
            if self.target_ratio is not None and self.ratio_ours is not None:
                self.met = self.ratio_ours <= self.target_ratio
            elif self.target_value is not None and self.ours is not None:
                self.met = self.ours <= self.target_value

    @property
    def ratio_ours(self) -> float | None:
        return _ratio(self.ours, self.floor)

    @property
    def ratio_chatlas(self) -> float | None:
        return _ratio(self.chatlas, self.chatlas_floor or self.floor)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["ratio_ours"] = self.ratio_ours
        out["ratio_chatlas"] = self.ratio_chatlas
        return out


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b <= 0:  # no meaningful ratio to nothing or to a negative
        return None
    return a / b


def python_info() -> dict[str, str]:
    return {"python": sys.version.split()[0], "executable": sys.executable}
