"""The tool-result store: each result of a run kept apart from the conversation.

A record per result, keyed by (tenant, run, sequence) (:class:`ToolResultRecord`),
in a :class:`ToolResultStore`: :class:`SqliteStore` (the embedded default: one file,
WAL mode, several processes at once) or :class:`PostgresStore` (psycopg 3 with a
pool, for apps on several machines). A chat attached to a store
(``ChatAnthropic(store=..., tenant_id=...)``) writes every result as it is produced,
errors included; with ``paging=True`` the model may read past the cut of a long
result with the ``read_tool_result`` tool. ``python -m chatlas_like serve-results``
serves the records over HTTP (see :mod:`chatlas_like._cli.serve_results`).
"""

from __future__ import annotations

import os

from ._protocol import (
    SCHEMA_VERSION,
    StoreBusyError,
    StoredRange,
    StoreError,
    StoreWarning,
    ToolResultStore,
)
from ._record import ToolResultRecord
from .postgres import PostgresStore
from .sqlite import SqliteStore

__all__ = [
    "SCHEMA_VERSION",
    "PostgresStore",
    "SqliteStore",
    "StoreBusyError",
    "StoreError",
    "StoreWarning",
    "StoredRange",
    "ToolResultRecord",
    "ToolResultStore",
    "open_store",
]

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def open_store(target: ToolResultStore | str | os.PathLike[str]) -> ToolResultStore:
    """A store from a URL or a path (a store is returned as is).

    ``postgresql://...`` (or ``postgres://``) opens a :class:`PostgresStore`;
    ``sqlite:///relative.db``, ``sqlite:////absolute.db`` or a plain file path opens
    a :class:`SqliteStore`.
    """
    if isinstance(target, ToolResultStore):
        return target
    text = os.fspath(target)
    if text.startswith(_POSTGRES_SCHEMES):
        return PostgresStore(text)
    if text.startswith("sqlite:///"):
        text = text.removeprefix("sqlite:///")
    elif "://" in text:
        raise ValueError(f"unknown store URL scheme in {text.split('://', 1)[0]!r}")
    if not text:
        raise ValueError("a SQLite store needs a file path")
    return SqliteStore(text)
