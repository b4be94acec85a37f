"""parallel_chat and its variants through the real SDK against the loopback server."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from chatlas_like import (
    AssistantTurn,
    BadRequestError,
    Chat,
    ChatAnthropic,
    ContentJson,
    StructuredChatResult,
    UserTurn,
    parallel_chat,
    parallel_chat_structured,
    parallel_chat_text,
)
from chatlas_like._display.progress import ProgressReporter, progress_reporter
from chatlas_like._parallel import BatchLimiter, RetryCounter
from chatlas_like._run.limiter import Limiter
from chatlas_like.providers._anthropic.schema import STRUCTURED_TOOL
from chatlas_like.testing import Reply

from ..conftest import TEST_KEY, make_chat

FAST = 60_000  # requests per minute: spacing of 1 ms, so tests do not wait on the rate


def last_user_blocks(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    return body["messages"][-1]["content"]


def prompt_of(body: Mapping[str, Any]) -> str:
    """The text of the conversation's first user message (which prompt this is)."""
    first = body["messages"][0]["content"]
    return next(b["text"] for b in first if b.get("type") == "text")


def by_prompt(body: Mapping[str, Any]) -> Reply:
    """``double N`` asks for the tool; a tool result is answered; anything else is echoed."""
    for block in last_user_blocks(body):
        if block.get("type") == "tool_result":
            return Reply.text(f"It is {block['content']}.")
    prompt = prompt_of(body)
    if prompt == "fail":
        return Reply.error(400, "invalid_request_error", "this prompt is refused")
    if prompt.startswith("double"):
        return Reply.tool_call("double", {"x": int(prompt.split()[1])})
    return Reply.text(f"You said {prompt}.")


def test_results_come_back_in_input_order_with_every_tool_run(serve: Any) -> None:
    barrier = threading.Barrier(4, timeout=10)

    def double(x: int) -> int:
        """Doubles a number."""
        barrier.wait()  # all four conversations run their tool at once, or this times out
        return 2 * x

    chat = make_chat(serve(by_prompt))
    chat.register_tool(double)
    prompts = [f"double {n}" for n in (1, 2, 3, 4)]
    chats = asyncio.run(parallel_chat(chat, prompts, rpm=FAST))
    assert [str(c.get_last_turn()) for c in chats if isinstance(c, Chat)] == [
        "It is 2.",
        "It is 4.",
        "It is 6.",
        "It is 8.",
    ]
    roles = [[t.role for t in c.get_turns()] for c in chats if isinstance(c, Chat)]
    assert roles == [["user", "assistant", "user", "assistant"]] * 4


def test_a_sequential_tool_runs_alone_across_the_conversations(serve: Any) -> None:
    running: list[int] = []
    most = 0
    guard = threading.Lock()

    def double(x: int) -> int:
        """Doubles a number (not thread-safe)."""
        nonlocal most
        with guard:
            running.append(x)
            most = max(most, len(running))
        time.sleep(0.05)
        with guard:
            running.remove(x)
        return 2 * x

    chat = make_chat(serve(by_prompt))
    chat.register_tool(double, sequential=True)
    texts = asyncio.run(parallel_chat_text(chat, [f"double {n}" for n in range(4)], rpm=FAST))
    assert texts == ["It is 0.", "It is 2.", "It is 4.", "It is 6."]
    assert most == 1


def test_each_conversation_has_its_own_history_and_run_id(serve: Any) -> None:
    chat = make_chat(serve(by_prompt))
    earlier = [UserTurn("Remember 7."), AssistantTurn("Noted.")]
    chat.set_turns(earlier)
    chats = asyncio.run(parallel_chat(chat, ["a", "b"], rpm=FAST))
    assert chat.get_turns() == earlier
    assert all(isinstance(c, Chat) and c.get_turns()[:2] == earlier for c in chats)
    assert [str(c.get_turns()[2]) for c in chats if isinstance(c, Chat)] == ["a", "b"]
    run_ids = {c.run_id for c in chats if isinstance(c, Chat)}
    assert len(run_ids) == 2 and chat.run_id not in run_ids


def test_parallel_chat_text_returns_the_last_answers(serve: Any) -> None:
    chat = make_chat(serve(by_prompt))
    assert asyncio.run(parallel_chat_text(chat, ["a", ["b", "c"]], rpm=FAST)) == [
        "You said a.",
        "You said b.",
    ]


def test_one_failing_prompt_does_not_sink_the_rest(serve: Any) -> None:
    chat = make_chat(serve(by_prompt))
    results = asyncio.run(
        parallel_chat_text(chat, ["fail", "a", "b"], rpm=FAST, on_error="continue")
    )
    assert isinstance(results[0], BadRequestError)
    assert "this prompt is refused" in str(results[0])
    assert results[1:] == ["You said a.", "You said b."]


def test_on_error_return_starts_no_conversation_after_a_failure(serve: Any) -> None:
    server = serve(by_prompt)
    chat = make_chat(server)
    results = asyncio.run(parallel_chat(chat, ["a", "fail", "b", "c"], max_active=1, rpm=FAST))
    assert isinstance(results[0], Chat)
    assert isinstance(results[1], BadRequestError)
    assert results[2:] == [None, None]
    assert [prompt_of(b) for b in server.message_requests()] == ["a", "fail"]


def test_on_error_stop_raises_without_waiting_for_conversations_in_flight(serve: Any) -> None:
    release = threading.Event()
    started = threading.Event()

    def double(x: int) -> int:
        """Doubles a number."""
        started.set()
        release.wait(10)
        return 2 * x

    def gate() -> str:
        """Returns once the other conversation's tool is running."""
        assert started.wait(10)
        return "open"

    def script(body: Mapping[str, Any]) -> Reply:
        if prompt_of(body) != "fail":
            return by_prompt(body)
        if any(b.get("type") == "tool_result" for b in last_user_blocks(body)):
            return Reply.error(400, "invalid_request_error", "this prompt is refused")
        return Reply.tool_call("gate", {})

    chat = make_chat(serve(script))
    chat.register_tool(double)
    chat.register_tool(gate)
    try:
        with pytest.raises(BadRequestError, match="this prompt is refused"):
            asyncio.run(parallel_chat(chat, ["double 1", "fail"], rpm=FAST, on_error="stop"))
        assert not release.is_set()  # raised while the tool of "double 1" was still running
    finally:
        release.set()


def test_max_active_bounds_the_conversations_in_progress(serve: Any) -> None:
    lock = threading.Lock()
    active = peak = 0
    pair = threading.Barrier(2, timeout=10)

    def double(x: int) -> int:
        """Doubles a number."""
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        try:
            pair.wait()  # two conversations do reach their tools together
            return 2 * x
        finally:
            with lock:
                active -= 1

    chat = make_chat(serve(by_prompt))
    chat.register_tool(double)
    prompts = [f"double {n}" for n in range(6)]
    texts = asyncio.run(parallel_chat_text(chat, prompts, max_active=2, rpm=FAST))
    assert texts == [f"It is {2 * n}." for n in range(6)]
    assert peak == 2


class SignallingLimiter(Limiter):
    """A real limiter that also says when a pause was asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.paused = threading.Event()

    def pause(self, seconds: float) -> None:
        super().pause(seconds)
        self.paused.set()


def test_a_rate_limit_on_one_conversation_pauses_the_others(serve: Any) -> None:
    limiter = SignallingLimiter()
    arrivals: list[tuple[str, float]] = []

    def wait_for_pause() -> str:
        """Returns once the batch has been told to pause."""
        assert limiter.paused.wait(10)
        return "ready"

    def script(body: Mapping[str, Any]) -> Reply:
        prompt = prompt_of(body)
        arrivals.append((prompt, time.monotonic()))
        if prompt == "limited":
            if len([p for p, _ in arrivals if p == "limited"]) == 1:
                return Reply.error(429, "rate_limit_error", headers={"retry-after-ms": "600"})
            return Reply.text("limited, then served")
        if any(b.get("type") == "tool_result" for b in last_user_blocks(body)):
            return Reply.text("waited")
        return Reply.tool_call("wait_for_pause", {})

    chat = make_chat(serve(script))
    chat.register_tool(wait_for_pause)
    chat._limiter = limiter
    # The waiter's tool returns the moment the 429 made the batch pause. Its next request
    # can only leave once the 0.6 s the 429 asked for are over, though nothing in its own
    # conversation failed: a lower bound that holds by causality (the pause started after
    # the 429 arrived), so it cannot fail by slowness. Without the shared pause that
    # request follows the 429 within milliseconds.
    texts = asyncio.run(parallel_chat_text(chat, ["waiter", "limited"], rpm=FAST))
    assert texts == ["waited", "limited, then served"]
    waiter = [t for p, t in arrivals if p == "waiter"]
    limited = [t for p, t in arrivals if p == "limited"]
    assert len(waiter) == len(limited) == 2
    assert limited[1] - limited[0] >= 0.6
    assert waiter[1] - limited[0] >= 0.6


def test_the_batch_limiter_spaces_sends_and_shares_pauses_with_the_chat() -> None:
    now = 100.0
    parent = Limiter(clock=lambda: now)
    limiter = BatchLimiter(60, parent, clock=lambda: now)
    assert [limiter.reserve(), limiter.reserve()] == [0.0, 1.0]
    limiter.pause(5.0)
    assert parent.reserve() == 5.0  # the chat's own calls wait too
    parent.pause(9.0)
    assert limiter.reserve() == 9.0  # and a pause of the chat holds the batch


def a_batch_gate(rpm: float, now: list[float]) -> tuple[RetryCounter, ProgressReporter]:
    """One conversation's gate into a batch limited to ``rpm``, on a clock the test moves."""
    batch = BatchLimiter(rpm, Limiter(clock=lambda: now[0]), clock=lambda: now[0])
    progress = progress_reporter("Answering 3 prompts", 3, ("done", "failed"), echo="none")
    return RetryCounter(batch, ChatAnthropic(api_key=TEST_KEY), progress), progress


def test_the_progress_says_when_the_batch_waits_on_its_rate_limit() -> None:
    gate, progress = a_batch_gate(20, [0.0])  # a send every 3 seconds
    with progress:
        assert gate.reserve() == 0.0
        assert progress.snapshot().note == ""
        assert gate.reserve() == 3.0
        line = progress.snapshot().line()
    assert line.endswith("waiting on the rate limit (rpm=20; pass rpm= to change it)")


def test_the_progress_says_when_the_provider_asked_the_batch_to_pause() -> None:
    gate, progress = a_batch_gate(60_000, [0.0])
    with progress:
        gate.batch.pause(30.0)  # a 429's retry-after
        gate.reserve()
        assert progress.snapshot().note == "paused 30s: the provider asked to slow down"


def test_the_wait_note_goes_once_sends_flow_again() -> None:
    now = [0.0]
    gate, progress = a_batch_gate(20, now)
    with progress:
        gate.reserve(), gate.reserve()
        now[0] = 100.0
        gate.reserve()
        assert progress.snapshot().note == ""


class Person(BaseModel):
    """A person."""

    name: str
    age: int


def people(body: Mapping[str, Any]) -> Reply:
    if prompt_of(body) == "nobody":
        return Reply.tool_call(STRUCTURED_TOOL, {"name": "?", "age": "unknown"})
    name, age = prompt_of(body).split()
    return Reply.tool_call(STRUCTURED_TOOL, {"name": name, "age": int(age)})


def test_parallel_chat_structured_returns_data_and_its_chat(serve: Any) -> None:
    server = serve(people)
    chat = make_chat(server, structured_output_mode="tool")
    results = asyncio.run(parallel_chat_structured(chat, ["Ada 36", "Alan 41"], Person, rpm=FAST))
    assert [r.data for r in results if isinstance(r, StructuredChatResult)] == [
        Person(name="Ada", age=36),
        Person(name="Alan", age=41),
    ]
    first = results[0]
    assert isinstance(first, StructuredChatResult)
    answer = first.chat.get_last_turn()
    assert answer is not None and answer.contents == [ContentJson({"name": "Ada", "age": 36})]
    assert first.chat.provider is chat.provider
    body = server.message_requests()[0]
    assert body["tool_choice"] == {"type": "tool", "name": STRUCTURED_TOOL}
    assert body["tools"][-1]["input_schema"]["required"] == ["name", "age"]


def test_data_that_does_not_validate_is_that_prompts_error(serve: Any) -> None:
    chat = make_chat(serve(people), structured_output_mode="tool")
    results = asyncio.run(
        parallel_chat_structured(chat, ["nobody", "Ada 36"], Person, rpm=FAST, on_error="continue")
    )
    assert isinstance(results[0], ValidationError)
    assert isinstance(results[1], StructuredChatResult)


def test_no_prompts_give_an_empty_list(serve: Any) -> None:
    chat = make_chat(serve(by_prompt))
    assert asyncio.run(parallel_chat(chat, [])) == []


def test_an_unknown_on_error_is_refused_before_any_request(serve: Any) -> None:
    server = serve(by_prompt)
    chat = make_chat(server)
    with pytest.raises(ValueError, match="on_error"):
        asyncio.run(parallel_chat(chat, ["a"], on_error="ignore"))  # pyright: ignore[reportArgumentType, reportCallIssue]
    assert server.requests == []
