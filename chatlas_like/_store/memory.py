"""MemoryStore: tool results kept in this process only, for a chat without a store of its own.

A chat with a context budget elides old results from what it sends and lets the model
read them back (``read_tool_result``): when no store is attached, their whole text is
kept here, for the life of the chat. The same protocol as the other stores, without
durability or sharing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import replace

from ._protocol import StoredRange, ToolResultStore
from ._record import ToolResultRecord, check_run_id, new_ids, now_ms

__all__ = ["MemoryStore"]

_Key = tuple[str, str, int]


class MemoryStore(ToolResultStore):
    """A :class:`ToolResultStore` in a dict: fast, and gone with the process."""

    def __init__(self) -> None:
        self._records: dict[_Key, ToolResultRecord] = {}
        self._lock = threading.Lock()

    def write(self, record: ToolResultRecord) -> ToolResultRecord:
        with self._lock:
            return self._write(record)

    def write_many(self, records: Iterable[ToolResultRecord]) -> None:
        with self._lock:
            for record in records:
                self._write(record)

    def _write(self, record: ToolResultRecord) -> ToolResultRecord:
        check_run_id(record.interaction_process_id)
        key = _key(record.tenant_id, record.interaction_process_id, record.sequence)
        now = now_ms()
        before = self._records.get(key)
        stored = replace(
            record,
            id=before.id if before is not None else new_ids(1)[0],
            date_created=before.date_created if before is not None else now,
            date_updated=now,
        )
        self._records[key] = stored
        return stored

    def get(
        self, tenant_id: str | None, interaction_process_id: str, sequence: int
    ) -> ToolResultRecord | None:
        with self._lock:
            return self._records.get(_key(tenant_id, interaction_process_id, sequence))

    def list(self, tenant_id: str | None, interaction_process_id: str) -> list[ToolResultRecord]:
        return self.list_page(tenant_id, interaction_process_id, limit=len(self._records) + 1)

    def list_page(
        self,
        tenant_id: str | None,
        interaction_process_id: str,
        *,
        after: int = 0,
        limit: int,
        with_result: bool = True,
    ) -> list[ToolResultRecord]:
        run = (tenant_id or "", interaction_process_id)
        with self._lock:
            found = sorted(
                (r for k, r in self._records.items() if k[:2] == run and k[2] > after),
                key=lambda r: r.sequence,
            )[:limit]
        return found if with_result else [replace(r, result=None) for r in found]

    def get_range(
        self,
        tenant_id: str | None,
        interaction_process_id: str,
        sequence: int,
        offset: int,
        length: int,
    ) -> StoredRange | None:
        record = self.get(tenant_id, interaction_process_id, sequence)
        if record is None:
            return None
        data = (record.result or "").encode()
        return StoredRange(
            data[offset : offset + length],
            offset,
            record.stored_length or len(data),
            record.original_length,
            record.tool_call_id,
        )

    def close(self) -> None:
        return None


def _key(tenant_id: str | None, run: str, sequence: int) -> _Key:
    return (tenant_id or "", run, sequence)
