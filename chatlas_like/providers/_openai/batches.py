"""OpenAI's Batch API as data (no SDK, no I/O): the input file's lines, where a batch
stands, and what its output and error files say of each request.

A batch is a JSON-lines file of ``{"custom_id", "method": "POST", "url", "body"}``
uploaded with ``purpose="batch"``; the batch's ``output_file_id`` holds the answered
requests (``response.status_code`` 200) and its ``error_file_id`` the rest (an HTTP
error as ``response``, or an ``error`` such as ``batch_expired``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from ..._core.redact import redact
from .._types import BatchStatus
from .content import as_list, as_map

__all__ = ["ENDED", "batch_failure", "batch_status", "input_file", "outcome", "output_lines"]

ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
# The error codes of requests the batch never ran, as batch_chat's warnings name them.
_NOT_RUN = {"batch_expired": "expired", "batch_cancelled": "canceled"}


def input_file(endpoint: str, bodies: Mapping[str, Mapping[str, Any]]) -> bytes:
    """The batch input file: one request line per ``{custom id: body}``."""
    return b"".join(
        orjson.dumps({"custom_id": key, "method": "POST", "url": endpoint, "body": body}) + b"\n"
        for key, body in bodies.items()
    )


def batch_status(batch: Mapping[str, Any]) -> BatchStatus:
    """Where a batch stands, from the API's record of it."""
    counts = as_map(batch.get("request_counts"))
    total, done, failed = (int(counts.get(k) or 0) for k in ("total", "completed", "failed"))
    return BatchStatus(
        id=str(batch["id"]),
        ended=batch.get("status") in ENDED,
        processing=max(total - done - failed, 0),
        succeeded=done,
        failed=failed,
    )


def batch_failure(batch: Mapping[str, Any]) -> str | None:
    """Why the API refused a batch's input file (status ``failed``), or None."""
    if batch.get("status") != "failed":
        return None
    errors = [as_map(e) for e in as_list(as_map(batch.get("errors")).get("data"))]
    said = "; ".join(
        f"line {e['line']}: {e.get('message')}" if e.get("line") else str(e.get("message"))
        for e in errors
    )
    return redact(f"OpenAI refused batch {batch.get('id')}: {said or 'no reason given'}")


def output_lines(contents: Iterable[bytes]) -> list[dict[str, Any]]:
    """The result lines of a batch's output and error files. A line that is not a JSON
    object is dropped: its request then has no result, which batch_chat reports."""
    lines: list[dict[str, Any]] = []
    for content in contents:
        for raw in content.splitlines():
            try:
                line: object = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            mapped = as_map(line)
            if mapped:
                lines.append(mapped)
    return lines


def outcome(line: Mapping[str, Any]) -> tuple[str, dict[str, Any] | None, str | None]:
    """A result line as (custom id, the answer's body or None, why there is none)."""
    request_id = str(line.get("custom_id"))
    response = as_map(line.get("response"))
    body = as_map(response.get("body"))
    if response.get("status_code") == 200 and body:
        return request_id, body, None
    error = as_map(line.get("error"))
    code = str(error.get("code") or "")
    if code in _NOT_RUN:
        return request_id, None, _NOT_RUN[code]
    inner = as_map(body.get("error")) or error
    kind = inner.get("type") or inner.get("code") or response.get("status_code") or "error"
    message = inner.get("message")
    return request_id, None, "errored" + (f" ({kind}: {redact(str(message))})" if message else "")
