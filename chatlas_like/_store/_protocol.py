"""The ToolResultStore protocol that every backend implements, and its errors."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .._core.errors import ChatlasLikeError
from ._record import ToolResultRecord

__all__ = [
    "SCHEMA_VERSION",
    "StoreBusyError",
    "StoreError",
    "StoreWarning",
    "StoredRange",
    "ToolResultStore",
]

SCHEMA_VERSION = 1


class StoreError(ChatlasLikeError):
    """A tool-result store could not be opened, read or written."""


class StoreBusyError(StoreError):
    """The store answers but had no free connection in time: try again (a server that
    is down raises plain :class:`StoreError`)."""


class StoreWarning(UserWarning):
    """A result could not be written to the store; the conversation carried on."""


@dataclass(frozen=True, slots=True)
class StoredRange:
    """Bytes ``offset`` to ``offset + len(data)`` of a stored result (UTF-8), and the id
    of the tool call it answers."""

    data: bytes
    offset: int
    stored_length: int
    original_length: int | None
    tool_call_id: str | None = None


@runtime_checkable
class ToolResultStore(Protocol):
    """Where tool results are kept apart from the conversation, by (tenant, run, sequence).

    Backends: :class:`SqliteStore` (one file, the default) and :class:`PostgresStore`.
    A ``tenant_id`` of None is the tenant-less partition (a chat without a tenant).
    The schema is created on first use, with a version number for later migrations.
    """

    def write(self, record: ToolResultRecord) -> ToolResultRecord:
        """Insert or rewrite ``record`` by its key; the record as stored (id, dates).

        A rewrite keeps ``id`` and ``date_created`` and moves ``date_updated`` forward.
        """
        ...

    def write_many(self, records: Iterable[ToolResultRecord]) -> None:
        """:meth:`write` each record, all in one transaction."""
        ...

    def get(
        self, tenant_id: str | None, interaction_process_id: str, sequence: int
    ) -> ToolResultRecord | None:
        """The record with this key, or None."""
        ...

    def list(self, tenant_id: str | None, interaction_process_id: str) -> list[ToolResultRecord]:
        """The run's records of this tenant, by sequence."""
        ...

    def list_page(
        self,
        tenant_id: str | None,
        interaction_process_id: str,
        *,
        after: int = 0,
        limit: int,
        with_result: bool = True,
    ) -> list[ToolResultRecord]:
        """Up to ``limit`` of the run's records with a sequence above ``after``, by
        sequence; without ``with_result`` their ``result`` is None (not read at all)."""
        ...

    def get_range(
        self,
        tenant_id: str | None,
        interaction_process_id: str,
        sequence: int,
        offset: int,
        length: int,
    ) -> StoredRange | None:
        """Up to ``length`` bytes of a stored result from byte ``offset``; None if absent."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
