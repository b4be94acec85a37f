"""A chat attached to a store: the keeper that writes each result, and the paging tool.

The keeper runs in the finaliser (:mod:`chatlas_like._tools.finalize`), once per batch of
results, with each result's whole model-facing text: it writes one record per result
(cut past ``store_max_bytes``), errors included, in one transaction. A write that
fails does not stop the conversation: it warns (:class:`StoreWarning`) and the
results go on without paging.

With paging on, the chat also offers the model ``read_tool_result(sequence, offset)``,
which reads a byte range of a stored result of the same tenant, sized to fit the
chat's ``max_result_bytes``: from the chat's own run, or from a run it was loaded or
copied from, and only a result whose tool call the chat's history answers. A chat
file that names someone else's run can therefore not read it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from .._core.redact import safe_description
from .._core.tool_result import WholeResult
from .._core.utf8 import cut_to_bytes, utf8_length
from .._observe.telemetry import store_failed
from .._tools.finalize import READ_MORE_TOOL
from .._tools.tool import Tool
from ._protocol import StoredRange, StoreWarning, ToolResultStore
from ._record import ToolResultRecord

__all__ = ["StoreAttachment"]

_HEADER_ROOM = 400  # bytes of a page left for its position line


@dataclass(slots=True)
class StoreAttachment:
    """Where a chat's results go, whose they are, and whether the model may page."""

    store: ToolResultStore
    tenant_id: str | None = None
    paging: bool = False

    def __post_init__(self) -> None:
        if self.tenant_id == "":
            raise ValueError("tenant_id must be None or a non-empty string")

    def __call__(
        self, run_id: str, batch: Sequence[WholeResult], store_max_bytes: int
    ) -> list[int | None]:
        """The keeper: write the batch; per result, the bytes the model may page through."""
        records = [self.record(run_id, item, store_max_bytes) for item in batch]
        try:
            self.store.write_many(records)
        except Exception as e:
            store_failed(run_id, [r.sequence for r in records], e)
            warnings.warn(
                f"tool results {records[0].sequence}-{records[-1].sequence} of run {run_id} "
                f"were not stored: {safe_description(e)}",
                StoreWarning,
                stacklevel=2,
            )
            return [None] * len(records)
        return [r.stored_length if self.paging else None for r in records]

    def record(self, run_id: str, item: WholeResult, store_max_bytes: int) -> ToolResultRecord:
        """The record of one result, cut to ``store_max_bytes`` on a character boundary."""
        text, size = item.text, item.size
        if size > store_max_bytes:
            text = cut_to_bytes(text, store_max_bytes)
        request = item.result.request
        return ToolResultRecord(
            interaction_process_id=run_id,
            sequence=item.sequence,
            tool_call_id=request.id if request is not None else None,
            result=text,
            stored_length=size if size <= store_max_bytes else utf8_length(text),
            original_length=size,
            is_truncated=size > store_max_bytes,
            is_error=item.result.is_error,
            tenant_id=self.tenant_id,
        )

    def paging_tool(
        self,
        runs: Callable[[], Sequence[str]],
        answered: Callable[[], Collection[str]],
        page_bytes: Callable[[], int],
    ) -> Tool:
        """The ``read_tool_result`` tool: reads the runs ``runs()`` names (the chat's own
        first), only results whose tool call id is among ``answered()``."""
        store, tenant_id = self.store, self.tenant_id

        def find(sequence: int, offset: int, length: int) -> StoredRange | None:
            ours = answered()
            for run in runs():
                found = store.get_range(tenant_id, run, sequence, offset, length)
                if found is not None and found.tool_call_id in ours:
                    return found
            return None

        def read_tool_result(sequence: int, offset: int = 0) -> str:
            """Read more of a tool result that was cut short.

            A cut result ends with a note giving its sequence number and the offset to
            read from; each answer starts with a line giving the next offset.

            Parameters
            ----------
            sequence
                The sequence number of the result, from the note.
            offset
                The byte offset to read from.
            """
            if offset < 0:
                raise ValueError("offset must be 0 or more")
            length = max(1, page_bytes() - _HEADER_ROOM)
            found = find(sequence, offset, length)
            if found is None:
                raise ValueError(f"no stored tool result with sequence {sequence} in this chat")
            if offset >= found.stored_length:
                raise ValueError(
                    f"offset {offset} is past the end: result {sequence} has "
                    f"{found.stored_length} bytes stored"
                )
            start, text = _whole_characters(found.data, offset)
            end = start + utf8_length(text)
            return (
                _page_header(sequence, start, end, found.stored_length, found.original_length)
                + text
            )

        return Tool.from_func(read_tool_result, name=READ_MORE_TOOL)


def _whole_characters(data: bytes, offset: int) -> tuple[int, str]:
    """The complete UTF-8 characters in ``data`` and the offset of the first one."""
    skip = 0
    while skip < len(data) and skip < 3 and data[skip] & 0xC0 == 0x80:
        skip += 1  # the tail of a character that began before the offset
    return offset + skip, data[skip:].decode(errors="ignore")


def _page_header(sequence: int, start: int, end: int, stored: int, original: int | None) -> str:
    where = f"[bytes {start:,}-{end:,} of {stored:,} stored"
    if original is not None and original > stored:
        where += f" (the store kept {stored:,} of {original:,} bytes)"
    if end < stored:
        return f"{where}; next: {READ_MORE_TOOL}(sequence={sequence}, offset={end})]\n"
    return f"{where}; this is the end]\n"
