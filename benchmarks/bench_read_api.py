"""Read API latency: p50 and p99 of a request, now against the socket it had before.

Two servers of the same app (``create_app``) over the same SQLite store, each in its own
process: *ours* listens on :func:`chatlas_like._cli.serve_results.listening_socket`
(Nagle's algorithm off), *before* on a socket made as the server made it before the
fix (protocol 0, so asyncio never turned Nagle off on its connections, and every
response written in two parts waited on the client's delayed ACK: about 40 ms). A
client on one keep-alive connection per server sends ``GET`` one record and ``GET`` a
listing page, in blocks that alternate between the servers; the figures are the p50
and p99 of each request's wall time.

Run: ``python -m benchmarks.bench_read_api [--requests 300] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import http.client
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import orjson

KEY = "bench-key-0123456789"
TENANT = "bench"
SIDES = ("ours", "before")


def fill(db: Path, run: str) -> None:
    from chatlas_like import SqliteStore, ToolResultRecord

    store = SqliteStore(db)
    body = orjson.dumps({"city": "Zürich", "rows": list(range(100))}).decode()
    size = len(body.encode())
    store.write_many(
        ToolResultRecord(run, n, f"toolu_{n:04d}", body, size, size, tenant_id=TENANT)
        for n in range(1, 101)
    )
    store.close()


def serve(side: str, db: str, keys: str) -> None:
    """The child: serve the app on the socket of ``side``; print the port."""
    import uvicorn

    from chatlas_like import SqliteStore
    from chatlas_like._cli.serve_results import create_app, listening_socket, read_keys

    if side == "ours":
        sock = listening_socket(socket.AF_INET)
    else:  # as the server made its socket before: protocol 0, Nagle left on
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    app = create_app(SqliteStore(db), read_keys(keys))
    print(sock.getsockname()[1], flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off")).run(sockets=[sock])


def start(side: str, db: Path, keys: Path) -> tuple[subprocess.Popen[str], int]:
    child = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.bench_read_api", "--serve", side, str(db), str(keys)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    return child, int(child.stdout.readline())


def timed_get(conn: http.client.HTTPConnection, path: str) -> float:
    started = time.perf_counter()
    conn.request("GET", path, headers={"Authorization": f"Bearer {KEY}"})
    response = conn.getresponse()
    response.read()
    if response.status != 200:
        raise RuntimeError(f"{path}: {response.status}")
    return time.perf_counter() - started


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def measure(requests: int) -> dict[str, Any]:
    run = str(uuid.uuid4())
    paths = {
        "one record": f"/interactions/processes/by-id/{run}/tool-results/7",
        "listing page": f"/interactions/processes/by-id/{run}/tool-results?limit=20",
    }
    with tempfile.TemporaryDirectory() as folder:
        db, keys = Path(folder) / "results.db", Path(folder) / "keys.json"
        fill(db, run)
        keys.write_bytes(orjson.dumps({KEY: TENANT}))
        children = {side: start(side, db, keys) for side in SIDES}
        try:
            conns = {
                side: http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                for side, (_, port) in children.items()
            }
            times: dict[str, dict[str, list[float]]] = {
                what: {side: [] for side in SIDES} for what in paths
            }
            block = 10
            for what, path in paths.items():
                for side in SIDES:  # warm-up
                    timed_get(conns[side], path)
                for round_ in range(max(1, requests // block)):
                    order = SIDES if round_ % 2 == 0 else SIDES[::-1]
                    for side in order:
                        times[what][side].extend(timed_get(conns[side], path) for _ in range(block))
            for conn in conns.values():
                conn.close()
        finally:
            for child, _ in children.values():
                child.terminate()
                child.wait(timeout=30)
                if child.stdout is not None:
                    child.stdout.close()
    return times


def lines(times: dict[str, dict[str, list[float]]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for what, sides in times.items():
        for label, fraction in (("p50", 0.5), ("p99", 0.99)):
            ours = percentile(sides["ours"], fraction) * 1000
            before = percentile(sides["before"], fraction) * 1000
            out.append(
                {
                    "row": "R",
                    "what": f"read API {what}, {label} (floor: the socket before the fix)",
                    "unit": "ms",
                    "ours": round(ours, 3),
                    "floor": round(before, 3),
                    "target": "p50 <= 5 ms (was ~44 ms: Nagle and delayed ACK)"
                    if label == "p50"
                    else "",
                    "met": ours <= 5.0 if label == "p50" else None,
                }
            )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--requests", type=int, default=60 if os.environ.get("BENCH_QUICK") else 300
    )
    parser.add_argument("--json", default="benchmarks/results/bench_read_api.json")
    parser.add_argument("--serve", nargs=3, metavar=("SIDE", "DB", "KEYS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(*args.serve)
        return 0
    times = measure(args.requests)
    report = {"requests": args.requests, "lines": lines(times)}
    for line in report["lines"]:
        print(f"{line['what']:<60} ours {line['ours']:>8.2f} ms   before {line['floor']:>8.2f} ms")
    out = Path(os.environ.get("BENCH_JSON") or args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
