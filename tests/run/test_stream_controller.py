"""StreamController: stop a running stream from elsewhere, and keep the history valid."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from chatlas_like import ContentToolRequest, StreamController
from chatlas_like.testing import Reply

from ..conftest import make_chat

WAIT = 10


def test_cancel_ends_the_stream_at_the_next_chunk_without_an_exception(serve: Any) -> None:
    server = serve([Reply.text("one two three four five")])
    chat = make_chat(server)
    controller = StreamController()
    chunks: list[str] = []
    for chunk in chat.stream("Count", controller=controller):
        chunks.append(chunk)
        controller.cancel("the user pressed stop")
    assert chunks == ["one "]
    assert controller.cancelled and controller.reason == "the user pressed stop"


def test_a_stopped_answer_is_kept_as_an_incomplete_turn(serve: Any) -> None:
    server = serve([Reply.text("one two three four five"), Reply.text("Ok")])
    chat = make_chat(server)
    controller = StreamController()
    for _ in chat.stream("Count", controller=controller):
        controller.cancel()
    last = chat.get_last_turn()
    assert last is not None and last.finish_reason is None
    assert last.text == "one "
    assert str(chat.chat("Go on", echo="none")) == "Ok"  # the next request is valid


def test_a_tool_call_left_open_by_a_stop_is_answered(serve: Any) -> None:
    server = serve(
        [
            Reply.tool_calls([("get_date", {}), ("get_date", {})], text="Checking"),
            Reply.text("Fine"),
        ]
    )
    chat = make_chat(server)
    chat.register_tool(lambda: "2024-01-01", name="get_date")
    controller = StreamController()
    for item in chat.stream("Date?", content="all", controller=controller):
        if isinstance(item, ContentToolRequest):
            controller.cancel()
    results = chat.get_turns()[2].tool_results
    assert [r.outcome for r in results] == ["refused"]
    assert "stopped" in str(results[0].get_model_value())
    assert str(chat.chat("Never mind", echo="none")) == "Fine"


def test_cancel_from_another_thread_stops_before_the_next_model_call(serve: Any) -> None:
    server = serve([Reply.tool_call("stop_me", {}), Reply.text("never sent")])
    chat = make_chat(server)
    controller = StreamController()
    release = threading.Event()

    def stop_me() -> str:
        """Runs in a worker thread, like a Shiny observer elsewhere; still runs when the
        stream stops."""
        controller.cancel()
        release.wait(WAIT)
        return "too late"

    chat.register_tool(stop_me)
    list(chat.stream("Go", controller=controller))
    release.set()
    assert len(server.message_requests()) == 1
    (result,) = chat.get_turns()[-1].tool_results
    assert result.outcome == "error" and "interrupted while running" in result.get_model_value()


def test_stream_async_stops_on_cancel(serve: Any) -> None:
    server = serve([Reply.text("one two three four five")])
    chat = make_chat(server)
    controller = StreamController()

    async def consume() -> list[str]:
        chunks: list[str] = []
        async for chunk in await chat.stream_async("Count", controller=controller):
            chunks.append(chunk)
            controller.cancel()
        return chunks

    assert asyncio.run(consume()) == ["one "]
    assert chat.get_turns()[-1].finish_reason is None


def test_a_controller_cancelled_earlier_is_reset_with_a_warning(serve: Any) -> None:
    server = serve([Reply.text("all of it")])
    controller = StreamController()
    controller.cancel()
    with pytest.warns(UserWarning, match="already cancelled"):
        chunks = list(make_chat(server).stream("Go", controller=controller))
    assert "".join(chunks) == "all of it"
    assert not controller.cancelled


def test_reset_makes_a_controller_reusable(serve: Any) -> None:
    server = serve([Reply.text("a b c"), Reply.text("d e f")])
    chat = make_chat(server)
    controller = StreamController()
    for _ in chat.stream("One", controller=controller):
        controller.cancel()
    controller.reset()
    assert "".join(chat.stream("Two", controller=controller)) == "d e f"


def test_a_cancel_before_any_answer_leaves_no_prompt_to_merge_with_the_next(serve: Any) -> None:
    server = serve([Reply.text("A poem.").slowly(1.0), Reply.text("4")])
    chat = make_chat(server)
    controller = StreamController()
    threading.Timer(0.2, controller.cancel).start()  # while the first byte is awaited
    assert list(chat.stream("Write me a poem", controller=controller)) == []
    assert chat.get_turns() == []
    assert str(chat.chat("What is 2+2?", echo="none")) == "4"
    sent = server.message_requests()[-1]["messages"]
    assert len(sent) == 1 and "poem" not in str(sent)
