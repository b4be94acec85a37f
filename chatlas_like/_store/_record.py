"""One stored tool result: the record, its JSON form, and its timestamps.

Python names are snake_case, JSON names camelCase (``FIELDS`` pairs them, in the order
JSON shows them). Every field is present in JSON; empty ones are null. Timestamps are
UTC with millisecond precision, written as RFC 3339 (``2025-01-02T03:04:05.678Z``).
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

__all__ = [
    "FIELDS",
    "ToolResultRecord",
    "check_run_id",
    "format_timestamp",
    "new_ids",
    "now_ms",
    "parse_timestamp",
]

FIELDS: tuple[tuple[str, str], ...] = (
    ("interaction_process_id", "interactionProcessId"),
    ("sequence", "sequence"),
    ("tool_call_id", "toolCallId"),
    ("result", "result"),
    ("stored_length", "storedLength"),
    ("original_length", "originalLength"),
    ("is_truncated", "isTruncated"),
    ("is_error", "isError"),
    ("tenant_id", "tenantId"),
    ("id", "id"),
    ("date_created", "dateCreated"),
    ("date_updated", "dateUpdated"),
)
_DATES = frozenset({"date_created", "date_updated"})


@dataclass(frozen=True, slots=True)
class ToolResultRecord:
    """A tool result kept in a :class:`ToolResultStore`.

    The key is (``tenant_id``, ``interaction_process_id``, ``sequence``). ``id`` and
    the dates are set by the store: ``id`` and ``date_created`` on the first write,
    ``date_updated`` on every write.

    Parameters
    ----------
    interaction_process_id
        The run the result belongs to: the chat's ``run_id`` (a UUID).
    sequence
        1-based ordinal of the result in its run, in call order.
    tool_call_id
        The id of the tool request the result answers.
    result
        The result as the model would read it, cut past the store's limit
        (``store_max_bytes``).
    stored_length, original_length
        UTF-8 bytes of ``result`` as kept, and before any cut.
    is_truncated
        Whether ``result`` was cut.
    is_error
        Whether the call failed (``error``, ``exception`` or ``refused`` outcome).
    tenant_id
        Whose result it is; None for a chat without a tenant (never served by the
        read API).
    id
        The record's own UUID.
    date_created, date_updated
        When the record was first written and last rewritten (UTC).
    """

    interaction_process_id: str
    sequence: int
    tool_call_id: str | None = None
    result: str | None = None
    stored_length: int | None = None
    original_length: int | None = None
    is_truncated: bool = False
    is_error: bool = False
    tenant_id: str | None = None
    id: str | None = None
    date_created: datetime | None = None
    date_updated: datetime | None = None

    def __post_init__(self) -> None:
        if self.sequence < 1:
            raise ValueError(f"sequence must be 1 or more, got {self.sequence}")
        if self.tenant_id == "":
            raise ValueError("tenant_id must be None or a non-empty string")

    def to_json(self) -> dict[str, Any]:
        """The record with camelCase names and RFC 3339 dates, every field present."""
        data: dict[str, Any] = {}
        for name, json_name in FIELDS:
            value = getattr(self, name)
            if name in _DATES and value is not None:
                value = format_timestamp(value)
            data[json_name] = value
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ToolResultRecord:
        """A record from :meth:`to_json`'s output."""
        values: dict[str, Any] = {}
        for name, json_name in FIELDS:
            value = data.get(json_name)
            if name in _DATES and value is not None:
                value = parse_timestamp(value)
            values[name] = value
        values["is_truncated"] = bool(values["is_truncated"])
        values["is_error"] = bool(values["is_error"])
        return cls(**values)


def check_run_id(run_id: str) -> None:
    """Refuse a run id that is not a canonical UUID (lower-case, hyphenated).

    Every backend refuses it when writing: SQLite would keep any text, which the read
    API (that looks runs up by canonical UUID) could then never serve.
    """
    if not (isinstance(run_id, str) and _CANONICAL_UUID.fullmatch(run_id)):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ValueError(
            f"interaction_process_id must be a canonical UUID (lower-case, with hyphens, "
            f"as str(uuid.uuid4()) writes it), got {run_id!r}"
        )


def now_ms() -> datetime:
    """The current UTC time, cut to whole milliseconds."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def format_timestamp(moment: datetime) -> str:
    """``moment`` as RFC 3339 UTC with milliseconds and ``Z``."""
    utc = moment.astimezone(UTC) if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_timestamp(text: str) -> datetime:
    """A timestamp written by :func:`format_timestamp` (or any ISO 8601 time)."""
    moment = datetime.fromisoformat(text)
    return moment.astimezone(UTC) if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def new_ids(count: int) -> list[str]:
    """``count`` random (version 4) UUIDs as text, as ``str(uuid.uuid4())`` writes them.

    Made from one read of the system's random source and a few slice copies for the
    whole batch: ``uuid.uuid4()`` per record (a read, a ``UUID`` object and its text
    each) was half the cost of storing a batch of results.
    """
    if count < 16:
        return [str(uuid.uuid4()) for _ in range(count)]
    raw = bytearray(os.urandom(16 * count))
    raw[6::16] = bytes((b & 0x0F) | 0x40 for b in raw[6::16])  # version 4
    raw[8::16] = bytes((b & 0x3F) | 0x80 for b in raw[8::16])  # RFC 4122 variant
    digits = raw.hex().encode()  # 32 hex digits per id
    text = bytearray(b"-" * (37 * count))  # 36 characters and a space per id
    for source, target, width in _GROUPS:  # 8-4-4-4-12: digit k of every id at once
        for k in range(width):
            text[target + k :: 37] = digits[source + k :: 32]
    text[36::37] = b" " * count
    return text.decode().split()


# (first hex digit, first character, width) of each group of ``8-4-4-4-12``.
_GROUPS = ((0, 0, 8), (8, 9, 4), (12, 14, 4), (16, 19, 4), (20, 24, 12))
