"""Tools of one turn run at once; results still answer in call order.

Concurrency is proven with barriers and events (a missing overlap deadlocks and the
barrier's timeout fails the test), never with clocks.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from chatlas_like import Tool
from chatlas_like.testing import Reply

from ..conftest import make_chat

WAIT = 10  # seconds a barrier waits before declaring the tools did not overlap


def three_calls(name: str) -> Reply:
    return Reply.tool_calls([(name, {"n": 1}), (name, {"n": 2}), (name, {"n": 3})])


def test_sync_tools_of_one_turn_run_at_once(serve: Any) -> None:
    barrier = threading.Barrier(3, timeout=WAIT)

    def meet(n: int) -> int:
        """Waits for the others."""
        barrier.wait()
        return n

    server = serve([three_calls("meet"), Reply.text("done")])
    chat = make_chat(server)
    chat.register_tool(meet)
    chat.chat("go", echo="none")
    assert [r.value for r in chat.get_turns()[2].tool_results] == [1, 2, 3]


def test_async_tools_of_one_turn_run_at_once_in_a_sync_chat(serve: Any) -> None:
    barrier = asyncio.Barrier(3)

    async def meet(n: int) -> int:
        """Waits for the others."""
        await asyncio.wait_for(barrier.wait(), WAIT)
        return n

    server = serve([three_calls("meet"), Reply.text("done")])
    chat = make_chat(server)
    chat.register_tool(meet)
    chat.chat("go", echo="none")
    assert [r.value for r in chat.get_turns()[2].tool_results] == [1, 2, 3]


async def test_sync_tools_in_chat_async_never_block_the_callers_loop(serve: Any) -> None:
    released = threading.Event()

    def blocking(n: int) -> str:
        """Blocks until the caller's loop has ticked."""
        return "released" if released.wait(WAIT) else "the loop never ticked"

    async def ticker() -> None:
        for _ in range(3):
            await asyncio.sleep(0)
        released.set()

    server = serve([Reply.tool_call("blocking", {"n": 1}), Reply.text("done")])
    chat = make_chat(server)
    chat.register_tool(blocking)
    ticking = asyncio.create_task(ticker())
    await chat.chat_async("go", echo="none")
    await ticking
    assert chat.get_turns()[2].tool_results[0].value == "released"


def test_results_keep_call_order_while_callbacks_see_completion_order(serve: Any) -> None:
    second_seen = threading.Event()
    seen: list[str] = []

    def first(n: int) -> str:
        """Finishes once the second call's result was seen."""
        second_seen.wait(WAIT)
        return "first"

    def second(n: int) -> str:
        """Finishes first."""
        return "second"

    def watch(result: Any) -> None:
        seen.append(result.value)
        if result.value == "second":
            second_seen.set()

    server = serve(
        [Reply.tool_calls([("first", {"n": 1}), ("second", {"n": 2})]), Reply.text("ok")]
    )
    chat = make_chat(server)
    chat.register_tool(first)
    chat.register_tool(second)
    chat.on_tool_result(watch)
    chat.chat("go", echo="none")
    assert [r.value for r in chat.get_turns()[2].tool_results] == ["first", "second"]
    assert seen == ["second", "first"]
    sent = server.message_requests()[1]["messages"][-1]["content"]
    assert [b["content"] for b in sent] == ["first", "second"]


def test_max_concurrency_bounds_how_many_tools_run_at_once(serve: Any) -> None:
    pair = threading.Barrier(2, timeout=WAIT)
    lock = threading.Lock()
    running = [0]
    peak = [0]

    def work(n: int) -> int:
        """Counts how many run at once."""
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        pair.wait()  # at least two run together...
        with lock:
            running[0] -= 1
        return n

    calls = [("work", {"n": i}) for i in range(4)]
    server = serve([Reply.tool_calls(calls), Reply.text("ok")])
    chat = make_chat(server, max_concurrency=2)
    chat.register_tool(work)
    chat.chat("go", echo="none")
    assert peak[0] == 2  # ...and never more than the limit
    assert [r.value for r in chat.get_turns()[2].tool_results] == [0, 1, 2, 3]


def test_a_sequential_tool_runs_alone_in_call_order(serve: Any) -> None:
    pair = threading.Barrier(2, timeout=WAIT)
    log: list[str] = []
    lock = threading.Lock()
    running: set[str] = set()

    def together(name: str) -> str:
        """Runs beside another call."""
        with lock:
            running.add(name)
        pair.wait()
        with lock:
            log.append(f"{name} with {sorted(running)}")
            running.discard(name)
        return name

    def alone(name: str) -> str:
        """Must run alone."""
        with lock:
            log.append(f"{name} with {sorted(running)}")
        return name

    calls = [("together", {"name": "a"}), ("together", {"name": "b"}), ("alone", {"name": "s"})]
    server = serve([Reply.tool_calls(calls), Reply.text("ok")])
    chat = make_chat(server)
    chat.register_tool(together)
    chat.register_tool(Tool.from_func(alone, sequential=True))
    chat.chat("go", echo="none")
    assert log[-1] == "s with []"
    assert [r.value for r in chat.get_turns()[2].tool_results] == ["a", "b", "s"]


def test_a_hung_sync_tool_times_out_and_frees_its_slot(serve: Any) -> None:
    release = threading.Event()

    def hang() -> str:
        """Never answers in time."""
        release.wait(WAIT)
        return "too late"

    def quick() -> str:
        """Answers at once."""
        return "quick"

    server = serve([Reply.tool_calls([("hang", {}), ("quick", {})]), Reply.text("ok")])
    chat = make_chat(server, max_concurrency=1)
    chat.register_tool(Tool.from_func(hang, timeout=0.2))
    chat.register_tool(quick)
    try:
        chat.chat("go", echo="none")
    finally:
        release.set()
    hung, fast = chat.get_turns()[2].tool_results
    assert hung.outcome == "error"
    assert hung.get_model_value() == (
        "Tool call failed with error: '`hang` timed out after 0.2 s; it was stopped waiting for.'"
    )
    assert fast.value == "quick"


def test_a_hung_async_tool_times_out_with_the_per_call_option(serve: Any) -> None:
    async def hang() -> str:
        """Never answers."""
        await asyncio.Event().wait()
        return "never"

    server = serve([Reply.tool_call("hang", {}), Reply.text("ok")])
    chat = make_chat(server)
    chat.register_tool(hang)
    chat.chat("go", echo="none", tool_timeout=0.2)
    result = chat.get_turns()[2].tool_results[0]
    assert result.outcome == "error" and "timed out" in result.get_model_value()


def test_a_timed_out_tools_late_result_never_reaches_the_history(serve: Any) -> None:
    release = threading.Event()
    finished = threading.Event()

    def slow() -> str:
        """Answers after its timeout."""
        release.wait(WAIT)
        finished.set()
        return "late"

    server = serve([Reply.tool_call("slow", {}), Reply.text("ok")])
    chat = make_chat(server)
    chat.register_tool(Tool.from_func(slow, timeout=0.1))
    chat.chat("go", echo="none")
    before = [t.contents for t in chat.get_turns()]
    release.set()
    assert finished.wait(WAIT)
    assert [t.contents for t in chat.get_turns()] == before


def test_a_blocking_review_in_one_chat_never_stalls_another_chats_tools(serve: Any) -> None:
    from chatlas_like import Allow

    reviewing, release = threading.Event(), threading.Event()

    def slow_review(request: Any) -> Allow:
        reviewing.set()
        release.wait(WAIT)  # e.g. waiting for a person to approve
        return Allow()

    def ping() -> str:
        """Answers at once."""
        return "pong"

    server = serve(
        lambda body: (
            Reply.text("done") if len(body["messages"]) > 1 else Reply.tool_call("ping", {})
        )
    )
    waiting, quick = make_chat(server), make_chat(server)
    for chat in (waiting, quick):
        chat.register_tool(ping)
    waiting.on_tool_review(slow_review)
    worker = threading.Thread(target=lambda: waiting.chat("Go", echo="none"))
    worker.start()
    try:
        assert reviewing.wait(WAIT)
        quick.chat("Go", echo="none")  # its tool runs while the other review still waits
        assert not release.is_set()
        assert quick.get_turns()[2].tool_results[0].value == "pong"
    finally:
        release.set()
        worker.join(WAIT)
    assert waiting.get_turns()[2].tool_results[0].value == "pong"
