"""What the loopback server records of a request, and what answers one.

Kept apart from the server so that the parts it serves through (batches, cassettes)
can build and answer requests without importing the server.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ._scripted import Counters, Response

__all__ = ["Backend", "RecordedRequest"]


@dataclass(slots=True)
class RecordedRequest:
    """One request the server received (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any = None
    response_status: int | None = None
    extra: dict[str, Any] = field(default_factory=lambda: {})


class Backend(Protocol):
    """Answers a request, or returns None to let the server answer (404, models...)."""

    def handle(self, request: RecordedRequest, counters: Counters) -> Response | None: ...
