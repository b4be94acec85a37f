"""Every outcome a tool call can end in, through real conversations on the loopback server.

Each row of ``CASES`` runs one conversation (the model asks for one call, then answers
with text) and checks three things: what the model received (the logged request), the
flags on the result stored in the history, and what the callbacks saw.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from chatlas_like import (
    Allow,
    Chat,
    ContentToolRequest,
    ContentToolResult,
    Deny,
    RestoredToolError,
    StreamInterruptedError,
    ToolRejectError,
    from_json,
    to_json,
)
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat


def weather(city: str, units: str = "celsius") -> str:
    """Gets the weather for a city."""
    return f"sunny in {city} ({units})"


def no_data(city: str) -> ContentToolResult:
    """Reports a failure as a value."""
    return ContentToolResult(error=f"no data for {city}")


def crash(city: str) -> str:
    """Raises."""
    raise ValueError(f"bad city {city}")


def reject_inside(city: str) -> str:
    """Turns itself down before acting."""
    raise ToolRejectError(f"{city} is not served")


async def hang(city: str) -> str:
    """Never finishes on its own."""
    await asyncio.sleep(3600)
    return city


@dataclass
class Seen:
    """What the callbacks saw during one conversation."""

    requests: list[str] = field(default_factory=lambda: [])
    results: list[str] = field(default_factory=lambda: [])
    tool_arguments: list[dict[str, Any]] = field(default_factory=lambda: [])


Setup = Callable[[Chat, Seen], None]


def _reject_request(chat: Chat, seen: Seen) -> None:
    def reject(request: ContentToolRequest) -> None:
        raise ToolRejectError("the user said no")

    chat.on_tool_request(reject)


def _deny(chat: Chat, seen: Seen) -> None:
    chat.on_tool_review(lambda request: Deny("Not today: the user keeps Paris private."))


def _allow_changed(chat: Chat, seen: Seen) -> None:
    chat.on_tool_review(lambda request: Allow(arguments={"city": "Oslo", "units": "kelvin"}))


def _nothing(chat: Chat, seen: Seen) -> None:
    pass


@dataclass(frozen=True)
class Case:
    id: str
    reply: Reply
    outcome: str
    sent: str
    flags: tuple[bool, bool, bool]  # is_error, is_exception, is_refusal
    announced: bool  # whether on_tool_request saw the call
    setup: Setup = _nothing


def failed(message: str) -> str:
    """What the model reads of a failed call, as chatlas words it."""
    return f"Tool call failed with error: '{message}'"


CASES = [
    Case(
        "success",
        Reply.tool_call("weather", {"city": "Paris"}),
        "success",
        "sunny in Paris (celsius)",
        (False, False, False),
        True,
    ),
    Case(
        "error-returned",
        Reply.tool_call("no_data", {"city": "Atlantis"}),
        "error",
        failed("no data for Atlantis"),
        (True, False, False),
        True,
    ),
    Case(
        "error-timeout",
        Reply.tool_call("hang", {"city": "Paris"}),
        "error",
        failed("`hang` timed out after 0.05 s; it was stopped waiting for."),
        (True, False, False),
        True,
    ),
    Case(
        "exception",
        Reply.tool_call("crash", {"city": "Paris"}),
        "exception",
        failed("bad city Paris"),
        (True, True, False),
        True,
    ),
    Case(
        "refused-unknown-tool",
        Reply.tool_call("forecast", {"city": "Paris"}),
        "refused",
        failed(
            "Unknown tool `forecast`. Available tools: crash, hang, no_data, reject_inside, weather."
        ),
        (True, False, True),
        False,
    ),
    Case(
        "refused-bad-arguments",
        Reply.tool_call("weather", {"town": "Paris"}),
        "refused",
        failed(
            "Invalid arguments for `weather`: missing required argument `city`; "
            "unexpected argument `town`; accepted: city, units"
        ),
        (True, False, True),
        False,
    ),
    Case(
        "refused-incomplete-arguments",
        # the model ran out of tokens inside the arguments: the block ends, its JSON does not
        Reply(
            blocks=({"type": "tool_use", "name": "weather", "input": '{"city": "Par'},),
            stop_reason="max_tokens",
        ),
        "refused",
        failed(
            "The arguments of `weather` were cut off by the max_tokens limit; "
            "send the call again with shorter arguments."
        ),
        (True, False, True),
        False,
    ),
    Case(
        "refused-on-tool-request",
        Reply.tool_call("weather", {"city": "Paris"}),
        "refused",
        "Tool call failed with error: 'Tool call rejected. the user said no'",
        (True, False, True),
        True,
        _reject_request,
    ),
    Case(
        "refused-inside-tool",
        Reply.tool_call("reject_inside", {"city": "Paris"}),
        "refused",
        "Tool call failed with error: 'Tool call rejected. Paris is not served'",
        (True, False, True),
        True,
    ),
    Case(
        "denied",
        Reply.tool_call("weather", {"city": "Paris"}),
        "denied",
        "Not today: the user keeps Paris private.",
        (False, False, False),
        False,
        _deny,
    ),
    Case(
        "allowed-with-new-arguments",
        Reply.tool_call("weather", {"city": "Paris"}),
        "success",
        "sunny in Oslo (kelvin)",
        (False, False, False),
        True,
        _allow_changed,
    ),
]


def _converse(serve: Any, case: Case) -> tuple[ContentToolResult, dict[str, Any], Seen, Chat]:
    server: LoopbackServer = serve([case.reply, Reply.text("Noted.")])
    chat = make_chat(server)
    for tool in (weather, no_data, crash, reject_inside):
        chat.register_tool(tool)
    chat.register_tool(hang, timeout=0.05)
    seen = Seen()
    chat.on_tool_request(lambda request: seen.requests.append(request.name))
    chat.on_tool_result(lambda result: seen.results.append(result.outcome))
    case.setup(chat, seen)
    cut = case.reply.stop_reason == "max_tokens"  # an answer cut short warns, as chatlas's does
    with pytest.warns(UserWarning, match="max_tokens") if cut else contextlib.nullcontext():
        assert str(chat.chat("Go", echo="none")) == "Noted."
    result = chat.get_turns()[2].tool_results[0]
    sent = server.message_requests()[1]["messages"][-1]["content"][0]
    return result, sent, seen, chat


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_each_outcome_reaches_the_model_the_history_and_the_callbacks(
    serve: Any, case: Case
) -> None:
    result, sent, seen, _ = _converse(serve, case)
    # the model
    assert sent["type"] == "tool_result"
    assert sent["content"] == case.sent
    assert sent["is_error"] is case.flags[0]  # always said, as chatlas says it
    # the stored result
    assert result.outcome == case.outcome
    assert (result.is_error, result.is_exception, result.is_refusal) == case.flags
    assert result.get_model_value() == case.sent
    # the callbacks
    assert seen.results == [case.outcome]
    assert seen.requests == ([result.name] if case.announced else [])


def test_a_denial_is_a_decision_not_an_error(serve: Any) -> None:
    case = next(c for c in CASES if c.id == "denied")
    result, _, _, _ = _converse(serve, case)
    assert not result.is_error and not result.is_refusal
    assert result.value == "Not today: the user keeps Paris private."


def test_allow_with_arguments_runs_the_tool_with_the_new_arguments(serve: Any) -> None:
    case = next(c for c in CASES if c.id == "allowed-with-new-arguments")
    result, _, _, _ = _converse(serve, case)
    assert result.value == "sunny in Oslo (kelvin)"
    assert result.arguments == {"city": "Paris"}  # the model's request is kept as it asked


def test_allow_with_invalid_arguments_is_refused_like_the_models_would_be(serve: Any) -> None:
    server = serve([Reply.tool_call("weather", {"city": "Paris"}), Reply.text("Noted.")])
    chat = make_chat(server)
    chat.register_tool(weather)
    chat.on_tool_review(lambda request: Allow(arguments={"units": "kelvin"}))
    chat.chat("Go", echo="none")
    result = chat.get_turns()[2].tool_results[0]
    assert result.is_refusal
    assert "missing required argument `city`" in str(result.get_model_value())


def test_a_stream_cut_inside_the_arguments_leaves_a_refused_result(serve: Any) -> None:
    reply = Reply.tool_call("weather", {"city": "Paris", "units": "kelvin"}).cut(after=5)
    server = serve([reply, Reply.text("Noted.")])
    chat = make_chat(server)
    chat.register_tool(weather)
    with pytest.raises(StreamInterruptedError, match="stream ended"):
        chat.chat("Go", echo="none")
    result = chat.get_turns()[2].tool_results[0]
    assert result.is_refusal
    assert "cut off" in str(result.get_model_value())
    assert str(chat.chat("Again", echo="none")) == "Noted."


# -- review hooks ---------------------------------------------------------------------------


def test_review_hooks_run_in_call_order_before_any_tool_of_the_turn_starts(serve: Any) -> None:
    started = threading.Event()
    events: list[str] = []

    def step(name: str) -> str:
        """Records that it ran."""
        started.set()
        events.append(f"run {name}")
        return name

    def review(request: ContentToolRequest) -> Allow:
        assert not started.is_set(), "a tool started before every call was reviewed"
        events.append(f"review {request.arguments['name']}")
        return Allow()

    calls = [("step", {"name": n}) for n in ("a", "b", "c")]
    server = serve([Reply.tool_calls(calls), Reply.text("Done.")])
    chat = make_chat(server)
    chat.register_tool(step)
    chat.on_tool_review(review)
    chat.chat("Go", echo="none")
    assert events[:3] == ["review a", "review b", "review c"]
    assert sorted(events[3:]) == ["run a", "run b", "run c"]


async def test_an_async_review_hook_decides_too(serve: Any) -> None:
    async def review(request: ContentToolRequest) -> Deny:
        await asyncio.sleep(0)
        return Deny("no")

    server = serve([Reply.tool_call("weather", {"city": "Paris"}), Reply.text("Ok.")])
    chat = make_chat(server)
    chat.register_tool(weather)
    chat.on_tool_review(review)
    await chat.chat_async("Go", echo="none")
    assert chat.get_turns()[2].tool_results[0].outcome == "denied"


# -- callbacks that fail -------------------------------------------------------------------


def _failing_sync(result: ContentToolResult) -> None:
    raise RuntimeError("observer broke")


async def _failing_async(result: ContentToolResult) -> None:
    await asyncio.sleep(0)
    raise RuntimeError("async observer broke")


def _failing_request(request: ContentToolRequest) -> None:
    raise KeyError("no such user")


def _failing_review(request: ContentToolRequest) -> Allow:
    raise PermissionError("policy store offline")


RAN = "`weather` ran, but its on_tool_result callback `{name}` failed: {why}. Do not call it again for this request."
CALLBACK_CASES = [
    ("on_tool_result-sync", "on_tool_result", _failing_sync, "weather", RAN.format(name="_failing_sync", why="RuntimeError: observer broke")),
    ("on_tool_result-async", "on_tool_result", _failing_async, "weather", RAN.format(name="_failing_async", why="RuntimeError: async observer broke")),
    ("on_tool_request", "on_tool_request", _failing_request, "weather", "on_tool_request callback `_failing_request` failed: KeyError: 'no such user'"),
    ("on_tool_review", "on_tool_review", _failing_review, "weather", "on_tool_review callback `_failing_review` failed: PermissionError: policy store offline"),
]  # fmt: skip


async def converse_with(
    serve: Any, kind: str, callback: Callable[..., Any], tool: str, verb: str
) -> Any:
    server = serve([Reply.tool_call(tool, {"city": "Paris"}), Reply.text("Carrying on.")])
    chat = make_chat(server)
    chat.register_tool(weather)
    chat.register_tool(crash)
    getattr(chat, kind)(callback)
    if verb == "chat":
        answer = str(await asyncio.to_thread(chat.chat, "Go", echo="none"))
    else:
        answer = str(await chat.chat_async("Go", echo="none"))
    assert answer == "Carrying on."
    return chat, server


@pytest.mark.parametrize(
    ("kind", "callback", "tool", "message"),
    [c[1:] for c in CALLBACK_CASES],
    ids=[c[0] for c in CALLBACK_CASES],
)
@pytest.mark.parametrize("verb", ["chat", "chat_async"])
async def test_a_failing_callback_becomes_an_error_result_naming_it(
    serve: Any, kind: str, callback: Callable[..., Any], tool: str, message: str, verb: str
) -> None:
    chat, server = await converse_with(serve, kind, callback, tool, verb)
    result = chat.get_turns()[2].tool_results[0]
    assert result.outcome == "error" and result.is_error
    sent = server.message_requests()[1]["messages"][-1]["content"][0]
    assert sent["is_error"] is True
    assert sent["content"] == failed(message)


@pytest.mark.parametrize("verb", ["chat", "chat_async"])
async def test_a_failing_observer_of_a_failed_call_warns_and_keeps_the_outcome(
    serve: Any, verb: str
) -> None:
    with pytest.warns(UserWarning, match="callback `_failing_async` failed.*stays exception"):
        chat, _ = await converse_with(serve, "on_tool_result", _failing_async, "crash", verb)
    assert chat.get_turns()[2].tool_results[0].outcome == "exception"


# -- after a save and a load -----------------------------------------------------------------


def test_a_restored_exception_keeps_its_type_name_and_message_but_not_the_object(
    serve: Any,
) -> None:
    case = next(c for c in CASES if c.id == "exception")
    result, _, _, chat = _converse(serve, case)
    assert isinstance(result.exception, ValueError)
    restored = from_json(to_json(chat.get_turns()))[2].tool_results[0]
    assert isinstance(restored.error, RestoredToolError)
    assert (restored.error.type_name, restored.error.message) == ("ValueError", "bad city Paris")
    assert restored.exception is None
    assert restored.is_exception and restored.is_error
    assert restored.get_model_value() == failed("bad city Paris")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_every_outcome_survives_a_save_and_a_load(serve: Any, case: Case) -> None:
    result, _, _, chat = _converse(serve, case)
    restored = from_json(to_json(chat.get_turns()))[2].tool_results[0]
    assert restored.outcome == result.outcome
    assert (restored.is_error, restored.is_exception, restored.is_refusal) == case.flags
    assert restored.get_model_value() == case.sent


def test_callbacks_see_the_rescued_exception_with_its_traceback(serve: Any) -> None:
    seen: list[BaseException | None] = []
    server = serve([Reply.tool_call("crash", {"city": "Paris"}), Reply.text("Ok.")])
    chat = make_chat(server)
    chat.register_tool(crash)
    chat.on_tool_result(lambda result: seen.append(result.exception))
    chat.chat("Go", echo="none")
    (exception,) = seen
    assert isinstance(exception, ValueError)
    assert exception.__traceback__ is not None
    sent = server.message_requests()[1]["messages"][-1]["content"][0]["content"]
    assert "Traceback" not in sent and "line" not in sent
