"""Tool results as they finish: delivery in completion order, history in call order.

Every ordering here is forced with events (a tool waits until the test has seen what
must come before it), never with clocks: a wrong order deadlocks and the event's
timeout fails the test.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import orjson
import pytest

from chatlas_like import (
    Content,
    ContentToolRequest,
    ContentToolResult,
    ContentToolResultProgress,
    StreamController,
    Turn,
)
from chatlas_like._run.drive import drive
from chatlas_like._run.loop import turn_loop
from chatlas_like.testing import Reply

from ..conftest import make_chat
from .test_interrupts import interrupted_run

WAIT = 10
VERBS = ["chat", "chat_async", "stream", "stream_async"]


def run_verb(chat: Any, verb: str, prompt: str = "Go") -> list[Any]:
    """Run ``prompt`` through ``verb``; the stream's items (content="all"), else []."""
    if verb == "chat":
        chat.chat(prompt, echo="none")
        return []
    if verb == "chat_async":
        asyncio.run(chat.chat_async(prompt, echo="none"))
        return []
    if verb == "stream":
        return list(chat.stream(prompt, content="all"))

    async def consume() -> list[Any]:
        return [item async for item in await chat.stream_async(prompt, content="all")]

    return asyncio.run(consume())


def gated_tool(gates: dict[str, threading.Event], kind: str) -> Callable[..., Any]:
    """A tool that answers ``name`` once the test opens its gate."""

    def wait(name: str) -> str:
        """Waits for its gate."""
        assert gates[name].wait(WAIT), f"{name} was never released"
        return f"done {name}"

    async def wait_async(name: str) -> str:
        """Waits for its gate."""
        assert await asyncio.to_thread(gates[name].wait, WAIT), f"{name} was never released"
        return f"done {name}"

    return wait if kind == "sync" else wait_async


def names(results: list[Any]) -> list[str]:
    return [r.value for r in results if type(r) is ContentToolResult]


# -- completion order and call order -----------------------------------------------------------


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("verb", VERBS)
def test_results_are_delivered_as_they_finish_and_kept_in_call_order(
    serve: Any, verb: str, kind: str
) -> None:
    gates = {name: threading.Event() for name in "abc"}
    after = {"done c": "a", "done a": "b"}  # c finishes first, then a, then b
    server = serve(
        [Reply.tool_calls([("wait", {"name": n}) for n in "abc"]), Reply.text("All in.")]
    )
    chat = make_chat(server)
    chat.register_tool(gated_tool(gates, kind), name="wait")
    seen: list[str] = []

    def release_next(result: ContentToolResult) -> None:
        seen.append(result.value)
        if result.value in after:
            gates[after[result.value]].set()

    chat.on_tool_result(release_next)
    gates["c"].set()
    items = run_verb(chat, verb)
    assert seen == ["done c", "done a", "done b"]
    if verb.startswith("stream"):
        assert names(items) == ["done c", "done a", "done b"]
    assert [r.value for r in chat.get_turns()[2].tool_results] == ["done a", "done b", "done c"]
    sent = server.message_requests()[1]["messages"][-1]["content"]
    assert [block["content"] for block in sent] == ["done a", "done b", "done c"]


def test_the_store_numbers_results_in_the_order_they_finish(serve: Any, tmp_path: Any) -> None:
    gates = {name: threading.Event() for name in "abc"}
    after = {"done c": "a", "done a": "b"}
    server = serve(
        [Reply.tool_calls([("wait", {"name": n}) for n in "abc"]), Reply.text("All in.")]
    )
    chat = make_chat(server, store=str(tmp_path / "results.db"), tenant_id="acme")
    chat.register_tool(gated_tool(gates, "sync"), name="wait")
    chat.on_tool_result(lambda r: gates[after[r.value]].set() if r.value in after else None)
    gates["c"].set()
    chat.chat("Go", echo="none")
    assert chat.store is not None
    records = chat.store.list("acme", chat.run_id)
    assert [(r.sequence, r.result) for r in records] == [
        (1, "done c"),
        (2, "done a"),
        (3, "done b"),
    ]


# -- stopping mid-round ------------------------------------------------------------------------


class Round:
    """One quick call, two slow ones that start, and a sequential one that waits for
    the running calls to end, so it never starts while they run."""

    def __init__(self) -> None:
        self.slow_started = [threading.Event(), threading.Event()]
        self.release = threading.Event()
        self.late_ran = threading.Event()
        self.never = threading.Event()

    def tools(self, kind: str) -> list[Callable[..., Any]]:
        def quick() -> str:
            """Answers once both slow calls run."""
            assert all(e.wait(WAIT) for e in self.slow_started)
            return "quick answer"

        def slow(n: int) -> str:
            """Runs until released, then answers late."""
            self.slow_started[n].set()
            self.release.wait(WAIT)
            self.late_ran.set()
            return "LATE VALUE"

        async def slow_async(n: int) -> str:
            """Runs until released (or cancelled)."""
            self.slow_started[n].set()
            await asyncio.to_thread(self.release.wait, WAIT)
            return "LATE VALUE"

        def unstarted() -> str:
            """Must never run."""
            self.never.set()
            return "NEVER"

        return [quick, slow if kind == "sync" else slow_async, unstarted]

    def script(self) -> list[Reply]:
        calls = [("quick", {}), ("slow", {"n": 0}), ("slow", {"n": 1}), ("unstarted", {})]
        return [Reply.tool_calls(calls), Reply.text("Stopped."), Reply.text("Next.")]


def register(chat: Any, tools: list[Callable[..., Any]]) -> None:
    quick, slow, unstarted = tools
    chat.register_tool(quick)
    chat.register_tool(slow, name="slow")
    chat.register_tool(unstarted, sequential=True)


def assert_stopped_mid_round(chat: Any, server: Any, state: Round) -> None:
    outcomes = [(r.outcome, r.get_model_value()) for r in chat.get_turns()[2].tool_results]
    assert outcomes[0] == ("success", "quick answer")
    for outcome, text in outcomes[1:3]:
        assert outcome == "error" and "interrupted while running" in text
    assert outcomes[3][0] == "refused" and "not started" in outcomes[3][1]
    state.release.set()
    assert str(chat.chat("Go on", echo="none")) == "Stopped."
    assert not state.never.is_set()
    assert b"LATE VALUE" not in orjson.dumps(server.message_requests())
    assert all("LATE VALUE" not in str(t.contents) for t in chat.get_turns())


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_closing_a_stream_at_the_first_result_answers_every_call_by_what_it_did(
    serve: Any, kind: str
) -> None:
    state = Round()
    server = serve(state.script())
    chat = make_chat(server)
    register(chat, state.tools(kind))
    stream = chat.stream("Go", content="all")
    for item in stream:
        if isinstance(item, ContentToolResult):
            assert item.value == "quick answer"
            break
    stream.close()
    assert_stopped_mid_round(chat, server, state)


def test_a_late_result_of_an_abandoned_call_reaches_no_callback(serve: Any) -> None:
    state = Round()
    server = serve(state.script())
    chat = make_chat(server)
    register(chat, state.tools("sync"))
    seen: list[Any] = []
    chat.on_tool_result(lambda r: seen.append(r.value))
    stream = chat.stream("Go", content="all")
    next(item for item in stream if isinstance(item, ContentToolResult))
    stream.close()
    state.release.set()
    assert state.late_ran.wait(WAIT)
    assert_stopped_mid_round(chat, server, state)
    assert "LATE VALUE" not in seen and "quick answer" in seen


def test_closing_stream_async_at_the_first_result_answers_every_call(serve: Any) -> None:
    state = Round()
    server = serve(state.script())
    chat = make_chat(server)
    register(chat, state.tools("async"))

    async def consume() -> None:
        stream = await chat.stream_async("Go", content="all")
        async for item in stream:
            if isinstance(item, ContentToolResult):
                break
        await stream.aclose()  # pyright: ignore[reportAttributeAccessIssue]

    asyncio.run(consume())
    assert_stopped_mid_round(chat, server, state)


def test_a_controller_stop_after_the_first_result_answers_every_call(serve: Any) -> None:
    state = Round()
    server = serve(state.script())
    chat = make_chat(server)
    register(chat, state.tools("sync"))
    controller = StreamController()
    for item in chat.stream("Go", content="all", controller=controller):
        if isinstance(item, ContentToolResult):
            controller.cancel()
    assert_stopped_mid_round(chat, server, state)


@pytest.mark.parametrize("watched", [False, True], ids=["no-callback", "on_tool_result"])
def test_a_controller_stop_while_every_call_hangs_ends_the_round_without_waiting(
    serve: Any, watched: bool
) -> None:
    started, release, returned = threading.Event(), threading.Event(), threading.Event()

    def hang() -> str:
        """Runs until released."""
        started.set()
        release.wait(WAIT)
        returned.set()
        return "LATE VALUE"

    server = serve([Reply.tool_call("hang", {}), Reply.text("Next.")])
    chat = make_chat(server)
    chat.register_tool(hang)
    if watched:
        chat.on_tool_result(lambda result: None)
    controller = StreamController()
    stopper = threading.Thread(target=lambda: started.wait(WAIT) and controller.cancel())
    stopper.start()
    items = list(chat.stream("Go", content="all", controller=controller))
    stopper.join()
    still_running = not returned.is_set()
    release.set()
    assert still_running  # the stream ended while the tool hung, not when it returned
    assert not any(isinstance(item, ContentToolResult) for item in items)
    (result,) = chat.get_turns()[2].tool_results
    assert result.outcome == "error" and "interrupted while running" in result.get_model_value()
    assert str(chat.chat("Go on", echo="none")) == "Next."


def test_ctrl_c_after_the_first_result_keeps_it_and_answers_the_running_call() -> None:
    report = interrupted_run("tool-after-result")
    assert report["outcome"] == "KeyboardInterrupt"
    outcomes = [r[0] for r in report["history"][-1]["results"]]
    assert outcomes == ["success", "error"]
    assert "interrupted while running" in report["history"][-1]["results"][1][1]
    assert report["follow_up"] == "Still here."


# -- progressive results -----------------------------------------------------------------------


class Steps:
    """A generator tool whose next yield waits until the test has seen the last one."""

    def __init__(self) -> None:
        self.seen = [threading.Event() for _ in range(3)]

    def tool(self, kind: str) -> Callable[..., Any]:
        def steps() -> Iterator[str]:
            """Reports three steps."""
            for n in range(3):
                if n:
                    assert self.seen[n - 1].wait(WAIT), f"step {n} was never seen"
                yield f"step {n + 1}"

        async def steps_async() -> AsyncIterator[str]:
            """Reports three steps."""
            for n in range(3):
                if n:
                    assert await asyncio.to_thread(self.seen[n - 1].wait, WAIT)
                yield f"step {n + 1}"

        return steps if kind == "sync" else steps_async

    def watch(self, item: Any) -> None:
        if isinstance(item, ContentToolResultProgress):
            self.seen[int(item.value.split()[1]) - 1].set()


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("verb", VERBS)
def test_a_generator_tools_yields_arrive_one_by_one_and_nothing_more(
    serve: Any, verb: str, kind: str
) -> None:
    steps = Steps()
    server = serve([Reply.tool_call("steps", {}), Reply.text("Done.")])
    chat = make_chat(server)
    chat.register_tool(steps.tool(kind), name="steps")
    callbacks: list[Any] = []

    def watch(result: ContentToolResult) -> None:
        callbacks.append(result)
        steps.watch(result)

    chat.on_tool_result(watch)
    items = run_verb(chat, verb)
    expected = [
        (ContentToolResultProgress, "step 1"),
        (ContentToolResultProgress, "step 2"),
        (ContentToolResultProgress, "step 3"),
    ]  # the yields only, as in chatlas: the combined result is not delivered again
    assert [(type(r), r.value) for r in callbacks] == expected
    if verb.startswith("stream"):
        results = [i for i in items if isinstance(i, ContentToolResult)]
        assert [(type(r), r.value) for r in results] == expected
    (kept,) = chat.get_turns()[2].tool_results
    assert type(kept) is ContentToolResult
    assert kept.value == "step 1\nstep 2\nstep 3"  # the joined text, as chatlas builds it
    assert [part.value for part in kept.parts or ()] == ["step 1", "step 2", "step 3"]
    sent = server.message_requests()[1]["messages"][-1]["content"]
    assert [block["content"] for block in sent] == ["step 1\nstep 2\nstep 3"]


def test_a_yielded_failure_decides_the_outcome_of_the_combined_result(serve: Any) -> None:
    def flaky() -> Iterator[Any]:
        """Half works."""
        yield "first source read"
        yield ContentToolResult(error="the second source is down")

    server = serve([Reply.tool_call("flaky", {}), Reply.text("Noted.")])
    chat = make_chat(server)
    chat.register_tool(flaky)
    items = list(chat.stream("Go", content="all"))
    progress = [i for i in items if isinstance(i, ContentToolResultProgress)]
    assert [p.outcome for p in progress] == ["success", "error"]
    (result,) = chat.get_turns()[2].tool_results
    assert result.outcome == "error"
    block = server.message_requests()[1]["messages"][-1]["content"][0]
    assert block["is_error"] is True
    assert block["content"] == "Tool call failed with error: 'the second source is down'"


# -- the echo ----------------------------------------------------------------------------------


class RecordingEcho:
    """Records what the loop shows, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def user_turn(self, turn: Turn) -> None:
        pass

    def inserted_turn(self, turn: Turn) -> None:
        pass

    def text(self, delta: str) -> None:
        pass

    def content(self, item: Content) -> None:
        if isinstance(item, ContentToolResult):
            self.calls.append(("result", item.request.name if item.request else None))

    def tool_started(self, request: ContentToolRequest) -> None:
        self.calls.append(("started", request.name))

    def finish(self) -> None:
        pass


def test_the_echo_is_told_when_each_call_starts_and_never_for_a_refused_one(serve: Any) -> None:
    def lookup(key: str) -> str:
        """Looks up a key."""
        return key

    server = serve(
        [
            Reply.tool_calls([("lookup", {"key": "a"}), ("missing", {}), ("lookup", {"key": "b"})]),
            Reply.text("Done."),
        ]
    )
    chat = make_chat(server)
    chat.register_tool(lookup)
    echo = RecordingEcho()
    call = chat.prepare_call(["Go"], stream=True)
    call.run.echo = echo
    list(drive(turn_loop(call.run, call.prompt), call.sender))
    started = [name for what, name in echo.calls if what == "started"]
    assert started == ["lookup", "lookup"]
    for n in range(2):  # each call's start is shown before its result
        starts = [i for i, c in enumerate(echo.calls) if c == ("started", "lookup")]
        results = [i for i, c in enumerate(echo.calls) if c == ("result", "lookup")]
        assert starts[n] < results[n]
    assert ("result", "missing") in echo.calls
