"""What durability costs, and what it buys across processes (``chatlas_like.durable``).

Two measurements, run by hand (``python -m benchmarks.bench_durable``; not part of
``make bench``):

* ``overhead``: one ``chat()`` with one tool round (the model asks for a tool, the tool
  answers, the model answers) against a loopback model, interleaved: a plain ``Chat``,
  the floor (DBOS running the same steps by hand with the raw ``anthropic`` SDK: the
  call's start not recorded, recorded as a step of its own, or written to the stream
  from inside the tool's step as ours is) and a ``DurableChat``, also with
  ``publish=False`` and with its tool declared safe to run again (``durable="rerun"``:
  no start recorded), on
  SQLite, SQLite in WAL mode and PostgreSQL (a temporary local server). Medians of
  wall and CPU time, ratios to the floor, and per round the SQL statements sent, the
  bytes of their parameters, the database's growth and the steps recorded.
* ``scale``: PostgreSQL, queued conversations whose tool sleeps 0.2 s and logs its side
  effect, the model a loopback server in a process of its own. First a sweep: one
  worker process at 1, 2, 4, ... 64 turns at once, until a doubling gains less than 5%
  turns/s; then, at the concurrency where adding slots stopped helping, one, two and
  four workers (one of the four SIGKILLed half way, its turns resumed by the driver
  with :func:`~chatlas_like.durable.recover_executor`), each beside two hand-made DBOS
  workers on a queue of their own, running the floor's steps without the call's start
  recorded and with it written as ours is. Reports turns/s (also per core), CPU per turn of the workers, the
  driver and the database (the PostgreSQL server's processes, from /proc), turns per
  CPU-second, the ratios of CPU per turn to the hand-made workers', and checks that
  every turn was answered and that no side-effecting call ran twice.

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
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal, cast

import orjson

from chatlas_like import Chat, ChatAnthropic
from chatlas_like.testing import LoopbackServer, Reply, TemporaryPostgres

from ._harness import end_process

MODEL = "claude-haiku-4-5-20251001"
KEY = "bench-key-not-a-secret"
PER_WORKER = 2  # queued turns one worker runs at once


def model(body: Mapping[str, Any]) -> Reply:
    last: Any = body["messages"][-1]["content"]
    if isinstance(last, list) and any(b.get("type") == "tool_result" for b in _blocks(last)):
        return Reply.text("Card 42 is charged.")
    return Reply.tool_call("charge", {"card": 42})


def _blocks(content: Any) -> list[dict[str, Any]]:
    """A message's content blocks (a list of JSON objects)."""
    return cast("list[dict[str, Any]]", content)


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


def _chat(
    url: str, tool: Callable[..., Any], durable: Literal["rerun", "once"] | None = None
) -> Chat:
    chat = ChatAnthropic(base_url=url, api_key=KEY, model=MODEL)
    chat.register_tool(tool, name="charge", durable=durable)
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


Start = Literal["", "step", "write"]
"""How a hand-made round records the call's start before its tool runs: not at all, as
a step of its own, or written to the workflow's stream from inside the tool's step (one
insert: the cheapest record DBOS offers, and how ours records it)."""


def by_hand(url: str, prompt: str, start: Start) -> str:
    """The tool round as a hand-made DBOS workflow: model step, tool step, model step,
    the call's start recorded as ``start`` says."""
    return _hand_round(url, prompt, start, _quick_charge)


def _hand_round(url: str, prompt: str, start: Start, tool: Callable[..., str]) -> str:
    from dbos import DBOS

    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    first = DBOS.run_step({"name": "model"}, lambda: _ask(url, messages))
    [call] = [b for b in first["content"] if b["type"] == "tool_use"]
    if start == "step":
        DBOS.run_step({"name": "tool-start"}, lambda: call["id"])

    def run() -> str:
        if start == "write":
            DBOS.write_stream("starts", call["id"])
        return tool(**call["input"])

    output = DBOS.run_step({"name": "tool"}, run)
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
        rows: list[Any] = cast("list[Any]", params) if isinstance(params, list) else [params]
        for row in rows:
            values: Any = (
                cast("dict[str, Any]", row).values() if isinstance(row, dict) else row or ()
            )
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
            rerun = DurableChat(_chat(server.url, _quick_charge, "rerun"), name=f"o-{backend}-rr")
            _dbos(url)
            DBOS.launch()
            sides = _sides(plain, durable, quiet, rerun, workflow, server.url)
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
HAND_WRITE = "by hand + start written in step"
RERUN = 'durable, tool durable="rerun"'


def _sides(
    plain: Chat, durable: Any, quiet: Any, rerun: Any, workflow: Callable[..., Any], url: str
) -> dict[str, Callable[[], Any]]:
    """One round of each side (each durable round on a new conversation)."""
    numbers = iter(range(10**9))

    def new_conversation(chat: Any) -> Callable[[], Any]:
        return lambda: chat.chat("Charge card 42", conversation_id=f"c{next(numbers)}", echo="none")

    return {
        "plain": lambda: plain.chat("Charge card 42", echo="none"),
        HAND: lambda: workflow(url, "Charge card 42", ""),
        HAND_START: lambda: workflow(url, "Charge card 42", "step"),
        HAND_WRITE: lambda: workflow(url, "Charge card 42", "write"),
        "durable": new_conversation(durable),
        "durable, publish=False": new_conversation(quiet),
        RERUN: new_conversation(rerun),  # no start step: the same three steps as DBOS by hand
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
) -> dict[str, float]:
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

# Seconds between a worker's looks at the queue (kept with the queue, as the driver sets it).
POLL = 0.1
SWEEP = (1, 2, 4, 8, 16, 32, 64)  # turns at once in one worker, tried in order
GAIN = 1.05  # a doubling of the slots must raise turns/s by this much to count
TOOL_SECONDS = 0.2
ENQUEUERS = 8  # the driver's threads putting turns on the queue
_TICK = os.sysconf("SC_CLK_TCK")
_HAND_QUEUE = "bench.by_hand"
_HAND_TOOL: list[Callable[..., str]] = []  # the hand-made worker's side-effecting tool
_QUEUED_HAND: list[Callable[..., Any]] = []
_DRIVER: list[Any] = []


def scale_model(body: Mapping[str, Any]) -> Reply:
    """The model of the scale-out runs: asks to charge the card its prompt names
    ("Charge card 17"), then says it is charged."""
    first: Any = body["messages"][0]["content"]
    text = first if isinstance(first, str) else " ".join(b.get("text", "") for b in _blocks(first))
    card = int(text.rsplit(" ", 1)[-1])
    last: Any = body["messages"][-1]["content"]
    if isinstance(last, list) and any(b.get("type") == "tool_result" for b in _blocks(last)):
        return Reply.text(f"Card {card} is charged.")
    return Reply.tool_call("charge", {"card": card})


def _logged_charge(log: str, executor_id: str) -> Callable[..., str]:
    def charge(card: int) -> str:
        """Charge a card (a side effect, logged)."""
        with open(log, "a") as f:
            f.write(f"{executor_id} start {card}\n")
        time.sleep(TOOL_SECONDS)
        with open(log, "a") as f:
            f.write(f"{executor_id} done {card}\n")
        return f"charged {card}"

    return charge


def queued_by_hand(url: str, prompt: str, start: Start = "") -> str:
    """The floor of a queued conversation: :func:`by_hand`'s steps (model, tool, model;
    the start recorded as ``start`` says) with the worker's side-effecting tool."""
    return _hand_round(url, prompt, start, _HAND_TOOL[0])


def _queued_hand_workflow() -> Callable[..., Any]:
    if not _QUEUED_HAND:
        from dbos import DBOS, WorkflowSerializationFormat

        _QUEUED_HAND.append(
            DBOS.workflow(
                name="bench.queued_by_hand",
                serialization_type=WorkflowSerializationFormat.PORTABLE,
            )(queued_by_hand)
        )
    return _QUEUED_HAND[0]


def worker(kind: str, url: str, executor_id: str, server_url: str, log: str, slots: str) -> None:
    """One worker process (``kind`` "ours" or "hand", which runs both hand-made
    variants): runs queued turns until SIGTERM."""
    from dbos import DBOS

    charge = _logged_charge(log, executor_id)
    if kind == "ours":
        from chatlas_like.durable import DurableChat

        chat = ChatAnthropic(base_url=server_url, api_key=KEY, model=MODEL)
        chat.register_tool(charge, name="charge")
        # The queue's limit and polling interval are the driver's (kept in the database).
        DurableChat(chat, name="scale", max_concurrency=int(slots), poll_interval=POLL)
    else:
        _HAND_TOOL.append(charge)
        _queued_hand_workflow()
    _dbos(url, executor_id)
    DBOS.launch()
    print("ready", flush=True)
    # Until SIGTERM, whose default action ends the process at once: a durable worker
    # loses nothing by it, and an orderly DBOS.destroy() would only slow each run.
    signal.pause()


def model_server() -> None:
    """The loopback model in a process of its own, so that its CPU is not the driver's."""
    with LoopbackServer(scale_model) as server:
        print(server.url, flush=True)
        signal.pause()  # until SIGTERM ends the process


def scale(
    conversations: int,
    runs: tuple[tuple[int, bool], ...] = ((1, False), (2, False), (4, True)),
    postgres: TemporaryPostgres | None = None,
    *,
    sweep: tuple[int, ...] = (),
    concurrency: int = PER_WORKER,
    hand: bool = False,
    idle: float = 0.0,
    sweep_cap: int = 512,
    repeats: int = 1,
) -> dict[str, Any]:
    """The queued conversations over each run's workers (and whether one is killed), on
    ``postgres`` (a temporary server of its own by default).

    With ``sweep``, first one worker at each of those concurrencies (until a doubling
    gains less than 5%; ``8 * concurrency`` turns each, at least 32, at most
    ``sweep_cap``), and the runs at the one where adding slots stopped helping;
    else at ``concurrency``. With ``hand``, each run also for a hand-made DBOS worker
    (the same steps, the same SDK calls), and the ratios of CPU per turn to it. With
    ``idle``, each run first measures what its processes use in that many seconds
    without work. With ``repeats``, each run (and sweep point) that many times, ours
    alternating with the hand-made one's, the medians reported."""
    report: dict[str, Any] = {"conversations": conversations, "cpus": os.cpu_count()}
    with contextlib.ExitStack() as stack:
        server, server_url = _start_model_server()
        stack.callback(_stop, server)
        pg = postgres or stack.enter_context(TemporaryPostgres())
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        bench = _Bench(pg, server, server_url, tmp)
        if sweep:
            report["sweep"] = bench.sweep(sweep, sweep_cap, repeats)
            concurrency = report["sweep"]["chosen"]
        report["per_worker"] = concurrency
        report["repeats"] = repeats
        for workers, kill in runs:
            key = f"{workers} workers"
            ours: list[dict[str, Any]] = []
            floors: dict[str, list[dict[str, Any]]] = {kind: [] for kind in _FLOORS}
            for _ in range(repeats):
                if hand:  # alternating, so that the machine's drifting load falls on all
                    for kind, rows in floors.items():
                        rows.append(
                            bench.run(kind, workers, concurrency, conversations, False, idle)
                        )
                ours.append(bench.run("ours", workers, concurrency, conversations, kill, idle))
            report[key] = _median_run(ours)
            if hand:
                for kind, rows in floors.items():
                    label = _FLOORS[kind]
                    report.setdefault(label, {})[key] = _median_run(rows)
                    ratios = _ratios(report[key], report[label][key])
                    pairs = [_ratios(a, b)["total"] or 0.0 for a, b in zip(ours, rows, strict=True)]
                    ratios["total_range"] = [min(pairs), max(pairs)]
                    report.setdefault(f"ratio_to_{label}", {})[key] = ratios
    one = report.get("1 workers")
    for workers in (2, 4):
        other = report.get(f"{workers} workers")
        if one is not None and other is not None:
            report[f"throughput_{workers}_over_1"] = round(
                other["turns_per_s"] / one["turns_per_s"], 2
            )
    if "throughput_4_over_1" in report:
        report["throughput_ratio"] = report["throughput_4_over_1"]
    return report


class _Bench:
    """Runs of queued conversations against one model server and one PostgreSQL server."""

    def __init__(
        self, pg: TemporaryPostgres, server: subprocess.Popen[str], server_url: str, tmp: str
    ) -> None:
        assert pg.directory is not None, "start() the server first"
        self.pg = pg
        self.postmaster = int((pg.directory / "data" / "postmaster.pid").read_text().split()[0])
        self.server = server
        self.server_url = server_url
        self.tmp = Path(tmp)
        self.runs = 0
        self.driver = _scale_driver(server_url)

    def sweep(self, slots: tuple[int, ...], cap: int, repeats: int) -> dict[str, Any]:
        points: dict[str, Any] = {}
        best = slots[0]
        for n in slots:
            size = min(cap, max(32, 8 * n))
            row = _median_run([self.run("ours", 1, n, size, False) for _ in range(repeats)])
            points[str(n)] = row
            if n == slots[0]:
                continue
            gain = row["turns_per_s"] / points[str(best)]["turns_per_s"]
            if gain < GAIN:
                break
            best = n
        return {"points": points, "chosen": best}

    def run(
        self, kind: str, workers: int, slots: int, conversations: int, kill: bool, idle: float = 0
    ) -> dict[str, Any]:
        from dbos import DBOS

        from chatlas_like.durable import recover_executor

        self.runs += 1
        url = self.pg.create_database().replace("postgresql://", "postgresql+psycopg://", 1)
        log = self.tmp / f"side-effects-{self.runs}.log"
        log.touch()
        # Workers first: they create the schema before the driver enqueues.
        processes = [
            _start_worker(kind, url, f"w{i}", self.server_url, str(log), slots)
            for i in range(workers)
        ]
        _dbos(url, "driver")
        DBOS.listen_queues([])  # the driver only enqueues
        DBOS.launch()
        try:
            enqueue = self._enqueuer(kind, slots)
            # Warm-up, not measured: the workers find the queue (they look once a
            # second), open their connections, make their first requests.
            warm = min(32, workers * slots)
            for wait in [enqueue(10**6 + i) for i in range(warm)]:
                wait()
            idle_use: dict[str, float] = {}
            if idle:
                meter = _Meter(processes, self.postmaster, self.server.pid)
                time.sleep(idle)
                idle_use = {k: round(v * 1000 / idle, 1) for k, v in meter.used().items()}
            cpu = _Meter(processes, self.postmaster, self.server.pid)
            start = time.perf_counter()
            # From several threads, as requests come to a service: the driver must not
            # be what limits the workers.
            with ThreadPoolExecutor(ENQUEUERS) as pool:
                waits = list(pool.map(enqueue, range(conversations)))
            enqueued = time.perf_counter() - start
            resumed: list[str] = []
            if kill:
                _wait_for(lambda: _tools_done(log, conversations) >= conversations // 2)
                victim = processes[1]
                cpu.last_look(victim.pid)
                victim.send_signal(signal.SIGKILL)
                victim.wait()
                resumed = recover_executor("w1")
            answers = [wait() for wait in waits]
            elapsed = time.perf_counter() - start
            used = cpu.used()
        finally:
            DBOS.destroy()
            for process in processes:
                _stop(process)
            self._drop(url)
        starts = Counter(
            int(card)
            for _, event, card in (line.split() for line in log.read_text().splitlines())
            if event == "start" and int(card) < conversations
        )
        return _run_report(
            conversations,
            elapsed,
            used,
            answered=sum(a == f"Card {i} is charged." for i, a in enumerate(answers)),
            # One call per conversation: a call a dead worker had started is answered as
            # interrupted, never run again, so starts == conversations when none ran twice.
            charge_starts=sum(starts.values()),
            started_twice=sum(n > 1 for n in starts.values()),
            worker_killed="w1" if kill else None,
            turns_resumed=len(resumed),
            enqueue_s=round(enqueued, 2),
            # What the processes use without work, ms of CPU per second (polling).
            idle_cpu_ms_per_s=idle_use or None,
        )

    def _drop(self, url: str) -> None:
        """Drop a run's database and write out the server's dirty pages, so that the
        next run does not pay for this one's vacuum and checkpoint."""
        import psycopg
        from psycopg import sql

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.pg.url(), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
            conn.execute("CHECKPOINT")

    def _enqueuer(self, kind: str, slots: int) -> Callable[[int], Callable[[], str]]:
        """A function queueing the conversation about one card; it returns the wait for
        its answer."""
        if kind == "ours":
            driver = self.driver
            driver.max_concurrency = slots  # the queue's limit is the enqueuer's

            def ours(card: int) -> Callable[[], str]:
                cid = f"s{card}"
                return driver.enqueue(f"Charge card {card}", conversation_id=cid).result

            return ours
        from dbos import DBOS

        start: Start = "write" if kind == "hand+start" else ""
        queue = DBOS.register_queue(
            _HAND_QUEUE, worker_concurrency=slots, polling_interval_sec=POLL
        )
        workflow = _queued_hand_workflow()
        server_url = self.server_url

        def hand(card: int) -> Callable[[], str]:
            handle = queue.enqueue(workflow, server_url, f"Charge card {card}", start)
            return lambda: handle.get_result(polling_interval_sec=POLL)

        return hand


def _scale_driver(server_url: str) -> Any:
    """The driver's DurableChat "scale" (one per process: its name is its workflows')."""
    if not _DRIVER:
        from chatlas_like.durable import DurableChat

        _DRIVER.append(
            DurableChat(
                _chat(server_url, _quick_charge),
                name="scale",
                max_concurrency=PER_WORKER,
                poll_interval=POLL,
            )
        )
    _queued_hand_workflow()  # registered before launch, as every workflow must be
    return _DRIVER[0]


class _Meter:
    """CPU seconds used since it was made: by the workers, this process (the driver),
    the PostgreSQL server (the postmaster and all its children, those that exited
    included) and the model server (reported, not counted: it stands for the provider)."""

    def __init__(self, workers: list[subprocess.Popen[str]], postmaster: int, server: int) -> None:
        self.workers = [p.pid for p in workers]
        self.postmaster = postmaster
        self.server = server
        self.final: dict[int, float] = {}
        self.start = self._now()

    def last_look(self, pid: int) -> None:
        """Read a worker's CPU now, before it is killed."""
        self.final[pid] = _process_cpu(pid)

    def used(self) -> dict[str, float]:
        now = self._now()
        return {part: now[part] - self.start[part] for part in now}

    def _now(self) -> dict[str, float]:
        return {
            "workers": sum(
                self.final[pid] if pid in self.final else _process_cpu(pid) for pid in self.workers
            ),
            "driver": time.process_time(),
            "database": _server_cpu(self.postmaster),
            "model_server": _process_cpu(self.server),
        }


def _stat(pid: int) -> list[str]:
    """The fields of /proc/PID/stat from the state on (field 3 is index 0)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def _process_cpu(pid: int) -> float:
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime + stime


def _server_cpu(postmaster: int) -> float:
    """The CPU of a PostgreSQL server: the postmaster's own and its reaped children's
    (utime, stime, cutime, cstime), plus its live children's."""
    ticks = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and entry.name != str(postmaster):
            try:
                fields = _stat(int(entry.name))
            except (FileNotFoundError, ProcessLookupError):
                continue
            if int(fields[1]) == postmaster:
                ticks += int(fields[11]) + int(fields[12])
    fields = _stat(postmaster)
    return (ticks + sum(int(v) for v in fields[11:15])) / _TICK


def _run_report(
    conversations: int, elapsed: float, used: dict[str, float], **checks: Any
) -> dict[str, Any]:
    counted = used["workers"] + used["driver"] + used["database"]
    cpus = os.cpu_count() or 1
    per_turn = {part: round(seconds * 1000 / conversations, 1) for part, seconds in used.items()}
    per_turn["total"] = round(counted * 1000 / conversations, 1)
    return {
        "conversations": conversations,
        "seconds": round(elapsed, 2),
        "turns_per_s": round(conversations / elapsed, 2),
        "turns_per_s_per_core": round(conversations / elapsed / cpus, 2),
        # Machine-independent: turns per CPU-second of workers, driver and database.
        "turns_per_cpu_s": round(conversations / counted, 2),
        "cpu_ms_per_turn": per_turn,
        # The share of the machine's cores busy with the run (the model server included).
        "cores_busy": round((counted + used["model_server"]) / elapsed / cpus, 2),
        **checks,
    }


_FIGURES = (
    "seconds",
    "turns_per_s",
    "turns_per_s_per_core",
    "turns_per_cpu_s",
    "cores_busy",
    "enqueue_s",
)


def _median_run(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Repeats of one run as one: the median of each figure, the worst of each check."""
    if len(rows) == 1:
        return rows[0]
    first = rows[0]

    def median(values: list[float]) -> float:
        return round(statistics.median(values), 2)

    def parts(key: str) -> dict[str, float] | None:
        if first.get(key) is None:
            return None
        return {part: median([row[key][part] for row in rows]) for part in first[key]}

    return {
        **first,
        **{key: median([row[key] for row in rows]) for key in _FIGURES},
        "cpu_ms_per_turn": parts("cpu_ms_per_turn"),
        "idle_cpu_ms_per_s": parts("idle_cpu_ms_per_s"),
        "answered": min(row["answered"] for row in rows),
        "charge_starts": max(row["charge_starts"] for row in rows),
        "started_twice": max(row["started_twice"] for row in rows),
        "turns_resumed": [row["turns_resumed"] for row in rows],
        "repeats": rows,
    }


def _ratios(ours: dict[str, Any], hand: dict[str, Any]) -> dict[str, Any]:
    a, b = ours["cpu_ms_per_turn"], hand["cpu_ms_per_turn"]
    return {part: round(a[part] / b[part], 2) if b[part] else None for part in _PARTS}


_PARTS = ("workers", "driver", "database", "total")
# The hand-made workers: DBOS's steps alone, and with the call's start recorded as ours
# records it (written to the stream from inside the tool's step).
_FLOORS = {"hand": "by_hand", "hand+start": "by_hand_start"}


def _start_model_server() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.bench_durable", "model-server"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        _stop(process)
        raise RuntimeError("the model server did not start")
    return process, url


def _start_worker(
    kind: str, url: str, executor_id: str, server_url: str, log: str, slots: int
) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchmarks.bench_durable",
            "worker",
            kind,
            url,
            executor_id,
            server_url,
            log,
            str(slots),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    if process.stdout.readline().strip() != "ready":
        _stop(process)
        raise RuntimeError(f"worker {executor_id} did not start")
    return process


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    end_process(process, 60)


def _tools_done(log: Path, conversations: int) -> int:
    """How many of the measured conversations' tool calls have finished."""
    return sum(
        1
        for line in log.read_text().splitlines()
        if line.split()[1] == "done" and int(line.split()[2]) < conversations
    )


def _wait_for(condition: Callable[[], bool]) -> None:
    while not condition():
        time.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["worker"]:
        worker(*argv[1:7])
        return 0
    if argv[:1] == ["model-server"]:
        model_server()
        return 0
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", choices=("overhead", "scale"))
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    sweep, runs = SWEEP, ((1, False), (2, False), (4, True))
    if args.quick:
        args.rounds, args.conversations = 5, 16
        sweep, runs = SWEEP[:2], ((1, False), (4, True))
    sweep_cap, repeats = (16, 1) if args.quick else (512, 3)
    report: dict[str, Any] = {
        "meta": {"python": platform.python_version(), "cpus": os.cpu_count(), **vars(args)}
    }
    if args.only in (None, "overhead"):
        report["overhead"] = overhead(args.rounds)
        _print_overhead(report["overhead"], args.rounds)
    if args.only in (None, "scale"):
        idle = 1.0 if args.quick else 3.0
        report["scale"] = scale(
            args.conversations,
            runs,
            sweep=sweep,
            hand=True,
            idle=idle,
            sweep_cap=sweep_cap,
            repeats=repeats,
        )
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
            print(f"    {side:<30} {ms[side]:6.1f} ms, cpu {cpu[side]:5.1f} ms{versus}{sql}")


def _cpu_line(row: dict[str, Any]) -> str:
    ms = row["cpu_ms_per_turn"]
    return (
        f"{row['turns_per_s']:5.1f} turns/s ({row['turns_per_s_per_core']:.1f} per core), "
        f"{row['turns_per_cpu_s']:5.1f} turns per cpu-second; cpu ms per turn: "
        f"workers {ms['workers']:.1f}, driver {ms['driver']:.1f}, "
        f"database {ms['database']:.1f}, total {ms['total']:.1f} "
        f"(model server {ms['model_server']:.1f}, not counted); "
        f"cores busy {row['cores_busy']:.0%}"
    )


def _print_scale(report: dict[str, Any]) -> None:
    print(
        f"queued conversations on PostgreSQL, one tool round each (the tool sleeps "
        f"{TOOL_SECONDS} s), queue polled every {POLL} s, {report['cpus']} cpus"
    )
    if "sweep" in report:
        points, chosen = report["sweep"]["points"], report["sweep"]["chosen"]
        repeats = report.get("repeats", 1)
        print(
            "  one worker, turns at once"
            + (f" (medians of {repeats} runs each)" if repeats > 1 else "")
            + ":"
        )
        for slots, row in points.items():
            print(
                f"    {slots:>3} at once, {row['conversations']:>3} turns (queued in "
                f"{row['enqueue_s']} s of {row['seconds']} s): {_cpu_line(row)}"
            )
        tried = list(points)
        after = tried[tried.index(str(chosen)) + 1] if str(chosen) != tried[-1] else None
        if after is not None:
            gain = points[after]["turns_per_s"] / points[str(chosen)]["turns_per_s"] - 1
            print(
                f"    adding slots stops helping at {chosen} at once "
                f"({after} at once: {gain:+.0%} turns/s)"
            )
        else:
            print(f"    still rising at {chosen} at once, the last tried")
    repeats = report.get("repeats", 1)
    print(
        f"  {report['conversations']} conversations, {report['per_worker']} at once per worker"
        + (f"; medians of {repeats} runs each, the floors and ours in turn" if repeats > 1 else "")
        + ":"
    )
    for key in ("1 workers", "2 workers", "4 workers"):
        if key not in report:
            continue
        row = report[key]
        print(f"    {key[0]} worker(s), {'ours:':<25} {_cpu_line(row)}")
        hand = report.get("by_hand", {}).get(key)
        for label, name in (("by_hand", "by hand"), ("by_hand_start", "by hand + start written")):
            floor = report.get(label, {}).get(key)
            if floor is None:
                continue
            print(f"    {key[0]} worker(s), {name + ':':<25} {_cpu_line(floor)}")
            ratio = report[f"ratio_to_{label}"][key]
            print(
                f"      cpu per turn, ours / {name} (target <= 1.3x): "
                + ", ".join(f"{part} {ratio[part]}x" for part in _PARTS)
                + (
                    f" (total, run by run: {ratio['total_range'][0]}x to "
                    f"{ratio['total_range'][1]}x)"
                    if len(row.get("repeats", ())) > 1
                    else ""
                )
            )
        print(
            f"      {'worst run: ' if repeats > 1 else ''}"
            f"answered {row['answered']}/{row['conversations']}, charge started "
            f"{row['charge_starts']} times ({row['started_twice']} twice), killed "
            f"{row['worker_killed']}, resumed {row['turns_resumed']}; all queued in "
            f"{row['enqueue_s']} s of {row['seconds']} s"
            + (f" (by hand: {hand['enqueue_s']} s of {hand['seconds']} s)" if hand else "")
        )
        for name, side in (("ours", row), ("by hand", hand)):
            use = side.get("idle_cpu_ms_per_s") if side else None
            if use:
                print(
                    f"      idle, {name}: cpu ms per second: workers {use['workers']:.0f}, "
                    f"driver {use['driver']:.0f}, database {use['database']:.0f}"
                )
    for workers in (2, 4):
        if f"throughput_{workers}_over_1" in report:
            print(
                f"  throughput {workers} workers / 1 worker: "
                f"{report[f'throughput_{workers}_over_1']}x"
            )


if __name__ == "__main__":
    raise SystemExit(main())
