"""A real HTTP server on 127.0.0.1 that speaks Anthropic's Messages API and OpenAI's two
APIs (``POST /v1/responses``, ``POST /v1/chat/completions``: see
:mod:`chatlas_like.testing._openai`; point the ``openai`` SDK at ``server.openai_url``).

``POST /v1/messages`` (JSON or server-sent events, as the request asks),
``POST /v1/messages/count_tokens``, ``GET /v1/models``, both batch APIs
(``server.batches``, see :mod:`chatlas_like.testing._batches`) and the Files API in
both shapes (``/v1/files``: upload, list, get, delete, download, held in memory). Requests to
``/v1/messages`` and ``/v1/messages/count_tokens`` are checked by the rules of
:mod:`chatlas_like.testing._validator` first (and a message may refer only to files the
server holds); a violation gets a 400 (or 413) in Anthropic's error shape, as from the
real API. Every request is logged in ``server.requests`` for assertions.

Use it as a context manager and point a chat at ``server.url``::

    with LoopbackServer(ScriptedModel([Reply.text("Hi")])) as server:
        chat = ChatAnthropic(base_url=server.url, api_key="test")
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Callable, Collection, Mapping
from contextlib import suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

import orjson

from .._tools.workers import leave_signals_to_main_thread
from ._batches import Batches
from ._files import FileStore
from ._openai import openai_error, render_completion, render_response, validate_openai
from ._requests import Backend, RecordedRequest
from ._scripted import Counters, Reply, Response, ScriptedModel, render_reply
from ._validator import Rejection, validate_request

__all__ = ["Backend", "LoopbackServer", "RecordedRequest"]

DEFAULT_MODELS = (
    ("claude-haiku-4-5-20251001", "Claude Haiku 4.5", "2025-10-15T00:00:00Z"),
    ("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", "2025-09-29T00:00:00Z"),
)
_CHUNK_BYTES = 16 * 1024


_RENDERERS = {
    "/v1/messages": render_reply,
    "/v1/responses": render_response,
    "/v1/chat/completions": render_completion,
}


class _ScriptedBackend:
    def __init__(self, model: ScriptedModel) -> None:
        self.model = model

    def handle(self, request: RecordedRequest, counters: Counters) -> Response | None:
        render = _RENDERERS.get(request.path) if request.method == "POST" else None
        if render is None:
            return None
        body: dict[str, Any] = request.body or {}
        return render(self.model.reply_for(body), body, counters)


class LoopbackServer:
    """An Anthropic-protocol server on a free loopback port.

    Parameters
    ----------
    model
        A :class:`ScriptedModel`, a list of replies, a function ``body -> Reply``, or a
        backend such as :class:`CassetteReplay`.
    validate
        Apply the API's request rules (default True).
    no_prefill_models
        Model-name prefixes that reject a conversation ending with an assistant message.
    """

    def __init__(
        self,
        model: ScriptedModel | Backend | list[Reply] | Callable[[Mapping[str, Any]], Reply],
        *,
        validate: bool = True,
        no_prefill_models: Collection[str] = (),
    ) -> None:
        if isinstance(model, ScriptedModel):
            self.backend: Backend = _ScriptedBackend(model)
        elif isinstance(model, list) or (callable(model) and not hasattr(model, "handle")):
            self.backend = _ScriptedBackend(ScriptedModel(cast(Any, model)))
        else:
            self.backend = model  # pyright: ignore[reportAttributeAccessIssue]
        self.validate = validate
        self.no_prefill_models = tuple(no_prefill_models)
        self.requests: list[RecordedRequest] = []
        self.counters = Counters()
        self.batches = Batches(self)
        self.files = FileStore()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL to give the SDK (``http://127.0.0.1:PORT``)."""
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> LoopbackServer:
        handler = type("Handler", (_Handler,), {"server_state": self})
        self._httpd = _QuietServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="loopback-anthropic",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what it saw -------------------------------------------------------------------------

    def message_requests(self) -> list[dict[str, Any]]:
        """The bodies of the model requests, in order: ``POST /v1/messages`` (Anthropic),
        ``/v1/responses`` or ``/v1/chat/completions`` (OpenAI)."""
        return [r.body for r in self.requests if r.path in _RENDERERS and r.method == "POST"]

    @property
    def openai_url(self) -> str:
        """The base URL to give the ``openai`` SDK (``http://127.0.0.1:PORT/v1``)."""
        return self.url + "/v1"

    # -- answering ---------------------------------------------------------------------------

    def answer(self, request: RecordedRequest) -> Response:
        with self._lock:
            self.requests.append(request)
        if request.method == "POST" and request.path in _OPENAI_PATHS:
            rejected = self._check_openai(request)
            if rejected is not None:
                return rejected
        endpoint = _ENDPOINTS.get(request.path) if request.method == "POST" else None
        if endpoint is not None:
            body: Any = request.body
            if not isinstance(body, dict):
                return _error(400, "invalid_request_error", "the body must be a JSON object")
            if self.validate:
                rejected = self._check(cast(dict[str, Any], body), len(request.raw), endpoint)
                if rejected is not None:
                    return rejected
        response = self.batches.handle(request) or self.backend.handle(request, self.counters)
        if response is not None:
            return response
        if endpoint == "count_tokens":
            return Response(json={"input_tokens": _estimate_input(request.body)})
        if request.path.startswith("/v1/models") and request.method == "GET":
            if "anthropic-version" not in request.headers:  # the openai SDK's request
                return Response(json=_openai_models())
            return Response(json=_models_page())
        if request.path == "/v1/responses/input_tokens" and request.method == "POST":
            counted = {
                "object": "response.input_tokens",
                "input_tokens": _estimate_openai(request.body),
            }
            return Response(json=counted)
        if request.path == "/api/tags" and request.method == "GET":  # Ollama's model list
            return Response(json=_ollama_tags())
        files = self.files.handle(
            request.method, request.path, request.headers, request.raw, self.counters
        )
        if files is not None:
            return files
        return _error(404, "not_found_error", f"no route for {request.method} {request.path}")

    def _check_openai(self, request: RecordedRequest) -> Response | None:
        body: Any = request.body
        if not isinstance(body, dict):
            return openai_error(400, "We could not parse the JSON body of your request.")
        if not self.validate:
            return None
        problem = validate_openai(request.path, cast(dict[str, Any], body))
        if problem is not None:
            return openai_error(400, problem)
        unknown = self.files.unknown_openai_references(cast(dict[str, Any], body))
        return openai_error(404, f"No such File object: {unknown[0]}") if unknown else None

    def _check(self, body: dict[str, Any], size: int, endpoint: str) -> Response | None:
        try:
            validate_request(
                body, size, no_prefill_models=self.no_prefill_models, endpoint=endpoint
            )
        except Rejection as r:
            return _error(r.status, r.error_type, r.message)
        unknown = self.files.unknown_references(body)
        if unknown:
            return _error(400, "invalid_request_error", f"File not found: {unknown[0]}")
        return None


_ENDPOINTS = {"/v1/messages": "messages", "/v1/messages/count_tokens": "count_tokens"}
_OPENAI_PATHS = frozenset({"/v1/responses", "/v1/chat/completions"})
# What GET /v1/models lists to the openai SDK, and Ollama's /api/tags.
OPENAI_MODELS = (("gpt-5.4", 1772668800), ("gpt-4.1", 1744243200), ("gpt-4.1-mini", 1744243200))


def _openai_models() -> dict[str, Any]:
    data = [
        {"id": i, "object": "model", "created": c, "owned_by": "system"} for i, c in OPENAI_MODELS
    ]
    return {"object": "list", "data": data}


def _ollama_tags() -> dict[str, Any]:
    models = [
        {"name": "llama3.2:latest", "modified_at": "2026-01-01T00:00:00Z", "size": 2019393189},
        {"name": "qwen3:8b", "modified_at": "2026-01-01T00:00:00Z", "size": 5225388164},
    ]
    return {"models": models}


def _estimate_input(body: Any) -> int:
    """About four bytes a token, over everything the model reads: messages, system, tools."""
    payload: dict[str, Any] = body if isinstance(body, dict) else {}  # pyright: ignore[reportUnknownVariableType]
    read = {k: payload.get(k) for k in ("system", "tools", "messages", "output_config")}
    return max(1, len(orjson.dumps(read)) // 4)


def _estimate_openai(body: Any) -> int:
    """About four bytes a token, over what the model reads of a Responses request."""
    payload: dict[str, Any] = body if isinstance(body, dict) else {}  # pyright: ignore[reportUnknownVariableType]
    read = {k: payload.get(k) for k in ("input", "tools", "text")}
    return max(1, len(orjson.dumps(read)) // 4)


class _QuietServer(ThreadingHTTPServer):
    """Serves from threads that leave Ctrl-C to the program's main thread."""

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        leave_signals_to_main_thread()
        super().serve_forever(poll_interval)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        leave_signals_to_main_thread()
        super().process_request_thread(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client that hung up (or a fault the script asked for): not news
        super().handle_error(request, client_address)


def _error(status: int, error_type: str, message: str) -> Response:
    return Response(
        status=status,
        json={"type": "error", "error": {"type": error_type, "message": message}},
    )


def _models_page() -> dict[str, Any]:
    data = [
        {"type": "model", "id": i, "display_name": n, "created_at": c} for i, n, c in DEFAULT_MODELS
    ]
    return {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart
    server_state: LoopbackServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: Any = None
        if raw:
            try:
                body = orjson.loads(raw)
            except orjson.JSONDecodeError:
                body = None
        path = self.path.split("?", 1)[0]
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = RecordedRequest(self.command, path, headers, raw, body)
        response = self.server_state.answer(request)
        request.response_status = response.status
        if response.delay:
            time.sleep(response.delay)
        if response.dropped:
            self._drop_connection()
        elif response.events is not None:
            self._write_events(response)
        else:
            self._write_body(response)

    def _write_body(self, response: Response) -> None:
        payload = response.raw if response.raw is not None else orjson.dumps(response.json)
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("request-id", "req_loopback")
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _write_events(self, response: Response) -> None:
        self.send_response(response.status)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        events = response.events or []
        buffer: list[bytes] = []
        size = 0
        for i, event in enumerate(events):
            if response.cut_after is not None and i >= response.cut_after:
                self._chunk(b"".join(buffer))
                self._drop_connection()
                return
            if response.garble_at == i:
                data = b'event: content_block_delta\ndata: {"type": "content_block_delta", "ind\n\n'
            elif "type" in event:
                data = (
                    b"event: "
                    + str(event["type"]).encode()
                    + b"\ndata: "
                    + orjson.dumps(event)
                    + b"\n\n"
                )
            else:  # Chat Completions chunks are data alone
                data = b"data: " + orjson.dumps(event) + b"\n\n"
            buffer.append(data)
            size += len(data)
            if response.event_delay:
                self._chunk(b"".join(buffer))
                buffer, size = [], 0
                time.sleep(response.event_delay)
            elif size >= _CHUNK_BYTES:
                self._chunk(b"".join(buffer))
                buffer, size = [], 0
        if response.done_marker:
            buffer.append(b"data: [DONE]\n\n")
        if buffer:
            self._chunk(b"".join(buffer))
        self.wfile.write(b"0\r\n\r\n")

    def _chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    def _drop_connection(self) -> None:
        self.wfile.flush()
        self.close_connection = True
        with suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
