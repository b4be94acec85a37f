"""Interruptions lose nothing: closed streams, cancelled tasks, Ctrl-C, superseded streams.

Ctrl-C is a real SIGINT sent to a subprocess (a KeyboardInterrupt inside pytest would
end the whole run).
"""

from __future__ import annotations

import asyncio
import gc
import io
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import BaseModel, field_validator

from chatlas_like import (
    AssistantTurn,
    ContentToolRequest,
    ContentToolResult,
    ContentToolResultProgress,
    HistoryError,
    UserTurn,
)
from chatlas_like.testing import Reply

from ..conftest import make_chat

ROOT = Path(__file__).resolve().parents[2]
WAIT = 10


class Point(BaseModel):
    """A tool argument whose validator has a bug (pydantic lets a TypeError through)."""

    x: int

    @field_validator("x")
    @classmethod
    def broken(cls, x: int) -> int:
        raise TypeError("validator bug")


def test_closing_a_stream_keeps_what_arrived(serve: Any) -> None:
    server = serve([Reply.text("one two three four"), Reply.text("ok")])
    chat = make_chat(server)
    stream = chat.stream("Count")
    assert next(stream) == "one "
    stream.close()
    last = chat.get_last_turn()
    assert last is not None and last.finish_reason is None and last.text == "one "
    assert str(chat.chat("Go on", echo="none")) == "ok"


def test_breaking_out_of_a_stream_repairs_the_history_when_it_is_collected(serve: Any) -> None:
    server = serve([Reply.text("one two three four"), Reply.text("ok")])
    chat = make_chat(server)
    for _chunk in chat.stream("Count"):
        break
    gc.collect()
    assert chat.get_turns()[-1].finish_reason is None
    assert str(chat.chat("Go on", echo="none")) == "ok"


async def test_an_async_stream_broken_out_of_keeps_its_partial_answer_for_the_next_call(
    serve: Any,
) -> None:
    server = serve([Reply.text("one two three four"), Reply.text("ok")])
    chat = make_chat(server)
    async for _chunk in await chat.stream_async("Count"):
        break
    assert str(await chat.chat_async("Go on", echo="none")) == "ok"  # at once: no wait
    assert [t.text for t in chat.get_turns()] == ["Count", "one ", "Go on", "ok"]


def test_closing_a_stream_at_a_tool_request_answers_it_as_not_run(serve: Any) -> None:
    ran: list[int] = []
    server = serve([Reply.tool_call("add", {"x": 1}), Reply.text("ok")])
    chat = make_chat(server)
    chat.register_tool(lambda x: ran.append(x), name="add")
    stream = chat.stream("Add", content="all")
    item = next(stream)
    assert isinstance(item, ContentToolRequest)
    stream.close()
    result = chat.get_turns()[-1].tool_results[0]
    assert result.is_refusal and ran == []
    assert str(chat.chat("Go on", echo="none")) == "ok"


async def test_cancelling_chat_async_while_a_tool_runs_repairs_the_history(serve: Any) -> None:
    started = asyncio.Event()

    async def slow() -> str:
        """Runs until cancelled."""
        started.set()
        await asyncio.sleep(WAIT)
        return "never"

    server = serve([Reply.tool_calls([("slow", {}), ("slow", {})]), Reply.text("ok")])
    chat = make_chat(server, max_concurrency=1)
    chat.register_tool(slow)
    task = asyncio.create_task(chat.chat_async("Go", echo="none"))
    await asyncio.wait_for(started.wait(), WAIT)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    running, pending = chat.get_turns()[-1].tool_results
    assert running.outcome == "error" and "interrupted while running" in running.get_model_value()
    assert pending.outcome == "refused" and "not started" in pending.get_model_value()
    assert str(await chat.chat_async("Go on", echo="none")) == "ok"


async def test_a_sync_tool_left_running_after_a_cancel_never_writes_into_the_history(
    serve: Any,
) -> None:
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    def blocking() -> str:
        """Blocks a worker thread."""
        started.set()
        release.wait(WAIT)
        finished.set()
        return "late"

    server = serve([Reply.tool_call("blocking", {}), Reply.text("ok")])
    chat = make_chat(server)
    chat.register_tool(blocking)
    task = asyncio.create_task(chat.chat_async("Go", echo="none"))
    assert await asyncio.to_thread(started.wait, WAIT)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    before = [t.contents for t in chat.get_turns()]
    release.set()
    assert await asyncio.to_thread(finished.wait, WAIT)
    assert [t.contents for t in chat.get_turns()] == before
    assert chat.get_turns()[-1].tool_results[0].outcome == "error"


def test_a_tool_raising_system_exit_ends_the_chat_with_the_history_repaired(serve: Any) -> None:
    def leave() -> str:
        """Exits."""
        raise SystemExit(3)

    server = serve([Reply.tool_calls([("leave", {}), ("leave", {})]), Reply.text("ok")])
    chat = make_chat(server, max_concurrency=1)
    chat.register_tool(leave)
    with pytest.raises(SystemExit):
        chat.chat("Go", echo="none")
    outcomes = [r.outcome for r in chat.get_turns()[-1].tool_results]
    assert outcomes == ["error", "refused"]
    assert str(chat.chat("Go on", echo="none")) == "ok"


def assert_the_chat_and_a_new_one_go_on(chat: Any, server: Any) -> None:
    """After an exit raised through the tool loop: this chat answers ("ok") and so does a
    new one ("again"), so the background loop every sync chat uses survived."""
    assert str(chat.chat("Go on", echo="none")) == "ok"
    assert str(make_chat(server).chat("And you?", echo="none")) == "again"


def test_a_review_hook_raising_system_exit_ends_the_chat_and_later_chats_still_run(
    serve: Any,
) -> None:
    ran: list[str] = []

    def act() -> str:
        """Acts."""
        ran.append("act")
        return "done"

    def leave(request: ContentToolRequest) -> None:
        raise SystemExit(2)

    server = serve(
        [Reply.tool_calls([("act", {}), ("act", {})]), Reply.text("ok"), Reply.text("again")]
    )
    chat = make_chat(server)
    chat.register_tool(act)
    remove = chat.on_tool_review(leave)
    with pytest.raises(SystemExit):
        chat.chat("Go", echo="none")
    outcomes = [r.outcome for r in chat.get_turns()[-1].tool_results]
    assert outcomes == ["refused", "refused"] and ran == []
    remove()
    assert_the_chat_and_a_new_one_go_on(chat, server)


def test_an_on_tool_result_callback_raising_system_exit_ends_the_chat_and_later_chats_run(
    serve: Any,
) -> None:
    def act() -> str:
        """Acts."""
        return "done"

    def leave(result: ContentToolResult) -> None:
        raise SystemExit(4)

    server = serve([Reply.tool_call("act", {}), Reply.text("ok"), Reply.text("again")])
    chat = make_chat(server)
    chat.register_tool(act)
    remove = chat.on_tool_result(leave)
    with pytest.raises(SystemExit):
        chat.chat("Go", echo="none")
    (result,) = chat.get_turns()[-1].tool_results
    assert (result.outcome, result.get_model_value()) == ("success", "done")  # it ran
    remove()
    assert_the_chat_and_a_new_one_go_on(chat, server)


def test_a_validator_that_raises_type_error_fails_its_call_and_the_other_calls_run(
    serve: Any,
) -> None:
    def plot(point: Point) -> str:
        """Plots a point."""
        return "plotted"

    def act() -> str:
        """Acts."""
        return "done"

    server = serve(
        [Reply.tool_calls([("plot", {"point": {"x": 1}}), ("act", {})]), Reply.text("ok")]
    )
    chat = make_chat(server)
    chat.register_tool(plot)
    chat.register_tool(act)
    assert str(chat.chat("Go", echo="none")) == "ok"
    broken, fine = chat.get_turns()[2].tool_results
    assert broken.outcome == "error" and "could not be checked" in broken.get_model_value()
    assert "validator bug" in broken.get_model_value()
    assert fine.outcome == "success" and fine.get_model_value() == "done"


def test_a_result_ready_but_not_yet_taken_when_the_stream_closes_is_kept(serve: Any) -> None:
    release, later_started, end = threading.Event(), threading.Event(), threading.Event()

    def quick() -> str:
        """Returns at once."""
        return "quick"

    def held() -> str:
        """Returns once released."""
        release.wait(WAIT)
        return "held"

    def later() -> str:
        """Runs alone, after the others have finished."""
        later_started.set()
        end.wait(WAIT)
        return "later"

    server = serve(
        [Reply.tool_calls([("quick", {}), ("held", {}), ("later", {})]), Reply.text("ok")]
    )
    chat = make_chat(server)
    chat.register_tool(quick)
    chat.register_tool(held)
    chat.register_tool(later, sequential=True)
    stream = chat.stream("Go", content="all")
    first = next(item for item in stream if isinstance(item, ContentToolResult))
    assert first.get_model_value() == "quick"
    release.set()
    assert later_started.wait(WAIT)  # so `held` has finished: `later` starts after it
    stream.close()
    end.set()
    kept, ran, running = chat.get_turns()[-1].tool_results
    assert (kept.outcome, ran.outcome) == ("success", "success")
    assert ran.get_model_value() == "held"
    assert running.outcome == "error" and "interrupted while running" in running.get_model_value()
    assert str(chat.chat("Go on", echo="none")) == "ok"


def test_a_call_answered_when_the_stream_closes_is_echoed_with_its_outcome(serve: Any) -> None:
    end = threading.Event()

    def slow() -> Iterator[str]:
        """Says it has begun, then runs until released."""
        yield "begun"
        end.wait(WAIT)
        yield "late"

    server = serve([Reply.tool_call("slow", {}), Reply.text("ok")])
    output = io.StringIO()
    chat = make_chat(server)
    chat.register_tool(slow)
    chat.set_echo_options(rich_console={"file": output, "width": 200, "force_terminal": False})
    stream = chat.stream("Go", content="all", echo="output")
    next(item for item in stream if isinstance(item, ContentToolResultProgress))
    stream.close()
    end.set()
    assert "interrupted while running" in output.getvalue()


def test_resuming_a_superseded_stream_is_refused_and_leaves_the_history_alone(serve: Any) -> None:
    server = serve([Reply.text("old answer here"), Reply.text("new answer")])
    chat = make_chat(server)
    old = chat.stream("First")
    assert next(old) == "old "
    chat.chat("Second", echo="none")
    before = [t.contents for t in chat.get_turns()]
    with pytest.raises(HistoryError, match="superseded"):
        list(old)
    assert [t.contents for t in chat.get_turns()] == before


def test_set_turns_answers_dangling_tool_requests(serve: Any) -> None:
    server = serve([Reply.text("ok")])
    chat = make_chat(server)
    request = ContentToolRequest("toolu_x", "add", {"x": 1})
    chat.set_turns([UserTurn("Add"), AssistantTurn([request])])
    result = chat.get_turns()[-1].contents[0]
    assert isinstance(result, ContentToolResult) and result.is_refusal
    assert str(chat.chat("Go on", echo="none")) == "ok"


def test_set_turns_answers_a_request_left_open_in_the_middle_of_the_history(
    serve: Any,
) -> None:
    server = serve([Reply.text("ok")])
    chat = make_chat(server)
    request = ContentToolRequest("toolu_x", "add", {"x": 1})
    chat.set_turns(
        [UserTurn("Add"), AssistantTurn([request]), AssistantTurn("Done."), UserTurn("And?")]
    )
    answer = chat.get_turns()[2]
    assert answer.role == "user" and answer.tool_results[0].is_refusal
    assert str(chat.chat("Go on", echo="none")) == "ok"  # the server checks the pairing


def interrupted_run(mode: str) -> dict[str, Any]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.scripts.interrupt_script", mode],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    if mode != "tool-raises":
        line = process.stdout.readline()
        assert line.strip() == "READY", process.stderr.read() if process.stderr else ""
        process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    return orjson.loads(out.strip().splitlines()[-1])


def test_ctrl_c_while_tools_run_answers_every_call_and_the_chat_goes_on() -> None:
    report = interrupted_run("tool")
    assert report["outcome"] == "KeyboardInterrupt"
    results = report["history"][-1]["results"]
    assert [r[0] for r in results] == ["error", "error"]
    assert all("interrupted while running" in r[1] for r in results)
    assert report["follow_up"] == "Still here."
    assert report["statuses"] == [200, 200]


def test_ctrl_c_while_the_one_call_runs_in_the_callers_thread_answers_it_and_goes_on() -> None:
    report = interrupted_run("one-tool")
    assert report["outcome"] == "KeyboardInterrupt"
    [result] = report["history"][-1]["results"]
    assert result[0] == "error" and "interrupted while running" in result[1]
    assert report["follow_up"] == "Still here."


def test_ctrl_c_while_text_streams_keeps_the_partial_answer() -> None:
    report = interrupted_run("stream")
    assert report["outcome"] == "KeyboardInterrupt"
    partial = report["history"][-1]
    assert partial["role"] == "assistant" and partial["finish_reason"] is None
    assert partial["text"].startswith("word0 word1 word2")
    assert report["follow_up"] == "Still here."


def test_a_tool_raising_keyboard_interrupt_ends_the_chat_cleanly() -> None:
    report = interrupted_run("tool-raises")
    assert report["outcome"] == "KeyboardInterrupt"
    outcomes = [r[0] for r in report["history"][-1]["results"]]
    assert outcomes[0] == "error"
    assert report["follow_up"] == "Still here."


def hung_round(stop: threading.Event) -> tuple[Any, threading.Event]:
    """A round of one call that hangs until released, its start already taken."""
    from chatlas_like import Tool
    from chatlas_like._tools.runner import Started, ToolContext, ToolRound
    from chatlas_like._tools.workers import WorkerPool, background_loop

    release = threading.Event()

    def hang() -> str:
        """Hangs."""
        release.wait(WAIT)
        return "late"

    context = ToolContext({"hang": Tool.from_func(hang)}, WorkerPool(1))
    context.stop_requested = stop.is_set
    tool_round = ToolRound([ContentToolRequest("t1", "hang", {})], context)
    tool_round.begin_in(background_loop())
    delivery = tool_round.take(WAIT)
    assert delivery is not None and isinstance(delivery.events[0], Started)
    return tool_round, release


def test_a_stop_asked_for_while_a_call_hangs_wakes_a_waiting_take() -> None:
    stop = threading.Event()
    tool_round, release = hung_round(stop)
    assert tool_round.take(0.01) is None  # nothing happens, nothing asked
    stop.set()
    delivery = tool_round.take(WAIT)
    release.set()
    assert delivery is not None and delivery.events == [] and not delivery.done
    tool_round.stop()


def test_a_stop_asked_for_while_a_call_hangs_wakes_a_waiting_next() -> None:
    from chatlas_like._tools.workers import submit_to_background

    stop = threading.Event()
    tool_round, release = hung_round(stop)
    future, _ = submit_to_background(tool_round.next)  # next() on the round's own loop
    stop.set()
    delivery = future.result(timeout=WAIT)
    release.set()
    assert delivery.events == [] and not delivery.done
    tool_round.stop()


def test_a_tool_round_stopped_before_it_began_runs_nothing_and_says_nothing_started() -> None:
    from chatlas_like import Tool
    from chatlas_like._tools.runner import Stopped, ToolContext, ToolRound
    from chatlas_like._tools.workers import WorkerPool

    ran: list[str] = []

    def act() -> str:
        """Acts."""
        ran.append("act")
        return "done"

    context = ToolContext({"act": Tool.from_func(act)}, WorkerPool(1))
    tool_round = ToolRound([ContentToolRequest("t1", "act", {})], context)
    assert tool_round.stop() == Stopped(frozenset())
    delivery = asyncio.run(asyncio.wait_for(tool_round.next(), WAIT))
    assert delivery.events == [] and delivery.done and ran == []
