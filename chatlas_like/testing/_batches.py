"""The batch APIs on the loopback server: Anthropic's Message Batches and OpenAI's Batch API.

Anthropic: ``POST /v1/messages/batches`` takes ``{"requests": [{"custom_id", "params"},
...]}``; ``GET /v1/messages/batches/{id}`` reports ``in_progress`` until the batch ends,
then ``ended`` with its ``results_url``; ``GET .../results`` sends the results as JSON
lines, in reverse order (the real API promises no order either).

OpenAI: the requests are a JSON-lines file uploaded with ``purpose="batch"`` (``POST
/v1/files``), one ``{"custom_id", "method": "POST", "url", "body"}`` per line;
``POST /v1/batches`` takes ``{"input_file_id", "endpoint", "completion_window"}`` and
checks every line (a bad one fails the batch, with the line's error, as the real API
does); ``GET /v1/batches/{id}`` reports ``in_progress`` until the batch ends, then
``completed`` (or ``expired``) with an ``output_file_id`` holding the answers and an
``error_file_id`` holding the rest, both read by ``GET /v1/files/{id}/content``, in
reverse order.

On both, a batch ends once it has been polled ``polls_to_end`` times (2 by default),
and its requests are processed through the server's model (as non-streamed requests
to the batch's endpoint, checked by the same request rules). With ``per_poll`` set,
each status poll processes that many more requests, in order, and the batch's counts
show them moving, as the real APIs' counts move while a batch runs.

A request the rules reject, or one the script answers with ``Reply.error(...)``,
becomes an errored result; custom ids in ``expire`` become expired ones. The processed
requests are not added to ``server.requests`` (the batch calls are).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol, cast

import orjson

from ._files import FileStore
from ._openai import validate_openai
from ._requests import Backend, RecordedRequest
from ._scripted import Counters, Response
from ._validator import Rejection, validate_request

__all__ = ["Batches"]

PREFIX = "/v1/messages/batches"
OPENAI_PREFIX = "/v1/batches"
OPENAI_ENDPOINTS = frozenset({"/v1/responses", "/v1/chat/completions"})
_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_EXPIRED = "This request could not be executed before the completion window expired."

Kind = Literal["succeeded", "errored", "expired"]


@dataclass(frozen=True, slots=True)
class _Outcome:
    """One processed request, in neither API's shape."""

    custom_id: str
    kind: Kind
    body: dict[str, Any] | None = None  # the model's answer
    status: int = 200
    error_type: str = ""
    message: str = ""


@dataclass(slots=True)
class _Batch:
    id: str
    openai: bool  # OpenAI's Batch API, else Anthropic's Message Batches
    endpoint: str  # where each request goes: /v1/messages, /v1/responses...
    requests: list[tuple[str, dict[str, Any]]]  # (custom id, body)
    created_at: datetime
    input_file_id: str | None = None
    failure: dict[str, Any] | None = None  # OpenAI: why the input was refused
    polls: int = 0
    ended_at: datetime | None = None
    results: list[_Outcome] = field(default_factory=lambda: [])
    files: tuple[str | None, str | None] = (None, None)  # OpenAI: output and error file ids


class _Server(Protocol):
    """What the batch routes use of the loopback server that holds them."""

    counters: Counters
    validate: bool
    no_prefill_models: tuple[str, ...]
    backend: Backend
    files: FileStore

    @property
    def url(self) -> str: ...


class Batches:
    """The batches a :class:`LoopbackServer` holds, and its answers to the batch routes.

    Attributes
    ----------
    polls_to_end
        Status polls a batch answers ``in_progress`` before it ends (at least).
    per_poll
        Requests processed at each status poll; None (default): all of them at once,
        at the poll that ends the batch.
    expire
        Custom ids whose requests end expired instead of being processed.
    """

    def __init__(self, server: _Server) -> None:
        self.server = server
        self.polls_to_end = 2
        self.per_poll: int | None = None
        self.expire: set[str] = set()
        self._batches: dict[str, _Batch] = {}
        self._lock = threading.Lock()

    def created(self) -> list[list[dict[str, Any]]]:
        """The requests of each batch created so far, in order, as the API took them:
        ``{"custom_id", "params"}`` (Anthropic) or ``{"custom_id", "method", "url",
        "body"}`` (OpenAI)."""
        return [
            [
                {"custom_id": c, "params": b}
                if not batch.openai
                else {"custom_id": c, "method": "POST", "url": batch.endpoint, "body": b}
                for c, b in batch.requests
            ]
            for batch in self._batches.values()
        ]

    def handle(self, request: RecordedRequest) -> Response | None:
        """Answer a batch route, or None when ``request`` is not one."""
        path, method = request.path, request.method
        if path == PREFIX and method == "POST":
            return self._create_anthropic(request.body)
        if path == OPENAI_PREFIX and method == "POST":
            return self._create_openai(request.body)
        for prefix, openai in ((PREFIX, False), (OPENAI_PREFIX, True)):
            if path.startswith(prefix + "/") and method == "GET":
                return self._get(openai, path[len(prefix) + 1 :].split("/"))
        return None

    def _get(self, openai: bool, parts: list[str]) -> Response | None:
        with self._lock:
            batch = self._batches.get(parts[0])
            if batch is None or batch.openai != openai:
                return _error(404, "not_found_error", f"no batch {parts[0]!r}", openai)
            if len(parts) == 1:
                batch.polls += 1
                if batch.ended_at is None:
                    self._advance(batch)
                return Response(json=self._describe(batch))
            if openai or len(parts) != 2 or parts[1] != "results":
                return None
            if batch.ended_at is None:
                return _error(400, "invalid_request_error", "the batch is still in progress")
            lines = b"".join(orjson.dumps(_anthropic_line(r)) + b"\n" for r in batch.results[::-1])
            return Response(raw=lines, content_type="application/x-jsonl")

    # -- create ----------------------------------------------------------------------------

    def _create_anthropic(self, body: Any) -> Response:
        payload = _dict(body)
        requests: Any = payload.get("requests")
        if not isinstance(requests, list) or not requests:
            return _error(400, "invalid_request_error", "requests: at least one is required")
        seen: set[str] = set()
        taken: list[tuple[str, dict[str, Any]]] = []
        for i, item in enumerate(map(_dict, cast(list[Any], requests))):
            custom_id: Any = item.get("custom_id")
            if not isinstance(custom_id, str) or not _CUSTOM_ID.match(custom_id):
                return _error(400, "invalid_request_error", f"requests.{i}.custom_id: invalid")
            if custom_id in seen:
                return _error(
                    400, "invalid_request_error", f"requests.{i}: duplicate custom_id {custom_id}"
                )
            seen.add(custom_id)
            params: Any = item.get("params")
            if not isinstance(params, dict):
                return _error(400, "invalid_request_error", f"requests.{i}.params: required")
            taken.append((custom_id, cast(dict[str, Any], params)))
        return self._add(False, "/v1/messages", taken)

    def _create_openai(self, body: Any) -> Response:
        payload = _dict(body)
        endpoint, window = payload.get("endpoint"), payload.get("completion_window")
        if endpoint not in OPENAI_ENDPOINTS:
            message = f"endpoint: must be one of {', '.join(sorted(OPENAI_ENDPOINTS))}"
            return _error(400, "invalid_request_error", message, True)
        if window != "24h":
            return _error(400, "invalid_request_error", "completion_window: must be '24h'", True)
        stored = self.server.files.get(str(payload.get("input_file_id")))
        if stored is None:
            message = f"No such File object: {payload.get('input_file_id')}"
            return _error(404, "invalid_request_error", message, True)
        if stored.purpose != "batch":
            message = f"The input file's purpose must be 'batch', not {stored.purpose!r}"
            return _error(400, "invalid_request_error", message, True)
        requests, failure = _input_lines(stored.data, str(endpoint))
        return self._add(True, str(endpoint), requests, stored.id, failure)

    def _add(
        self,
        openai: bool,
        endpoint: str,
        requests: list[tuple[str, dict[str, Any]]],
        input_file_id: str | None = None,
        failure: dict[str, Any] | None = None,
    ) -> Response:
        with self._lock:
            batch = _Batch(
                self.server.counters.next("batch" if openai else "msgbatch"),
                openai,
                endpoint,
                requests,
                datetime.now(UTC),
                input_file_id,
                failure,
            )
            self._batches[batch.id] = batch
            return Response(json=self._describe(batch))

    # -- processing ------------------------------------------------------------------------

    def _advance(self, batch: _Batch) -> None:
        """Process what this poll processes; end the batch when it is all done."""
        if batch.failure is not None:
            batch.ended_at = datetime.now(UTC)
            return
        due = batch.polls >= self.polls_to_end
        remaining = batch.requests[len(batch.results) :]
        if self.per_poll is not None:
            remaining = remaining[: self.per_poll]
        elif not due:
            remaining = []
        batch.results += [self._result(batch, c, b) for c, b in remaining]
        if due and len(batch.results) == len(batch.requests):
            batch.ended_at = datetime.now(UTC)
            if batch.openai:
                batch.files = self._output_files(batch)

    def _result(self, batch: _Batch, custom_id: str, params: dict[str, Any]) -> _Outcome:
        if custom_id in self.expire:
            return _Outcome(custom_id, "expired", message=_EXPIRED)
        if params.get("stream"):
            message = "stream: batch requests cannot be streamed"
            return _Outcome(custom_id, "errored", None, 400, "invalid_request_error", message)
        body = {**params, "stream": False}
        raw = orjson.dumps(body)
        if self.server.validate:
            problem = self._problem(batch, body, len(raw))
            if problem is not None:
                return _Outcome(custom_id, "errored", None, 400, problem[0], problem[1])
        synthetic = RecordedRequest("POST", batch.endpoint, {}, raw, body)
        response = self.server.backend.handle(synthetic, self.server.counters)
        if response is None:
            message = "the server's model does not answer this endpoint"
            return _Outcome(custom_id, "errored", None, 500, "api_error", message)
        if response.status >= 400:
            error = _dict(_dict(response.json).get("error"))
            return _Outcome(
                custom_id,
                "errored",
                _dict(response.json),
                response.status,
                str(error.get("type", "api_error")),
                str(error.get("message", "error")),
            )
        return _Outcome(custom_id, "succeeded", _dict(response.json))

    def _problem(self, batch: _Batch, body: dict[str, Any], size: int) -> tuple[str, str] | None:
        if batch.openai:
            problem = validate_openai(batch.endpoint, body)
            return None if problem is None else ("invalid_request_error", problem)
        try:
            validate_request(body, size, no_prefill_models=self.server.no_prefill_models)
        except Rejection as r:
            return r.error_type, r.message
        return None

    def _output_files(self, batch: _Batch) -> tuple[str | None, str | None]:
        answered = [r for r in batch.results if r.kind == "succeeded"]
        failed = [r for r in batch.results if r.kind != "succeeded"]
        ids: list[str | None] = []
        for name, outcomes in (("output", answered), ("errors", failed)):
            if not outcomes:
                ids.append(None)
                continue
            lines = b"".join(orjson.dumps(self._openai_line(r)) + b"\n" for r in reversed(outcomes))
            stored = self.server.files.add(
                self.server.counters,
                f"{batch.id}_{name}.jsonl",
                lines,
                "batch_output",
                "application/jsonl",
            )
            ids.append(stored.id)
        return ids[0], ids[1]

    def _openai_line(self, outcome: _Outcome) -> dict[str, Any]:
        line: dict[str, Any] = {
            "id": self.server.counters.next("batch_req"),
            "custom_id": outcome.custom_id,
            "response": None,
            "error": None,
        }
        if outcome.kind == "expired":
            line["error"] = {"code": "batch_expired", "message": outcome.message}
        else:
            body = outcome.body or {
                "error": {
                    "message": outcome.message,
                    "type": outcome.error_type,
                    "param": None,
                    "code": None,
                }
            }
            line["response"] = {
                "status_code": outcome.status,
                "request_id": self.server.counters.next("req"),
                "body": body,
            }
        return line

    def _describe(self, batch: _Batch) -> dict[str, Any]:
        if batch.openai:
            return _describe_openai(batch)
        ended = batch.ended_at is not None
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for result in batch.results:
            counts[result.kind] += 1
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


def _input_lines(
    data: bytes, endpoint: str
) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, Any] | None]:
    """An OpenAI batch input file's requests, or the first line's error that fails it."""
    requests: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    lines = [line for line in data.splitlines() if line.strip()]
    if not lines:
        return [], {"code": "empty_file", "message": "The batch input file is empty.", "line": None}
    for number, raw in enumerate(lines, start=1):
        try:
            item = _dict(orjson.loads(raw))
        except orjson.JSONDecodeError:
            return [], _line_error("invalid_json_line", "This line is not valid JSON.", number)
        custom_id, body = item.get("custom_id"), item.get("body")
        if not isinstance(custom_id, str) or not custom_id:
            return [], _line_error("missing_required_parameter", "custom_id is missing.", number)
        if custom_id in seen:
            message = f"The custom_id {custom_id!r} is used more than once."
            return [], _line_error("duplicate_custom_id", message, number)
        if item.get("method") != "POST":
            return [], _line_error("invalid_method", "method must be 'POST'.", number)
        if item.get("url") != endpoint:
            message = f"The url {item.get('url')!r} does not match the batch's endpoint."
            return [], _line_error("mismatched_endpoint", message, number)
        if not isinstance(body, dict):
            return [], _line_error("missing_required_parameter", "body is missing.", number)
        seen.add(custom_id)
        requests.append((custom_id, cast(dict[str, Any], body)))
    return requests, None


def _line_error(code: str, message: str, line: int) -> dict[str, Any]:
    return {"code": code, "message": message, "param": None, "line": line}


def _describe_openai(batch: _Batch) -> dict[str, Any]:
    created = int(batch.created_at.timestamp())
    ended = batch.ended_at is not None
    ended_ts = int(batch.ended_at.timestamp()) if batch.ended_at is not None else None
    expired = any(r.kind == "expired" for r in batch.results)
    if batch.failure is not None:
        status = "failed" if ended else "validating"
    elif not ended:
        status = "in_progress" if batch.polls else "validating"
    else:
        status = "expired" if expired else "completed"
    done = sum(r.kind == "succeeded" for r in batch.results)
    errors = None
    if batch.failure is not None and ended:
        errors = {"object": "list", "data": [batch.failure]}
    return {
        "id": batch.id,
        "object": "batch",
        "endpoint": batch.endpoint,
        "errors": errors,
        "input_file_id": batch.input_file_id,
        "completion_window": "24h",
        "status": status,
        "output_file_id": batch.files[0],
        "error_file_id": batch.files[1],
        "created_at": created,
        "in_progress_at": created if batch.polls else None,
        "expires_at": created + 24 * 3600,
        "finalizing_at": ended_ts if status in ("completed", "expired") else None,
        "completed_at": ended_ts if status == "completed" else None,
        "failed_at": ended_ts if status == "failed" else None,
        "expired_at": ended_ts if status == "expired" else None,
        "cancelling_at": None,
        "cancelled_at": None,
        "request_counts": {
            "total": len(batch.requests),
            "completed": done,
            "failed": len(batch.results) - done,
        },
        "metadata": None,
    }


def _anthropic_line(outcome: _Outcome) -> dict[str, Any]:
    if outcome.kind == "succeeded":
        result: dict[str, Any] = {"type": "succeeded", "message": outcome.body}
    elif outcome.kind == "expired":
        result = {"type": "expired"}
    else:
        error = {"type": "error", "error": {"type": outcome.error_type, "message": outcome.message}}
        result = {"type": "errored", "error": error}
    return {"custom_id": outcome.custom_id, "result": result}


def _dict(value: Any) -> dict[str, Any]:
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _error(status: int, error_type: str, message: str, openai: bool = False) -> Response:
    if openai:
        error = {"message": message, "type": error_type, "param": None, "code": None}
        return Response(status=status, json={"error": error})
    return Response(
        status=status,
        json={"type": "error", "error": {"type": error_type, "message": message}},
    )


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")
