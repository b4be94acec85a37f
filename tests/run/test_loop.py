"""The turn loop stepped by hand: no network, no SDK, no event loop."""

from __future__ import annotations

from typing import Any

import pytest

from chatlas_like import ContentToolRequest, ContentToolResult, StreamInterruptedError, UserTurn
from chatlas_like._core.history import History
from chatlas_like._run.echo import NULL_ECHO
from chatlas_like._run.loop import END, NEXT_EVENT, NEXT_RESULT, ModelCall, Run, RunTools, turn_loop
from chatlas_like._tools.runner import Delivery, Finished, Started, Stopped
from chatlas_like.providers._anthropic.provider import AnthropicProvider
from chatlas_like.providers._anthropic.wire import message_events
from chatlas_like.providers._base import RequestSpec


def events(*blocks: dict[str, Any], stop: str = "end_turn") -> list[dict[str, Any]]:
    return list(
        message_events({"id": "m", "content": list(blocks), "stop_reason": stop, "usage": {}})
    )


def new_run(**kwargs: Any) -> Run:
    provider = AnthropicProvider(model="m", cache="none")
    return Run(History(), provider, RequestSpec(), echo=NULL_ECHO, **kwargs)


class HeldRound:
    """The loop's handle on a tool round, stepped by hand: nothing runs."""

    def stop(self) -> Stopped:
        return Stopped(frozenset())


def stream(loop: Any, to_send: list[dict[str, Any]]) -> tuple[list[Any], Any]:
    """With the loop waiting at NEXT_EVENT, send events then END.

    Returns what the loop emitted in between, and the step after END.
    """
    emitted: list[Any] = []
    for event in to_send:
        step = loop.send(event)
        while step is not NEXT_EVENT:
            emitted.append(step)
            step = loop.send(None)
    return emitted, loop.send(END)


def test_a_text_answer_takes_one_model_call_and_ends() -> None:
    run = new_run()
    loop = turn_loop(run, UserTurn("Hi"))
    call = next(loop)
    assert isinstance(call, ModelCall)
    assert call.body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
    assert next(loop) is NEXT_EVENT
    with pytest.raises(StopIteration):
        stream(loop, events({"type": "text", "text": "Hello"}))
    assert [t.role for t in run.history.turns] == ["user", "assistant"]
    assert run.history.turns[-1].text == "Hello"


def test_text_deltas_are_emitted_as_they_arrive() -> None:
    loop = turn_loop(new_run(), UserTurn("Hi"))
    next(loop)
    next(loop)
    chunks = [
        {"type": "message_start", "message": {}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "b"}},
    ]
    emitted: list[Any] = []
    for event in chunks:
        step = loop.send(event)
        while step is not NEXT_EVENT:
            emitted.append(step)
            step = loop.send(None)
    assert emitted == ["a", "b"]
    loop.close()


def test_tool_requests_become_a_run_tools_step_and_results_a_user_turn() -> None:
    run = new_run(yield_content=True)
    loop = turn_loop(run, UserTurn("Add"))
    assert isinstance(next(loop), ModelCall)
    assert next(loop) is NEXT_EVENT
    tool_use = {"type": "tool_use", "id": "t1", "name": "add", "input": {"x": 1}}
    emitted, step = stream(loop, events(tool_use, stop="tool_use"))
    assert emitted == [ContentToolRequest("t1", "add", {"x": 1})]  # as the block finished
    assert isinstance(step, RunTools)
    request = step.requests[0]
    assert loop.send(HeldRound()) is NEXT_RESULT
    result = ContentToolResult(value=2, request=request)
    step = loop.send(Delivery([Started(0, request), Finished(0, result)], done=True))
    assert step is result  # yielded to the caller as it arrived
    assert isinstance(loop.send(None), ModelCall)  # the next round asks the model again
    assert run.history.turns[-1].tool_results == [result]


def test_a_stream_without_message_stop_keeps_the_partial_turn_and_raises() -> None:
    run = new_run()
    loop = turn_loop(run, UserTurn("Hi"))
    next(loop)
    next(loop)
    partial = events({"type": "text", "text": "Hel"})[:-1]  # no message_stop
    with pytest.raises(StreamInterruptedError, match="no message_stop"):
        stream(loop, partial)
    last = run.history.turns[-1]
    assert last.finish_reason is None and last.text == "Hel"


def test_closing_the_loop_while_tools_are_pending_answers_every_request() -> None:
    run = new_run()
    loop = turn_loop(run, UserTurn("Add"))
    next(loop)
    next(loop)
    _, step = stream(
        loop,
        events(
            {"type": "tool_use", "id": "t1", "name": "add", "input": {}},
            {"type": "tool_use", "id": "t2", "name": "add", "input": {}},
            stop="tool_use",
        ),
    )
    assert isinstance(step, RunTools)
    loop.close()
    answers = run.history.turns[-1].tool_results
    assert [r.request.id for r in answers if r.request] == ["t1", "t2"]
    assert all(r.outcome == "refused" for r in answers)


def test_a_provider_error_on_the_first_call_removes_the_prompt() -> None:
    from chatlas_like import ServerError

    run = new_run()
    loop = turn_loop(run, UserTurn("Hi"))
    next(loop)
    with pytest.raises(ServerError):
        loop.throw(ServerError("boom", status_code=500))
    assert run.history.turns == []
