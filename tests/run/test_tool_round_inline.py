"""The common case without hand-offs: one plain sync call of ``chat()`` runs in the
caller's thread; anything that needs the event loop still runs on it."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from chatlas_like.testing import Reply

from ..conftest import make_chat


def where_it_ran(serve: Any, replies: list[Reply], **options: Any) -> tuple[Any, list[int]]:
    threads: list[int] = []

    def whoami() -> str:
        """Says which thread it runs on."""
        threads.append(threading.get_ident())
        return "here"

    chat = make_chat(serve([*replies, Reply.text("Done.")]), **options)
    chat.register_tool(whoami)
    return chat, threads


def test_one_sync_call_of_a_sync_chat_runs_in_the_callers_thread(serve: Any) -> None:
    chat, threads = where_it_ran(serve, [Reply.tool_call("whoami", {})])
    assert str(chat.chat("Where?", echo="none")) == "Done."
    assert threads == [threading.get_ident()]
    assert chat.get_turns()[-2].tool_results[0].value == "here"


def test_a_call_with_a_timeout_runs_in_a_worker_thread(serve: Any) -> None:
    chat, threads = where_it_ran(serve, [Reply.tool_call("whoami", {})], tool_timeout=5)
    chat.chat("Where?", echo="none")
    assert threads and threads[0] != threading.get_ident()


def test_several_calls_still_run_at_once_in_worker_threads(serve: Any) -> None:
    chat, threads = where_it_ran(serve, [Reply.tool_calls([("whoami", {}), ("whoami", {})])])
    chat.chat("Where?", echo="none")
    assert len(threads) == 2 and threading.get_ident() not in threads


def test_an_async_chat_never_runs_a_sync_tool_on_its_event_loop(serve: Any) -> None:
    chat, threads = where_it_ran(serve, [Reply.tool_call("whoami", {})])

    async def main() -> int:
        await chat.chat_async("Where?", echo="none")
        return threading.get_ident()

    loop_thread = asyncio.run(main())
    assert len(threads) == 1 and threads[0] != loop_thread


def test_a_sync_chat_inside_a_running_loop_runs_its_tool_where_it_can_start_a_loop(
    serve: Any,
) -> None:
    async def fetch() -> str:
        return "fetched"

    def lookup() -> str:
        """Looks something up with an async client."""
        return asyncio.run(fetch())

    chat = make_chat(serve([Reply.tool_call("lookup", {}), Reply.text("Done.")]))
    chat.register_tool(lookup)

    async def notebook_cell() -> None:  # IPython runs cells with a loop running
        chat.chat("Look it up.", echo="none")

    asyncio.run(notebook_cell())
    result = chat.get_turns()[-2].tool_results[0]
    assert (result.outcome, result.value) == ("success", "fetched")


def test_an_invalid_call_is_refused_as_the_runner_refuses_it(serve: Any) -> None:
    chat, threads = where_it_ran(serve, [Reply.tool_call("whoami", {"extra": 1})])
    chat.chat("Where?", echo="none")
    [result] = chat.get_turns()[-2].tool_results
    assert result.outcome == "refused" and "Invalid arguments" in str(result.get_model_value())
    assert threads == []
