"""Batches of results in the store, and several processes writing to one store.

``write_many`` makes a batch's ids and time once for all and, on PostgreSQL, sends the
batch as one statement; these tests pin what that must keep: every record, its own
id, the rewrite rules of ``write``, and nothing lost when processes write at once.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chatlas_like import SqliteStore, ToolResultRecord, ToolResultStore
from chatlas_like._store import PostgresStore
from chatlas_like._store._record import new_ids

pytest_plugins = ["tests.support.postgres"]

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ToolResultStore]:
    if request.param == "sqlite":
        opened: ToolResultStore = SqliteStore(tmp_path / "results.db")
    else:
        opened = PostgresStore(request.getfixturevalue("postgres_url"))
    yield opened
    opened.close()


def records(run: str, count: int, **fields: Any) -> list[ToolResultRecord]:
    return [
        ToolResultRecord(
            interaction_process_id=run,
            sequence=n,
            tool_call_id=f"toolu_{n}",
            result=f"result {n} ☃",
            stored_length=12,
            original_length=12,
            tenant_id="acme",
            **fields,
        )
        for n in range(1, count + 1)
    ]


@pytest.mark.parametrize("count", [1, 15, 16, 1000])
def test_new_ids_are_distinct_version_4_uuids_in_their_usual_text(count: int) -> None:
    ids = new_ids(count)
    assert len(set(ids)) == count
    for text in ids:
        parsed = uuid.UUID(text)
        assert (parsed.version, parsed.variant, str(parsed)) == (4, uuid.RFC_4122, text)


def test_a_batch_keeps_every_record_each_with_its_own_id(store: ToolResultStore) -> None:
    run = str(uuid.uuid4())
    store.write_many(records(run, 300))
    listed = store.list("acme", run)
    assert [r.sequence for r in listed] == list(range(1, 301))
    assert [r.result for r in listed] == [f"result {n} ☃" for n in range(1, 301)]
    assert len({r.id for r in listed}) == 300
    assert all(r.date_created == listed[0].date_created for r in listed)


def test_a_batch_keeps_the_ids_its_records_bring(store: ToolResultStore) -> None:
    run = str(uuid.uuid4())
    given = [str(uuid.uuid4()) for _ in range(3)]
    batch = [
        ToolResultRecord(run, n, result=str(n), tenant_id="acme", id=given[n - 1])
        for n in (1, 2, 3)
    ]
    store.write_many(batch)
    assert [r.id for r in store.list("acme", run)] == given


def test_a_batch_rewrites_existing_records_keeping_their_id(store: ToolResultStore) -> None:
    run = str(uuid.uuid4())
    store.write_many(records(run, 20))
    before = {r.sequence: r for r in store.list("acme", run)}
    store.write_many(records(run, 20, is_error=True))
    after = store.list("acme", run)
    assert all(r.is_error for r in after)
    for r in after:
        old = before[r.sequence]
        assert r.id == old.id and r.date_created == old.date_created
        assert r.date_updated is not None and old.date_updated is not None
        assert r.date_updated > old.date_updated


def test_a_batch_with_one_key_twice_ends_with_the_last(store: ToolResultStore) -> None:
    run = str(uuid.uuid4())
    first, second = records(run, 1), records(run, 1, is_truncated=True)
    store.write_many([*first, *records(run, 3)[1:], *second])
    listed = store.list("acme", run)
    assert [r.sequence for r in listed] == [1, 2, 3]
    assert listed[0].is_truncated


def test_a_batch_may_span_runs_and_tenants(store: ToolResultStore) -> None:
    one, two = str(uuid.uuid4()), str(uuid.uuid4())
    batch = [
        *records(one, 2),
        ToolResultRecord(two, 1, result="other", tenant_id="zeta"),
        ToolResultRecord(two, 1, result="none"),
    ]
    store.write_many(batch)
    assert [r.sequence for r in store.list("acme", one)] == [1, 2]
    assert [r.result for r in store.list("zeta", two)] == ["other"]
    assert [r.result for r in store.list(None, two)] == ["none"]


WRITER = textwrap.dedent(
    """
    import sys
    from chatlas_like import ToolResultRecord, open_store

    db, run, writer, batches = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    store = open_store(db)
    for b in range(batches):
        base = (writer * batches + b) * 10
        store.write_many(
            [ToolResultRecord(run, base + k, result=f"w{writer} b{b} k{k}", tenant_id="acme")
             for k in range(1, 11)]
        )
        store.write(ToolResultRecord(run, 100_000 + writer * batches + b, result="one",
                                     tenant_id="acme"))
    store.close()
    """
)


def four_writers(db: str, run: str, batches: int) -> None:
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, db, run, str(w), str(batches)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(4)
    ]
    for process in processes:
        _, err = process.communicate(timeout=240)
        assert process.returncode == 0, err


def test_four_writer_processes_on_one_sqlite_file_lose_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "shared.db")
    run = str(uuid.uuid4())
    four_writers(db, run, batches=10)
    listed = SqliteStore(db).list("acme", run)
    assert len(listed) == 4 * 10 * 11
    assert len({r.id for r in listed}) == len(listed)


@pytest.mark.postgres
def test_four_writer_processes_on_one_postgres_store_lose_nothing(postgres_url: str) -> None:
    run = str(uuid.uuid4())
    four_writers(postgres_url, run, batches=10)
    store = PostgresStore(postgres_url)
    listed = store.list("acme", run)
    store.close()
    assert len(listed) == 4 * 10 * 11
    assert len({r.id for r in listed}) == len(listed)
    assert {r.result for r in listed if r.sequence < 100_000} == {
        f"w{w} b{b} k{k}" for w in range(4) for b in range(10) for k in range(1, 11)
    }
