"""Hostile conditions, stores: a store that goes away never stalls or fools the chat.

PostgreSQL down: the first failure waits a short while at most, later writes fail at
once (each tool round warns without waiting) until a retry finds the server back.
Tested by stopping and restarting a real PostgreSQL server. A busy pool (every
connection in use) is not an outage: that one operation fails, the next one waits
again. A SQLite file deleted while in use is noticed and warned about, instead of
writes "succeeding" into the unlinked file.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from chatlas_like import (
    PostgresStore,
    SqliteStore,
    StoreError,
    StoreWarning,
    ToolResultRecord,
)
from chatlas_like._store import StoreBusyError
from chatlas_like.testing import LoopbackServer, Reply, TemporaryPostgres
from chatlas_like.testing._postgres import find_postgres_bin

from ..conftest import make_chat

pytest_plugins = ["tests.support.postgres"]


def lookup(city: str) -> str:
    """Looks a city up.

    Parameters
    ----------
    city
        The city.
    """
    return f"{city}: sunny"


def record(run: str, sequence: int) -> ToolResultRecord:
    return ToolResultRecord(run, sequence, f"toolu_{sequence}", "x", 1, 1, tenant_id="acme")


@pytest.fixture
def own_postgres() -> Iterator[TemporaryPostgres]:
    """A server of this test's own, so stopping it disturbs no other test."""
    if find_postgres_bin() is None:
        pytest.skip("PostgreSQL is not installed: run scripts/system-deps.sh")
    with TemporaryPostgres() as server:
        yield server


@pytest.mark.postgres
def test_after_the_first_failure_writes_fail_at_once_without_waiting(
    own_postgres: TemporaryPostgres,
) -> None:
    store = PostgresStore(own_postgres.create_database(), wait_seconds=2, retry_after=3600)
    run = str(uuid.uuid4())
    store.write(record(run, 1))
    own_postgres.pause()
    try:
        with pytest.raises(StoreError, match="PostgreSQL store"):
            store.write(record(run, 2))
        with pytest.raises(StoreError, match="not waiting"):  # no connection was tried
            store.write_many([record(run, 3)])
        with pytest.raises(StoreError, match="not waiting"):
            store.list("acme", run)
    finally:
        own_postgres.resume()
        store.close()


@pytest.mark.postgres
def test_writes_recover_when_the_server_returns(own_postgres: TemporaryPostgres) -> None:
    store = PostgresStore(own_postgres.create_database(), wait_seconds=2, retry_after=0.2)
    run = str(uuid.uuid4())
    store.write(record(run, 1))
    own_postgres.pause()
    with pytest.raises(StoreError):
        store.write(record(run, 2))
    own_postgres.resume()
    try:
        for _ in range(100):  # retried after each short window until the server answers
            try:
                store.write(record(run, 2))
                break
            except StoreError:
                time.sleep(0.2)
        assert [r.sequence for r in store.list("acme", run)] == [1, 2]
    finally:
        store.close()


@pytest.mark.postgres
def test_a_chat_warns_each_round_while_postgresql_is_down_and_carries_on(
    own_postgres: TemporaryPostgres, serve: Callable[..., LoopbackServer]
) -> None:
    store = PostgresStore(own_postgres.create_database(), wait_seconds=2, retry_after=3600)
    rounds = [Reply.tool_call("lookup", {"city": c}) for c in ("Oslo", "Lima", "Rome")]
    chat = make_chat(serve([*rounds, Reply.text("done")]), store=store, tenant_id="acme")
    chat.register_tool(lookup)
    store.write(record(str(uuid.uuid4()), 1))  # connected before the outage
    own_postgres.pause()
    try:
        with pytest.warns(StoreWarning) as caught:
            assert str(chat.chat("Go", echo="none")) == "done"
    finally:
        own_postgres.resume()
        store.close()
    messages = [str(w.message) for w in caught if issubclass(w.category, StoreWarning)]
    assert len(messages) == 3
    assert all("not waiting" in m for m in messages[1:])


@pytest.mark.postgres
def test_a_busy_pool_of_the_stores_own_is_not_taken_for_an_outage(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, max_size=1, wait_seconds=0.3, retry_after=3600)
    run = str(uuid.uuid4())
    store.write(record(run, 1))
    try:
        burst = store._connection()  # pyright: ignore[reportPrivateUsage]  # holds the one
        with burst, pytest.raises(StoreBusyError, match="busy"):
            store.write(record(run, 2))
        store.write(record(run, 2))  # free again: no back-off in the way
        assert [r.sequence for r in store.list("acme", run)] == [1, 2]
    finally:
        store.close()


@pytest.mark.postgres
def test_a_busy_shared_pool_is_not_taken_for_an_outage(postgres_url: str) -> None:
    from psycopg_pool import ConnectionPool

    pool: ConnectionPool[Any] = ConnectionPool(postgres_url, min_size=1, max_size=1, open=True)
    store = PostgresStore(pool=pool, wait_seconds=0.3, retry_after=3600)
    run = str(uuid.uuid4())
    try:
        store.write(record(run, 1))
        # Another user of the pool holds its only connection.
        with pool.connection(), pytest.raises(StoreError, match="busy"):
            store.list("acme", run)
        assert [r.sequence for r in store.list("acme", run)] == [1]
    finally:
        pool.close()


def test_a_sqlite_file_deleted_while_in_use_is_noticed_and_warned_about(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    store = SqliteStore(path)
    run = str(uuid.uuid4())
    store.write(record(run, 1))
    path.unlink()
    with pytest.warns(StoreWarning, match="deleted"):
        store.write_many([record(run, 2)])
    store.close()
    assert path.exists()  # written where the application looks for it
    reopened = SqliteStore(path)
    try:
        assert [r.sequence for r in reopened.list("acme", run)] == [2]
    finally:
        reopened.close()


def test_a_sqlite_file_replaced_while_in_use_is_noticed_too(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    store = SqliteStore(path)
    run = str(uuid.uuid4())
    store.write(record(run, 1))
    for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):  # rm r.db*
        leftover.unlink(missing_ok=True)
    other = SqliteStore(path)  # someone else made a new store there
    other.write(record(run, 7))
    other.close()
    with pytest.warns(StoreWarning, match="replaced"):
        store.write(record(run, 2))
    store.close()
    reopened = SqliteStore(path)
    try:
        assert [r.sequence for r in reopened.list("acme", run)] == [2, 7]
    finally:
        reopened.close()


def test_a_chat_whose_sqlite_file_was_deleted_warns_and_keeps_storing(
    tmp_path: Path, serve: Callable[..., LoopbackServer]
) -> None:
    path = tmp_path / "r.db"
    replies = [Reply.tool_call("lookup", {"city": "Oslo"}), Reply.text("ok")] * 2
    chat = make_chat(serve(replies), store=path, tenant_id="acme")
    chat.register_tool(lookup)
    chat.chat("One", echo="none")
    path.unlink()
    with pytest.warns(StoreWarning, match="deleted"):
        chat.chat("Two", echo="none")
    reopened = SqliteStore(path)
    try:
        assert [r.sequence for r in reopened.list("acme", chat.run_id)] == [2]
    finally:
        reopened.close()
