"""Row 10: many app instances, one store: writers and readers in separate processes.

One throwaway PostgreSQL server (``TemporaryPostgres``). Four writer processes store
results at once (each its own runs: batches through ``write_many`` and single
``write`` calls), while two ``serve-results`` processes (the read API, started with
``python -m chatlas_like serve-results``) are up on the same database. Then:

* **nothing lost**: every record written is fetched from each of the two readers
  (``GET`` one record), and must answer 200 with the text written;
* **latency**: 32 concurrent clients (keep-alive connections, :mod:`benchmarks._http_load`)
  ``GET`` random records from one read-API process, and from the floor, a minimal
  Starlette handler running the store's query in one process of its own
  (:mod:`benchmarks._min_read_api`), in alternating blocks; p50 and p99 of each
  request's wall time.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from .._context import Context
from .._harness import REPO, Line
from .._http_load import fetch_all, percentile

ROW = "10"
NAME = "shared_store"
KEY = "bench-read-key-0123456789"
TENANT = "bench"
WRITERS = 4
CLIENTS = 32
P99_TARGET = 1.5
PATH = "/interactions/processes/by-id/{run}/tool-results/{sequence}"

WRITER = """
import json, sys, time
from chatlas_like import ToolResultRecord, open_store

db, tenant, runs, per_run = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
store = open_store(db)
started = time.perf_counter()
for run in runs:
    records = [
        ToolResultRecord(run, n, f"toolu_{n:04d}", f"{run} #{n} " + "ünïcödé ☃ " * 60,
                         None, None, False, False, tenant)
        for n in range(1, per_run + 1)
    ]
    batched, single = records[: per_run * 9 // 10], records[per_run * 9 // 10 :]
    for i in range(0, len(batched), 30):
        store.write_many(batched[i : i + 30])
    for record in single:
        store.write(record)
store.close()
print(json.dumps({"seconds": time.perf_counter() - started}))
"""


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }


def _start_reader(db: str, keys: Path) -> tuple[subprocess.Popen[str], int]:
    command = [sys.executable, "-m", "chatlas_like", "serve-results", "--db", db]
    child = subprocess.Popen(
        [*command, "--keys", str(keys), "--port", "0"],
        cwd=REPO,
        env=_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    line = child.stdout.readline()  # "serving tool results on http://127.0.0.1:PORT"
    if not line:
        raise RuntimeError(f"serve-results did not start (exit {child.wait()})")
    return child, int(line.strip().rsplit(":", 1)[1])


def _start_floor(db: str) -> tuple[subprocess.Popen[str], int]:
    child = subprocess.Popen(
        [sys.executable, "-m", "benchmarks._min_read_api", db, TENANT],
        cwd=REPO,
        env=_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    if not line:
        raise RuntimeError(f"the minimal read API did not start (exit {child.wait()})")
    return child, int(line)


def _write(db: str, runs: list[list[str]], per_run: int) -> float:
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, db, TENANT, json.dumps(mine), str(per_run)],
            cwd=REPO,
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for mine in runs
    ]
    started = time.perf_counter()
    for writer in writers:
        _, err = writer.communicate(timeout=300)
        if writer.returncode != 0:
            raise RuntimeError(f"a writer failed: {err[-2000:]}")
    return time.perf_counter() - started


def _readable(port: int, runs: list[list[str]], per_run: int) -> int:
    """How many written records this reader serves, with their text."""
    keys = [(run, n) for mine in runs for run in mine for n in range(1, per_run + 1)]
    paths = [PATH.format(run=run, sequence=n) for run, n in keys]
    answers = fetch_all("127.0.0.1", port, paths, concurrency=CLIENTS, headers=_auth())
    good = 0
    for (run, n), answer in zip(keys, answers, strict=True):
        if answer.status == 200 and json.loads(answer.body)["result"].startswith(f"{run} #{n} "):
            good += 1
    return good


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {KEY}"}


def run(ctx: Context) -> list[Line]:
    from chatlas_like.testing import TemporaryPostgres

    runs_per_writer, per_run = (5, 100) if not ctx.quick else (2, 20)
    rounds, block = (6, 400) if not ctx.quick else (2, 100)
    runs = [[str(uuid.uuid4()) for _ in range(runs_per_writer)] for _ in range(WRITERS)]
    written = WRITERS * runs_per_writer * per_run
    children: list[subprocess.Popen[str]] = []
    with tempfile.TemporaryDirectory() as folder, TemporaryPostgres() as pg:
        db = pg.create_database()
        keys = Path(folder) / "keys.json"
        keys.write_text(json.dumps({KEY: TENANT}))
        try:
            readers = [_start_reader(db, keys) for _ in range(2)]
            children.extend(child for child, _ in readers)
            write_s = _write(db, runs, per_run)
            readable = [_readable(port, runs, per_run) for _, port in readers]
            floor_child, floor_port = _start_floor(db)
            children.append(floor_child)
            ports = {"ours": readers[0][1], "floor": floor_port}
            everything = [(run, n) for mine in runs for run in mine for n in range(1, per_run + 1)]
            rng = random.Random(18)
            times: dict[str, list[float]] = {"ours": [], "floor": []}
            statuses: dict[str, set[int]] = {"ours": set(), "floor": set()}
            for side in ports:  # warm-up: connections, pools, code paths
                _latencies(ports[side], rng.sample(everything, CLIENTS * 2), statuses[side])
            for r in range(rounds):
                for side in ("ours", "floor") if r % 2 == 0 else ("floor", "ours"):
                    picked = [rng.choice(everything) for _ in range(block)]
                    times[side].extend(_latencies(ports[side], picked, statuses[side]))
        finally:
            for child in children:
                child.terminate()
            for child in children:
                try:
                    child.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    child.kill()
    lost = [written - n for n in readable]
    data = {
        "written": written,
        "readable_per_reader": readable,
        "write_seconds": write_s,
        "statuses": {k: sorted(v) for k, v in statuses.items()},
        "requests_per_side": len(times["ours"]),
    }
    note = "" if statuses["ours"] == statuses["floor"] == {200} else f"statuses {data['statuses']}"
    return [
        Line(
            ROW,
            f"{WRITERS} writer processes, {written:,} results: readable from each of 2 readers",
            "",
            ours=float(min(readable)),
            floor=float(written),
            target="all, from every reader",
            met=all(n == 0 for n in lost),
            note=f"{WRITERS} writers took {write_s:.1f} s; lost per reader: {lost}",
            data=data,
        ),
        Line(
            ROW,
            f"  read API p50, {CLIENTS} concurrent clients, against a minimal Starlette handler",
            "ms",
            ours=percentile(times["ours"], 0.5) * 1e3,
            floor=percentile(times["floor"], 0.5) * 1e3,
            target="(for information)",
        ),
        Line(
            ROW,
            f"  read API p99, {CLIENTS} concurrent clients",
            "ms",
            ours=percentile(times["ours"], 0.99) * 1e3,
            floor=percentile(times["floor"], 0.99) * 1e3,
            target=f"<= {P99_TARGET}x the minimal handler",
            target_ratio=P99_TARGET,
            note=note,
        ),
    ]


def _latencies(port: int, keys: list[tuple[str, int]], statuses: set[int]) -> list[float]:
    paths = [PATH.format(run=run, sequence=n) for run, n in keys]
    answers = fetch_all("127.0.0.1", port, paths, concurrency=CLIENTS, headers=_auth())
    statuses.update(a.status for a in answers)
    return [a.seconds for a in answers]


def profile_row(url: str, out: Path, quick: bool) -> str:
    """No profile: the work happens in the server processes."""
    del url, out, quick
    return "row 10 shared_store runs its work in other processes: no profile"
