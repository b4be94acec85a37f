"""What durability costs, and what it buys across processes (``chatlas_like.durable``).

Two measurements, run by hand (``python -m benchmarks.bench_durable``; not part of
``make bench``):

* ``overhead``: one ``chat()`` with one tool round (the model asks for a tool, the tool
  answers, the model answers) against a loopback model, interleaved: a plain ``Chat``,
  the floor (DBOS running the same steps by hand with the raw ``anthropic`` SDK, with
  and without a tool-start step) and a ``DurableChat``, also with ``publish=False``, on
  SQLite, SQLite in WAL mode and PostgreSQL (a temporary local server). Medians of
  wall and CPU time, ratios to the floor, and per round the SQL statements sent, the
  bytes of their parameters, the database's growth and the steps recorded.
* ``scale``: PostgreSQL, ``--conversations`` queued conversations (200) whose tool
  sleeps 0.2 s and logs its side effect; first one worker process, then four, one of
  which is SIGKILLed half way and its turns resumed by the driver
  (:func:`~chatlas_like.durable.recover_executor`). Reports each run's wall time and
  throughput, their ratio, and checks that every turn finished and that no
  side-effecting call ran twice.

``--quick`` uses small sizes (a smoke run); ``--json PATH`` writes the report.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from chatlas_like import Chat, ChatAnthropic
from chatlas_like.testing import LoopbackServer, Reply, TemporaryPostgres

MODEL = "claude-haiku-4-5-20251001"
KEY = "bench-key-not-a-secret"
PER_WORKER = 2  # queued turns one worker runs at once


def model(body: dict[str, Any]) -> Reply:
    last = body["messages"][-1]["content"]
    if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
        return Reply.text("Card 42 is charged.")
    return Reply.tool_call("charge", {"card": 42})


def _dbos(url: str, executor_id: str | None = None) -> None:
    from dbos import DBOS

    from chatlas_like.durable import sqlite_engine

    config: dict[str, Any] = {
        "name": "bench-durable",
        # DBOS's default version hashes the source of every workflow registered in the
        # process (one per DurableChat): processes with other sets would not share work.
        "application_version": "bench-durable-1",
        "system_database_url": url,
        "log_level": "WARNING",
        "notification_listener_polling_interval_sec": 0.05,
    }
    if executor_id is not None:
        config["executor_id"] = executor_id
    if url.endswith("#wal"):  # the engine chatlas_like.durable.sqlite_engine() makes
        url = url.removesuffix("#wal")
        config["system_database_url"] = url
        config["system_database_engine"] = sqlite_engine(url.removeprefix("sqlite:///"))
    DBOS(config=config)  # pyright: ignore[reportArgumentType]


def _chat(url: str, tool: Callable[..., Any]) -> Chat:
    chat = ChatAnthropic(base_url=url, api_key=KEY, model=MODEL)
    chat.register_tool(tool, name="charge")
    return chat


def _quick_charge(card: int) -> str:
    """Charge a card."""
    return f"charged {card}"


# -- the floor: the engine doing the same steps by hand -------------------------------------------

CHARGE_TOOL = {
    "name": "charge",
    "description": "Charge a card.",
    "input_schema": {
        "type": "object",
        "properties": {"card": {"type": "integer"}},
        "required": ["card"],
    },
}
_CLIENTS: dict[str, Any] = {}  # the loopback server's URL -> one anthropic client


def _ask(url: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """One streamed model request with the raw SDK; the final message as JSON data."""
    import anthropic

    client = _CLIENTS.get(url) or _CLIENTS.setdefault(
        url, anthropic.Anthropic(base_url=url, api_key=KEY)
    )
    with client.messages.stream(
        model=MODEL, max_tokens=4096, messages=messages, tools=[CHARGE_TOOL]
    ) as stream:
        return stream.get_final_message().model_dump(mode="json", exclude_none=True)


def by_hand(url: str, prompt: str, start_step: bool) -> str:
    """The tool round as a hand-made DBOS workflow: model step, tool step, model step
    (with ``start_step``, a step recording the call's start before the tool step)."""
    from dbos import DBOS

    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    first = DBOS.run_step({"name": "model"}, lambda: _ask(url, messages))
    [call] = [b for b in first["content"] if b["type"] == "tool_use"]
    if start_step:
        DBOS.run_step({"name": "tool-start"}, lambda: call["id"])
    output = DBOS.run_step({"name": "tool"}, lambda: _quick_charge(**call["input"]))
    messages += [
        {"role": "assistant", "content": first["content"]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": output}],
        },
    ]
    final = DBOS.run_step({"name": "model"}, lambda: _ask(url, messages))
    return "".join(b["text"] for b in final["content"] if b["type"] == "text")


_BY_HAND: list[Callable[..., Any]] = []


def _by_hand_workflow() -> Callable[..., Any]:
    """``by_hand`` registered once as a DBOS workflow, JSON-serialised as ours are."""
    if not _BY_HAND:
        from dbos import DBOS, WorkflowSerializationFormat

        _BY_HAND.append(
            DBOS.workflow(
                name="bench.by_hand", serialization_type=WorkflowSerializationFormat.PORTABLE
            )(by_hand)
        )
    return _BY_HAND[0]


class _Statements:
    """SQL statements every engine of the process sends, and the bytes of their
    parameters (what a round writes, near enough: an INSERT's values are its bytes)."""

    def __init__(self) -> None:
        import sqlalchemy as sa
        from sqlalchemy import event

        self.count = 0
        self.bytes = 0
        event.listen(sa.Engine, "before_cursor_execute", self._seen)

    def _seen(self, conn: Any, cursor: Any, statement: str, params: Any, *_: Any) -> None:
        self.count += 1
        rows = params if isinstance(params, list) else [params]
        for row in rows:
            values = row.values() if isinstance(row, dict) else (row or ())
            self.bytes += sum(len(v) for v in values if isinstance(v, (str, bytes)))

    def reading(self) -> tuple[int, int]:
        return self.count, self.bytes


# -- overhead ------------------------------------------------------------------------------------


def overhead(rounds: int) -> dict[str, Any]:
    from dbos import DBOS

    from chatlas_like.durable import DurableChat

    report: dict[str, Any] = {}
    statements = _Statements()
    workflow = _by_hand_workflow()
    with (
        LoopbackServer(model) as server,
        TemporaryPostgres() as pg,
        tempfile.TemporaryDirectory() as tmp,
    ):
        backends = {
            "sqlite": f"sqlite:///{Path(tmp) / 'dbos.sqlite'}",
            "sqlite-wal": f"sqlite:///{Path(tmp) / 'dbos-wal.sqlite'}#wal",
            "postgres": pg.create_database().replace("postgresql://", "postgresql+psycopg://", 1),
        }
        for backend, url in backends.items():
            plain = _chat(server.url, _quick_charge)
            durable = DurableChat(_chat(server.url, _quick_charge), name=f"o-{backend}")
            quiet = DurableChat(
                _chat(server.url, _quick_charge), name=f"o-{backend}-np", publish=False
            )
            _dbos(url)
            DBOS.launch()
            sides = _sides(plain, durable, quiet, workflow, server.url)
            medians, cpu = _interleaved(sides, rounds, lambda plain=plain: plain.set_turns([]))
            growth = {
                name: _growth(backend, url, sides[name], rounds, statements)
                for name in sides
                if name != "plain"
            }
            steps = [s["function_name"] for s in DBOS.list_workflow_steps(_first_turn(durable))]
            DBOS.destroy()
            floor = medians[HAND]
            report[backend] = {
                "median_ms": {k: round(v * 1000, 3) for k, v in medians.items()},
                "cpu_ms": {k: round(v * 1000, 3) for k, v in cpu.items()},
                "ratio_to_hand": {k: round(v / floor, 2) for k, v in medians.items() if k != HAND},
                "cpu_ratio_to_hand": {
                    k: round(v / cpu[HAND], 2) for k, v in cpu.items() if k != HAND
                },
                "ratio_to_plain": {
                    k: round(v / medians["plain"], 2) for k, v in medians.items() if k != "plain"
                },
                "per_round": growth,
                "steps_per_round": dict(Counter(steps)),
            }
    return report


HAND = "DBOS by hand"
HAND_START = "by hand + tool-start step"


def _sides(
    plain: Chat, durable: Any, quiet: Any, workflow: Callable[..., Any], url: str
) -> dict[str, Callable[[], Any]]:
    """One round of each side (each durable round on a new conversation)."""
    numbers = iter(range(10**9))
    return {
        "plain": lambda: plain.chat("Charge card 42", echo="none"),
        HAND: lambda: workflow(url, "Charge card 42", False),
        HAND_START: lambda: workflow(url, "Charge card 42", True),
        "durable": lambda: durable.chat(
            "Charge card 42", conversation_id=f"c{next(numbers)}", echo="none"
        ),
        "durable, publish=False": lambda: quiet.chat(
            "Charge card 42", conversation_id=f"c{next(numbers)}", echo="none"
        ),
    }


def _first_turn(durable: Any) -> str:
    return f"chatlas_like/{durable.name}/c0/00000000"


def _interleaved(
    sides: dict[str, Callable[[], Any]], rounds: int, between: Callable[[], None]
) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall and CPU seconds (this process, all threads) of a round of each side."""
    names = list(sides)
    for name in names * 3:  # warm-up: connections, the first validator
        sides[name]()
        between()
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for i in range(rounds):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            start, start_cpu = time.perf_counter(), time.process_time()
            sides[name]()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
            between()
    return (
        {name: statistics.median(values) for name, values in wall.items()},
        {name: statistics.median(values) for name, values in cpu.items()},
    )


def _growth(
    backend: str, url: str, one_round: Callable[[], Any], rounds: int, statements: _Statements
) -> dict[str, int]:
    """Per round: the database's growth in bytes, the SQL statements sent and the bytes
    of their parameters."""
    before = _size(backend, url)
    count, written = statements.reading()
    for _ in range(rounds):
        one_round()
    after_count, after_written = statements.reading()
    return {
        "db_bytes": round((_size(backend, url) - before) / rounds),
        "statements": round((after_count - count) / rounds, 1),
        "bytes_sent": round((after_written - written) / rounds),
    }


def _size(backend: str, url: str) -> int:
    if backend.startswith("sqlite"):
        path = url.removeprefix("sqlite:///").removesuffix("#wal")
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            size = conn.execute("PRAGMA page_size").fetchone()[0]
        return int(pages * size)
    import psycopg

    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://", 1)) as conn:
        row = conn.execute(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'dbos' AND c.relkind = 'r'"
        ).fetchone()
    return int(row[0]) if row is not None else 0


# -- scale-out -----------------------------------------------------------------------------------


def worker(url: str, executor_id: str, server_url: str, log: str) -> None:
    """One worker process: runs queued turns until it is stopped."""
    from dbos import DBOS

    from chatlas_like.durable import DurableChat

    def charge(card: int) -> str:
        """Charge a card (a side effect, logged)."""
        with open(log, "a") as f:
            f.write(f"{executor_id} start\n")
        time.sleep(0.2)
        with open(log, "a") as f:
            f.write(f"{executor_id} done\n")
        return f"charged {card}"

    DurableChat(
        _chat(server_url, charge), name="scale", max_concurrency=PER_WORKER, poll_interval=0.1
    )
    _dbos(url, executor_id)
    DBOS.launch()
    print("ready", flush=True)
    signal.sigwait({signal.SIGTERM})
    DBOS.destroy()


def scale(
    conversations: int,
    runs: tuple[tuple[int, bool], ...] = ((1, False), (4, True)),
    postgres: TemporaryPostgres | None = None,
) -> dict[str, Any]:
    """The queued conversations over each run's workers (and whether one is killed), on
    ``postgres`` (a temporary server of its own by default)."""
    from chatlas_like.durable import DurableChat

    report: dict[str, Any] = {"conversations": conversations, "per_worker": PER_WORKER}
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(LoopbackServer(model))
        pg = postgres or stack.enter_context(TemporaryPostgres())
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        driver = DurableChat(
            _chat(server.url, _quick_charge), name="scale", max_concurrency=PER_WORKER
        )
        for workers, kill in runs:
            url = pg.create_database().replace("postgresql://", "postgresql+psycopg://", 1)
            log = str(Path(tmp) / f"side-effects-{workers}.log")
            report[f"{workers} workers"] = _scale_run(
                driver, url, server.url, log, workers, conversations, kill
            )
    if "1 workers" in report and "4 workers" in report:
        one, four = report["1 workers"], report["4 workers"]
        report["throughput_ratio"] = round(four["turns_per_s"] / one["turns_per_s"], 2)
    return report


def _scale_run(
    driver: Any, url: str, server_url: str, log: str, workers: int, conversations: int, kill: bool
) -> dict[str, Any]:
    from dbos import DBOS

    from chatlas_like.durable import recover_executor

    # Workers first: they create the schema and queue before the driver enqueues.
    processes = [_start_worker(url, f"w{i}", server_url, log) for i in range(workers)]
    _dbos(url, "driver")
    DBOS.listen_queues([])  # the driver only enqueues
    DBOS.launch()
    start = time.perf_counter()
    handles = [
        driver.enqueue("Charge card 42", conversation_id=f"s{i}") for i in range(conversations)
    ]
    killed: list[str] = []
    if kill:
        _wait_for(lambda: _done(conversations) >= conversations // 2)
        victim = processes[1]
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        killed = recover_executor("w1")
    answers = [h.result() for h in handles]
    elapsed = time.perf_counter() - start
    DBOS.destroy()
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        if process.stdout is not None:
            process.stdout.close()
    lines = Path(log).read_text().splitlines()
    starts = sum(line.endswith("start") for line in lines)
    return {
        "seconds": round(elapsed, 2),
        "turns_per_s": round(conversations / elapsed, 2),
        "answered": sum(a == "Card 42 is charged." for a in answers),
        # One call per conversation: a call a dead worker had started is answered as
        # interrupted, never run again, so starts == conversations when none ran twice.
        "charge_starts": starts,
        "worker_killed": "w1" if kill else None,
        "turns_resumed": len(killed),
    }


def _start_worker(url: str, executor_id: str, server_url: str, log: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchmarks.bench_durable",
            "worker",
            url,
            executor_id,
            server_url,
            log,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    if process.stdout.readline().strip() != "ready":
        raise RuntimeError(f"worker {executor_id} did not start")
    return process


def _done(conversations: int) -> int:
    from dbos import DBOS

    return len(DBOS.list_workflows(status="SUCCESS", load_input=False, load_output=False))


def _wait_for(condition: Callable[[], bool]) -> None:
    while not condition():
        time.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["worker"]:
        worker(*argv[1:5])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", choices=("overhead", "scale"))
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.conversations = 5, 16
    report: dict[str, Any] = {
        "meta": {"python": platform.python_version(), "cpus": os.cpu_count(), **vars(args)}
    }
    if args.only in (None, "overhead"):
        report["overhead"] = overhead(args.rounds)
        _print_overhead(report["overhead"], args.rounds)
    if args.only in (None, "scale"):
        report["scale"] = scale(args.conversations)
        _print_scale(report["scale"])
    if args.json:
        Path(args.json).write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
    return 0


def _print_overhead(report: dict[str, Any], rounds: int) -> None:
    print(
        f"one chat() with one tool round, medians of {rounds} interleaved rounds; "
        f"ratios to the engine doing the same steps by hand (target <= 1.25x wall, "
        f"<= 1.3x cpu)"
    )
    for backend, row in report.items():
        ms, cpu, ratio = row["median_ms"], row["cpu_ms"], row["ratio_to_hand"]
        cpu_ratio = row["cpu_ratio_to_hand"]
        print(f"  {backend}  (steps of ours: {row['steps_per_round']})")
        for side in ms:
            per = row["per_round"].get(side)
            sql = (
                f" | {per['statements']} statements, {per['bytes_sent']:,} bytes sent, "
                f"db +{per['db_bytes']:,} bytes"
                if per
                else ""
            )
            versus = f" ({ratio[side]:.2f}x, cpu {cpu_ratio[side]:.2f}x)" if side in ratio else ""
            print(f"    {side:<26} {ms[side]:6.1f} ms, cpu {cpu[side]:5.1f} ms{versus}{sql}")


def _print_scale(report: dict[str, Any]) -> None:
    print(f"{report['conversations']} queued conversations, tool sleeps 0.2 s, PostgreSQL")
    for key in ("1 workers", "4 workers"):
        row = report[key]
        print(
            f"  {key}: {row['seconds']} s, {row['turns_per_s']} turns/s, answered "
            f"{row['answered']}, charge started {row['charge_starts']} times, "
            f"killed {row['worker_killed']}, resumed {row['turns_resumed']}"
        )
    print(f"  throughput 4 workers / 1 worker: {report['throughput_ratio']}x")


if __name__ == "__main__":
    raise SystemExit(main())
