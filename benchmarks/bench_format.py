"""What formatting a tool result costs, against raw orjson / pandas, and against chatlas.

Run from the repository root::

    python -m benchmarks.bench_format            # full run, with chatlas 0.23.0
    python -m benchmarks.bench_format --quick    # fewer rounds
    python -m benchmarks.bench_format --no-chatlas
    python -m benchmarks.bench_format --profile  # cProfile of the small-dict case

For each value it times, per call:

* ``ours``: ``ContentToolResult(value=v).get_model_value()``. ``get_model_value()``
  caches its answer on the result, so every call builds a fresh result: the figure is
  construction plus formatting, what a tool call pays;
* ``get``: ``get_model_value()`` alone, on a fresh result built outside the timing
  (for information: the target is on ``ours``);
* ``format``: ``format_value(v, "auto")`` alone, formatting without the result object;
* ``baseline``: the raw encoder on the same value: ``orjson.dumps(v)`` for dicts,
  ``orjson.dumps(v.to_dict())`` for the object with ``to_dict()``,
  ``orjson.dumps(v, option=OPT_SERIALIZE_NUMPY)`` for the numpy dict,
  ``df.to_json(orient="records", date_format="iso")`` for the DataFrame;
* ``chatlas``: chatlas 0.23.0's ``ContentToolResult(value=v).get_model_value()``, in a
  scratch venv this script creates under ``benchmarks/.venv-chatlas`` (``python -m
  venv`` + ``pip install chatlas==0.23.0`` and our pandas/numpy versions), timed in a
  subprocess against its own baseline, so each ratio compares numbers from one process.

Runs are interleaved (every implementation once per round, rounds repeated) and each
figure is the median over rounds, timed on the thread's CPU clock (``thread_time``)
so that other processes sharing the cores do not inflate one side's figure. Ratios are ``ours / baseline`` and ``chatlas /
baseline``; ``best/best`` (fastest round of ours over fastest round of the baseline) is
printed beside the median ratio as a check on a busy machine. Results go to ``benchmarks/results/bench_format.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results" / "bench_format.json"
CHATLAS_VERSION = "0.23.0"
TARGETS = {
    "small dict": 2.5,
    "object with to_dict()": 2.5,
    "1,000 dicts": 1.5,
    "10,000-row DataFrame": 1.0,
    "numpy dict": 3.0,
}

# The values and their baselines, built the same way in this process and in chatlas's.
CASES_SOURCE = """
import datetime as _dt
import numpy as _np
import orjson as _orjson
import pandas as _pd


class Weather:
    # A tool's own object that knows its dict form (the chatlas docs' pattern)

    def __init__(self, city, temp_c, humidity, sky, wind_kph, alerts):
        self.city, self.temp_c, self.humidity = city, temp_c, humidity
        self.sky, self.wind_kph, self.alerts = sky, wind_kph, alerts

    def to_dict(self):
        return {"city": self.city, "temp_c": self.temp_c, "humidity": self.humidity,
                "sky": self.sky, "wind_kph": self.wind_kph, "alerts": self.alerts}


def build_cases():
    small = {"city": "Paris", "temp_c": 21.5, "humidity": 0.64, "sky": "clear",
             "wind_kph": 12, "alerts": ["uv"]}
    weather = Weather(**small)
    many = [
        {"id": i, "name": f"item {i}", "price": i * 1.25, "in_stock": i % 3 == 0,
         "tags": ["a", "b"], "rating": None}
        for i in range(1000)
    ]
    rng = _np.random.default_rng(0)
    n = 10_000
    frame = _pd.DataFrame({
        "id": _np.arange(n),
        "name": [f"customer {i}" for i in range(n)],
        "amount": rng.random(n) * 100,
        "ordered_at": _pd.date_range("2024-01-01", periods=n, freq="h"),
        "paid": rng.random(n) > 0.5,
    })
    numeric = {
        "count": _np.int64(42), "mean": _np.float64(3.25), "max": _np.float32(9.5),
        "flag": _np.bool_(True), "hist": _np.arange(32), "grid": rng.random((8, 8)),
    }
    numpy_opts = _orjson.OPT_SERIALIZE_NUMPY
    return [
        ("small dict", small, lambda v=small: _orjson.dumps(v), 2000),
        ("object with to_dict()", weather, lambda v=weather: _orjson.dumps(v.to_dict()), 2000),
        ("1,000 dicts", many, lambda v=many: _orjson.dumps(v), 20),
        ("10,000-row DataFrame", frame,
         lambda v=frame: v.to_json(orient="records", date_format="iso"), 2),
        ("numpy dict", numeric, lambda v=numeric: _orjson.dumps(v, option=numpy_opts), 2000),
    ]
"""

# Runs in chatlas's venv: prints {case: {"chatlas": s, "baseline": s}} as JSON.
CHATLAS_SCRIPT = """
import json, sys, time
from statistics import median
from chatlas import ContentToolResult
exec(sys.argv[1])
rounds = int(sys.argv[2])
cases = build_cases()
timings = {name: {"chatlas": [], "chatlas_get": [], "baseline": []} for name, *_ in cases}
clock = time.thread_time
def per_call(fn, n):
    start = clock()
    for _ in range(n):
        fn()
    return (clock() - start) / n
def per_get(value, n):
    results = [ContentToolResult(value=value) for _ in range(n)]
    start = clock()
    for result in results:
        result.get_model_value()
    return (clock() - start) / n
for _ in range(rounds):
    for name, value, baseline, n in cases:
        timings[name]["chatlas"].append(
            per_call(lambda: ContentToolResult(value=value).get_model_value(), n))
        timings[name]["chatlas_get"].append(per_get(value, n))
        timings[name]["baseline"].append(per_call(baseline, n))
print(json.dumps({k: {**{m: median(v) for m, v in t.items()},
                       **{m + "_min": min(v) for m, v in t.items()}}
                   for k, t in timings.items()}))
"""


# CPU time of this thread: each figure is the work of one call, which a busy machine
# (other processes taking turns on the cores) does not inflate as it does wall time.
CLOCK = time.thread_time


def _per_call(fn: Callable[[], Any], n: int) -> float:
    start = CLOCK()
    for _ in range(n):
        fn()
    return (CLOCK() - start) / n


def _per_get(value: Any, n: int) -> float:
    """``get_model_value()`` per call on fresh results built outside the timing."""
    from chatlas_like import ContentToolResult

    results = [ContentToolResult(value=value) for _ in range(n)]
    start = CLOCK()
    for result in results:
        result.get_model_value()
    return (CLOCK() - start) / n


def _cases() -> list[tuple[str, Any, Callable[[], Any], int]]:
    namespace: dict[str, Any] = {}
    exec(CASES_SOURCE, namespace)
    return namespace["build_cases"]()


def measure_ours(rounds: int) -> dict[str, dict[str, float]]:
    """Median seconds per call of ours, format-only and the baseline, interleaved."""
    from chatlas_like import ContentToolResult
    from chatlas_like._core.model_format import format_value

    cases = _cases()
    timings: dict[str, dict[str, list[float]]] = {
        name: {"ours": [], "get": [], "format": [], "baseline": []} for name, *_ in cases
    }
    for _ in range(rounds):
        for name, value, baseline, n in cases:
            timings[name]["ours"].append(
                _per_call(lambda v=value: ContentToolResult(value=v).get_model_value(), n)
            )
            timings[name]["get"].append(_per_get(value, n))
            timings[name]["format"].append(_per_call(lambda v=value: format_value(v, "auto"), n))
            timings[name]["baseline"].append(_per_call(baseline, n))
    return {
        k: {**{m: median(v) for m, v in t.items()}, **{f"{m}_min": min(v) for m, v in t.items()}}
        for k, t in timings.items()
    }


def ensure_chatlas_venv() -> Path | None:
    """The chatlas venv's Python: the runner's (``BENCH_CHATLAS_PYTHON``), else made here.

    One venv for every benchmark: :mod:`benchmarks._chatlas_env` makes and stamps it.
    An empty ``BENCH_CHATLAS_PYTHON`` means the runner was told to leave chatlas out.
    """
    given = os.environ.get("BENCH_CHATLAS_PYTHON")
    if given is not None:
        return Path(given) if given else None
    from benchmarks._chatlas_env import ensure_chatlas_venv as ensure

    try:
        return ensure()
    except (subprocess.SubprocessError, OSError) as e:
        print(f"chatlas venv not available: {e}", file=sys.stderr)
        return None


def measure_chatlas(rounds: int) -> dict[str, dict[str, float]] | None:
    python = ensure_chatlas_venv()
    if python is None:
        return None
    done = subprocess.run(
        [str(python), "-c", CHATLAS_SCRIPT, CASES_SOURCE, str(rounds)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout)


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f}"


def report(
    ours: dict[str, dict[str, float]], chatlas: dict[str, dict[str, float]] | None
) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    header = (
        f"{'value':<22} {'baseline µs':>12} {'ours µs':>10} {'ours/base':>10} {'target':>7} "
        f"{'best/best':>10} {'get/base':>9} {'format/base':>12} {'chatlas µs':>11} "
        f"{'chatlas/base':>13}"
    )
    print(header)
    print("-" * len(header))
    for name, t in ours.items():
        # Against the target: construction + get_model_value(), what a tool call pays
        # (and what the runner's table uses); get alone is for information.
        ratio = t["ours"] / t["baseline"]
        best_ratio = t["ours_min"] / t["baseline_min"]
        get_ratio = t["get"] / t["baseline"]
        fmt_ratio = t["format"] / t["baseline"]
        target = TARGETS[name]
        row: dict[str, Any] = {
            "baseline_s": t["baseline"],
            "ours_s": t["get"],
            "construct_and_get_s": t["ours"],
            "construct_and_get_ratio": ratio,
            "format_only_s": t["format"],
            "ours_ratio": get_ratio,
            "construct_and_get_best_over_baseline_best": best_ratio,
            "format_only_ratio": fmt_ratio,
            "target_ratio": target,
            "meets_target": ratio <= target,
        }
        chatlas_cells = f"{'-':>11} {'-':>13}"
        if chatlas is not None:
            c = chatlas[name]
            row["chatlas_s"] = c["chatlas_get"]
            row["chatlas_baseline_s"] = c["baseline"]
            row["chatlas_ratio"] = c["chatlas_get"] / c["baseline"]
            row["chatlas_construct_and_get_ratio"] = c["chatlas"] / c["baseline"]
            chatlas_cells = (
                f"{_us(c['chatlas']):>11} {row['chatlas_construct_and_get_ratio']:>12.2f}x"
            )
        mark = "ok" if ratio <= target else "MISS"
        print(
            f"{name:<22} {_us(t['baseline']):>12} {_us(t['ours']):>10} {ratio:>9.2f}x "
            f"{target:>5.1f}x {best_ratio:>9.2f}x {get_ratio:>8.2f}x {fmt_ratio:>11.2f}x "
            f"{chatlas_cells}  {mark}"
        )
        rows[name] = row
    return rows


BASELINES = {
    "small dict": "orjson.dumps",
    "object with to_dict()": "orjson.dumps(v.to_dict())",
    "1,000 dicts": "orjson.dumps",
    "10,000-row DataFrame": 'to_json(orient="records", date_format="iso")',
    "numpy dict": "orjson.dumps (numpy option)",
}


def runner_lines(rows: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows in the table format of ``benchmarks.run``.

    Per case, against the target: a result built and asked for its model value, what a
    tool call pays, and what the issue's chatlas figures measure (chatlas validates on
    construction, so its cost is there). Then ``get_model_value()`` alone on a fresh
    result (built outside the timing; the value is cached after the first call), for
    information.
    """
    lines: list[dict[str, Any]] = []
    for name, row in rows.items():
        target = row["target_ratio"]
        ratio = row["construct_and_get_ratio"]
        chatlas_ratio = row.get("chatlas_construct_and_get_ratio")
        lines.append(
            {
                "row": "format",
                "what": f"construction + get_model_value(), {name}",
                "unit": "us",
                "ours": row["construct_and_get_s"] * 1e6,
                "floor": row["baseline_s"] * 1e6,
                "ratio_chatlas": chatlas_ratio,
                "target": f"<= {target:g}x {BASELINES[name]}, <= chatlas",
                "met": ratio <= target and (chatlas_ratio is None or ratio <= chatlas_ratio),
                "note": ""
                if chatlas_ratio is None or ratio <= chatlas_ratio
                else f"slower than chatlas ({ratio:.2f}x against {chatlas_ratio:.2f}x)",
            }
        )
        lines.append(
            {
                "row": "format",
                "what": f"  get_model_value() alone, {name}",
                "unit": "us",
                "ours": row["ours_s"] * 1e6,
                "floor": row["baseline_s"] * 1e6,
                "chatlas": row.get("chatlas_s", 0.0) * 1e6 or None,
                "ratio_chatlas": row.get("chatlas_ratio"),
                "target": "(for information)",
                "met": None,
            }
        )
    return lines


def profile_small_dict(calls: int = 200_000) -> None:
    """Where the time of the small-dict case goes."""
    import cProfile
    import pstats

    from chatlas_like import ContentToolResult

    value = _cases()[0][1]
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        ContentToolResult(value=value).get_model_value()
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="5 rounds")
    parser.add_argument("--no-chatlas", action="store_true", help="skip chatlas's figures")
    parser.add_argument("--profile", action="store_true", help="profile the small-dict case")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.profile:
        profile_small_dict()
        return
    rounds = 5 if args.quick or os.environ.get("BENCH_QUICK") else args.rounds
    ours = measure_ours(rounds)
    chatlas = None if args.no_chatlas else measure_chatlas(rounds)
    rows = report(ours, chatlas)
    runner_json = os.environ.get("BENCH_JSON")
    if runner_json:
        Path(runner_json).write_text(json.dumps({"lines": runner_lines(rows)}))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "benchmark": "bench_format",
                "rounds": rounds,
                "python": sys.version.split()[0],
                "chatlas": CHATLAS_VERSION if chatlas is not None else None,
                "note": "per call; ours builds a fresh ContentToolResult each call "
                "(get_model_value() caches), so ours = construction + formatting",
                "cases": rows,
            },
            indent=2,
        )
    )
    print(f"\nwritten: {args.out}")


if __name__ == "__main__":
    main()
