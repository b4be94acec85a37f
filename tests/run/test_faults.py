"""Faults from the provider or the stream: a clear error, and a history the next turn can use.

Every test ends by checking that the next ``chat()`` is accepted by the loopback server's
request rules (the same rules the real API applies).
"""

from __future__ import annotations

from typing import Any

import pytest

from chatlas_like import (
    AuthenticationError,
    BadRequestError,
    ChatAnthropic,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    RateLimitError,
    RequestTooLargeError,
    ServerError,
    StreamInterruptedError,
    ToolLoopLimitError,
)
from chatlas_like._run.limiter import Limiter
from chatlas_like._run.retry import retry_delay
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import TEST_KEY, TEST_MODEL, make_chat

FAST_RETRY = {"retry-after-ms": "5"}


def assert_next_turn_works(server: LoopbackServer, chat: Any) -> None:
    assert server.backend.model.remaining >= 1, "script a reply for the follow-up"  # type: ignore[attr-defined]
    chat.chat("And now?", echo="none")
    assert server.requests[-1].response_status == 200


@pytest.mark.parametrize(
    ("status", "error_type", "expected"),
    [
        (400, "invalid_request_error", BadRequestError),
        (401, "authentication_error", AuthenticationError),
        (403, "permission_error", PermissionDeniedError),
        (404, "not_found_error", NotFoundError),
        (413, "request_too_large", RequestTooLargeError),
        (429, "rate_limit_error", RateLimitError),
        (500, "api_error", ServerError),
        (529, "overloaded_error", OverloadedError),
    ],
)
def test_provider_errors_map_to_the_library_errors(
    serve: Any, status: int, error_type: str, expected: type[ProviderError]
) -> None:
    server = serve([Reply.error(status, error_type, "the API said no"), Reply.text("ok")])
    chat = make_chat(server, max_retries=0)
    with pytest.raises(expected) as caught:
        chat.chat("Hi", echo="none")
    assert caught.value.status_code == status
    assert caught.value.error_type == error_type
    assert str(caught.value) == f"{status} {error_type}: the API said no"
    assert_next_turn_works(server, chat)


def test_a_rate_limit_error_carries_retry_after(serve: Any) -> None:
    server = serve(
        [Reply.error(429, "rate_limit_error", "slow down", headers={"retry-after": "7"})]
    )
    chat = make_chat(server, max_retries=0)
    with pytest.raises(RateLimitError) as caught:
        chat.chat("Hi", echo="none")
    assert caught.value.retry_after == 7.0


def test_a_provider_error_pickles_and_copies_as_ours_without_the_sdks_objects(
    serve: Any,
) -> None:
    import copy
    import pickle

    import anthropic

    server = serve(
        [Reply.error(429, "rate_limit_error", "slow down", headers={"retry-after": "7"})]
    )
    chat = make_chat(server, max_retries=0)
    with pytest.raises(anthropic.RateLimitError) as caught:
        chat.chat("Hi", echo="none")
    for again in (pickle.loads(pickle.dumps(caught.value)), copy.deepcopy(caught.value)):
        assert type(again) is RateLimitError and not isinstance(again, anthropic.APIError)
        assert (str(again), again.status_code, again.retry_after) == (
            str(caught.value),
            429,
            7.0,
        )
        assert not hasattr(again, "response")


def test_a_closed_port_is_a_connection_error_and_the_sdks_too() -> None:
    import anthropic

    chat = ChatAnthropic(
        base_url="http://127.0.0.1:9", api_key=TEST_KEY, model=TEST_MODEL, max_retries=0
    )
    with pytest.raises(ProviderConnectionError) as caught:
        chat.chat("Hi", echo="none")
    assert isinstance(caught.value, anthropic.APIConnectionError)
    assert chat.get_turns() == []


def test_overloaded_answers_are_retried_without_duplicating_the_turn(serve: Any) -> None:
    overloaded = Reply.error(529, "overloaded_error", "busy", headers=FAST_RETRY)
    server = serve([overloaded, overloaded, Reply.text("made it")])
    chat = make_chat(server)
    assert str(chat.chat("Hi", echo="none")) == "made it"
    assert len(server.message_requests()) == 3
    assert [t.role for t in chat.get_turns()] == ["user", "assistant"]


def test_retries_stop_after_max_retries(serve: Any) -> None:
    busy = Reply.error(500, "api_error", "down", headers=FAST_RETRY)
    server = serve([busy] * 5)
    chat = make_chat(server, max_retries=2)
    with pytest.raises(ServerError):
        chat.chat("Hi", echo="none")
    assert len(server.message_requests()) == 3


def test_a_bad_request_is_never_retried(serve: Any) -> None:
    server = serve([Reply.error(400, "invalid_request_error", "no"), Reply.text("unused")])
    chat = make_chat(server)
    with pytest.raises(BadRequestError):
        chat.chat("Hi", echo="none")
    assert len(server.message_requests()) == 1


def test_the_retry_delay_honours_retry_after_and_backs_off_otherwise() -> None:
    assert retry_delay(0, RateLimitError("x", retry_after=3.0), 3) == 3.0
    assert retry_delay(3, RateLimitError("x"), 3) is None
    assert retry_delay(0, BadRequestError("x"), 3) is None
    first = retry_delay(0, ServerError("x"), 3, rng=lambda: 1.0)
    second = retry_delay(1, ServerError("x"), 3, rng=lambda: 1.0)
    assert first is not None and second is not None and second == 2 * first


def test_a_pause_in_the_limiter_holds_every_sender() -> None:
    now = [100.0]
    limiter = Limiter(clock=lambda: now[0])
    assert limiter.reserve() == 0.0
    limiter.pause(5.0)
    assert limiter.reserve() == 5.0
    now[0] += 5.0
    assert limiter.reserve() == 0.0


def test_a_request_rate_spaces_the_sends() -> None:
    limiter = Limiter(rpm=60, clock=lambda: 0.0)
    assert [limiter.reserve() for _ in range(3)] == [0.0, 1.0, 2.0]


def test_a_failure_after_tools_ran_keeps_their_results_and_never_reruns_them(serve: Any) -> None:
    calls: list[str] = []

    def charge(amount: int) -> str:
        """Charges a card (a side effect)."""
        calls.append(f"charged {amount}")
        return "charged"

    server = serve(
        [
            Reply.tool_call("charge", {"amount": 5}),
            Reply.error(400, "invalid_request_error", "the second call failed"),
            Reply.text("Done: you were charged once."),
        ]
    )
    chat = make_chat(server)
    chat.register_tool(charge)
    with pytest.raises(BadRequestError):
        chat.chat("Pay", echo="none")
    assert chat.get_turns()[-1].tool_results[0].value == "charged"
    chat.chat("Carry on", echo="none")
    last_request = server.message_requests()[-1]["messages"][-1]["content"]
    assert last_request[0]["type"] == "tool_result" and last_request[0]["content"] == "charged"
    assert last_request[1]["text"] == "Carry on"
    assert calls == ["charged 5"]


def test_a_stream_cut_mid_text_keeps_the_partial_turn(serve: Any) -> None:
    server = serve([Reply.text("one two three four five").cut(after=4), Reply.text("ok")])
    chat = make_chat(server)
    with pytest.raises(StreamInterruptedError):
        chat.chat("Count", echo="none")
    last = chat.get_last_turn()
    assert last is not None and last.finish_reason is None and last.text == "one two "
    assert_next_turn_works(server, chat)


def test_a_stream_cut_mid_tool_call_refuses_the_call(serve: Any) -> None:
    ran: list[int] = []

    def add(x: int) -> int:
        """Adds."""
        ran.append(x)
        return x

    server = serve([Reply.tool_call("add", {"x": 12345}).cut(after=4), Reply.text("ok")])
    chat = make_chat(server)
    chat.register_tool(add)
    with pytest.raises(StreamInterruptedError):
        chat.chat("Add", echo="none")
    result = chat.get_turns()[-1].tool_results[0]
    assert result.is_refusal and ran == []
    assert_next_turn_works(server, chat)


def test_malformed_event_data_ends_the_stream_with_a_clear_error(serve: Any) -> None:
    server = serve([Reply.text("one two three").garbled(at=4), Reply.text("ok")])
    chat = make_chat(server)
    with pytest.raises(StreamInterruptedError, match="malformed event data"):
        chat.chat("Count", echo="none")
    assert_next_turn_works(server, chat)


def test_a_stream_without_message_stop_is_incomplete(serve: Any) -> None:
    server = serve([Reply.text("all of it").without_stop(), Reply.text("ok")])
    chat = make_chat(server)
    with pytest.raises(StreamInterruptedError, match="no message_stop"):
        chat.chat("Hi", echo="none")
    last = chat.get_turns()[1]
    assert last.finish_reason is None and last.text == "all of it"
    assert_next_turn_works(server, chat)


def test_tool_arguments_cut_by_max_tokens_are_refused_and_the_loop_goes_on(serve: Any) -> None:
    cut = Reply.blocks_of(
        {"type": "tool_use", "name": "add", "input": '{"x": 1'}, stop_reason="max_tokens"
    )
    server = serve([cut, Reply.text("I will try again later."), Reply.text("ok")])
    chat = make_chat(server)
    chat.register_tool(lambda x: x, name="add")
    with pytest.warns(UserWarning, match="max_tokens"):
        chat.chat("Add", echo="none")
    result = chat.get_turns()[2].tool_results[0]
    assert result.is_refusal
    assert "cut off by the max_tokens limit" in result.get_model_value()
    assert chat.get_turns()[-1].text == "I will try again later."


def always_calls_tools(body: Any) -> Reply:
    return Reply.tool_call("ping", {})


def test_the_tool_round_limit_refuses_pending_calls_and_raises(serve: Any) -> None:
    server = serve(always_calls_tools)
    chat = make_chat(server, max_tool_rounds=2)
    chat.register_tool(lambda: "pong", name="ping")
    with pytest.raises(ToolLoopLimitError, match="max_tool_rounds=2"):
        chat.chat("Go", echo="none")
    results = [r for t in chat.get_turns() for r in t.tool_results]
    assert [r.outcome for r in results] == ["success", "success", "refused"]
    assert len(server.message_requests()) == 3


def test_the_tool_round_limit_can_be_set_per_call(serve: Any) -> None:
    server = serve(always_calls_tools)
    chat = make_chat(server)
    chat.register_tool(lambda: "pong", name="ping")
    with pytest.raises(ToolLoopLimitError):
        chat.chat("Go", echo="none", max_tool_rounds=0)
    assert chat.get_turns()[-1].tool_results[0].is_refusal


def test_the_token_budget_stops_the_loop(serve: Any) -> None:
    costly = Reply.tool_call("ping", {}).with_usage(input_tokens=900, output_tokens=100)
    server = serve([costly, costly, Reply.text("ok")])
    chat = make_chat(server, max_tokens_per_chat=1500)
    chat.register_tool(lambda: "pong", name="ping")
    with pytest.raises(ToolLoopLimitError, match="max_tokens_per_chat=1,500"):
        chat.chat("Go", echo="none")
    results = [r.outcome for t in chat.get_turns() for r in t.tool_results]
    assert results == ["success", "refused"]
    assert_next_turn_works(server, chat)


def test_a_loop_limit_leaves_a_history_the_next_chat_can_send(serve: Any) -> None:
    server = serve([Reply.tool_call("ping", {}), Reply.text("fine")])
    chat = make_chat(server, max_tool_rounds=0)
    chat.register_tool(lambda: "pong", name="ping")
    with pytest.raises(ToolLoopLimitError):
        chat.chat("Go", echo="none")
    assert str(chat.chat("Continue", echo="none")) == "fine"


def test_a_reset_connection_is_retried(serve: Any) -> None:
    server = serve([Reply.drop(), Reply.text("reconnected")])
    chat = make_chat(server)
    assert str(chat.chat("Hi", echo="none")) == "reconnected"
    assert len(server.requests) == 2


def test_an_error_event_mid_stream_keeps_the_partial_turn(serve: Any) -> None:
    server = serve([Reply.text("one two three").failing_mid_stream(at=4), Reply.text("ok")])
    chat = make_chat(server)
    with pytest.raises(StreamInterruptedError, match="overloaded_error") as caught:
        chat.chat("Count", echo="none")
    assert isinstance(caught.value.__cause__, OverloadedError)
    assert chat.get_turns()[-1].finish_reason is None
    assert_next_turn_works(server, chat)


def test_an_error_event_before_any_content_is_the_providers_error(serve: Any) -> None:
    server = serve([Reply.text("never").failing_mid_stream(at=1), Reply.text("ok")])
    chat = make_chat(server)
    with pytest.raises(OverloadedError):
        chat.chat("Hi", echo="none")
    assert chat.get_turns() == []


def test_an_error_event_is_also_the_sdks_api_status_error_as_chatlas_code_catches_it(
    serve: Any,
) -> None:
    import anthropic

    server = serve([Reply.text("never").failing_mid_stream(at=1), Reply.text("ok")])
    chat = make_chat(server)
    with pytest.raises(anthropic.APIStatusError) as caught:
        chat.chat("Hi", echo="none")
    assert isinstance(caught.value, OverloadedError)
    assert caught.value.body["error"]["type"] == "overloaded_error"


async def test_an_error_event_in_chat_async_is_the_sdks_api_status_error_too(
    serve: Any,
) -> None:
    import anthropic

    server = serve([Reply.text("never").failing_mid_stream(at=1), Reply.text("ok")])
    chat = make_chat(server)
    with pytest.raises(anthropic.APIStatusError):
        await chat.chat_async("Hi", echo="none")
    assert str(await chat.chat_async("Again", echo="none")) == "ok"


def test_an_error_event_after_an_empty_text_block_started_is_the_providers_error(
    serve: Any,
) -> None:
    server = serve([Reply.text("never").failing_mid_stream(at=2), Reply.text("ok")])
    chat = make_chat(server)
    with pytest.raises(OverloadedError):
        chat.chat("Hi", echo="none")
    assert chat.get_turns() == []  # no empty answer for the next prompt to be merged past
    assert str(chat.chat("Again", echo="none")) == "ok"
    assert len(server.message_requests()[-1]["messages"]) == 1


def test_pause_turn_continuations_count_against_the_round_limit(serve: Any) -> None:
    server = serve(lambda body: Reply.text("still searching", stop_reason="pause_turn"))
    chat = make_chat(server, max_tool_rounds=2, resume_paused=True)
    with pytest.raises(ToolLoopLimitError, match="max_tool_rounds=2"):
        chat.chat("Search", echo="none")
    assert len(server.message_requests()) == 3
