"""Hostile input, stored runs: no chat writes over another's results or reads them by paging.

A loaded chat that continues writes what it adds under a run id of its own, linked to
the run it was saved from (``parent_runs``), so two processes continuing one saved
chat, or a chat file naming someone else's run, can never overwrite stored results.
Paging reads only results the chat's own history holds.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from chatlas_like import Chat, SqliteStore, ToolResultRecord
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import TEST_KEY, make_chat


def lookup(city: str) -> str:
    """Looks a city up.

    Parameters
    ----------
    city
        The city.
    """
    return f"{city}: " + "weather " * 400


def saved_run(
    serve: Callable[..., LoopbackServer], tmp_path: Path, **kwargs: Any
) -> tuple[LoopbackServer, Chat, Path]:
    server = serve([Reply.tool_call("lookup", {"city": "Oslo"}), Reply.text("ok")])
    chat = make_chat(server, store=tmp_path / "r.db", tenant_id="acme", **kwargs)
    chat.register_tool(lookup)
    chat.chat("Go", echo="none")
    chat.save(tmp_path / "chat.json")
    return server, chat, tmp_path / "chat.json"


def load(path: Path, server: LoopbackServer, store: Path, **kwargs: Any) -> Chat:
    chat = Chat.load(
        path,
        [lookup],
        api_key=TEST_KEY,
        base_url=server.url,
        store=store,
        tenant_id="acme",
        **kwargs,
    )
    return chat


def test_a_loaded_chat_writes_under_a_new_run_linked_to_the_saved_one(
    serve: Callable[..., LoopbackServer], tmp_path: Path
) -> None:
    server, original, path = saved_run(serve, tmp_path)
    loaded = load(path, server, tmp_path / "r.db")
    assert loaded.run_id != original.run_id
    assert loaded.parent_runs == (original.run_id,)
    loaded.save(tmp_path / "again.json")
    assert orjson.loads((tmp_path / "again.json").read_bytes())["parent_runs"] == [original.run_id]


def test_two_chats_continuing_one_file_never_overwrite_each_other(
    serve: Callable[..., LoopbackServer], tmp_path: Path
) -> None:
    server, original, path = saved_run(serve, tmp_path)
    first, second = load(path, server, tmp_path / "r.db"), load(path, server, tmp_path / "r.db")
    server.backend.model.add(
        Reply.tool_call("lookup", {"city": "Lima"}),
        Reply.text("ok"),
        Reply.tool_call("lookup", {"city": "Rome"}),
        Reply.text("ok"),
    )
    first.chat("Lima?", echo="none")
    second.chat("Rome?", echo="none")
    store = SqliteStore(tmp_path / "r.db")
    try:
        kept = {
            run: [(r.sequence, (r.result or "")[:4]) for r in store.list("acme", run)]
            for run in (original.run_id, first.run_id, second.run_id)
        }
    finally:
        store.close()
    assert kept == {
        original.run_id: [(1, "Oslo")],
        first.run_id: [(2, "Lima")],
        second.run_id: [(2, "Rome")],
    }


def test_a_copy_writes_under_its_own_run_linked_to_the_original(
    serve: Callable[..., LoopbackServer], tmp_path: Path
) -> None:
    _, original, _ = saved_run(serve, tmp_path)
    copy = original.copy()
    assert copy.run_id != original.run_id and copy.parent_runs == (original.run_id,)


def test_a_copy_pages_through_the_originals_result_after_cutting_one_of_its_own(
    serve: Callable[..., LoopbackServer], tmp_path: Path
) -> None:
    server, original, _ = saved_run(serve, tmp_path, paging=True, max_result_bytes=1000)
    copy = original.copy()
    server.backend.model.add(
        Reply.tool_call("lookup", {"city": "Lima"}),  # the copy's own cut result
        Reply.tool_call("read_tool_result", {"sequence": 1, "offset": 0}),
        Reply.text("read"),
    )
    copy.chat("Lima, then read Oslo's on", echo="none")
    page = server.message_requests()[-1]["messages"][-1]["content"][0]
    assert page["is_error"] is False and "Oslo: weather" in page["content"]


def test_a_loaded_chat_pages_through_a_result_of_the_run_it_came_from(
    serve: Callable[..., LoopbackServer], tmp_path: Path
) -> None:
    server, _, path = saved_run(serve, tmp_path, paging=True, max_result_bytes=1000)
    server.backend.model.add(
        Reply.tool_call("read_tool_result", {"sequence": 1, "offset": 10}), Reply.text("read")
    )
    loaded = load(path, server, tmp_path / "r.db", paging=True)
    loaded.chat("Read on", echo="none")
    page = server.message_requests()[-1]["messages"][-1]["content"][0]
    assert page["is_error"] is False and page["content"].startswith("[bytes 10-")


def test_a_chat_file_naming_another_run_cannot_read_it_by_paging(
    serve: Callable[..., LoopbackServer], tmp_path: Path
) -> None:
    victim = str(uuid.uuid4())
    store = SqliteStore(tmp_path / "r.db")
    store.write(
        ToolResultRecord(victim, 1, "toolu_secret", "the victim's secret", 19, 19, tenant_id="acme")
    )
    store.close()
    document = {
        "format": "chatlas_like.chat",
        "version": 1,
        "provider": {"name": "anthropic", "model": "claude-haiku-4-5"},
        "run_id": victim,
        "last_sequence": 0,
        "turns": {"format": "chatlas_like.turns", "version": 1, "turns": []},
    }
    (tmp_path / "chat.json").write_bytes(orjson.dumps(document))
    pager = serve([Reply.tool_call("read_tool_result", {"sequence": 1}), Reply.text("ok")])
    chat = load(tmp_path / "chat.json", pager, tmp_path / "r.db", paging=True)
    chat.chat("Read", echo="none")
    answer = pager.message_requests()[1]["messages"][-1]["content"][0]
    assert answer["is_error"] is True and "secret" not in answer["content"]


def test_a_chat_file_naming_another_run_never_writes_into_it(
    serve: Callable[..., LoopbackServer], tmp_path: Path
) -> None:
    server, original, path = saved_run(serve, tmp_path)
    document = orjson.loads(path.read_bytes())
    document["last_sequence"] = 0  # would rewrite record 1 of the original run
    path.write_bytes(orjson.dumps(document))
    loaded = load(path, server, tmp_path / "r.db")
    server.backend.model.add(Reply.tool_call("lookup", {"city": "Evil"}), Reply.text("ok"))
    loaded.chat("Again", echo="none")
    store = SqliteStore(tmp_path / "r.db")
    try:
        (record,) = store.list("acme", original.run_id)
    finally:
        store.close()
    assert record.result is not None and record.result.startswith("Oslo")
