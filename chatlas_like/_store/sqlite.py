"""SqliteStore: the embedded default tool-result store, one file in WAL mode.

Several processes may write to one file at once: WAL lets readers and one writer work
together, and each connection waits (``timeout``, 30 s by default) for another
process's write lock instead of failing. Each write is one transaction; ``write_many``
puts a batch in one. ``synchronous=NORMAL`` (the usual WAL setting) keeps the file
intact if a process or the machine dies; a machine crash may lose the last commits.

A file deleted (or replaced) while the store has it open would go on taking writes
into the unlinked file, lost to everyone: each write first checks that the path still
names the file that was opened, and otherwise warns (:class:`StoreWarning`), lets the
old file go and writes to a new one at the path.

Timestamps are kept as integer milliseconds since the Unix epoch (UTC), so a rewrite
can move ``date_updated`` forward by at least one millisecond in SQL; a tenant of None
is kept as ``''`` so that it takes part in the key (SQL's NULLs never conflict).
"""

from __future__ import annotations

import os
import threading
import time
import uuid
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._protocol import SCHEMA_VERSION, StoredRange, StoreError, StoreWarning
from ._record import ToolResultRecord, check_run_id, new_ids, now_ms

if TYPE_CHECKING:
    import sqlite3

__all__ = ["SqliteStore"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_COLUMNS = (
    "interaction_process_id, sequence, tool_call_id, result, stored_length, original_length, "
    "is_truncated, is_error, tenant_id, id, date_created, date_updated"
)
_META_COLUMNS = _COLUMNS.replace(" result,", " NULL,")  # a listing without the bodies
_SCHEMA = """
CREATE TABLE tool_results (
    interaction_process_id TEXT NOT NULL,
    sequence INTEGER NOT NULL CHECK (sequence >= 1),
    tool_call_id TEXT,
    result TEXT,
    stored_length INTEGER,
    original_length INTEGER,
    is_truncated INTEGER NOT NULL,
    is_error INTEGER NOT NULL,
    tenant_id TEXT NOT NULL,
    id TEXT NOT NULL UNIQUE,
    date_created INTEGER NOT NULL,
    date_updated INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, interaction_process_id, sequence)
);
"""
_UPSERT = f"""
INSERT INTO tool_results ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (tenant_id, interaction_process_id, sequence) DO UPDATE SET
    tool_call_id = excluded.tool_call_id,
    result = excluded.result,
    stored_length = excluded.stored_length,
    original_length = excluded.original_length,
    is_truncated = excluded.is_truncated,
    is_error = excluded.is_error,
    date_updated = max(excluded.date_updated, tool_results.date_updated + 1)
"""
_KEY = "tenant_id = ? AND interaction_process_id = ?"


class SqliteStore:
    """Tool results in one SQLite file (created with its schema on first use).

    Parameters
    ----------
    path
        The database file.
    timeout
        Seconds to wait for another process's write lock.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._file: tuple[int, int] | None = None  # (device, inode) of the file opened

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.path)!r})"

    # -- writing ---------------------------------------------------------------------------

    def write(self, record: ToolResultRecord) -> ToolResultRecord:
        with self._lock:
            self._check_file()
            row = (
                self._connection()
                .execute(
                    _UPSERT + " RETURNING id, date_created, date_updated", _row(record, now_ms())
                )
                .fetchone()
            )
        return _stored(record, row)

    def write_many(self, records: Iterable[ToolResultRecord]) -> None:
        rows = _rows(list(records), now_ms())
        if not rows:
            return
        with self._lock:
            self._check_file()
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(_UPSERT, rows)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    # -- reading ---------------------------------------------------------------------------

    def get(
        self, tenant_id: str | None, interaction_process_id: str, sequence: int
    ) -> ToolResultRecord | None:
        with self._lock:
            row = (
                self._connection()
                .execute(
                    f"SELECT {_COLUMNS} FROM tool_results WHERE {_KEY} AND sequence = ?",
                    (tenant_id or "", interaction_process_id, sequence),
                )
                .fetchone()
            )
        return _record(row) if row is not None else None

    def list(self, tenant_id: str | None, interaction_process_id: str) -> list[ToolResultRecord]:
        with self._lock:
            rows = (
                self._connection()
                .execute(
                    f"SELECT {_COLUMNS} FROM tool_results WHERE {_KEY} ORDER BY sequence",
                    (tenant_id or "", interaction_process_id),
                )
                .fetchall()
            )
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
        columns = _COLUMNS if with_result else _META_COLUMNS
        with self._lock:
            rows = (
                self._connection()
                .execute(
                    f"SELECT {columns} FROM tool_results WHERE {_KEY} AND sequence > ? "
                    "ORDER BY sequence LIMIT ?",
                    (tenant_id or "", interaction_process_id, after, limit),
                )
                .fetchall()
            )
        return [_record(row) for row in rows]

    def get_range(
        self,
        tenant_id: str | None,
        interaction_process_id: str,
        sequence: int,
        offset: int,
        length: int,
    ) -> StoredRange | None:
        with self._lock:
            row = (
                self._connection()
                .execute(
                    "SELECT substr(CAST(result AS BLOB), ?, ?), stored_length, original_length, "
                    f"tool_call_id FROM tool_results WHERE {_KEY} AND sequence = ?",
                    (offset + 1, length, tenant_id or "", interaction_process_id, sequence),
                )
                .fetchone()
            )
        if row is None:
            return None
        return StoredRange(bytes(row[0] or b""), offset, row[1] or 0, row[2], row[3])

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- the connection and the schema -----------------------------------------------------

    def _check_file(self) -> None:
        """Warn and start over when the file opened is no longer the one at the path.

        One ``stat`` per write (not per record): the price of never writing into a file
        that was deleted under us.
        """
        if self._conn is None or self._file is None:
            return
        now = _identity(self.path)
        if now == self._file:
            return
        what = "deleted" if now is None else "replaced by another file"
        warnings.warn(
            f"the tool-result store file {self.path.name} was {what} while in use: results "
            f"written to it before are gone from {self.path.name}; writing to "
            f"{'a new file' if now is None else 'the file now'} there",
            StoreWarning,
            stacklevel=3,
        )
        self._conn.close()  # lets the unlinked file (and its WAL) go
        self._conn = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            import sqlite3

            deadline = time.monotonic() + self.timeout
            while True:
                try:
                    self._conn = self._open(sqlite3)
                    self._file = _identity(self.path)
                    break
                except sqlite3.OperationalError as e:
                    # Switching a new file to WAL needs it alone for a moment; SQLite
                    # answers "locked" at once instead of waiting, so wait here.
                    if "locked" not in str(e) or time.monotonic() > deadline:
                        raise StoreError(
                            f"cannot open the tool-result store {self.path}: {e}"
                        ) from e
                    time.sleep(0.02)
                except sqlite3.Error as e:
                    raise StoreError(f"cannot open the tool-result store {self.path}: {e}") from e
        return self._conn

    def _open(self, sqlite3: Any) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            _ensure_schema(conn)
        except BaseException:
            conn.close()
            raise
        return conn


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return (found.st_dev, found.st_ino)


def _ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the tables on first use; refuse a schema newer than this code reads."""
    if _schema_version(conn) == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")  # one process creates; the others wait, then see it
    try:
        version = _schema_version(conn)
        if version is None:
            conn.execute("CREATE TABLE tool_results_schema (version INTEGER NOT NULL)")
            conn.execute(_SCHEMA)
            conn.execute("INSERT INTO tool_results_schema (version) VALUES (?)", (SCHEMA_VERSION,))
        elif version > SCHEMA_VERSION:
            raise StoreError(
                f"the store has schema version {version}; this chatlas_like knows up to "
                f"version {SCHEMA_VERSION}: upgrade chatlas_like to use it"
            )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _schema_version(conn: sqlite3.Connection) -> int | None:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tool_results_schema'"
    ).fetchone()
    if exists is None:
        return None
    row = conn.execute("SELECT max(version) FROM tool_results_schema").fetchone()
    return int(row[0]) if row and row[0] is not None else None


def _row(record: ToolResultRecord, now: datetime) -> tuple[Any, ...]:
    check_run_id(record.interaction_process_id)
    ms = _to_ms(now)
    return (
        record.interaction_process_id,
        record.sequence,
        record.tool_call_id,
        record.result,
        record.stored_length,
        record.original_length,
        int(record.is_truncated),
        int(record.is_error),
        record.tenant_id or "",
        record.id or str(uuid.uuid4()),
        ms,
        ms,
    )


def _rows(records: list[ToolResultRecord], now: datetime) -> list[tuple[Any, ...]]:
    """The rows of a batch: its time and its new ids made once for all (see new_ids)."""
    for run_id in {r.interaction_process_id for r in records}:
        check_run_id(run_id)
    ms = _to_ms(now)
    ids = iter(new_ids(sum(1 for r in records if not r.id)))
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
            r.tenant_id or "",
            r.id or next(ids),
            ms,
            ms,
        )
        for r in records
    ]


def _record(row: Sequence[Any]) -> ToolResultRecord:
    return ToolResultRecord(
        interaction_process_id=row[0],
        sequence=row[1],
        tool_call_id=row[2],
        result=row[3],
        stored_length=row[4],
        original_length=row[5],
        is_truncated=bool(row[6]),
        is_error=bool(row[7]),
        tenant_id=row[8] or None,
        id=row[9],
        date_created=_from_ms(row[10]),
        date_updated=_from_ms(row[11]),
    )


def _stored(record: ToolResultRecord, returned: Sequence[Any]) -> ToolResultRecord:
    return replace(
        record,
        id=returned[0],
        date_created=_from_ms(returned[1]),
        date_updated=_from_ms(returned[2]),
    )


def _to_ms(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(milliseconds=1)


@lru_cache(maxsize=4096)  # the rows of one batch share their dates
def _from_ms(ms: int) -> datetime:
    return _EPOCH + timedelta(milliseconds=ms)
