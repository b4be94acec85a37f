"""OpenTelemetry spans and metrics of real conversations on the loopback server.

The real SDK records them (in-memory span exporter, in-memory metric reader). The
fixtures set the global providers for one test and clear them after
(``tests/support/otel.py``), so every other test of the suite runs with tracing off,
the default.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from chatlas_like import ContentToolResult, SqliteStore, expand, parallel_chat
from chatlas_like._core.errors import StreamInterruptedError
from chatlas_like._observe.telemetry import CAPTURE_CONTENT_ENV, observe_call
from chatlas_like._run.options import ChatOptions
from chatlas_like._tools.observer import QUIET
from chatlas_like._tools.workers import WorkerPool
from chatlas_like.testing import Reply

from ..conftest import TEST_MODEL, make_chat
from ..support.otel import set_meter_provider, set_tracer_provider

Serve = Callable[..., Any]
FAST_RETRY = {"retry-after-ms": "5"}


def inner_span(name: str) -> Any:
    """A span of the tool's own code, from the global provider of the moment."""
    return trace_api.get_tracer("tests.tools").start_as_current_span(name)


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    """A global SDK tracer provider exporting to memory, for this test only."""
    monkeypatch.delenv(CAPTURE_CONTENT_ENV, raising=False)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    set_tracer_provider(provider)
    yield exporter
    set_tracer_provider(None)
    provider.shutdown()


@pytest.fixture
def reader() -> Iterator[InMemoryMetricReader]:
    """A global SDK meter provider read in memory, for this test only."""
    metric_reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[metric_reader])
    set_meter_provider(provider)
    yield metric_reader
    set_meter_provider(None)
    provider.shutdown()


def named(exporter: InMemorySpanExporter, prefix: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name.startswith(prefix)]


def one(exporter: InMemorySpanExporter, prefix: str) -> ReadableSpan:
    found = named(exporter, prefix)
    assert len(found) == 1, [s.name for s in exporter.get_finished_spans()]
    return found[0]


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def weather(city: str) -> str:
    """The weather in a city."""
    with inner_span("fetch_forecast"):
        return f"{city}: sunny"


# -- the span tree --------------------------------------------------------------------------


def two_tools_one_failing(serve: Serve, **options: Any) -> tuple[Any, Any]:
    both_running = threading.Barrier(2, timeout=10)

    def forecast(city: str) -> str:
        """The forecast for a city."""
        both_running.wait()  # returns only if the other call runs at the same time
        with inner_span("fetch_forecast"):
            return f"{city}: sunny"

    def tides(port: str) -> str:
        """Tide tables for a port."""
        both_running.wait()
        raise ValueError(f"no tide tables for {port}")

    server = serve(
        [
            Reply.tool_calls([("forecast", {"city": "Oslo"}), ("tides", {"port": "Bergen"})]),
            Reply.text("Sunny; no tides."),
        ]
    )
    chat = make_chat(server, **options)
    chat.register_tool(forecast)
    chat.register_tool(tides)
    return chat, server


def test_a_chat_with_two_concurrent_tools_gives_one_agent_span_two_chat_spans_and_two_sibling_tool_spans(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    chat, _ = two_tools_one_failing(serve)
    chat.chat("Weather and tides?", echo="none")
    agent = one(spans, "invoke_agent")
    chats = named(spans, "chat ")
    tools = named(spans, "execute_tool ")
    assert [s.name for s in chats] == [f"chat {TEST_MODEL}"] * 2
    assert sorted(s.name for s in tools) == ["execute_tool forecast", "execute_tool tides"]
    assert {parent_id(s) for s in [*chats, *tools]} == {span_id(agent)}
    assert len({s.context.trace_id for s in spans.get_finished_spans() if s.context}) == 1
    first, second = sorted(tools, key=lambda s: s.start_time or 0)
    assert (first.end_time or 0) > (second.start_time or 0)  # they overlapped


def test_the_agent_and_chat_spans_carry_the_genai_attributes(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    chat, server = two_tools_one_failing(serve)
    chat.chat("Weather and tides?", echo="none")
    agent = attrs(one(spans, "invoke_agent"))
    assert agent["gen_ai.operation.name"] == "invoke_agent"
    assert agent["gen_ai.provider.name"] == "anthropic"
    assert agent["gen_ai.request.model"] == TEST_MODEL
    assert "gen_ai.conversation.id" not in agent
    first = attrs(named(spans, "chat ")[0])
    assert first["gen_ai.operation.name"] == "chat"
    assert first["gen_ai.provider.name"] == "anthropic"
    assert first["gen_ai.request.model"] == TEST_MODEL
    assert first["gen_ai.response.model"] == TEST_MODEL
    assert str(first["gen_ai.response.id"]).startswith("msg_")
    assert first["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert first["gen_ai.usage.input_tokens"] > 0
    assert first["gen_ai.usage.output_tokens"] > 0
    assert first["gen_ai.request.max_tokens"] == server.message_requests()[0]["max_tokens"]


def test_the_tool_spans_carry_name_call_id_outcome_and_sizes(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    chat, _ = two_tools_one_failing(serve)
    chat.chat("Weather and tides?", echo="none")
    requests = {r.name: r.id for r in chat.get_turns()[1].tool_requests}
    results = {r.request.name: r for r in chat.get_turns()[2].tool_results if r.request}
    ok = attrs(one(spans, "execute_tool forecast"))
    assert ok["gen_ai.operation.name"] == "execute_tool"
    assert ok["gen_ai.tool.name"] == "forecast"
    assert ok["gen_ai.tool.call.id"] == requests["forecast"]
    assert ok["gen_ai.tool.description"] == "The forecast for a city."
    assert ok["chatlas_like.tool.outcome"] == "success"
    assert ok["chatlas_like.tool.is_truncated"] is False
    assert ok["chatlas_like.tool.sent_bytes"] == results["forecast"].stored_length == 11
    assert ok["chatlas_like.tool.original_bytes"] == 11
    assert "chatlas_like.run_id" not in ok  # no store attached


def test_a_failing_tool_span_is_an_error_with_its_type_and_redacted_message(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    chat, _ = two_tools_one_failing(serve)
    chat.chat("Weather and tides?", echo="none")
    failed = one(spans, "execute_tool tides")
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.status.description == "ValueError: no tide tables for Bergen"
    assert attrs(failed)["error.type"] == "ValueError"
    assert attrs(failed)["chatlas_like.tool.outcome"] == "exception"
    (event,) = [e for e in failed.events if e.name == "exception"]
    assert dict(event.attributes or {}) == {
        "exception.type": "ValueError",
        "exception.message": "ValueError: no tide tables for Bergen",
    }
    assert one(spans, "execute_tool forecast").status.status_code is StatusCode.UNSET
    assert one(spans, "invoke_agent").status.status_code is StatusCode.UNSET


def test_a_sync_tool_in_a_worker_thread_nests_its_own_spans_under_its_tool_span(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    chat, _ = two_tools_one_failing(serve)
    chat.chat("Weather and tides?", echo="none")
    assert parent_id(one(spans, "fetch_forecast")) == span_id(one(spans, "execute_tool forecast"))


async def test_async_and_sync_tools_of_chat_async_nest_under_their_own_tool_spans(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    async def tides(port: str) -> str:
        """Tide tables for a port."""
        with inner_span("fetch_tides"):
            await asyncio.sleep(0)
            return f"{port}: high at noon"

    server = serve(
        [
            Reply.tool_calls([("weather", {"city": "Oslo"}), ("tides", {"port": "Bergen"})]),
            Reply.text("Fine."),
        ]
    )
    chat = make_chat(server)
    chat.register_tool(weather)
    chat.register_tool(tides)
    await chat.chat_async("Weather and tides?", echo="none")
    agent = one(spans, "invoke_agent")
    assert parent_id(one(spans, "execute_tool weather")) == span_id(agent)
    assert parent_id(one(spans, "execute_tool tides")) == span_id(agent)
    assert parent_id(one(spans, "fetch_forecast")) == span_id(one(spans, "execute_tool weather"))
    assert parent_id(one(spans, "fetch_tides")) == span_id(one(spans, "execute_tool tides"))


def test_the_agent_span_is_a_child_of_the_callers_current_span(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    server = serve([Reply.text("Hello.")])
    chat = make_chat(server)
    with inner_span("request handler"):
        chat.chat("Hi", echo="none")
    assert parent_id(one(spans, "invoke_agent")) == span_id(one(spans, "request handler"))


def test_a_stream_gets_one_agent_span_that_ends_with_the_stream(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    server = serve([Reply.text("one two three")])
    chat = make_chat(server)
    stream = chat.stream("Count")
    assert next(stream) == "one "
    assert named(spans, "invoke_agent") == []
    assert "".join(stream) == "two three"
    assert one(spans, "invoke_agent").status.status_code is StatusCode.UNSET
    assert attrs(one(spans, "chat "))["gen_ai.response.finish_reasons"] == ("end_turn",)


def test_the_conversation_id_is_recorded_when_set(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    server = serve([Reply.tool_call("weather", {"city": "Oslo"}), Reply.text("Sunny.")])
    chat = make_chat(server)
    chat.register_tool(weather)
    chat.conversation_id = "conv-7"
    chat.chat("Weather?", echo="none")
    assert attrs(one(spans, "invoke_agent"))["gen_ai.conversation.id"] == "conv-7"
    assert {attrs(s).get("gen_ai.conversation.id") for s in named(spans, "chat ")} == {"conv-7"}


def test_a_conversation_id_must_be_a_string() -> None:
    chat = make_chat_offline()
    with pytest.raises(TypeError, match="conversation_id must be a str or None"):
        chat.conversation_id = 7  # pyright: ignore[reportAttributeAccessIssue]


def make_chat_offline() -> Any:
    from chatlas_like import ChatAnthropic

    return ChatAnthropic(model=TEST_MODEL, api_key="k", base_url="http://127.0.0.1:9")


def test_an_unknown_tool_gets_a_refused_tool_span(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    server = serve([Reply.tool_call("nosuch", {}), Reply.text("Sorry.")])
    chat = make_chat(server)
    chat.chat("Go", echo="none")
    span = one(spans, "execute_tool nosuch")
    assert attrs(span)["chatlas_like.tool.outcome"] == "refused"
    assert attrs(span)["error.type"] == "refused"
    assert span.status.status_code is StatusCode.ERROR
    assert parent_id(span) == span_id(one(spans, "invoke_agent"))


def test_a_denied_call_is_a_tool_span_that_is_not_an_error(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    from chatlas_like import Deny

    server = serve([Reply.tool_call("weather", {"city": "Paris"}), Reply.text("Private.")])
    chat = make_chat(server)
    chat.register_tool(weather)
    chat.on_tool_review(lambda request: Deny("The user keeps Paris private."))
    chat.chat("Weather?", echo="none")
    span = one(spans, "execute_tool weather")
    assert attrs(span)["chatlas_like.tool.outcome"] == "denied"
    assert "error.type" not in attrs(span)
    assert span.status.status_code is StatusCode.UNSET


def test_a_timed_out_call_gets_an_error_tool_span(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    release = threading.Event()

    def stuck() -> str:
        """Never answers in time."""
        release.wait(10)
        return "late"

    server = serve([Reply.tool_call("stuck", {}), Reply.text("Gave up.")])
    chat = make_chat(server, tool_timeout=0.05)
    chat.register_tool(stuck)
    chat.chat("Go", echo="none")
    release.set()
    span = one(spans, "execute_tool stuck")
    assert attrs(span)["chatlas_like.tool.outcome"] == "error"
    assert attrs(span)["error.type"] == "error"
    assert span.status.status_code is StatusCode.ERROR


def test_a_call_refused_at_the_round_limit_gets_a_span_and_the_agent_span_the_error(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    from chatlas_like import ToolLoopLimitError

    server = serve([Reply.tool_call("weather", {"city": "Oslo"})])
    chat = make_chat(server, max_tool_rounds=0)
    chat.register_tool(weather)
    with pytest.raises(ToolLoopLimitError):
        chat.chat("Weather?", echo="none")
    tool = one(spans, "execute_tool weather")
    agent = one(spans, "invoke_agent")
    assert attrs(tool)["chatlas_like.tool.outcome"] == "refused"
    assert parent_id(tool) == span_id(agent)
    assert attrs(agent)["error.type"] == "ToolLoopLimitError"
    assert one(spans, "chat ").status.status_code is StatusCode.UNSET


def test_a_cut_result_is_marked_truncated_with_both_sizes(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    def big() -> str:
        """A long text."""
        return "x" * 5000

    server = serve([Reply.tool_call("big", {}), Reply.text("ok")])
    chat = make_chat(server, max_result_bytes=1000)
    chat.register_tool(big)
    chat.chat("go", echo="none")
    span = attrs(one(spans, "execute_tool big"))
    assert span["chatlas_like.tool.is_truncated"] is True
    assert span["chatlas_like.tool.original_bytes"] == 5000
    assert span["chatlas_like.tool.sent_bytes"] == chat.get_turns()[2].tool_results[0].stored_length
    assert span["chatlas_like.tool.sent_bytes"] <= 1000


# -- content capture --------------------------------------------------------------------------


def test_message_content_is_not_recorded_by_default(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    server = serve([Reply.tool_call("weather", {"city": "Oslo"}), Reply.text("Sunny.")])
    chat = make_chat(server, system_prompt="Be brief.")
    chat.register_tool(weather)
    chat.chat("Weather in Oslo?", echo="none")
    keys = {k for s in spans.get_finished_spans() for k in attrs(s)}
    assert not keys & {
        "gen_ai.system_instructions",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    }


def test_message_content_is_recorded_when_asked(
    serve: Serve, spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAPTURE_CONTENT_ENV, "true")
    server = serve([Reply.tool_call("weather", {"city": "Oslo"}), Reply.text("Sunny.")])
    chat = make_chat(server, system_prompt="Be brief.")
    chat.register_tool(weather)
    chat.chat("Weather in Oslo?", echo="none")
    first, second = (attrs(s) for s in named(spans, "chat "))
    assert json.loads(first["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "Be brief."}
    ]
    assert json.loads(first["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "Weather in Oslo?"}]}
    ]
    (answer,) = json.loads(first["gen_ai.output.messages"])
    assert answer["role"] == "assistant" and answer["finish_reason"] == "tool_use"
    assert answer["parts"][0]["type"] == "tool_call"
    assert answer["parts"][0]["arguments"] == {"city": "Oslo"}
    tool_message = json.loads(second["gen_ai.input.messages"])[-1]
    assert tool_message["role"] == "tool"
    assert tool_message["parts"][0]["type"] == "tool_call_response"
    assert tool_message["parts"][0]["response"] == "Oslo: sunny"
    tool = attrs(one(spans, "execute_tool weather"))
    assert json.loads(tool["gen_ai.tool.call.arguments"]) == {"city": "Oslo"}
    assert tool["gen_ai.tool.call.result"] == "Oslo: sunny"


def test_captured_content_has_secrets_redacted(
    serve: Serve, spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAPTURE_CONTENT_ENV, "1")
    monkeypatch.setenv("WAREHOUSE_TOKEN", "wh-secret-8d7f6e5d")
    server = serve([Reply.text("Noted.")])
    chat = make_chat(server)
    chat.chat("My token is wh-secret-8d7f6e5d", echo="none")
    recorded = attrs(one(spans, "chat "))["gen_ai.input.messages"]
    assert "wh-secret-8d7f6e5d" not in recorded
    assert "[REDACTED]" in recorded


def test_captured_content_records_a_tools_image_by_its_kind_not_its_bytes(
    serve: Serve, spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chatlas_like import ContentImageInline

    monkeypatch.setenv(CAPTURE_CONTENT_ENV, "true")

    def screenshot() -> Any:
        """A screenshot."""
        return ContentImageInline("image/png", "iVBORw0KGgo" + "A" * 40_000)

    server = serve([Reply.tool_call("screenshot", {}), Reply.text("A blank screen.")])
    chat = make_chat(server)
    chat.register_tool(screenshot)
    chat.chat("What is on screen?", echo="none")
    recorded = attrs(one(spans, "execute_tool screenshot"))["gen_ai.tool.call.result"]
    assert json.loads(recorded) == [{"type": "image_inline"}]


# -- retries, cut streams, expansions -------------------------------------------------------------


def test_a_retried_request_is_one_chat_span_with_a_retry_event(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    server = serve(
        [Reply.error(529, "overloaded_error", "busy", headers=FAST_RETRY), Reply.text("Hello.")]
    )
    chat = make_chat(server)
    chat.chat("Hi", echo="none")
    span = one(spans, "chat ")
    (event,) = span.events
    assert event.name == "chatlas_like.retry"
    assert dict(event.attributes or {}) == {
        "chatlas_like.retry.number": 1,
        "chatlas_like.retry.wait_s": 0.005,
        "error.type": "OverloadedError",
    }
    assert span.status.status_code is StatusCode.UNSET


def test_a_cut_stream_ends_its_chat_span_and_the_agent_span_in_error(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    server = serve([Reply.text("one two three four five").cut(after=4)])
    chat = make_chat(server)
    with pytest.raises(StreamInterruptedError):
        chat.chat("Count", echo="none")
    for span in (one(spans, "chat "), one(spans, "invoke_agent")):
        assert span.status.status_code is StatusCode.ERROR
        assert attrs(span)["error.type"] == "StreamInterruptedError"
        assert [e.name for e in span.events] == ["exception"]


def test_an_applied_expansion_is_an_event_on_the_next_chat_span(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    def manual() -> ContentToolResult:
        """The manual."""
        return expand(
            "the whole manual",
            [
                {"role": "assistant", "content": "Here is the manual."},
                {"role": "user", "content": "Manual text."},
            ],
            result_content="inserted below",
        )

    server = serve([Reply.tool_call("manual", {}), Reply.text("Read it.")])
    chat = make_chat(server)
    chat.register_tool(manual)
    chat.chat("Read the manual", echo="none")
    first, second = named(spans, "chat ")
    assert first.events == ()
    (event,) = second.events
    assert event.name == "chatlas_like.expansion"
    assert dict(event.attributes or {}) == {
        "chatlas_like.expansion.applied": True,
        "chatlas_like.expansion.messages": 2,
        "gen_ai.tool.name": "manual",
        "gen_ai.tool.call.id": chat.get_turns()[1].tool_requests[0].id,
    }


# -- the store ---------------------------------------------------------------------------------


def test_the_tool_span_gives_the_run_id_and_sequence_of_the_stored_record(
    serve: Serve, spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    server = serve(
        [
            Reply.tool_calls([("weather", {"city": "Oslo"}), ("weather", {"city": "Rome"})]),
            Reply.text("Sunny."),
        ]
    )
    store = SqliteStore(tmp_path / "results.db")
    chat = make_chat(server, store=store)
    chat.register_tool(weather)
    chat.chat("Weather?", echo="none")
    tool_spans = named(spans, "execute_tool weather")
    assert len(tool_spans) == 2
    for span in tool_spans:
        found = attrs(span)
        assert found["chatlas_like.run_id"] == chat.run_id
        assert found["chatlas_like.tool.stored"] is True
        record = store.get(None, found["chatlas_like.run_id"], found["chatlas_like.tool.sequence"])
        assert record is not None
        assert record.tool_call_id == found["gen_ai.tool.call.id"]
        (event,) = [e for e in span.events if e.name == "chatlas_like.store.write"]
        assert dict(event.attributes or {})["chatlas_like.store.ok"] is True
    store.close()


def test_a_failed_store_write_is_an_event_on_the_tool_span(
    serve: Serve, spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    from chatlas_like import StoreWarning

    server = serve([Reply.tool_call("weather", {"city": "Oslo"}), Reply.text("Sunny.")])
    chat = make_chat(server, store=SqliteStore(tmp_path / "no" / "such" / "dir.db"))
    chat.register_tool(weather)
    with pytest.warns(StoreWarning, match="not stored"):
        chat.chat("Weather?", echo="none")
    span = one(spans, "execute_tool weather")
    assert attrs(span)["chatlas_like.tool.stored"] is False
    (event,) = [e for e in span.events if e.name == "chatlas_like.store.write"]
    assert dict(event.attributes or {})["chatlas_like.store.ok"] is False
    assert dict(event.attributes or {})["error.type"] == "StoreError"


# -- parallel_chat -----------------------------------------------------------------------------


async def test_parallel_chat_of_three_conversations_gives_one_agent_span_each_under_the_batch(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    def script(body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        if len(messages) == 1:  # the prompt: ask for the weather of its city
            (block,) = messages[0]["content"]
            return Reply.tool_call("weather", {"city": block["text"]})
        return Reply.text("Done.")

    server = serve(script)
    chat = make_chat(server)
    chat.register_tool(weather)
    await parallel_chat(chat, ["Oslo", "Rome", "Lima"], max_active=3)
    batch = one(spans, "parallel_chat")
    assert attrs(batch)["chatlas_like.parallel.prompts"] == 3
    agents = named(spans, "invoke_agent")
    assert len(agents) == 3
    assert {parent_id(a) for a in agents} == {span_id(batch)}
    tools = named(spans, "execute_tool weather")
    chats = named(spans, "chat ")
    assert len(tools) == 3 and len(chats) == 6
    for agent in agents:
        children = [s for s in [*tools, *chats] if parent_id(s) == span_id(agent)]
        assert sorted(s.name.split()[0] for s in children) == ["chat", "chat", "execute_tool"]
        (tool,) = [s for s in children if s.name.startswith("execute_tool")]
        (forecast,) = [s for s in named(spans, "fetch_forecast") if parent_id(s) == span_id(tool)]
        assert forecast is not None


# -- metrics ---------------------------------------------------------------------------------


def points(reader: InMemoryMetricReader, name: str) -> list[HistogramDataPoint]:
    data = reader.get_metrics_data()
    assert data is not None
    found: list[HistogramDataPoint] = []
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    found.extend(
                        p for p in metric.data.data_points if isinstance(p, HistogramDataPoint)
                    )
    return found


def test_token_usage_and_duration_histograms_are_recorded_with_a_meter_provider(
    serve: Serve, reader: InMemoryMetricReader
) -> None:
    server = serve([Reply.text("Hello.").with_usage(input_tokens=12, output_tokens=5)])
    chat = make_chat(server)
    chat.chat("Hi", echo="none")
    tokens = {
        p.attributes["gen_ai.token.type"]: p
        for p in points(reader, "gen_ai.client.token.usage")
        if p.attributes
    }
    assert (tokens["input"].sum, tokens["output"].sum) == (12, 5)
    assert dict(tokens["input"].attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": TEST_MODEL,
        "gen_ai.response.model": TEST_MODEL,
        "gen_ai.token.type": "input",
    }
    (duration,) = points(reader, "gen_ai.client.operation.duration")
    assert duration.count == 1 and duration.sum > 0


def test_a_failed_request_is_counted_in_the_duration_histogram_with_its_error_type(
    serve: Serve, reader: InMemoryMetricReader
) -> None:
    from chatlas_like._core.errors import BadRequestError

    server = serve([Reply.error(400, "invalid_request_error", "bad")])
    chat = make_chat(server)
    with pytest.raises(BadRequestError):
        chat.chat("Hi", echo="none")
    (duration,) = points(reader, "gen_ai.client.operation.duration")
    assert (duration.attributes or {})["error.type"] == "BadRequestError"


# -- off by default ------------------------------------------------------------------------------


def test_without_a_provider_or_logging_a_call_is_observed_by_nobody() -> None:
    chat = make_chat_offline()
    observer = observe_call(
        chat.provider, tools={}, max_result_bytes=ChatOptions().max_result_bytes, max_retries=3
    )
    assert observer is QUIET


def test_with_a_tracer_provider_a_call_is_observed(spans: InMemorySpanExporter) -> None:
    chat = make_chat_offline()
    observer = observe_call(chat.provider, tools={}, max_result_bytes=100, max_retries=3)
    assert observer is not QUIET


def test_a_worker_thread_sees_the_context_of_whoever_submitted_the_work() -> None:
    import contextvars

    var: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")
    pool = WorkerPool(keep_idle=1)
    token = var.set("the caller")
    try:
        assert pool.submit(var.get).result(timeout=10) == "the caller"
    finally:
        var.reset(token)
    assert pool.submit(var.get).result(timeout=10) == "nobody"


def test_the_sdks_own_request_span_nests_under_the_chat_span(
    serve: Serve, spans: InMemorySpanExporter
) -> None:
    server = serve([Reply.text("Hello.")])
    chat = make_chat(server)
    chat.chat("Hi", echo="none")
    sdk_span = one(spans, "anthropic.messages.create")  # the anthropic SDK's own span
    assert parent_id(sdk_span) == span_id(one(spans, "chat "))
