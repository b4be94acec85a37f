"""Anthropic's Message Batches API on the loopback server.

``POST /v1/messages/batches`` takes ``{"requests": [{"custom_id", "params"}, ...]}``;
``GET /v1/messages/batches/{id}`` reports ``in_progress`` until it has been polled
``polls_to_end`` times (2 by default), then processes every request through the
server's model (as a non-streamed ``POST /v1/messages``, checked by the same request
rules) and reports ``ended`` with its ``results_url``; ``GET .../results`` sends the
results as JSON lines, in reverse order (the real API promises no order either).

With ``per_poll`` set, each status poll processes that many more requests, in order,
and the ``request_counts`` of an ``in_progress`` batch show them (some ``processing``,
some ``succeeded``, ``errored``, ``expired``), as the real API's counts move while a
batch runs; it ends once every request is processed and it has been polled
``polls_to_end`` times.

A request the rules reject, or one the script answers with ``Reply.error(...)``,
becomes an ``errored`` result; custom ids in ``expire`` become ``expired`` ones. The
processed requests are not added to ``server.requests`` (the batch calls are).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, cast

import orjson

from ._requests import Backend, RecordedRequest
from ._scripted import Counters, Response
from ._validator import Rejection, validate_request

__all__ = ["MessageBatches"]

PREFIX = "/v1/messages/batches"
_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass(slots=True)
class _Batch:
    id: str
    requests: list[dict[str, Any]]
    created_at: datetime
    polls: int = 0
    ended_at: datetime | None = None
    results: list[dict[str, Any]] = field(default_factory=lambda: [])


class _Server(Protocol):
    """What the batch routes use of the loopback server that holds them."""

    counters: Counters
    validate: bool
    no_prefill_models: tuple[str, ...]
    backend: Backend

    @property
    def url(self) -> str: ...


class MessageBatches:
    """The batches a :class:`LoopbackServer` holds, and its answers to the batch routes.

    Attributes
    ----------
    polls_to_end
        Status polls a batch answers ``in_progress`` before it ends (at least).
    per_poll
        Requests processed at each status poll; None (default): all of them at once,
        at the poll that ends the batch.
    expire
        Custom ids whose requests end ``expired`` instead of being processed.
    """

    def __init__(self, server: _Server) -> None:
        self.server = server
        self.polls_to_end = 2
        self.per_poll: int | None = None
        self.expire: set[str] = set()
        self._batches: dict[str, _Batch] = {}
        self._lock = threading.Lock()

    def created(self) -> list[list[dict[str, Any]]]:
        """The requests of each batch created so far, in order."""
        return [b.requests for b in self._batches.values()]

    def handle(self, request: RecordedRequest) -> Response | None:
        """Answer a batch route, or None when ``request`` is not one."""
        path, method = request.path, request.method
        if path == PREFIX and method == "POST":
            return self._create(request.body)
        parts = path[len(PREFIX) + 1 :].split("/") if path.startswith(PREFIX + "/") else []
        if method != "GET" or not parts or len(parts) > 2:
            return None
        with self._lock:
            batch = self._batches.get(parts[0])
            if batch is None:
                return _error(404, "not_found_error", f"no message batch {parts[0]!r}")
            if len(parts) == 1:
                batch.polls += 1
                if batch.ended_at is None:
                    self._advance(batch)
                return Response(json=self._describe(batch))
            if parts[1] != "results":
                return None
            if batch.ended_at is None:
                return _error(400, "invalid_request_error", "the batch is still in progress")
            lines = b"".join(orjson.dumps(r) + b"\n" for r in reversed(batch.results))
            return Response(raw=lines, content_type="application/x-jsonl")

    # -- create ----------------------------------------------------------------------------

    def _create(self, body: Any) -> Response:
        payload: dict[str, Any] = cast(dict[str, Any], body) if isinstance(body, dict) else {}
        requests: Any = payload.get("requests")
        if not isinstance(requests, list) or not requests:
            return _error(400, "invalid_request_error", "requests: at least one is required")
        seen: set[str] = set()
        for i, entry in enumerate(cast(list[Any], requests)):
            item: dict[str, Any] = cast(dict[str, Any], entry) if isinstance(entry, dict) else {}
            custom_id: Any = item.get("custom_id")
            if not isinstance(custom_id, str) or not _CUSTOM_ID.match(custom_id):
                return _error(400, "invalid_request_error", f"requests.{i}.custom_id: invalid")
            if custom_id in seen:
                return _error(
                    400, "invalid_request_error", f"requests.{i}: duplicate custom_id {custom_id}"
                )
            seen.add(custom_id)
            if not isinstance(item.get("params"), dict):
                return _error(400, "invalid_request_error", f"requests.{i}.params: required")
        with self._lock:
            batch = _Batch(
                self.server.counters.next("msgbatch"),
                cast(list[dict[str, Any]], requests),
                datetime.now(UTC),
            )
            self._batches[batch.id] = batch
            return Response(json=self._describe(batch))

    # -- processing ------------------------------------------------------------------------

    def _advance(self, batch: _Batch) -> None:
        """Process what this poll processes; end the batch when it is all done."""
        due = batch.polls >= self.polls_to_end
        remaining = batch.requests[len(batch.results) :]
        if self.per_poll is not None:
            remaining = remaining[: self.per_poll]
        elif not due:
            remaining = []
        batch.results += [self._result(r["custom_id"], r["params"]) for r in remaining]
        if due and len(batch.results) == len(batch.requests):
            batch.ended_at = datetime.now(UTC)

    def _result(self, custom_id: str, params: dict[str, Any]) -> dict[str, Any]:
        if custom_id in self.expire:
            return {"custom_id": custom_id, "result": {"type": "expired"}}
        if params.get("stream"):
            return _errored(custom_id, "stream: batch requests cannot be streamed")
        body = {**params, "stream": False}
        raw = orjson.dumps(body)
        if self.server.validate:
            try:
                validate_request(body, len(raw), no_prefill_models=self.server.no_prefill_models)
            except Rejection as r:
                return _errored(custom_id, r.message, r.error_type)
        synthetic = RecordedRequest("POST", "/v1/messages", {}, raw, body)
        response = self.server.backend.handle(synthetic, self.server.counters)
        if response is None:
            return _errored(custom_id, "the server's model does not answer messages", "api_error")
        if response.status >= 400:
            payload: dict[str, Any] = response.json or {}
            error: dict[str, Any] = payload.get("error") or {}
            return _errored(
                custom_id,
                str(error.get("message", "error")),
                str(error.get("type", "api_error")),
            )
        return {"custom_id": custom_id, "result": {"type": "succeeded", "message": response.json}}

    def _describe(self, batch: _Batch) -> dict[str, Any]:
        ended = batch.ended_at is not None
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for result in batch.results:
            counts[result["result"]["type"]] += 1
        counts["processing"] = len(batch.requests) - len(batch.results)
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": _iso(batch.created_at),
            "expires_at": _iso(batch.created_at + timedelta(hours=24)),
            "ended_at": _iso(batch.ended_at) if batch.ended_at else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.server.url}{PREFIX}/{batch.id}/results" if ended else None,
        }


def _errored(custom_id: str, message: str, error_type: str = "invalid_request_error") -> Any:
    error = {"type": "error", "error": {"type": error_type, "message": message}}
    return {"custom_id": custom_id, "result": {"type": "errored", "error": error}}


def _error(status: int, error_type: str, message: str) -> Response:
    return Response(
        status=status,
        json={"type": "error", "error": {"type": error_type, "message": message}},
    )


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")
