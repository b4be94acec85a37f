"""DurableChat in one process: the verbs, the queue, readers, the store, and bad input.

Each test launches DBOS on a SQLite file of its own (the crash battery, with real
processes, is ``test_durable_crash.py``). DBOS keeps its registry of workflows for the
whole process, so every test names its durable chats afresh.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from chatlas_like import (
    BadRequestError,
    Chat,
    ContentToolRequest,
    ContentToolResult,
    ContentToolResultProgress,
    EchoSink,
    Tool,
)
from chatlas_like.testing import LoopbackServer, Reply
from tests.conftest import make_chat

pytest.importorskip("dbos")

from chatlas_like.durable import DurableChat, DurableError, parallel_chat, safe_to_rerun
from chatlas_like.durable._driver import stream_entry, unread

pytest_plugins = ["tests.support.postgres"]

ANSWER = "Card 42 is valid."


def lookup(card: int) -> str:
    """Look a card up.

    Parameters
    ----------
    card
        The card number.
    """
    return f"card {card} is valid"


def model(body: dict[str, Any]) -> Reply:
    """A tool call, then the answer; ``fail`` gets an error, ``hi`` a greeting."""
    last = body["messages"][-1]["content"]
    if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
        return Reply.text(ANSWER)
    text = last if isinstance(last, str) else "".join(b.get("text", "") for b in last)
    if text == "fail":
        return Reply.error(400, "invalid_request_error", "scripted refusal")
    if text == "hi":
        return Reply.text("Hello there.")
    return Reply.tool_call("lookup", {"card": 42})


def unique(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def launch(tmp_path: Path) -> Iterator[Callable[..., None]]:
    """``launch()`` starts DBOS on this test's SQLite file; it is destroyed at teardown."""
    from dbos import DBOS

    def start(**config: Any) -> None:
        # DBOS's console handler keeps the stderr it first saw, which may be an
        # earlier test's captured stream, closed since.
        for handler in logging.getLogger("dbos").handlers:
            if type(handler) is logging.StreamHandler:
                handler.stream = sys.stderr  # setStream would flush the closed one
        DBOS(
            config={
                "name": "durable-tests",
                "system_database_url": f"sqlite:///{tmp_path / 'dbos.sqlite'}",
                "log_level": "WARNING",
                "notification_listener_polling_interval_sec": 0.01,
                **config,
            }
        )
        DBOS.launch()

    yield start
    DBOS.destroy()


@pytest.fixture
def server(serve: Callable[..., LoopbackServer]) -> LoopbackServer:
    return serve(model)


def durable_chat(
    server: LoopbackServer, publish_after: float = 0.1, publish: bool = True, **kwargs: Any
) -> DurableChat:
    chat = make_chat(server, **kwargs)
    chat.register_tool(lookup, annotations={"readOnlyHint": True})
    return DurableChat(
        chat, name=unique(), poll_interval=0.05, publish=publish, publish_after=publish_after
    )


def slow_tool_chat(
    server: LoopbackServer, release: threading.Event, *, poll_interval: float
) -> DurableChat:
    """A durable chat whose ``lookup`` tool waits for ``release``."""

    def slow_lookup(card: int) -> str:
        """Look a card up, slowly."""
        release.wait(10)
        return f"card {card} is valid"

    chat = make_chat(server)
    chat.register_tool(slow_lookup, name="lookup")
    return DurableChat(chat, name=unique(), poll_interval=poll_interval)


def recorded_steps(tmp_path: Path) -> list[str]:
    """The names of the steps the turns recorded, in order."""
    with sqlite3.connect(tmp_path / "dbos.sqlite") as db:
        rows = db.execute("SELECT function_name FROM operation_outputs ORDER BY function_id")
        return [name for (name,) in rows]


def stream_entries(tmp_path: Path) -> list[dict[str, Any]]:
    """The entries the turns wrote to their streams, in order."""
    with sqlite3.connect(tmp_path / "dbos.sqlite") as db:
        rows = db.execute('SELECT value FROM streams ORDER BY "offset"').fetchall()
    return [json.loads(value) for (value,) in rows]


def recorded_starts(tmp_path: Path) -> list[list[int]]:
    """The ``[round, call]`` of every start the turns wrote to their streams, in order."""
    return [entry["start"] for entry in stream_entries(tmp_path) if "start" in entry]


def started(target: Callable[[], Any]) -> threading.Thread:
    thread = threading.Thread(target=target)
    thread.start()
    return thread


def following(durable: DurableChat, conversation_id: str) -> tuple[list[Any], threading.Thread]:
    """What a reader in a thread of its own has followed so far, and that thread."""
    followed: list[Any] = []
    return followed, started(lambda: followed.extend(durable.follow(conversation_id)))


def wait_until(condition: Callable[[], Any], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)


def summary(turns: list[Any]) -> list[tuple[str, str, list[str]]]:
    return [(t.role, t.text, [str(r.get_model_value()) for r in t.tool_results]) for t in turns]


def test_a_durable_turn_makes_the_history_a_plain_chat_makes(
    server: LoopbackServer, launch: Callable[..., None]
) -> None:
    durable = durable_chat(server)
    launch()
    answer = durable.chat("Is card 42 valid?", conversation_id="c-1", echo="none")
    plain = make_chat(server)
    plain.register_tool(lookup)
    plain.chat("Is card 42 valid?", echo="none")
    assert str(answer) == ANSWER
    assert summary(durable.get_turns("c-1")) == summary(plain.get_turns())


def test_the_next_turn_continues_the_conversation_and_another_id_starts_afresh(
    server: LoopbackServer, launch: Callable[..., None]
) -> None:
    durable = durable_chat(server)
    launch()
    durable.chat("Is card 42 valid?", conversation_id="c-1", echo="none")
    durable.chat("hi", conversation_id="c-1", echo="none")
    assert len(server.message_requests()[-1]["messages"]) == 5  # the whole history was sent
    durable.chat("hi", conversation_id="c-2", echo="none")
    assert len(server.message_requests()[-1]["messages"]) == 1
    assert [t.role for t in durable.get_turns("c-1")] == ["user", "assistant"] * 3


@pytest.mark.parametrize("api", ["responses", "completions"])
def test_a_durable_conversation_runs_its_tools_and_goes_on_over_openais_apis(
    serve: Callable[..., LoopbackServer], launch: Callable[..., None], api: str
) -> None:
    from chatlas_like import ChatOpenAI, ChatOpenAICompletions

    server = serve(
        [Reply.tool_call("lookup", {"card": 42}), Reply.text(ANSWER), Reply.text("Hello there.")]
    )
    make = ChatOpenAI if api == "responses" else ChatOpenAICompletions
    chat = make(base_url=server.openai_url, api_key="test", model="gpt-4.1")
    chat.register_tool(lookup, annotations={"readOnlyHint": True})
    durable = DurableChat(chat, name=unique(), poll_interval=0.05)
    launch()
    assert str(durable.chat("Is card 42 valid?", conversation_id="c-1", echo="none")) == ANSWER
    assert str(durable.chat("hi", conversation_id="c-1", echo="none")) == "Hello there."
    turns = durable.get_turns("c-1")
    assert [t.role for t in turns] == ["user", "assistant"] * 3
    assert [r.outcome for t in turns for r in t.tool_results] == ["success"]
    assert [r.response_status for r in server.requests] == [200, 200, 200]  # the API's rules held


def test_stream_yields_the_text_and_with_content_all_the_tool_calls_too(
    server: LoopbackServer, launch: Callable[..., None]
) -> None:
    durable = durable_chat(server)
    launch()
    text = list(durable.stream("Is card 42 valid?", conversation_id="c-1"))
    everything = list(durable.stream("again?", conversation_id="c-2", content="all"))
    assert "".join(text) == ANSWER
    kinds = [type(item).__name__ for item in everything if not isinstance(item, str)]
    assert kinds == ["ContentToolRequest", "ContentToolResult"]


async def test_the_async_verbs_answer_as_the_sync_ones_do(
    server: LoopbackServer, launch: Callable[..., None]
) -> None:
    durable = durable_chat(server)
    launch()
    answer = await durable.chat_async("Is card 42 valid?", conversation_id="c-1", echo="none")
    chunks = [c async for c in await durable.stream_async("hi", conversation_id="c-1")]
    assert str(answer) == ANSWER
    assert "".join(chunks) == "Hello there."
    turns = await asyncio.to_thread(durable.get_turns, "c-1")
    assert [t.role for t in turns] == ["user", "assistant"] * 3


def test_a_queued_turn_is_answered_through_its_handle(
    server: LoopbackServer, launch: Callable[..., None]
) -> None:
    durable = durable_chat(server)
    launch()  # this process runs the queue too
    first = durable.enqueue("Is card 42 valid?", conversation_id="c-1")
    second = durable.enqueue("hi", conversation_id="c-1")  # waits for the first
    assert (first.index, second.index) == (0, 1)
    assert second.result() == "Hello there."
    assert first.result() == ANSWER
    assert first.status() == "SUCCESS"
    assert [t.text for t in durable.get_turns("c-1")][::2] == ["Is card 42 valid?", "", "hi"]


def test_a_turn_after_one_this_process_ran_reads_no_workflow_list(
    server: LoopbackServer, launch: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    durable = durable_chat(server)
    launch()
    durable.chat("hi", conversation_id="c-1", echo="none")
    reads = _counting_reads(monkeypatch)
    durable.chat("Is card 42 valid?", conversation_id="c-1", echo="none")
    assert reads == []
    assert [t.text for t in durable.get_turns("c-1")][::2] == ["hi", "Is card 42 valid?", ""]


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The calls of DBOS.list_workflows from here on."""
    from dbos import DBOS

    reads: list[Any] = []
    list_workflows = DBOS.list_workflows
    monkeypatch.setattr(
        DBOS, "list_workflows", lambda *a, **k: reads.append(k) or list_workflows(*a, **k)
    )
    return reads


def test_the_first_turn_of_a_new_conversation_reads_no_workflow_list(
    server: LoopbackServer, launch: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    durable = durable_chat(server)
    launch()
    reads = _counting_reads(monkeypatch)
    assert str(durable.chat("hi", conversation_id="c-new", echo="none")) == "Hello there."
    assert reads == []


def test_enqueueing_the_first_turn_of_a_new_conversation_reads_no_workflow_list(
    server: LoopbackServer, launch: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    durable = durable_chat(server)
    launch()
    reads = _counting_reads(monkeypatch)
    handle = durable.enqueue("hi", conversation_id="c-new")
    assert reads == []
    assert handle.result() == "Hello there."


def test_a_conversation_this_process_never_saw_goes_on_after_its_last_turn(
    server: LoopbackServer, launch: Callable[..., None]
) -> None:
    durable = durable_chat(server)
    launch()
    for _ in range(3):  # queued: no caller here keeps their history
        durable.enqueue("hi", conversation_id="c-1").result()
    durable.chat("Is card 42 valid?", conversation_id="c-1", echo="none")
    texts = [t.text for t in durable.get_turns("c-1")]
    assert texts[::2] == ["hi", "hi", "hi", "Is card 42 valid?", ""]


def test_a_turn_added_elsewhere_since_this_process_last_ran_one_is_not_overwritten(
    server: LoopbackServer, launch: Callable[..., None]
) -> None:
    durable = durable_chat(server)
    launch()
    durable.chat("hi", conversation_id="c-1", echo="none")
    # a queued turn has no caller here to keep its history: as if another process ran it
    queued = durable.enqueue("Is card 42 valid?", conversation_id="c-1")
    assert queued.result() == ANSWER
    assert str(durable.chat("hi", conversation_id="c-1", echo="none")) == "Hello there."
    texts = [t.text for t in durable.get_turns("c-1")]
    assert texts[::2] == ["hi", "Is card 42 valid?", "", "hi"]
    last_request = server.message_requests()[-1]
    assert len(last_request["messages"]) == len(texts) - 1  # it read the queued turn too


def test_a_conversation_is_read_by_its_turns_ids_never_by_a_prefix_scan(
    server: LoopbackServer, launch: Callable[..., None]
) -> None:
    import sqlalchemy as sa
    from sqlalchemy import event

    durable = durable_chat(server)
    launch()
    statements: list[str] = []

    def seen(conn: Any, cursor: Any, statement: str, *rest: Any) -> None:
        statements.append(statement)

    event.listen(sa.Engine, "before_cursor_execute", seen)
    try:
        durable.chat("hi", conversation_id="c-1", echo="none")
        durable.enqueue("hi", conversation_id="c-1").result()
        durable.get_turns("c-1")
    finally:
        event.remove(sa.Engine, "before_cursor_execute", seen)
    # LIKE reads every workflow of the application on PostgreSQL
    assert statements and not [s for s in statements if " LIKE " in s.upper()]


def test_a_conversation_longer_than_the_first_window_of_ids_goes_on_in_order(
    server: LoopbackServer, launch: Callable[..., None]
) -> None:
    durable = durable_chat(server)
    launch()
    # queued turns always find their number in the database
    handles = [durable.enqueue("hi", conversation_id="c-1") for _ in range(18)]
    assert [h.index for h in handles] == list(range(18))
    assert all(h.result() == "Hello there." for h in handles)
    assert len(durable.get_turns("c-1")) == 36


def test_parallel_chat_answers_each_prompt_on_a_conversation_of_its_own(
    server: LoopbackServer, launch: Callable[..., None]
) -> None:
    durable = durable_chat(server)
    launch()
    ids = ["p-0", "p-1", "p-2"]
    answers = parallel_chat(durable, ["hi", "Is card 42 valid?", "hi"], conversation_ids=ids)
    assert answers == ["Hello there.", ANSWER, "Hello there."]
    assert [len(durable.get_turns(i)) for i in ids] == [2, 4, 2]


def test_a_durable_chat_runs_on_the_wal_engine_sqlite_engine_makes(
    server: LoopbackServer, tmp_path: Path
) -> None:
    import sqlite3

    from dbos import DBOS

    from chatlas_like.durable import sqlite_engine

    durable = durable_chat(server)
    path = tmp_path / "wal.sqlite"
    DBOS(
        config={
            "name": "durable-tests",
            "system_database_url": f"sqlite:///{path}",
            "system_database_engine": sqlite_engine(path),
            "log_level": "WARNING",
        }
    )
    DBOS.launch()
    try:
        assert str(durable.chat("Is card 42 valid?", conversation_id="w-1")) == ANSWER
    finally:
        DBOS.destroy()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_parallel_chat_reports_the_turns_it_waits_for_as_they_finish(
    server: LoopbackServer, launch: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    durable = durable_chat(server)
    launch()
    parallel_chat(durable, ["hi", "hi"], conversation_ids=["q-0", "q-1"])
    shown = capsys.readouterr().err  # not a terminal: one plain line at the end
    assert "Waiting for 2 queued conversations: 2/2 (100%)" in shown
    assert "2 done | 0 failed" in shown


def test_parallel_chat_with_echo_none_shows_no_progress(
    server: LoopbackServer, launch: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    durable = durable_chat(server)
    launch()
    parallel_chat(durable, ["hi"], conversation_ids=["r-0"], echo="none")
    assert capsys.readouterr().err == ""


def test_follow_reads_a_running_turn_from_the_start_until_it_ends(
    server: LoopbackServer, launch: Callable[..., None]
) -> None:
    release = threading.Event()
    durable = slow_tool_chat(server, release, poll_interval=0.05)
    launch()
    answer: list[str] = []
    turn = started(lambda: answer.append(str(durable.chat("?", conversation_id="c", echo="none"))))
    wait_until(server.message_requests)
    time.sleep(0.2)  # the tool request is recorded and published; the tool waits
    followed, reader = following(durable, "c")
    release.set()
    turn.join(20)
    reader.join(20)
    assert answer == [ANSWER]
    assert isinstance(followed[0], ContentToolRequest)
    assert isinstance(followed[1], ContentToolResult) and followed[1].outcome == "success"
    assert "".join(item for item in followed if isinstance(item, str)) == ANSWER
    assert list(durable.follow("c")) == []  # nothing runs now


def test_a_reader_sees_the_tool_request_while_the_slow_tool_runs(
    server: LoopbackServer, launch: Callable[..., None]
) -> None:
    release = threading.Event()
    durable = slow_tool_chat(server, release, poll_interval=0.02)
    launch()
    turn = started(lambda: durable.chat("?", conversation_id="c", echo="none"))
    wait_until(server.message_requests)
    followed, reader = following(durable, "c")
    wait_until(lambda: followed)
    seen_while_running = list(followed)
    release.set()
    turn.join(20)
    reader.join(20)
    assert len(seen_while_running) == 1 and isinstance(seen_while_running[0], ContentToolRequest)
    assert "".join(item for item in followed if isinstance(item, str)) == ANSWER


def test_a_generator_tools_progress_reaches_the_stream_while_the_tool_still_runs(
    server: LoopbackServer, launch: Callable[..., None]
) -> None:
    release = threading.Event()

    def lookup(card: int) -> Iterator[str]:
        """Look a card up, in two steps."""
        yield "card found"
        if not release.wait(10):  # released once its progress has been read
            raise RuntimeError("the progress did not reach the stream while the tool ran")
        yield f"card {card} is valid"

    chat = make_chat(server)
    chat.register_tool(lookup)
    durable = DurableChat(chat, name=unique(), poll_interval=0.05)
    launch()
    items = iter(durable.stream("Is card 42 valid?", conversation_id="c", content="all"))
    assert isinstance(next(items), ContentToolRequest)
    first = next(items)  # the tool still waits for release
    release.set()
    rest = list(items)
    assert isinstance(first, ContentToolResultProgress) and first.value == "card found"
    assert isinstance(rest[0], ContentToolResultProgress) and rest[0].value == "card 42 is valid"
    assert "".join(item for item in rest if isinstance(item, str)) == ANSWER
    (kept,) = durable.get_turns("c")[2].tool_results
    assert kept.value == "card found\ncard 42 is valid"


def test_a_reader_sees_the_tool_result_while_the_model_is_slow_to_answer(
    serve: Callable[..., LoopbackServer], launch: Callable[..., None]
) -> None:
    release = threading.Event()

    def slow_model(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]["content"]
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            release.wait(10)
        return model(body)

    server = serve(slow_model)
    durable = durable_chat(server)
    launch()
    turn = started(lambda: durable.chat("Is card 42 valid?", conversation_id="c", echo="none"))
    wait_until(lambda: len(server.message_requests()) >= 2)
    followed, reader = following(durable, "c")
    wait_until(lambda: len(followed) >= 2)
    seen_while_waiting = list(followed)
    release.set()
    turn.join(20)
    reader.join(20)
    assert [type(item) for item in seen_while_waiting] == [ContentToolRequest, ContentToolResult]
    assert "".join(followed[2:]) == ANSWER


def test_a_tool_round_whose_steps_are_quicker_than_publish_after_writes_nothing_to_the_stream(
    server: LoopbackServer, launch: Callable[..., None], tmp_path: Path
) -> None:
    durable = durable_chat(server, publish_after=30)
    launch()
    assert str(durable.chat("Is card 42 valid?", conversation_id="c", echo="none")) == ANSWER
    assert stream_entries(tmp_path) == []


def test_with_publish_after_zero_each_step_writes_what_came_before_it(
    server: LoopbackServer, launch: Callable[..., None], tmp_path: Path
) -> None:
    durable = durable_chat(server, publish_after=0)
    launch()
    assert str(durable.chat("Is card 42 valid?", conversation_id="c", echo="none")) == ANSWER
    entries = stream_entries(tmp_path)
    # the step that waits for the (read-only) tool writes the request; the next model
    # step writes the result
    assert [(e["at"], [item["type"] for item in e["items"]]) for e in entries] == [
        (0, ["tool_request"]),
        (1, ["tool_result"]),
    ]


def test_a_quick_turn_without_tools_writes_nothing_to_the_stream(
    server: LoopbackServer, launch: Callable[..., None], tmp_path: Path
) -> None:
    durable = durable_chat(server)
    launch()
    assert str(durable.chat("hi", conversation_id="c", echo="none")) == "Hello there."
    assert stream_entries(tmp_path) == []


def test_a_tool_round_without_publishing_writes_nothing_to_the_stream(
    server: LoopbackServer, launch: Callable[..., None], tmp_path: Path
) -> None:
    durable = durable_chat(server, publish=False, publish_after=0)
    launch()
    assert str(durable.chat("Is card 42 valid?", conversation_id="c", echo="none")) == ANSWER
    assert stream_entries(tmp_path) == []


def test_items_a_step_writes_again_after_a_crash_are_read_once() -> None:
    request = ContentToolRequest(id="t1", name="lookup", arguments={"card": 42})
    # the step that wrote [request, "a"] ran again: its write is in the stream twice
    entries = [stream_entry(0, ["x"]), stream_entry(1, [request, "a"])]
    entries += [stream_entry(1, [request, "a"]), stream_entry(3, ["b"])]
    read, followed = 0, list[Any]()
    for entry in entries:
        items, read = unread(entry, read)
        followed += items
    assert followed[0] == "x" and followed[2:] == ["a", "b"]
    assert isinstance(followed[1], ContentToolRequest) and followed[1].id == "t1"
    assert read == 4


def test_a_stream_entry_written_before_entries_had_positions_is_read_whole() -> None:
    assert unread(["a", "b"], 3) == (["a", "b"], 5)


def test_each_tool_result_is_stored_once_under_the_conversations_run(
    server: LoopbackServer, launch: Callable[..., None], tmp_path: Path
) -> None:
    durable = durable_chat(server, store=str(tmp_path / "results.db"))
    launch()
    durable.chat("Is card 42 valid?", conversation_id="c-1", echo="none")
    durable.chat("And again?", conversation_id="c-1", echo="none")
    store = durable.wrapped.store
    assert store is not None
    records = store.list(None, durable.run_id("c-1"))
    assert [r.sequence for r in records] == [1, 2]
    assert [r.result for r in records] == ["card 42 is valid"] * 2


def test_a_failed_turn_raises_its_error_and_the_conversation_goes_on(
    server: LoopbackServer, launch: Callable[..., None]
) -> None:
    from chatlas_like._core.errors import BadRequestError

    durable = durable_chat(server)
    launch()
    with pytest.raises(BadRequestError, match="scripted refusal"):
        durable.chat("fail", conversation_id="c-1", echo="none")
    assert durable.get_turns("c-1") == []  # nothing was answered: the prompt is not kept
    assert str(durable.chat("hi", conversation_id="c-1", echo="none")) == "Hello there."


def _cells(database: Path) -> list[bytes]:
    """Every value of every table of a SQLite file, base64 text decoded as well."""
    cells: list[bytes] = []
    with sqlite3.connect(database) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                for value in row:
                    raw = value if isinstance(value, bytes) else str(value).encode()
                    cells.append(raw)
                    with contextlib.suppress(ValueError):
                        cells.append(base64.b64decode(raw, validate=True))
    return cells


def _postgres_cells(url: str) -> list[bytes]:
    """Every value of every table of a PostgreSQL database (DBOS's schema included), as
    text, base64 text decoded as well."""
    import psycopg

    cells: list[bytes] = []
    with psycopg.connect(url) as db:
        tables = db.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
        ).fetchall()
        assert tables
        for schema, table in tables:
            for row in db.execute(f'SELECT * FROM "{schema}"."{table}"').fetchall():
                for value in row:
                    raw = (
                        bytes(value)
                        if isinstance(value, (bytes, memoryview))
                        else str(value).encode()
                    )
                    cells.append(raw)
                    with contextlib.suppress(ValueError):
                        cells.append(base64.b64decode(raw, validate=True))
    return cells


def _key_quoting_failure(
    serve: Callable[..., LoopbackServer], launch: Callable[..., None], **config: Any
) -> str:
    """A durable turn failed by a 401 that quotes the key; the key."""
    from chatlas_like import AuthenticationError, ChatAnthropic

    key = f"sk-ant-api03-{uuid.uuid4().hex}"
    server = serve(
        lambda body: Reply.error(401, "authentication_error", f"invalid x-api-key {key}")
    )
    durable = DurableChat(ChatAnthropic(base_url=server.url, api_key=key), name=unique())
    launch(**config)
    with pytest.raises(AuthenticationError, match="invalid x-api-key") as raised:
        durable.chat("hi", conversation_id="c-1", echo="none")
    assert raised.value.status_code == 401
    assert key not in str(raised.value)
    return key


def test_a_failed_turn_leaves_the_key_its_error_quotes_in_no_table(
    serve: Callable[..., LoopbackServer], launch: Callable[..., None], tmp_path: Path
) -> None:
    key = _key_quoting_failure(serve, launch)
    cells = _cells(tmp_path / "dbos.sqlite")
    assert any(b"invalid x-api-key" in cell for cell in cells)  # the failure is recorded
    assert not any(key.encode() in cell for cell in cells)


@pytest.mark.postgres
def test_a_failed_turn_leaves_the_key_its_error_quotes_in_no_postgresql_table(
    serve: Callable[..., LoopbackServer], launch: Callable[..., None], postgres_url: str
) -> None:
    url = postgres_url.replace("postgresql://", "postgresql+psycopg://", 1)
    key = _key_quoting_failure(serve, launch, system_database_url=url)
    cells = _postgres_cells(postgres_url)
    assert any(b"invalid x-api-key" in cell for cell in cells)  # the failure is recorded
    assert not any(key.encode() in cell for cell in cells)


def one_turn(
    server: LoopbackServer, launch: Callable[..., None], tool: Any, **options: Any
) -> None:
    """One durable turn of a chat with ``tool`` registered with ``options``."""
    chat = make_chat(server)
    chat.register_tool(tool, **options)
    durable = DurableChat(chat, name=unique())
    launch()
    assert str(durable.chat("Is card 42 valid?", conversation_id="c", echo="none")) == ANSWER


def test_a_call_of_a_tool_not_safe_to_rerun_has_its_start_in_the_stream_before_it_runs(
    server: LoopbackServer, launch: Callable[..., None], tmp_path: Path
) -> None:
    seen: list[list[int]] = []

    def lookup(card: int) -> str:
        """Look a card up."""
        seen.extend(recorded_starts(tmp_path))
        return f"card {card} is valid"

    one_turn(server, launch, lookup)
    assert seen == [[0, 0]]  # the first round's first call


def test_a_call_of_a_tool_not_safe_to_rerun_costs_no_step_beside_its_result(
    server: LoopbackServer, launch: Callable[..., None], tmp_path: Path
) -> None:
    one_turn(server, launch, lookup)
    assert recorded_steps(tmp_path) == ["model", "tool", "model"]


def test_each_tool_round_of_a_turn_writes_its_starts_under_its_own_number(
    serve: Callable[..., LoopbackServer], launch: Callable[..., None], tmp_path: Path
) -> None:
    # A recovery reads the starts of the round it resumes: round 1's first call must not
    # be taken for round 0's, which ran.
    server = serve(
        [
            Reply.tool_call("lookup", {"card": 42}),
            Reply.tool_call("lookup", {"card": 7}),
            Reply.text(ANSWER),
        ]
    )
    one_turn(server, launch, lookup)
    assert recorded_starts(tmp_path) == [[0, 0], [1, 0]]


def test_a_call_of_a_tool_safe_to_rerun_records_no_start(
    server: LoopbackServer, launch: Callable[..., None], tmp_path: Path
) -> None:
    one_turn(server, launch, lookup, durable="rerun")
    assert recorded_steps(tmp_path) == ["model", "tool", "model"]
    assert recorded_starts(tmp_path) == []


def test_the_echo_hears_a_tool_start_whether_or_not_the_start_is_recorded(
    serve: Callable[..., LoopbackServer], launch: Callable[..., None]
) -> None:
    class Starts(EchoSink):
        def __init__(self) -> None:
            self.started: list[str] = []

        def tool_started(self, request: ContentToolRequest) -> None:
            self.started.append(request.name)

    def charge(card: int) -> str:
        """Charge a card."""
        return f"card {card} charged"

    def by_name(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]["content"]
        if any(block.get("type") == "tool_result" for block in last):
            return Reply.text(ANSWER)
        return Reply.tool_call(last[0]["text"].split()[1], {"card": 42})

    chat = make_chat(serve(by_name))
    chat.register_tool(lookup, durable="rerun")
    chat.register_tool(charge)
    durable = DurableChat(chat, name=unique())
    launch()
    for tool in ("charge", "lookup"):
        echo = Starts()
        durable.chat(f"Use {tool} on card 42.", conversation_id=tool, echo=echo)
        assert echo.started == [tool]


def test_a_turn_records_its_inputs_output_and_stream_as_json_not_pickles(
    server: LoopbackServer, launch: Callable[..., None], tmp_path: Path
) -> None:
    durable = durable_chat(server, publish_after=0)  # a write before every step
    launch()
    durable.chat("Is card 42 valid?", conversation_id="c-1", echo="none")
    with pytest.raises(BadRequestError):
        durable.chat("fail", conversation_id="c-1", echo="none")
    with sqlite3.connect(tmp_path / "dbos.sqlite") as db:
        turns = db.execute("SELECT serialization FROM workflow_status").fetchall()
        streams = db.execute("SELECT serialization FROM streams").fetchall()
    assert len(turns) == 2 and streams
    assert {s for (s,) in turns + streams} == {"portable_json"}


def test_with_dbos_json_serializer_no_row_of_a_turn_is_a_pickle(
    server: LoopbackServer, launch: Callable[..., None], tmp_path: Path
) -> None:
    from dbos import DBOSPortableJSONSerializer

    durable = durable_chat(server)
    launch(serializer=DBOSPortableJSONSerializer())
    answer = durable.chat("Is card 42 valid?", conversation_id="c-1", echo="none")
    with pytest.raises(BadRequestError):
        durable.chat("fail", conversation_id="c-1", echo="none")
    with sqlite3.connect(tmp_path / "dbos.sqlite") as db:
        steps = db.execute(
            "SELECT serialization FROM operation_outputs WHERE output IS NOT NULL"
        ).fetchall()
    assert str(answer) == ANSWER
    assert len(steps) >= 4 and {s for (s,) in steps} == {"portable_json"}


def test_a_document_by_url_is_downloaded_in_a_recorded_step_and_sent_as_text(
    serve: Callable[..., LoopbackServer], launch: Callable[..., None], tmp_path: Path
) -> None:
    from chatlas_like import content_document_url

    document = tmp_path / "report.csv"
    document.write_bytes(b"region,q3\nMidwest,264\n")
    server = serve(lambda body: Reply.text("Midwest: 264."))
    durable = DurableChat(make_chat(server), name=unique())
    launch()
    with LocalFiles(tmp_path) as url:
        doc = content_document_url(f"{url}/report.csv", allow_private=True)
        durable.chat("Summarise this.", doc, conversation_id="c-1", echo="none")
    sent = server.message_requests()[-1]["messages"][-1]["content"]
    assert [b["source"]["data"] for b in sent if b["type"] == "document"] == [
        "region,q3\nMidwest,264\n"
    ]
    with sqlite3.connect(tmp_path / "dbos.sqlite") as db:
        steps = [name for (name,) in db.execute("SELECT function_name FROM operation_outputs")]
    assert steps.index("download") < steps.index("model")


class LocalFiles:
    """A folder served on 127.0.0.1 for the length of a ``with``; its base URL."""

    def __init__(self, folder: Path) -> None:
        import functools
        from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

        class Quiet(SimpleHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

        handler = functools.partial(Quiet, directory=str(folder))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)

    def __enter__(self) -> str:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_conversation_id_over_the_limit_is_refused_before_anything_is_written(
    server: LoopbackServer, launch: Callable[..., None], tmp_path: Path
) -> None:
    durable = durable_chat(server)
    launch()
    with pytest.raises(ValueError, match="at most 1,000 characters"):
        durable.chat("hi", conversation_id="x" * 1_000_000, echo="none")
    with sqlite3.connect(tmp_path / "dbos.sqlite") as db:
        assert db.execute("SELECT count(*) FROM workflow_status").fetchone() == (0,)
    assert server.message_requests() == []


def test_a_kwargs_value_that_is_not_json_is_refused_before_the_turn_starts(
    server: LoopbackServer, launch: Callable[..., None]
) -> None:
    durable = durable_chat(server)
    launch()
    with pytest.raises(TypeError, match="recorded as JSON"):
        durable.chat("hi", conversation_id="c-1", echo="none", kwargs={"when": object()})
    assert durable.get_turns("c-1") == []


def test_follow_reads_the_running_turn_not_one_queued_after_it(
    serve: Callable[..., LoopbackServer], launch: Callable[..., None]
) -> None:
    release = threading.Event()

    def slow_lookup(card: int) -> str:
        """Look a card up, slowly."""
        release.wait(10)
        return f"card {card} is valid"

    def script(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]["content"]
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            return Reply.text(ANSWER)
        return Reply.text("Second.") if "second" in str(last) else model(body)

    server = serve(script)
    chat = make_chat(server)
    chat.register_tool(slow_lookup, name="lookup", annotations={"readOnlyHint": True})
    durable = DurableChat(chat, name=unique(), poll_interval=0.05)
    launch()
    first = durable.enqueue("first", conversation_id="c")
    while not server.message_requests():
        time.sleep(0.01)
    time.sleep(0.2)  # the first turn's tool waits
    second = durable.enqueue("second", conversation_id="c")
    followed: list[Any] = []
    reader = threading.Thread(target=lambda: followed.extend(durable.follow("c")))
    reader.start()
    time.sleep(0.2)
    release.set()
    assert (first.result(), second.result()) == (ANSWER, "Second.")
    reader.join(20)
    assert isinstance(followed[0], ContentToolRequest)  # the running turn's, from its start
    assert "".join(x for x in followed if isinstance(x, str)) == ANSWER


def test_conversation_ids_that_differ_only_in_case_keep_their_own_histories(
    server: LoopbackServer, launch: Callable[..., None]
) -> None:
    durable = durable_chat(server)
    launch()
    durable.chat("hi", conversation_id="alice", echo="none")
    durable.chat("hi", conversation_id="ALICE", echo="none")
    assert len(durable.get_turns("alice")) == len(durable.get_turns("ALICE")) == 2
    assert all(len(body["messages"]) == 1 for body in server.message_requests())


def test_a_tools_current_display_shows_its_content_in_a_durable_turn(
    server: LoopbackServer, launch: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    chat = make_chat(server)

    def lookup(card: int) -> str:
        """Look a card up."""
        if chat.current_display:
            chat.current_display.echo("Looking card 42 up...")
        return f"card {card} is valid"

    chat.register_tool(lookup, annotations={"readOnlyHint": True})
    durable = DurableChat(chat, name=unique(), poll_interval=0.05)
    launch()
    durable.chat("Is card 42 valid?", conversation_id="c-1", echo="text")
    assert "Looking card 42 up..." in capsys.readouterr().out
    assert chat.current_display is None


def test_two_calls_racing_on_one_conversation_each_stream_their_own_answer(
    serve: Callable[..., LoopbackServer], launch: Callable[..., None]
) -> None:
    def echo_back(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]["content"]
        text = last if isinstance(last, str) else "".join(b.get("text", "") for b in last)
        return Reply.text(f"answer to {text.split()[-1]}").slowly(0.2)

    durable = DurableChat(make_chat(serve(echo_back)), name=unique(), poll_interval=0.05)
    launch()

    def ask(who: str, conversation: str, got: dict[str, str], barrier: threading.Barrier) -> None:
        barrier.wait()
        got[who] = "".join(durable.stream(f"please {who}", conversation_id=conversation))

    for trial in range(4):  # both usually pick the same turn number: one must go after
        got: dict[str, str] = {}
        barrier = threading.Barrier(2)
        callers = [threading.Thread(target=ask, args=(w, f"c-{trial}", got, barrier)) for w in "AB"]
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join(30)
        assert got == {"A": "answer to A", "B": "answer to B"}
        assert len(durable.get_turns(f"c-{trial}")) == 4


def test_two_conversations_running_at_once_each_see_their_own_display(
    serve: Callable[..., LoopbackServer], launch: Callable[..., None]
) -> None:
    seen: dict[str, Any] = {}
    a_started, a_done = threading.Event(), threading.Event()

    def lookup(card: int) -> str:
        """Look a card up."""
        who = "a" if card == 42 else "b"
        seen[f"{who} start"] = chat.current_display
        if who == "a":
            a_started.set()
        else:
            a_done.wait(10)  # A's call has ended while this one still runs
        seen[f"{who} end"] = chat.current_display
        return f"card {card} is valid"

    def cards(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]["content"]
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            return Reply.text(ANSWER)
        return Reply.tool_call("lookup", {"card": 42 if "42" in str(last) else 7})

    chat = make_chat(serve(cards))
    chat.register_tool(lookup, annotations={"readOnlyHint": True})
    durable = DurableChat(chat, name=unique(), poll_interval=0.05)
    launch()

    def second() -> None:
        a_started.wait(10)
        durable.chat("Card 7?", conversation_id="c-b", echo="none")

    b = threading.Thread(target=second)
    b.start()
    durable.chat("Card 42?", conversation_id="c-a", echo="none")
    a_done.set()
    b.join(30)
    assert seen["a start"] is not None and seen["b start"] is not None
    assert seen["a start"] is not seen["b start"]
    assert seen["a end"] is seen["a start"] and seen["b end"] is seen["b start"]
    assert chat.current_display is None


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [42, None, b"c-1"])
def test_a_conversation_id_that_is_not_a_string_is_refused_naming_its_type(
    server: LoopbackServer, launch: Callable[..., None], bad: Any
) -> None:
    durable = durable_chat(server)
    launch()
    with pytest.raises(
        TypeError, match=f"conversation_id must be a string, not {type(bad).__name__}"
    ):
        durable.chat("hi", conversation_id=bad, echo="none")
    with pytest.raises(TypeError, match="conversation_id must be a string"):
        durable.get_turns(bad)


def test_a_durable_chat_created_after_launch_is_refused(
    server: LoopbackServer, launch: Callable[..., None]
) -> None:
    launch()
    with pytest.raises(DurableError, match=r"created after DBOS\.launch\(\)"):
        durable_chat(server)


def test_two_durable_chats_with_one_name_are_refused(server: LoopbackServer) -> None:
    name = unique()
    DurableChat(make_chat(server), name=name)
    with pytest.raises(ValueError, match=f"a DurableChat named '{name}' exists already"):
        DurableChat(make_chat(server), name=name)


def test_a_turn_before_launch_says_to_launch_dbos(server: LoopbackServer) -> None:
    durable = durable_chat(server)
    with pytest.raises(DurableError, match="DBOS is not launched"):
        durable.chat("hi", conversation_id="c-1", echo="none")


def test_a_chat_that_has_turns_already_is_refused(server: LoopbackServer) -> None:
    chat: Chat = make_chat(server)
    chat.chat("hi", echo="none")
    with pytest.raises(ValueError, match="must have no turns"):
        DurableChat(chat, name=unique())


def test_importing_chatlas_like_or_its_durable_module_does_not_import_dbos() -> None:
    code = "import sys, chatlas_like, chatlas_like.durable; print('dbos' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("durable", "annotations", "reruns"),
    [
        (None, None, False),
        (None, {"idempotentHint": True}, True),
        (None, {"readOnlyHint": True}, True),
        ("rerun", None, True),
        ("once", {"readOnlyHint": True}, False),
    ],
)
def test_a_tool_is_rerun_after_a_crash_as_its_durable_setting_or_else_its_annotations_say(
    durable: Any, annotations: Any, reruns: bool
) -> None:
    tool = Tool.from_func(
        lambda card: card, name="charge", annotations=annotations, durable=durable
    )
    assert safe_to_rerun(tool) is reruns
