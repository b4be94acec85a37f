"""Tool-result store throughput for 1,000 results, against a floor measured in the same run.

For SQLite and PostgreSQL it times, on the same rows and the same table layout:

* ``write``: the store's ``write_many`` (one transaction) against the floor, a plain
  ``executemany`` of a plain INSERT in one transaction (``sqlite3`` / psycopg);
* ``write_each``: the store's ``write`` of each result in its own transaction (what a
  chat does when every round has one result), against the same floor (on PostgreSQL,
  a tenth of the results, scaled: each commit waits for the disk);
* ``read``: the store's ``list`` of the run (records built, dates parsed) against a
  plain ``SELECT ... ORDER BY sequence`` fetched with ``fetchall``;
* ``get_each``: the store's ``get`` of each result against a plain keyed ``SELECT``.

Variants run interleaved (each round runs every variant, in a rotated order), each
write on an empty table; the figures are medians over the rounds. Ratios are the
store's median time over the floor's (1.0 = as fast as the floor). SQLite, which works
in this thread, is timed on the thread's CPU clock; PostgreSQL, which works in its own
server process, on the wall clock. PostgreSQL is a throwaway server (``TemporaryPostgres``, fsync on) on this machine.

Run: ``python -m benchmarks.bench_store [--rounds 7] [--results 1000] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from chatlas_like import PostgresStore, SqliteStore, ToolResultRecord
from chatlas_like._store._record import now_ms
from chatlas_like.testing import TemporaryPostgres

TENANT = "bench"
COLUMNS = (
    "interaction_process_id, sequence, tool_call_id, result, stored_length, original_length, "
    "is_truncated, is_error, tenant_id, id, date_created, date_updated"
)


def make_records(count: int, run: str) -> list[ToolResultRecord]:
    """``count`` results of about 1 KB each, some multi-byte, a few errors."""
    records: list[ToolResultRecord] = []
    for n in range(1, count + 1):
        text = orjson.dumps({"row": n, "city": "Zürich", "note": "ünïcödé ☃ " * 60}).decode()
        size = len(text.encode())
        records.append(
            ToolResultRecord(run, n, f"toolu_{n:05d}", text, size, size, False, n % 50 == 0, TENANT)
        )
    return records


def timed(action: Callable[[], Any], clock: Callable[[], float] = time.perf_counter) -> float:
    start = clock()
    action()
    return clock() - start


def cpu_timed(action: Callable[[], Any]) -> float:
    """SQLite works in this thread: its CPU time (system time included), which other
    processes on a busy machine do not inflate as they do wall time."""
    return timed(action, time.thread_time)


# -- SQLite ---------------------------------------------------------------------------------


def sqlite_rows(records: list[ToolResultRecord]) -> list[tuple[Any, ...]]:
    now = int(now_ms().timestamp() * 1000)
    return [
        (
            r.interaction_process_id,
            r.sequence,
            r.tool_call_id,
            r.result,
            r.stored_length,
            r.original_length,
            int(r.is_truncated),
            int(r.is_error),
            r.tenant_id,
            str(uuid.uuid4()),
            now,
            now,
        )
        for r in records
    ]


def plain_sqlite(path: Path) -> sqlite3.Connection:
    """A plain connection to a file whose table the store created (same layout, WAL)."""
    SqliteStore(path).get(TENANT, str(uuid.uuid4()), 1)  # creates the schema
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def sqlite_variants(
    folder: Path, records: list[ToolResultRecord]
) -> dict[str, Callable[[], float]]:
    run = records[0].interaction_process_id
    counter = iter(range(1_000_000))

    def fresh() -> Path:
        return folder / f"s{next(counter)}.db"

    def floor_write() -> float:
        conn = plain_sqlite(fresh())
        rows = sqlite_rows(records)  # the floor gets its rows ready-made

        def go() -> None:
            conn.execute("BEGIN")
            conn.executemany(
                f"INSERT INTO tool_results ({COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows
            )
            conn.execute("COMMIT")

        seconds = cpu_timed(go)
        conn.close()
        return seconds

    def store_write() -> float:
        store = SqliteStore(fresh())
        store.get(TENANT, run, 1)  # open and create the schema outside the timing
        seconds = cpu_timed(lambda: store.write_many(records))
        store.close()
        return seconds

    def store_write_each() -> float:
        store = SqliteStore(fresh())
        store.get(TENANT, run, 1)
        seconds = cpu_timed(lambda: [store.write(r) for r in records])
        store.close()
        return seconds

    filled = fresh()
    SqliteStore(filled).write_many(records)
    reader = SqliteStore(filled)
    reader.get(TENANT, run, 1)
    plain = plain_sqlite(filled)

    def floor_read() -> float:
        return cpu_timed(
            lambda: plain.execute(
                f"SELECT {COLUMNS} FROM tool_results WHERE tenant_id = ? AND "
                "interaction_process_id = ? ORDER BY sequence",
                (TENANT, run),
            ).fetchall()
        )

    def floor_get_each() -> float:
        query = (
            f"SELECT {COLUMNS} FROM tool_results WHERE tenant_id = ? AND "
            "interaction_process_id = ? AND sequence = ?"
        )
        return cpu_timed(
            lambda: [plain.execute(query, (TENANT, run, r.sequence)).fetchone() for r in records]
        )

    return {
        "floor_write": floor_write,
        "store_write": store_write,
        "store_write_each": store_write_each,
        "floor_read": floor_read,
        "store_read": lambda: cpu_timed(lambda: reader.list(TENANT, run)),
        "floor_get_each": floor_get_each,
        "store_get_each": lambda: cpu_timed(
            lambda: [reader.get(TENANT, run, r.sequence) for r in records]
        ),
    }


# -- PostgreSQL -----------------------------------------------------------------------------


def postgres_variants(url: str, records: list[ToolResultRecord]) -> dict[str, Callable[[], float]]:
    import psycopg

    run = records[0].interaction_process_id
    store = PostgresStore(url)
    store.get(TENANT, run, 1)  # pool open and schema created outside the timing
    plain = psycopg.connect(url, autocommit=True)
    plain.execute("CREATE TABLE floor_results (LIKE tool_results INCLUDING ALL)")
    now = now_ms()

    def rows() -> list[tuple[Any, ...]]:
        return [
            (
                uuid.UUID(r.interaction_process_id),
                r.sequence,
                r.tool_call_id,
                r.result,
                r.stored_length,
                r.original_length,
                r.is_truncated,
                r.is_error,
                r.tenant_id,
                uuid.uuid4(),
                now,
                now,
            )
            for r in records
        ]

    def floor_write() -> float:
        plain.execute("TRUNCATE floor_results")
        ready = rows()

        def go() -> None:
            with plain.transaction(), plain.cursor() as cursor:
                cursor.executemany(
                    f"INSERT INTO floor_results ({COLUMNS}) "
                    "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                    ready,
                )

        return timed(go)

    def store_write() -> float:
        plain.execute("TRUNCATE tool_results")
        return timed(lambda: store.write_many(records))

    def store_write_each() -> float:
        # A commit per result (fsync on): the first tenth, scaled to the batch, keeps
        # this informational figure from taking most of the script's time.
        plain.execute("TRUNCATE tool_results")
        tenth = records[: max(1, len(records) // 10)]
        return timed(lambda: [store.write(r) for r in tenth]) * len(records) / len(tenth)

    def ensure_filled() -> None:
        plain.execute("TRUNCATE tool_results")
        store.write_many(records)

    def floor_read() -> float:
        return timed(
            lambda: plain.execute(
                f"SELECT {COLUMNS} FROM floor_results WHERE tenant_id = %s AND "
                "interaction_process_id = %s ORDER BY sequence",
                (TENANT, uuid.UUID(run)),
            ).fetchall()
        )

    def floor_get_each() -> float:
        key = uuid.UUID(run)
        return timed(
            lambda: [
                plain.execute(
                    f"SELECT {COLUMNS} FROM floor_results WHERE tenant_id = %s AND "
                    "interaction_process_id = %s AND sequence = %s",
                    (TENANT, key, r.sequence),
                ).fetchone()
                for r in records
            ]
        )

    def store_read() -> float:
        return timed(lambda: store.list(TENANT, run))

    def store_get_each() -> float:
        return timed(lambda: [store.get(TENANT, run, r.sequence) for r in records])

    def filled(action: Callable[[], float]) -> Callable[[], float]:
        def go() -> float:
            ensure_filled()
            return action()

        return go

    return {
        "floor_write": floor_write,
        "store_write": store_write,
        "store_write_each": store_write_each,
        "floor_read": filled(floor_read),
        "store_read": filled(store_read),
        "floor_get_each": filled(floor_get_each),
        "store_get_each": filled(store_get_each),
    }


# -- running --------------------------------------------------------------------------------

# The target: a batch in one transaction against a plain executemany.
TARGETS = {"write": 1.2}
PAIRS = {
    "write": ("store_write", "floor_write"),
    "write_each": ("store_write_each", "floor_write"),
    "read": ("store_read", "floor_read"),
    "get_each": ("store_get_each", "floor_get_each"),
}


def interleaved(variants: dict[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    names = list(variants)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(rounds + 1):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        for name in order:
            seconds = variants[name]()
            if round_ > 0:  # round 0 warms caches and imports
                times[name].append(seconds)
    return times


def summary(times: dict[str, list[float]], count: int) -> dict[str, Any]:
    medians = {name: statistics.median(values) for name, values in times.items()}
    return {
        "median_seconds": medians,
        "results_per_second": {name: count / m for name, m in medians.items()},
        "ratio_to_floor": {
            label: medians[ours] / medians[floor] for label, (ours, floor) in PAIRS.items()
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3 if os.environ.get("BENCH_QUICK") else 7)
    parser.add_argument("--json", default="benchmarks/results/bench_store.json")
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    records = make_records(args.results, str(uuid.uuid4()))
    report: dict[str, Any] = {
        "results": args.results,
        "rounds": args.rounds,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "backends": {},
    }
    with tempfile.TemporaryDirectory() as folder:
        times = interleaved(sqlite_variants(Path(folder), records), args.rounds)
        report["backends"]["sqlite"] = summary(times, args.results)
    if not args.no_postgres:
        with TemporaryPostgres(fsync=True) as server:
            times = interleaved(postgres_variants(server.create_database(), records), args.rounds)
            report["backends"]["postgres"] = summary(times, args.results)
    for backend, figures in report["backends"].items():
        print(f"{backend}: {args.results} results, median of {args.rounds} interleaved rounds")
        for label, (ours, floor) in PAIRS.items():
            rate = figures["results_per_second"]
            print(
                f"  {label:<10} store {rate[ours]:>10,.0f}/s   floor {rate[floor]:>10,.0f}/s   "
                f"time ratio store/floor {figures['ratio_to_floor'][label]:.2f}"
            )
    out = Path(os.environ.get("BENCH_JSON") or args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(
        orjson.dumps({**report, "lines": runner_lines(report)}, option=orjson.OPT_INDENT_2)
    )
    print(f"wrote {out}")
    return 0


def runner_lines(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The ratios in the table format of ``benchmarks.run``: time per 1,000 results."""
    lines: list[dict[str, Any]] = []
    for backend, figures in report["backends"].items():
        medians = figures["median_seconds"]
        for label, (ours, floor) in PAIRS.items():
            target = TARGETS.get(label)
            ratio = medians[ours] / medians[floor]
            lines.append(
                {
                    "row": "store",
                    "what": f"{backend}: {label} of {report['results']:,} results",
                    "unit": "s",
                    "ours": medians[ours],
                    "floor": medians[floor],
                    "target": f"<= {target:g}x plain executemany"
                    if target is not None
                    else "(for information)",
                    "met": None if target is None else ratio <= target,
                }
            )
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
