"""The tool-result store against a real SQLite file and a real PostgreSQL server."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from chatlas_like import (
    ContentToolResult,
    SqliteStore,
    StoreError,
    StoreWarning,
    ToolResultRecord,
    ToolResultStore,
    open_store,
)
from chatlas_like._store import PostgresStore
from chatlas_like.testing import Reply

from ..conftest import make_chat

pytest_plugins = ["tests.support.postgres"]

CAMEL_NAMES = [
    "interactionProcessId",
    "sequence",
    "toolCallId",
    "result",
    "storedLength",
    "originalLength",
    "isTruncated",
    "isError",
    "tenantId",
    "id",
    "dateCreated",
    "dateUpdated",
]
RFC3339_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ToolResultStore]:
    """A fresh store of each backend."""
    if request.param == "sqlite":
        opened: ToolResultStore = SqliteStore(tmp_path / "results.db")
    else:
        opened = PostgresStore(request.getfixturevalue("postgres_url"))
    yield opened
    opened.close()


def a_record(**changes: Any) -> ToolResultRecord:
    base = ToolResultRecord(
        interaction_process_id=str(uuid.uuid4()),
        sequence=1,
        tool_call_id="toolu_01",
        result="héllo ☃",
        stored_length=10,
        original_length=10,
        is_truncated=False,
        is_error=False,
        tenant_id="acme",
    )
    return replace(base, **changes)


def test_a_record_round_trips_every_field(store: ToolResultStore) -> None:
    record = a_record(
        sequence=7,
        result="x" * 5 + "ü",
        stored_length=7,
        original_length=9_000_000_000,
        is_truncated=True,
        is_error=True,
    )
    written = store.write(record)
    got = store.get("acme", record.interaction_process_id, 7)
    assert got == written
    assert got is not None and got.id is not None and got.date_created is not None
    assert replace(got, id=None, date_created=None, date_updated=None) == record


def test_a_record_with_empty_fields_round_trips_as_nulls(store: ToolResultStore) -> None:
    record = ToolResultRecord(interaction_process_id=str(uuid.uuid4()), sequence=1)
    store.write(record)
    got = store.get(None, record.interaction_process_id, 1)
    assert got is not None
    data = got.to_json()
    assert data["toolCallId"] is None and data["result"] is None and data["tenantId"] is None
    assert data["storedLength"] is None and data["originalLength"] is None


def test_json_names_are_camel_case_with_every_field_present() -> None:
    data = a_record(tool_call_id=None, result=None).to_json()
    assert list(data) == CAMEL_NAMES
    assert data["toolCallId"] is None and data["id"] is None and data["dateCreated"] is None


def test_json_round_trips_a_stored_record(store: ToolResultStore) -> None:
    written = store.write(a_record())
    assert ToolResultRecord.from_json(written.to_json()) == written


def test_dates_are_rfc3339_utc_with_milliseconds_and_z(store: ToolResultStore) -> None:
    data = store.write(a_record()).to_json()
    assert RFC3339_MS.match(data["dateCreated"]) and RFC3339_MS.match(data["dateUpdated"])
    assert re.match(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$", data["id"])


def test_a_rewrite_keeps_id_and_creation_and_moves_date_updated_on(
    store: ToolResultStore,
) -> None:
    first = store.write(a_record(result="first"))
    second = store.write(a_record(interaction_process_id=first.interaction_process_id, result="2"))
    assert second.id == first.id and second.date_created == first.date_created
    assert first.date_updated is not None and second.date_updated is not None
    assert second.date_updated > first.date_updated
    got = store.get("acme", first.interaction_process_id, 1)
    assert got is not None and got.result == "2" and got.date_updated == second.date_updated


def test_a_run_lists_in_sequence_order_for_its_tenant_only(store: ToolResultStore) -> None:
    run = str(uuid.uuid4())
    store.write_many(
        [a_record(interaction_process_id=run, sequence=n, result=str(n)) for n in (3, 1, 2)]
    )
    store.write(a_record(interaction_process_id=run, sequence=4, tenant_id="other"))
    assert [r.sequence for r in store.list("acme", run)] == [1, 2, 3]
    assert [r.sequence for r in store.list("other", run)] == [4]
    assert store.get("other", run, 1) is None


def test_a_record_without_a_tenant_is_apart_from_every_tenant(store: ToolResultStore) -> None:
    run = str(uuid.uuid4())
    store.write(a_record(interaction_process_id=run, tenant_id=None, result="none"))
    store.write(a_record(interaction_process_id=run, tenant_id="acme", result="acme"))
    none = store.get(None, run, 1)
    assert none is not None and none.result == "none" and none.tenant_id is None
    assert [r.result for r in store.list("acme", run)] == ["acme"]


def test_a_byte_range_is_counted_in_utf8_bytes(store: ToolResultStore) -> None:
    record = store.write(a_record(result="aé☃😀z", stored_length=11))
    found = store.get_range("acme", record.interaction_process_id, 1, 1, 9)
    assert found is not None
    assert found.data == "é☃😀".encode() and found.stored_length == 11


def test_an_unknown_record_reads_as_none(store: ToolResultStore) -> None:
    assert store.get("acme", str(uuid.uuid4()), 1) is None
    assert store.get("acme", "not-a-uuid", 1) is None
    assert store.list("acme", str(uuid.uuid4())) == []
    assert store.get_range("acme", str(uuid.uuid4()), 1, 0, 10) is None


def test_the_sqlite_schema_records_its_version(tmp_path: Path) -> None:
    import sqlite3

    store = SqliteStore(tmp_path / "r.db")
    store.write(a_record())
    store.close()
    with sqlite3.connect(tmp_path / "r.db") as conn:
        assert conn.execute("SELECT version FROM tool_results_schema").fetchall() == [(1,)]
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_sqlite_store_with_a_newer_schema_is_refused(tmp_path: Path) -> None:
    SqliteStore(tmp_path / "r.db").write(a_record())
    import sqlite3

    with sqlite3.connect(tmp_path / "r.db") as conn:
        conn.execute("UPDATE tool_results_schema SET version = 9")
    conn.close()
    with pytest.raises(StoreError, match=r"schema version 9.*upgrade"):
        SqliteStore(tmp_path / "r.db").get("acme", str(uuid.uuid4()), 1)


@pytest.mark.postgres
def test_a_postgres_store_with_a_newer_schema_is_refused(postgres_url: str) -> None:
    import psycopg

    PostgresStore(postgres_url).write(a_record())
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("UPDATE tool_results_schema SET version = 9")
    with pytest.raises(StoreError, match=r"schema version 9.*upgrade"):
        PostgresStore(postgres_url).get("acme", str(uuid.uuid4()), 1)


def test_open_store_reads_urls_and_paths(tmp_path: Path) -> None:
    assert isinstance(open_store(f"sqlite:///{tmp_path}/a.db"), SqliteStore)
    assert isinstance(open_store(tmp_path / "b.db"), SqliteStore)
    assert isinstance(open_store("postgresql://u@127.0.0.1:1/db"), PostgresStore)
    with pytest.raises(ValueError, match="mysql"):
        open_store("mysql://x")


# -- two processes --------------------------------------------------------------------------

WRITER = """
import sys, uuid
from chatlas_like import SqliteStore, ToolResultRecord
store = SqliteStore(sys.argv[1])
run = sys.argv[2]
print("ready", flush=True)
sys.stdin.readline()  # both start together
for n in range(1, 201):
    store.write(ToolResultRecord(run, n, f"call_{n}", f"{run}:{n}", tenant_id="acme"))
print("done", flush=True)
"""


def test_two_processes_writing_200_results_each_to_one_sqlite_file_lose_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shared.db"
    runs = [str(uuid.uuid4()), str(uuid.uuid4())]
    children = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), run],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for run in runs
    ]
    for child in children:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    for child in children:
        out, _ = child.communicate(timeout=120)
        assert child.returncode == 0 and out.strip() == "done"
    store = SqliteStore(path)
    for run in runs:
        records = store.list("acme", run)
        assert [r.sequence for r in records] == list(range(1, 201))
        assert all(r.result == f"{run}:{r.sequence}" for r in records)
    store.close()


# -- a chat attached to a store -------------------------------------------------------------


def lookup(city: str) -> str:
    """Looks a city up."""
    if city == "nowhere":
        raise LookupError("no such city")
    return f"{city}: sunny"


def big() -> str:
    """Returns a long text."""
    return "é" * 30_000 + "☃" * 10_000


def test_a_chat_writes_every_result_in_call_order_errors_included(
    serve: Callable[..., Any], store: ToolResultStore
) -> None:
    server = serve(
        [
            Reply.tool_calls([("lookup", {"city": "Oslo"}), ("lookup", {"city": "nowhere"})]),
            Reply.tool_calls([("lookup", {}), ("missing_tool", {})]),
            Reply.text("Done."),
        ]
    )
    chat = make_chat(server, store=store, tenant_id="acme")
    chat.register_tool(lookup)
    chat.chat("Weather?", echo="none")
    records = store.list("acme", chat.run_id)
    assert [(r.sequence, r.tool_call_id, r.is_error) for r in records] == [
        (1, "toolu_0001", False),
        (2, "toolu_0002", True),
        (3, "toolu_0003", True),
        (4, "toolu_0004", True),
    ]
    results = [c for t in chat.get_turns() for c in t.contents if isinstance(c, ContentToolResult)]
    assert [r.result for r in records] == [r.get_model_value() for r in results]


def test_a_result_past_store_max_bytes_is_cut_on_a_character_boundary(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    server = serve([Reply.tool_call("big", {}), Reply.text("ok")])
    store = SqliteStore(tmp_path / "r.db")
    chat = make_chat(server, store=store, store_max_bytes=1001)
    chat.register_tool(big)
    chat.chat("go", echo="none")
    record = store.get(None, chat.run_id, 1)
    assert record is not None and record.result is not None
    assert record.result == "é" * 500  # 1,000 bytes: the 1,001st would split an é
    assert (record.stored_length, record.original_length, record.is_truncated) == (
        1000,
        90_000,
        True,
    )


def test_a_store_that_fails_warns_and_the_chat_carries_on(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    server = serve([Reply.tool_call("lookup", {"city": "Oslo"}), Reply.text("Sunny.")])
    chat = make_chat(server, store=SqliteStore(tmp_path / "no" / "such" / "dir.db"))
    chat.register_tool(lookup)
    with pytest.warns(StoreWarning, match="not stored: StoreError"):
        assert str(chat.chat("Weather?", echo="none")) == "Sunny."


# -- paging ---------------------------------------------------------------------------------


def test_paging_is_off_by_default(serve: Callable[..., Any], tmp_path: Path) -> None:
    server = serve([Reply.tool_call("big", {}), Reply.text("ok")])
    chat = make_chat(server, store=tmp_path / "r.db", max_result_bytes=2000)
    chat.register_tool(big)
    chat.chat("go", echo="none")
    second = server.message_requests()[1]
    assert [t["name"] for t in second["tools"]] == ["big"]
    notice = second["messages"][-1]["content"][0]["content"].rsplit("\n", 1)[1]
    assert re.fullmatch(
        r"\[truncated: showing the first 1,\d{3} of 90,000 bytes of this tool result\]", notice
    )


def page_through(body: Any) -> Reply:
    """A model that follows the paging hints until the end, then answers."""
    last = body["messages"][-1]["content"][0]
    text = last.get("content", "") if last.get("type") == "tool_result" else ""
    hint = re.search(r"read_tool_result\(sequence=(\d+), offset=(\d+)\)", text)
    if last.get("type") != "tool_result":
        return Reply.tool_call("big", {})
    if hint is None:
        return Reply.text("read it all")
    return Reply.tool_call("read_tool_result", {"sequence": int(hint[1]), "offset": int(hint[2])})


def test_paging_lets_the_model_read_the_whole_stored_result(
    serve: Callable[..., Any], store: ToolResultStore
) -> None:
    server = serve(page_through)
    chat = make_chat(server, store=store, tenant_id="acme", paging=True, max_result_bytes=20_000)
    chat.register_tool(big)
    assert str(chat.chat("go", echo="none")) == "read it all"
    results = [c for t in chat.get_turns() for c in t.contents if isinstance(c, ContentToolResult)]
    first = results[0].get_model_value()
    kept, notice = first.rsplit("\n", 1)
    assert "call read_tool_result(sequence=1, offset=" in notice
    pages = [r.get_model_value().split("\n", 1) for r in results[1:]]
    assert all(len(r.get_model_value().encode()) <= 20_000 for r in results)
    assert kept + "".join(text for _, text in pages) == big()
    assert pages[-1][0].endswith("; this is the end]")


def test_paging_starts_a_page_on_a_whole_character(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    server = serve(
        [
            Reply.tool_call("big", {}),
            Reply.tool_call("read_tool_result", {"sequence": 1, "offset": 1}),
            Reply.text("ok"),
        ]
    )
    chat = make_chat(server, store=tmp_path / "r.db", paging=True, max_result_bytes=1000)
    chat.register_tool(big)
    chat.chat("go", echo="none")
    page = server.message_requests()[2]["messages"][-1]["content"][0]["content"]
    header, text = page.split("\n", 1)
    assert header.startswith("[bytes 2-") and text.startswith("é")


def test_paging_an_unknown_sequence_is_an_error_result(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    server = serve([Reply.tool_call("read_tool_result", {"sequence": 42}), Reply.text("sorry")])
    chat = make_chat(server, store=tmp_path / "r.db", paging=True)
    chat.chat("go", echo="none")
    block = server.message_requests()[1]["messages"][-1]["content"][0]
    assert (
        block["is_error"] is True and "no stored tool result with sequence 42" in block["content"]
    )


class WaitsForTheCallersLoop(SqliteStore):
    """A store whose write finishes only if the caller's event loop runs during it."""

    def __init__(self, path: Path) -> None:
        import threading

        super().__init__(path)
        self.writing = threading.Event()
        self.ticked = threading.Event()
        self.waited: list[bool] = []

    def write_many(self, records: Any) -> None:
        self.writing.set()
        self.waited.append(self.ticked.wait(5))  # blocked forever if it ran on that loop
        super().write_many(records)


async def test_store_writes_never_block_the_callers_event_loop(serve: Any, tmp_path: Path) -> None:
    import asyncio

    store = WaitsForTheCallersLoop(tmp_path / "r.db")
    server = serve([Reply.tool_call("lookup", {"city": "Oslo"}), Reply.text("ok")])
    chat = make_chat(server, store=store, tenant_id="acme")
    chat.register_tool(lookup)

    async def tick_during_the_write() -> None:
        while not store.writing.is_set():
            await asyncio.sleep(0.005)
        store.ticked.set()

    ticker = asyncio.create_task(tick_during_the_write())
    await chat.chat_async("Weather?", echo="none")
    await ticker
    assert store.waited == [True]
    assert [r.result for r in store.list("acme", chat.run_id)] == ["Oslo: sunny"]
