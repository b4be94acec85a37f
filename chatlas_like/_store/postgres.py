"""PostgresStore: tool results in PostgreSQL, for apps that run on several machines.

psycopg 3 with a connection pool (``psycopg-pool``), both imported on first use
(``pip install 'chatlas_like[postgres]'``). The schema is created on first use inside a
transaction holding an advisory lock, so processes starting together create it once.
Ids are ``uuid`` columns and dates ``timestamptz``; a tenant of None is kept as ``''``
so that it takes part in the key. PostgreSQL text cannot hold NUL characters: a result
containing one fails to write (the chat warns and carries on).

A server that is down must not stall every tool round: a connection is waited for
``wait_seconds`` at most, and after a failure to connect every operation fails at once
(``StoreError`` saying it is not waiting) for ``retry_after`` seconds; the first
operation after that tries again, and the store works again as soon as the server
answers. A chat attached to the store warns once per round meanwhile and carries on.

A busy pool is not a server that is down: when every pooled connection is in use for
``wait_seconds`` (a burst of large pages on the read API, say) and none of the pool's
attempts to connect failed meanwhile, that one operation fails with
:class:`StoreBusyError` and the next one waits for a connection again; the back-off is
kept for failures to connect. (With a pool of your own, busy is told from down by the
pool's connection errors alone.)
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Generator, Iterable, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .._core.redact import scrub
from ._protocol import SCHEMA_VERSION, StoreBusyError, StoredRange, StoreError
from ._record import ToolResultRecord, check_run_id, now_ms

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

__all__ = ["PostgresStore"]

_LOCK_KEY = 0x636C5F7472  # the advisory lock taken while creating the schema
_COLUMNS = (
    "interaction_process_id, sequence, tool_call_id, result, stored_length, original_length, "
    "is_truncated, is_error, tenant_id, id, date_created, date_updated"
)
_META_COLUMNS = _COLUMNS.replace(" result,", " NULL,")  # a listing without the bodies
_SCHEMA = """
CREATE TABLE tool_results (
    interaction_process_id uuid NOT NULL,
    sequence bigint NOT NULL CHECK (sequence >= 1),
    tool_call_id text,
    result text,
    stored_length bigint,
    original_length bigint,
    is_truncated boolean NOT NULL,
    is_error boolean NOT NULL,
    tenant_id text NOT NULL,
    id uuid NOT NULL UNIQUE,
    date_created timestamptz NOT NULL,
    date_updated timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, interaction_process_id, sequence)
)
"""
_UPSERT = f"""
INSERT INTO tool_results ({_COLUMNS})
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (tenant_id, interaction_process_id, sequence) DO UPDATE SET
    tool_call_id = excluded.tool_call_id,
    result = excluded.result,
    stored_length = excluded.stored_length,
    original_length = excluded.original_length,
    is_truncated = excluded.is_truncated,
    is_error = excluded.is_error,
    date_updated = greatest(
        excluded.date_updated, tool_results.date_updated + interval '1 millisecond'
    )
"""
# A batch as one statement: each column one array parameter, sent in binary. One parse
# and one round trip instead of one per row (psycopg's executemany), and the ids the
# records lack are made by the server.
_UPSERT_MANY = f"""
INSERT INTO tool_results ({_COLUMNS})
SELECT run, seq, call, result, stored, original, truncated, failed, tenant,
    coalesce(id, gen_random_uuid()), %b, %b
FROM unnest(
    %b::uuid[], %b::bigint[], %b::text[], %b::text[], %b::bigint[], %b::bigint[],
    %b::boolean[], %b::boolean[], %b::text[], %b::uuid[]
) AS batch(run, seq, call, result, stored, original, truncated, failed, tenant, id)
{_UPSERT[_UPSERT.index("ON CONFLICT") :]}"""
_KEY = "tenant_id = %s AND interaction_process_id = %s"


class PostgresStore:
    """Tool results in PostgreSQL, through a psycopg connection pool.

    Parameters
    ----------
    conninfo
        A libpq connection string or URL (``postgresql://user@host:5432/db``).
    pool
        An open ``psycopg_pool.ConnectionPool`` to use instead (not closed by
        :meth:`close`).
    min_size, max_size
        Size of the pool made from ``conninfo``.
    wait_seconds
        How long one operation waits for a connection (and for the pool to open).
    retry_after
        After a failure to connect, seconds during which operations fail at once
        instead of waiting again; then the next one tries.
    """

    def __init__(
        self,
        conninfo: str | None = None,
        *,
        pool: ConnectionPool[Any] | None = None,
        min_size: int = 1,
        max_size: int = 4,
        wait_seconds: float = 5.0,
        retry_after: float = 10.0,
    ) -> None:
        if (conninfo is None) == (pool is None):
            raise ValueError("give exactly one of conninfo and pool")
        self.conninfo = conninfo
        self.wait_seconds = wait_seconds
        self.retry_after = retry_after
        self._pool: ConnectionPool[Any] | None = pool
        self._own_pool = pool is None
        self._sizes = (min_size, max_size)
        self._ready = False
        self._lock = threading.Lock()
        self._down_until = 0.0  # monotonic time until which a failure is not retried
        self._down_error = ""
        self._in_use = 0  # connections this store holds now (busy is told from down by it)
        self._count = threading.Lock()

    def __repr__(self) -> str:
        return "PostgresStore(...)"  # the connection string may hold a password

    # -- writing ---------------------------------------------------------------------------

    def write(self, record: ToolResultRecord) -> ToolResultRecord:
        with self._connection() as conn:
            row = conn.execute(
                _UPSERT + " RETURNING id, date_created, date_updated", _row(record, now_ms())
            ).fetchone()
        assert row is not None
        return replace(record, id=str(row[0]), date_created=_utc(row[1]), date_updated=_utc(row[2]))

    def write_many(self, records: Iterable[ToolResultRecord]) -> None:
        batch = list(records)
        if not batch:
            return
        now = now_ms()
        keys = {(r.tenant_id, r.interaction_process_id, r.sequence) for r in batch}
        if len(keys) < len(batch):
            # A key twice: one statement cannot update a row twice, so upsert row by
            # row, in order (the last one wins, as with separate writes).
            rows = [_row(r, now) for r in batch]
            with self._connection() as conn, conn.transaction(), conn.cursor() as cursor:
                cursor.executemany(_UPSERT, rows)
            return
        runs: dict[str, uuid.UUID] = {}
        for r in batch:
            if r.interaction_process_id not in runs:
                check_run_id(r.interaction_process_id)  # uuid.UUID() would take other spellings
                runs[r.interaction_process_id] = uuid.UUID(r.interaction_process_id)
        columns = (
            now,
            now,
            [runs[r.interaction_process_id] for r in batch],
            [r.sequence for r in batch],
            [r.tool_call_id for r in batch],
            [r.result for r in batch],
            [r.stored_length for r in batch],
            [r.original_length for r in batch],
            [r.is_truncated for r in batch],
            [r.is_error for r in batch],
            [r.tenant_id or "" for r in batch],
            [uuid.UUID(r.id) if r.id else None for r in batch],
        )
        with self._connection() as conn, conn.transaction():
            conn.execute(_UPSERT_MANY, columns)

    # -- reading ---------------------------------------------------------------------------

    def get(
        self, tenant_id: str | None, interaction_process_id: str, sequence: int
    ) -> ToolResultRecord | None:
        run = _uuid(interaction_process_id)
        if run is None:
            return None
        with self._connection() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM tool_results WHERE {_KEY} AND sequence = %s",
                (tenant_id or "", run, sequence),
            ).fetchone()
        return _record(row) if row is not None else None

    def list(self, tenant_id: str | None, interaction_process_id: str) -> list[ToolResultRecord]:
        run = _uuid(interaction_process_id)
        if run is None:
            return []
        with self._connection() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM tool_results WHERE {_KEY} ORDER BY sequence",
                (tenant_id or "", run),
            ).fetchall()
        return [_record(row) for row in rows]

    def list_page(
        self,
        tenant_id: str | None,
        interaction_process_id: str,
        *,
        after: int = 0,
        limit: int,
        with_result: bool = True,
    ) -> list[ToolResultRecord]:
        run = _uuid(interaction_process_id)
        if run is None:
            return []
        columns = _COLUMNS if with_result else _META_COLUMNS
        with self._connection() as conn:
            rows = conn.execute(
                f"SELECT {columns} FROM tool_results WHERE {_KEY} AND sequence > %s "
                "ORDER BY sequence LIMIT %s",
                (tenant_id or "", run, after, limit),
            ).fetchall()
        return [_record(row) for row in rows]

    def get_range(
        self,
        tenant_id: str | None,
        interaction_process_id: str,
        sequence: int,
        offset: int,
        length: int,
    ) -> StoredRange | None:
        run = _uuid(interaction_process_id)
        if run is None:
            return None
        with self._connection() as conn:
            row = conn.execute(
                "SELECT substring(convert_to(result, 'UTF8') FROM %s FOR %s), stored_length, "
                f"original_length, tool_call_id FROM tool_results WHERE {_KEY} AND sequence = %s",
                (offset + 1, length, tenant_id or "", run, sequence),
            ).fetchone()
        if row is None:
            return None
        return StoredRange(bytes(row[0] or b""), offset, row[1] or 0, row[2], row[3])

    def close(self) -> None:
        with self._lock:
            if self._pool is not None and self._own_pool:
                self._pool.close()
                self._pool = None
            self._ready = False

    # -- the pool and the schema -----------------------------------------------------------

    @contextmanager
    def _connection(self) -> Generator[Any]:
        """A pooled connection, or a :class:`StoreError` (at once while the server is
        known to be down; see the module docstring)."""
        from psycopg import OperationalError
        from psycopg_pool import PoolTimeout

        wait = self._down_until - time.monotonic()
        if wait > 0:
            raise StoreError(
                f"the PostgreSQL store is unreachable ({self._down_error}); not waiting: "
                f"the next try is in {wait:.0f} s"
            )
        errors = self._connection_errors()
        try:
            with self._open().connection(timeout=self.wait_seconds) as conn, self._holding():
                yield conn
        except PoolTimeout as e:
            if self._busy(errors):
                raise StoreBusyError(
                    f"the PostgreSQL store is busy: no pooled connection was free within "
                    f"{self.wait_seconds:g} s; the server answers, so the next operation "
                    "waits again"
                ) from e
            self._mark_down(e)
            raise StoreError(f"the PostgreSQL store is unreachable: {self._down_error}") from e
        except OperationalError as e:
            self._mark_down(e)
            raise StoreError(f"the PostgreSQL store is unreachable: {self._down_error}") from e

    @contextmanager
    def _holding(self) -> Generator[None]:
        with self._count:
            self._in_use += 1
        try:
            yield
        finally:
            with self._count:
                self._in_use -= 1

    def _busy(self, errors_before: int) -> bool:
        """Whether a wait for a connection that timed out met a busy pool (every
        connection in use, none failing to connect) rather than a server that is down."""
        if self._connection_errors() > errors_before:
            return False  # the pool tried to connect while we waited, and failed
        with self._count:
            held = self._in_use
        return held > 0 or not self._own_pool  # another user of a shared pool may hold them

    def _connection_errors(self) -> int:
        pool = self._pool
        return 0 if pool is None else pool.get_stats().get("connections_errors", 0)

    def _mark_down(self, error: BaseException) -> None:
        self._down_error = scrub(f"{type(error).__name__}: {error}")
        self._down_until = time.monotonic() + self.retry_after

    def _open(self) -> ConnectionPool[Any]:
        with self._lock:
            if self._pool is None:
                from psycopg_pool import ConnectionPool

                min_size, max_size = self._sizes
                assert self.conninfo is not None
                self._pool = ConnectionPool(
                    self.conninfo,
                    min_size=min_size,
                    max_size=max_size,
                    kwargs={
                        "autocommit": True,
                        "connect_timeout": max(2, round(self.wait_seconds)),
                    },
                    open=False,
                )
                try:
                    self._pool.open(wait=True, timeout=self.wait_seconds)
                except Exception as e:
                    self._pool.close()
                    self._pool = None
                    self._down_error = scrub(f"{type(e).__name__}: {e}")
                    self._down_until = time.monotonic() + self.retry_after
                    raise StoreError(f"cannot connect to the PostgreSQL store: {e}") from e
            if not self._ready:
                with self._pool.connection(timeout=self.wait_seconds) as conn:
                    _ensure_schema(conn)
                self._ready = True
            return self._pool


def _ensure_schema(conn: Any) -> None:
    """Create the tables on first use; refuse a schema newer than this code reads."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        conn.execute("CREATE TABLE IF NOT EXISTS tool_results_schema (version integer NOT NULL)")
        row = conn.execute("SELECT max(version) FROM tool_results_schema").fetchone()
        version = row[0] if row else None
        if version is None:
            conn.execute(_SCHEMA)
            conn.execute("INSERT INTO tool_results_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
        elif version > SCHEMA_VERSION:
            raise StoreError(
                f"the store has schema version {version}; this chatlas_like knows up to "
                f"version {SCHEMA_VERSION}: upgrade chatlas_like to use it"
            )


def _row(record: ToolResultRecord, now: datetime) -> tuple[Any, ...]:
    check_run_id(record.interaction_process_id)  # uuid.UUID() would take other spellings
    return (
        uuid.UUID(record.interaction_process_id),
        record.sequence,
        record.tool_call_id,
        record.result,
        record.stored_length,
        record.original_length,
        record.is_truncated,
        record.is_error,
        record.tenant_id or "",
        uuid.UUID(record.id) if record.id else uuid.uuid4(),
        now,
        now,
    )


def _record(row: Sequence[Any]) -> ToolResultRecord:
    return ToolResultRecord(
        interaction_process_id=str(row[0]),
        sequence=row[1],
        tool_call_id=row[2],
        result=row[3],
        stored_length=row[4],
        original_length=row[5],
        is_truncated=row[6],
        is_error=row[7],
        tenant_id=row[8] or None,
        id=str(row[9]),
        date_created=_utc(row[10]),
        date_updated=_utc(row[11]),
    )


def _uuid(text: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(text)
    except ValueError:
        return None


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)
