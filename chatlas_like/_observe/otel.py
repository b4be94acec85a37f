"""OpenTelemetry spans and metrics of one chat call, after the GenAI semantic conventions.

Imported only when the application has imported OpenTelemetry (:mod:`._telemetry`
checks first), and used only when it configured a tracer or meter provider. Span names
and attribute keys are chatlas's, so its dashboards keep working:

=====================  =====================================  ===========================
span                   one per                                parent
=====================  =====================================  ===========================
``invoke_agent``       ``chat()`` / ``stream()`` call         the caller's current span
``chat {model}``       model request (its retries included)   ``invoke_agent``
``execute_tool {n}``   tool call (a refusal included)         ``invoke_agent``
``parallel_chat``      :func:`parallel_chat` batch            the caller's current span
=====================  =====================================  ===========================

A ``chat`` span is the current span while the provider's request is sent, and an
``execute_tool`` span while its tool runs (in a worker thread too), so spans of an HTTP
instrumentation or of the tool's own code nest under them.

Error messages on spans are the redacted ones the model reads (no traceback, no path,
no secret); message content is recorded only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is true, with secrets redacted.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

import orjson
from opentelemetry import context as otel_context
from opentelemetry import metrics, trace
from opentelemetry.trace import NonRecordingSpan, Span, SpanKind, Status, StatusCode

from .._core.redact import failure_message, redact

if TYPE_CHECKING:
    from .._core.content import ContentToolRequest
    from .._core.tool_result import ContentToolResult
    from .._core.turn import AssistantTurn
    from .._tools.tool import Tool, ToolBuiltIn

__all__ = ["CallTrace", "run_batch", "start_call"]

SCOPE = "chatlas_like"
P = ParamSpec("P")
T = TypeVar("T")

# Bucket boundaries the GenAI semantic conventions advise for their two histograms.
TOKEN_BUCKETS = tuple(float(4**i) for i in range(14))  # 1, 4, 16 ... 67,108,864
DURATION_BUCKETS = tuple(0.01 * 2**i for i in range(14))  # 0.01 s ... 81.92 s

_tracers: dict[int, tuple[trace.TracerProvider, trace.Tracer]] = {}
_instruments: dict[int, tuple[metrics.MeterProvider, Instruments]] = {}


def _configured(provider: object, defaults: tuple[type, ...]) -> bool:
    # The API's own providers (the proxy before any is set, the no-op) record nothing.
    return not isinstance(provider, defaults) and not type(provider).__module__.startswith(
        "opentelemetry.metrics._internal"
    )


def _tracer() -> trace.Tracer | None:
    provider = trace.get_tracer_provider()
    if not _configured(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return None
    cached = _tracers.get(id(provider))
    if cached is None or cached[0] is not provider:
        cached = (provider, provider.get_tracer(SCOPE))
        _tracers[id(provider)] = cached
    return cached[1]


class Instruments:
    """The two GenAI client histograms of one meter provider."""

    def __init__(self, provider: metrics.MeterProvider) -> None:
        meter = provider.get_meter(SCOPE)
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=list(TOKEN_BUCKETS),
        )
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )


def _instruments_now() -> Instruments | None:
    provider = metrics.get_meter_provider()
    if not _configured(provider, (metrics.NoOpMeterProvider,)):
        return None
    cached = _instruments.get(id(provider))
    if cached is None or cached[0] is not provider:
        cached = (provider, Instruments(provider))
        _instruments[id(provider)] = cached
    return cached[1]


def start_call(
    provider_name: str,
    model: str,
    conversation_id: str | None,
    capture: bool,
    tools: Mapping[str, Tool | ToolBuiltIn],
) -> CallTrace | None:
    """A trace for one call, or None when neither a tracer nor a meter provider is set."""
    tracer = _tracer()
    instruments = _instruments_now()
    if tracer is None and instruments is None:
        return None
    return CallTrace(
        tracer or trace.NoOpTracer(),
        instruments,
        provider_name,
        model,
        conversation_id,
        capture=capture and tracer is not None,
        tools=tools,
    )


_INVALID: Span = NonRecordingSpan(trace.INVALID_SPAN_CONTEXT)


class CallTrace:
    """The spans of one chat call; see the module docstring."""

    def __init__(
        self,
        tracer: trace.Tracer,
        instruments: Instruments | None,
        provider_name: str,
        model: str,
        conversation_id: str | None,
        *,
        capture: bool,
        tools: Mapping[str, Tool | ToolBuiltIn],
    ) -> None:
        self.tracer = tracer
        self.instruments = instruments
        self.base: dict[str, Any] = {"gen_ai.provider.name": provider_name.lower()}
        if conversation_id is not None:
            self.base["gen_ai.conversation.id"] = conversation_id
        self.model = model
        self.capture = capture
        self.tools = tools
        self.agent: Span = _INVALID
        self.agent_context: otel_context.Context | None = None
        self.chat: Span | None = None
        self.chat_model = model
        self.tool_spans: dict[str, tuple[Span, int | None]] = {}
        self.pending_events: list[tuple[str, dict[str, Any], int]] = []
        self.usage = [0, 0]

    # -- invoke_agent ------------------------------------------------------------------------

    def begin(self) -> None:
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            **self.base,
            "gen_ai.request.model": self.model,
        }
        self.agent = self.tracer.start_span(
            "invoke_agent", kind=SpanKind.CLIENT, attributes=attributes
        )
        self.agent_context = trace.set_span_in_context(self.agent)

    def end(self, error: BaseException | None, request_duration: float) -> None:
        if self.chat is not None:
            failure = error or RuntimeError("the call ended before the request was answered")
            self.chat_failed(failure, request_duration)
        for request_id in list(self.tool_spans):
            span, ended = self.tool_spans.pop(request_id)
            span.end(end_time=ended)
        agent = self.agent
        for name, attributes, at in self.pending_events:
            agent.add_event(name, attributes, timestamp=at)
        self.pending_events.clear()
        if agent.is_recording():
            if any(self.usage):
                agent.set_attributes(
                    {
                        "gen_ai.usage.input_tokens": self.usage[0],
                        "gen_ai.usage.output_tokens": self.usage[1],
                    }
                )
            if error is not None:
                mark_failed(agent, error)
        agent.end()

    # -- chat ----------------------------------------------------------------------------------

    def request(self, body: Mapping[str, Any]) -> None:
        if self.chat is not None:  # a request that never answered (not expected): close it
            self.chat_failed(RuntimeError("the request was not answered"), None)
        model = str(body.get("model") or self.model)
        self.chat_model = model
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            **self.base,
            "gen_ai.request.model": model,
        }
        for key, name in _REQUEST_PARAMS:
            value = body.get(key)
            if isinstance(value, (int, float, str)) and not isinstance(value, bool):
                attributes[name] = value
        stops = body.get("stop_sequences")
        if isinstance(stops, list) and stops:
            attributes["gen_ai.request.stop_sequences"] = [str(s) for s in cast(list[Any], stops)]
        span = self.tracer.start_span(
            f"chat {model}", context=self.agent_context, kind=SpanKind.CLIENT, attributes=attributes
        )
        for name, event, at in self.pending_events:
            span.add_event(name, event, timestamp=at)
        self.pending_events.clear()
        if self.capture and span.is_recording():
            record_input(span, body)
        self.chat = span

    def activate_chat(self) -> object:
        span = self.chat
        if span is None:
            return None
        return otel_context.attach(trace.set_span_in_context(span))

    def deactivate(self, token: object) -> None:
        otel_context.detach(cast(Any, token))

    def retry(self, retry: int, delay: float, error: BaseException) -> None:
        if self.chat is not None:
            self.chat.add_event(
                "chatlas_like.retry",
                {
                    "chatlas_like.retry.number": retry,
                    "chatlas_like.retry.wait_s": delay,
                    "error.type": error_type(error),
                },
            )

    def response(
        self,
        turn: AssistantTurn,
        duration: float,
        counts: tuple[int, int, int | None, int | None] | None,
    ) -> None:
        span, self.chat = self.chat, None
        if span is None:
            return
        completion = turn.completion_data  # what the response said, without building the SDK's
        response_model = _field(completion, "model")
        if span.is_recording():
            found: dict[str, Any] = {}
            if counts is not None:
                found["gen_ai.usage.input_tokens"] = counts[0]
                found["gen_ai.usage.output_tokens"] = counts[1]
                if counts[2]:  # prompt-cache figures only when the cache was used
                    found["gen_ai.usage.cache_read.input_tokens"] = counts[2]
                if counts[3]:
                    found["gen_ai.usage.cache_creation.input_tokens"] = counts[3]
            if response_model is not None:
                found["gen_ai.response.model"] = str(response_model)
            response_id = _field(completion, "id")
            if response_id is not None:
                found["gen_ai.response.id"] = str(response_id)
            reason = turn.stop_reason or turn.finish_reason  # the provider's own, as GenAI asks
            if reason:
                found["gen_ai.response.finish_reasons"] = [str(reason)]
            span.set_attributes(found)  # one call: the SDK takes its lock once
            if self.capture:
                record_output(span, turn)
        span.end()
        if counts is not None:
            self.usage[0] += counts[0]
            self.usage[1] += counts[1]
        if self.instruments is not None:
            attributes = self._metric_attributes(response_model)
            self.instruments.duration.record(duration, attributes)
            if counts is not None:
                self.instruments.tokens.record(
                    counts[0], {**attributes, "gen_ai.token.type": "input"}
                )
                self.instruments.tokens.record(
                    counts[1], {**attributes, "gen_ai.token.type": "output"}
                )

    def chat_failed(self, error: BaseException, duration: float | None) -> None:
        span, self.chat = self.chat, None
        if span is None:
            return
        mark_failed(span, error)
        span.end()
        if self.instruments is not None and duration is not None:
            attributes = {**self._metric_attributes(None), "error.type": error_type(error)}
            self.instruments.duration.record(duration, attributes)

    def _metric_attributes(self, response_model: object) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.base["gen_ai.provider.name"],
            "gen_ai.request.model": self.chat_model,
        }
        if response_model is not None:
            attributes["gen_ai.response.model"] = str(response_model)
        return attributes

    # -- execute_tool ------------------------------------------------------------------------

    def tool_started(self, request: ContentToolRequest) -> object:
        span = self._tool_span(request)
        self.tool_spans[request.id] = (span, None)
        return otel_context.attach(trace.set_span_in_context(span))

    def tool_stopped(self, request: ContentToolRequest, token: object) -> None:
        otel_context.detach(cast(Any, token))
        found = self.tool_spans.get(request.id)
        if found is not None:
            self.tool_spans[request.id] = (found[0], time.time_ns())

    def _tool_span(self, request: ContentToolRequest) -> Span:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": request.name,
            "gen_ai.tool.call.id": request.id,
        }
        tool = self.tools.get(request.name)
        description = getattr(tool, "description", None)
        if isinstance(description, str) and description:
            attributes["gen_ai.tool.description"] = description
        if self.capture:
            attributes["gen_ai.tool.call.arguments"] = _json(request.arguments)
        return self.tracer.start_span(
            f"execute_tool {request.name}", context=self.agent_context, attributes=attributes
        )

    def tool_final(
        self,
        result: ContentToolResult,
        sequence: int,
        run_id: str,
        store: tuple[bool, BaseException | None] | None,
    ) -> None:
        request = result.request
        if request is None:
            return
        found = self.tool_spans.pop(request.id, None)
        span, ended = found if found is not None else (self._tool_span(request), None)
        if span.is_recording():
            values: dict[str, Any] = {
                "chatlas_like.tool.outcome": result.outcome,
                "chatlas_like.tool.is_truncated": result.is_truncated,
            }
            if result.original_length is not None:
                values["chatlas_like.tool.original_bytes"] = result.original_length
            if result.stored_length is not None:
                values["chatlas_like.tool.sent_bytes"] = result.stored_length
            if store is not None:
                stored, failure = store
                address = {"chatlas_like.run_id": run_id, "chatlas_like.tool.sequence": sequence}
                values.update(address)
                values["chatlas_like.tool.stored"] = stored
                event: dict[str, Any] = {**address, "chatlas_like.store.ok": stored}
                if failure is not None:
                    event["error.type"] = error_type(failure)
                span.add_event("chatlas_like.store.write", event)
            if self.capture:
                values["gen_ai.tool.call.result"] = _json(_model_parts(result.get_model_value()))
            span.set_attributes(values)
            if result.is_error:
                mark_failed(span, result.exception or result.error, result.outcome)
        span.end(end_time=ended)

    def expansion(self, request: ContentToolRequest | None, inserted: int) -> None:
        attributes: dict[str, Any] = {
            "chatlas_like.expansion.applied": inserted > 0,
            "chatlas_like.expansion.messages": inserted,
        }
        if request is not None:
            attributes["gen_ai.tool.name"] = request.name
            attributes["gen_ai.tool.call.id"] = request.id
        # On the next request's span: the messages are part of what it sends.
        self.pending_events.append(("chatlas_like.expansion", attributes, time.time_ns()))


_REQUEST_PARAMS = (
    ("max_tokens", "gen_ai.request.max_tokens"),
    ("temperature", "gen_ai.request.temperature"),
    ("top_p", "gen_ai.request.top_p"),
    ("top_k", "gen_ai.request.top_k"),
)


def error_type(error: object) -> str:
    """``error.type``: the exception's class name (low cardinality), else ``"error"``."""
    from .._core.errors import RestoredToolError

    if isinstance(error, RestoredToolError):
        return error.type_name
    if isinstance(error, BaseException):
        return type(error).__name__
    return "error"


def mark_failed(span: Span, error: object, fallback: str = "error") -> None:
    """Status ERROR, ``error.type`` and an ``exception`` event, with the redacted message.

    No stack trace: it holds paths and local values.
    """
    if not span.is_recording():
        return
    message = failure_message(error)
    kind = error_type(error) if isinstance(error, BaseException) else fallback
    span.set_attribute("error.type", kind)
    event: dict[str, Any] = {"exception.message": message}
    if isinstance(error, BaseException):
        cls = type(error)
        module = cls.__module__
        event["exception.type"] = (
            f"{module}.{cls.__qualname__}" if module and module != "builtins" else cls.__qualname__
        )
    else:
        event["exception.type"] = kind
    span.add_event("exception", event)
    span.set_status(Status(StatusCode.ERROR, message))


def _field(obj: object, name: str) -> object:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return cast(Mapping[str, Any], obj).get(name)
    return getattr(obj, name, None)


def _model_parts(value: Any) -> Any:
    """What the model read of a result, images and documents by their kind, not their
    bytes (as a chat span records them)."""
    from .._core.content import Content, ContentText

    def part(item: Any) -> Any:
        if isinstance(item, ContentText):
            return {"type": "text", "content": item.text}
        return {"type": item.content_type} if isinstance(item, Content) else item

    if isinstance(value, list):
        return [part(item) for item in cast(list[Any], value)]
    return part(value)


def _json(value: Any) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value, default=str).decode()
    return redact(text)


# -- message content (opt-in) ----------------------------------------------------------------


def record_input(span: Span, body: Mapping[str, Any]) -> None:
    """``gen_ai.system_instructions`` and ``gen_ai.input.messages``, from what was sent."""
    system = body.get("system")
    if system:
        span.set_attribute("gen_ai.system_instructions", _json(_parts(system)))
    messages: list[dict[str, Any]] = []
    for message in cast(list[Mapping[str, Any]], body.get("messages") or []):
        parts = _parts(message.get("content"))
        tool_only = bool(parts) and all(p["type"] == "tool_call_response" for p in parts)
        messages.append({"role": "tool" if tool_only else message.get("role"), "parts": parts})
    span.set_attribute("gen_ai.input.messages", _json(messages))


def record_output(span: Span, turn: AssistantTurn) -> None:
    """``gen_ai.output.messages``: the answer's parts and finish reason."""
    from .._core.content import ContentText, ContentThinking, ContentToolRequest

    parts: list[dict[str, Any]] = []
    for content in turn.contents:
        if isinstance(content, ContentText):
            parts.append({"type": "text", "content": content.text})
        elif isinstance(content, ContentToolRequest):
            parts.append(
                {
                    "type": "tool_call",
                    "id": content.id,
                    "name": content.name,
                    "arguments": content.arguments,
                }
            )
        elif isinstance(content, ContentThinking):
            parts.append({"type": "reasoning", "content": content.thinking})
        else:
            parts.append({"type": content.content_type})
    message: dict[str, Any] = {"role": "assistant", "parts": parts}
    reason = turn.stop_reason or turn.finish_reason
    if reason:
        message["finish_reason"] = str(reason)
    span.set_attribute("gen_ai.output.messages", _json([message]))


def _parts(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    if not isinstance(content, list):
        return []
    return _blocks(cast(list[Any], content))


def _blocks(blocks: list[Any]) -> list[dict[str, Any]]:
    return [_part(cast(Mapping[str, Any], b)) for b in blocks if isinstance(b, Mapping)]


def _part(block: Mapping[str, Any]) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "content": block.get("text", "")}
    if kind == "tool_use":
        return {
            "type": "tool_call",
            "id": block.get("id"),
            "name": block.get("name"),
            "arguments": block.get("input"),
        }
    if kind == "tool_result":
        content = block.get("content")
        response = content if isinstance(content, str) else _blocks(cast(list[Any], content or []))
        return {"type": "tool_call_response", "id": block.get("tool_use_id"), "response": response}
    if kind == "thinking":
        return {"type": "reasoning", "content": block.get("thinking", "")}
    return {"type": str(kind)}  # images, documents, server tools: their kind, not their bytes


# -- parallel_chat ---------------------------------------------------------------------------


async def run_batch(fn: Callable[P, Awaitable[T]], *args: P.args, **kwargs: P.kwargs) -> T:
    """Await ``fn(*args, **kwargs)`` (a ``parallel_chat`` batch) in a ``parallel_chat`` span.

    The conversations' tasks are created inside it, so each one's ``invoke_agent``
    span is its child. Without a tracer provider, just the batch.
    """
    tracer = _tracer()
    if tracer is None:
        return await fn(*args, **kwargs)
    prompts = cast(Sequence[Any], args[1] if len(args) > 1 else kwargs.get("prompts", ()))
    attributes: dict[str, Any] = {"chatlas_like.parallel.prompts": len(prompts)}
    for name in ("max_active", "rpm"):
        value = kwargs.get(name)
        if isinstance(value, int):
            attributes[f"chatlas_like.parallel.{name}"] = value
    span = tracer.start_span("parallel_chat", attributes=attributes)
    try:
        with trace.use_span(span, record_exception=False, set_status_on_exception=False):
            results = await fn(*args, **kwargs)
    except BaseException as e:
        mark_failed(span, e)
        span.end()
        raise
    outcome: object = results
    if isinstance(outcome, list):
        items = cast(list[Any], outcome)
        span.set_attribute(
            "chatlas_like.parallel.failed", sum(isinstance(r, Exception) for r in items)
        )
        span.set_attribute("chatlas_like.parallel.not_started", sum(r is None for r in items))
    span.end()
    return results
