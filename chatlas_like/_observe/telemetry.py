"""What one chat call tells the outside: log lines and OpenTelemetry spans and metrics.

:func:`observe_call` decides once per call whether anyone listens. When the
``chatlas_like`` logger is below ``INFO`` and no tracer or meter provider is configured
(OpenTelemetry not even imported, or only its default no-op providers) it returns
:data:`QUIET`, whose hooks do nothing: an unobserved call pays a few empty method calls
and no span work. Otherwise a :class:`CallObserver` logs (:mod:`.log`) and traces
(:mod:`.otel`, imported only then).

The hooks (:class:`~chatlas_like._tools.observer.Observer`), and where they are called:

===================  ===========================================================
``begin`` ``failed``  the turn loop (:mod:`chatlas_like._run.loop`): one ``chat()`` / ``stream()``
``end``               call, its failure, its end
``request``           the drivers (:mod:`chatlas_like._run.drive`): a model request is opened ...
``send[_async]``      ... sent (its span current for HTTP instrumentation) ...
``retrying``          ... and retried
``response``          the turn loop: that request's answer
``running``           the tool runner: one tool call's execution
``keeping``           the finaliser: the store write of a batch of results
``finalized``         the finaliser: outcome, sizes, sequence of each result
``expanded``          the expansion step: an expansion applied or not
===================  ===========================================================

:func:`store_failed` is a plain function: the store attachment calls it when a write
fails; it logs, and tells the observer whose write it was (through a context variable
set only for the duration of :meth:`Observer.keeping`).
"""

from __future__ import annotations

import contextvars
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import wraps
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import orjson

from .._core.redact import failure_message, safe_error_message
from .._core.tool_result import EXPLAINED_OUTCOMES
from .._tools.observer import QUIET, Observer
from .log import logger, scrub

if TYPE_CHECKING:
    from .._core.content import ContentToolRequest
    from .._core.tool_result import ContentToolResult, WholeResult
    from .._core.turn import AssistantTurn
    from .._tools.tool import Tool, ToolBuiltIn
    from ..providers._base import Provider
    from .otel import CallTrace

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "CallObserver",
    "capture_content",
    "observe_call",
    "store_failed",
    "token_counts",
    "traced_batch",
]

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
A = TypeVar("A")
T = TypeVar("T")
P = ParamSpec("P")

_store_failures: contextvars.ContextVar[list[BaseException] | None] = contextvars.ContextVar(
    "chatlas_like_store_failures", default=None
)


def capture_content() -> bool:
    """Whether spans may carry message content (the GenAI conventions' opt-in)."""
    return os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() in ("true", "1")


def _otel_imported() -> bool:
    # A provider can only have been configured by code that imported OpenTelemetry.
    modules = sys.modules
    return "opentelemetry.trace" in modules or "opentelemetry.metrics" in modules


def observe_call(
    provider: Provider,
    *,
    tools: Mapping[str, Tool | ToolBuiltIn],
    max_result_bytes: int,
    max_retries: int,
    conversation_id: str | None = None,
    has_store: bool = False,
) -> Observer:
    """The observer of one chat call: :data:`QUIET` unless logging or tracing is on."""
    trace: CallTrace | None = None
    if _otel_imported():
        from .otel import start_call

        trace = start_call(provider.key, provider.model, conversation_id, capture_content(), tools)
    if trace is None and not logger.isEnabledFor(logging.INFO):
        return QUIET
    return CallObserver(
        trace,
        provider=provider.name,
        model=provider.model,
        max_result_bytes=max_result_bytes,
        max_retries=max_retries,
        has_store=has_store,
    )


class CallObserver(Observer):
    """Logs and traces one call (see the module docstring)."""

    __slots__ = (
        "_durations",
        "_request_started",
        "_store",
        "has_store",
        "limit",
        "max_retries",
        "model",
        "provider",
        "trace",
    )

    def __init__(
        self,
        trace: CallTrace | None,
        *,
        provider: str,
        model: str,
        max_result_bytes: int,
        max_retries: int,
        has_store: bool,
    ) -> None:
        self.trace = trace
        self.provider = provider
        self.model = model
        self.limit = max_result_bytes
        self.max_retries = max_retries
        self.has_store = has_store
        self._request_started = 0.0
        self._durations: dict[str, float] = {}
        self._store: tuple[bool, BaseException | None] | None = None

    # -- the call ----------------------------------------------------------------------------

    def begin(self) -> None:
        if self.trace is not None:
            self.trace.begin()

    def failed(self, error: BaseException) -> None:
        if isinstance(error, GeneratorExit):  # the caller closed the stream: not a failure
            return
        if logger.isEnabledFor(logging.INFO):
            logger.info("chat call failed: %s", failure_message(error))
        if self.trace is not None:
            self.trace.end(error, time.perf_counter() - self._request_started)
            self.trace = None

    def end(self) -> None:
        if self.trace is not None:
            self.trace.end(None, time.perf_counter() - self._request_started)
            self.trace = None

    # -- model requests ----------------------------------------------------------------------

    def request(self, body: Mapping[str, Any]) -> None:
        self._request_started = time.perf_counter()
        if self.trace is not None:
            self.trace.request(body)
        if logger.isEnabledFor(logging.INFO):
            raw = orjson.dumps(body, default=str)
            logger.info(
                "model request: model=%s, %d messages, %s bytes",
                body.get("model") or self.model,
                len(body.get("messages") or ()),
                f"{len(raw):,}",
            )
            if logger.isEnabledFor(logging.DEBUG):
                logger.debug("request body: %s", scrub(raw.decode(), self.limit))

    def send(self, fn: Callable[[A], T], body: A) -> T:
        trace = self.trace
        token = trace.activate_chat() if trace is not None else None
        try:
            return fn(body)
        finally:
            if trace is not None and token is not None:
                trace.deactivate(token)

    def send_async(self, fn: Callable[[A], Awaitable[T]], body: A) -> Awaitable[T]:
        return self._send_async(fn, body)

    async def _send_async(self, fn: Callable[[A], Awaitable[T]], body: A) -> T:
        trace = self.trace
        token = trace.activate_chat() if trace is not None else None
        try:
            return await fn(body)
        finally:
            if trace is not None and token is not None:
                trace.deactivate(token)

    def retrying(self, retry: int, delay: float, error: BaseException) -> None:
        if self.trace is not None:
            self.trace.retry(retry, delay, error)
        if logger.isEnabledFor(logging.INFO):
            logger.info(
                "retry %d of %d in %.2f s after %s",
                retry,
                self.max_retries,
                delay,
                failure_message(error),
            )

    def response(self, turn: AssistantTurn) -> None:
        duration = time.perf_counter() - self._request_started
        counts = token_counts(turn.usage if turn.usage is not None else turn.tokens)
        if self.trace is not None:
            self.trace.response(turn, duration, counts)
        if logger.isEnabledFor(logging.INFO):
            completion = turn.completion_data  # the SDK's Message is not built to be logged
            logger.info(
                "model response: id=%s, stop=%s, tokens in=%s out=%s, %.0f ms",
                _field(completion, "id"),
                turn.finish_reason,
                counts[0] if counts is not None else "?",
                counts[1] if counts is not None else "?",
                duration * 1e3,
            )
            tokens = turn.tokens
            if tokens is not None:  # chatlas's line, in its words
                logger.info(
                    "Provider '%s' generated a response of %d tokens from an input of %d "
                    "tokens and %d cached input tokens.",
                    self.provider,
                    tokens[1],
                    tokens[0],
                    tokens[2],
                )
            if logger.isEnabledFor(logging.DEBUG):  # the SDK's logger shows the exchange
                logger.debug("answer as read: %s", scrub(_answer_json(turn), self.limit))

    # -- tools -------------------------------------------------------------------------------

    def running(self, request: ContentToolRequest, work: Awaitable[T]) -> Awaitable[T]:
        return self._running(request, work)

    async def _running(self, request: ContentToolRequest, work: Awaitable[T]) -> T:
        trace = self.trace
        token = trace.tool_started(request) if trace is not None else None
        started = time.perf_counter()
        try:
            return await work
        finally:
            self._durations[request.id] = time.perf_counter() - started
            if trace is not None:
                trace.tool_stopped(request, token)

    def keeping(self, keep: Callable[[A], T], batch: A) -> T:
        failures: list[BaseException] = []
        reset = _store_failures.set(failures)
        try:
            kept = keep(batch)
        finally:
            _store_failures.reset(reset)
        self._store = (not failures, failures[0] if failures else None)
        return kept

    def finalized(
        self, run_id: str, batch: Sequence[WholeResult], results: Sequence[ContentToolResult]
    ) -> None:
        store = self._store if self.has_store else None
        self._store = None
        logs = logger.isEnabledFor(logging.INFO)
        for item, result in zip(batch, results, strict=True):
            if self.trace is not None:
                self.trace.tool_final(result, item.sequence, run_id, store)
            if logs:
                self._log_tool(result)

    def _log_tool(self, result: ContentToolResult) -> None:
        request = result.request
        name, call_id = (request.name, request.id) if request is not None else ("?", "?")
        duration = self._durations.pop(call_id, None)
        took = f"{duration * 1e3:.1f} ms" if duration is not None else "not run"
        sent = result.stored_length
        size = f", {sent:,} bytes sent" if sent is not None else ""
        if result.is_truncated and result.original_length is not None:
            size += f" (cut from {result.original_length:,})"
        why = ""
        if result.outcome in EXPLAINED_OUTCOMES:
            why = f": {failure_message(result.exception or result.error or result.value)}"
        logger.info(
            "tool %s (%s): %s, %s%s%s", name, call_id, result.outcome, took, size, scrub(why)
        )
        if result.is_error and request is not None:  # chatlas's line, in its words
            error = result.exception or result.error
            message = safe_error_message(error) if error is not None else ""
            logger.info(
                "Error invoking tool function '%s' with arguments: %s. The error message is: '%s'",
                name,
                scrub(str(request.arguments), self.limit),
                message,
            )
        if logger.isEnabledFor(logging.DEBUG) and result.outcome == "success":
            logger.debug("tool %s (%s) result: %s", name, call_id, scrub(_sent(result), self.limit))

    def expanded(self, result: ContentToolResult, inserted: int) -> None:
        if self.trace is not None:
            self.trace.expansion(result.request, inserted)
        if logger.isEnabledFor(logging.INFO):
            request = result.request
            name = request.name if request is not None else "?"
            call_id = request.id if request is not None else "?"
            if inserted:
                logger.info("expansion of %s (%s): %d messages inserted", name, call_id, inserted)
            else:
                logger.info(
                    "expansion of %s (%s) not applied: the full result was sent", name, call_id
                )


def store_failed(run_id: str, sequences: Sequence[int], error: BaseException) -> None:
    """A store write failed: log it, and tell the observer of the call that wrote."""
    failures = _store_failures.get()
    if failures is not None:
        failures.append(error)
    if logger.isEnabledFor(logging.WARNING):
        first, last = (sequences[0], sequences[-1]) if sequences else (0, 0)
        logger.warning(
            "tool results %d-%d of run %s were not stored: %s",
            first,
            last,
            run_id,
            failure_message(error),
        )


def traced_batch(fn: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """Decorate a ``parallel_chat`` batch: a ``parallel_chat`` span when tracing is on."""

    @wraps(fn)
    async def batch(*args: P.args, **kwargs: P.kwargs) -> T:
        if not _otel_imported():
            return await fn(*args, **kwargs)
        from .otel import run_batch

        return await run_batch(fn, *args, **kwargs)

    return batch


def token_counts(tokens: object) -> tuple[int, int, int | None, int | None] | None:
    """(all input, output, cache read, cache written) of a turn's ``tokens``.

    Input counts cached input too, as the GenAI conventions ask; ``tokens`` is a
    :class:`TokenUsage` or chatlas's ``(input, output, cached input)``.
    """
    if tokens is None:
        return None
    values = [int(v) for v in tokens]  # pyright: ignore[reportGeneralTypeIssues, reportUnknownVariableType, reportUnknownArgumentType]
    cache_read = getattr(tokens, "cache_read", None)
    cache_creation = getattr(tokens, "cache_creation", None)
    if isinstance(cache_read, int) and isinstance(cache_creation, int):
        return values[0] + cache_read + cache_creation, values[1], cache_read, cache_creation
    cached = values[2] if len(values) > 2 else 0
    return values[0] + cached, values[1], cached, None


def _field(obj: object, name: str) -> object:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return getattr(obj, name, None)


def _answer_json(turn: AssistantTurn) -> str:
    """The answer as this library read it, as JSON (not the body that arrived: the SDK's
    own debug lines show the exchange): what identifies it, and its contents."""
    completion = turn.completion_data
    tokens = turn.tokens
    answer = {
        "id": _field(completion, "id"),
        "model": _field(completion, "model"),
        "stop_reason": turn.stop_reason,
        "finish_reason": turn.finish_reason,
        "tokens": list(tokens) if tokens is not None else None,  # pyright: ignore[reportUnknownArgumentType]
        "content": [_content_json(c) for c in turn.contents],
    }
    return orjson.dumps(answer, default=str).decode()


def _content_json(content: object) -> dict[str, Any]:
    found: dict[str, Any] = {"type": getattr(content, "content_type", type(content).__name__)}
    for name in ("text", "thinking", "id", "name", "arguments"):
        value = getattr(content, name, None)
        if value is not None:
            found[name] = value
    return found


def _sent(result: ContentToolResult) -> str:
    value = result.get_model_value()
    return value if isinstance(value, str) else orjson.dumps(value, default=str).decode()
