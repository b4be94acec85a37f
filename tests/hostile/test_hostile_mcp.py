"""Hostile input, MCP servers: what a server writes cannot hang a call or stall a session.

Over stdio, the ``mcp`` package's reader dropped an answer it could not read (a result
that is not an object, JSON 200,000 levels deep, bytes that are not UTF-8), so the call
waited for its timeout, forever by default; its time to read a line grew with the
square of the line's length; and registering had no deadline. Our reader answers such
a call with an error at once, caps each message, and takes a line it cannot tie to any
call as a broken session; registering must finish within ``register_timeout``.

Every server is a script of ``tests/mcp_servers`` started as a subprocess. Calls are
registered with a tool timeout, so that without these defences a test fails with
"timed out" instead of hanging.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from chatlas_like import Chat, ContentToolResult, McpServerError
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat
from ..support.mcp import QUIET, SERVERS, offline_chat, results_of

Serve = Callable[..., LoopbackServer]
HOSTILE = str(SERVERS / "hostile.py")
CALL_TIMEOUT = 10  # seconds: long for an answer that is read, short for one that hangs
GUARD = 60  # seconds a registration may take before the test gives up on it (never hang)


def register(chat: Chat, *args: str, **transport: Any) -> Chat:
    """``chat`` with the hostile server's tools (from sync code)."""
    registering = chat.register_mcp_tools_stdio_async(
        command=sys.executable,
        args=[HOSTILE, *args],
        transport_kwargs={**QUIET, **transport},
        timeout=CALL_TIMEOUT,
    )
    asyncio.run(asyncio.wait_for(registering, GUARD))
    return chat


def rounds(serve: Serve, *calls: tuple[str, dict[str, Any]], **transport: Any) -> Iterator[Any]:
    """Each call in a round of its own, in order; the results, in order."""
    replies = [Reply.tool_call(name, arguments) for name, arguments in calls]
    chat = register(make_chat(serve([*replies, Reply.text("done")])), **transport)
    with chat:
        chat.chat("Go", echo="none")
        yield from results_of(chat)


def failed_at_once(result: ContentToolResult, why: str) -> None:
    assert result.outcome == "error"
    assert "timed out" not in str(result.error)
    assert why in str(result.error), result.error


@pytest.mark.parametrize(
    ("tool", "why"),
    [
        ("not_an_object", "result: Input should be an object"),
        ("deep", "recursion limit exceeded"),
        ("not_utf8", "not utf-8"),
    ],
)
def test_an_answer_the_reader_cannot_read_is_an_error_at_once_and_the_session_goes_on(
    serve: Serve, tool: str, why: str
) -> None:
    unreadable, after = rounds(serve, (tool, {}), ("echo", {"text": "still here"}))
    failed_at_once(unreadable, f"sent an answer to `{tool}` that could not be read")
    failed_at_once(unreadable, why)
    assert after.outcome == "success" and after.value == "still here"


def test_a_line_no_call_can_be_told_from_breaks_the_session(serve: Serve) -> None:
    broken, after = rounds(serve, ("garbage", {}), ("echo", {"text": "anyone?"}))
    failed_at_once(broken, "broke its session while `garbage` ran")
    failed_at_once(after, "Not run: the MCP server 'hostile' broke its session")


def test_a_message_over_the_cap_is_an_error_at_once_and_the_session_goes_on(
    serve: Serve,
) -> None:
    limit = {"max_message_bytes": 100_000}
    huge, after = rounds(serve, ("huge", {"kilobytes": 300}), ("echo", {"text": "ok"}), **limit)
    failed_at_once(huge, "a message over the 100,000-byte limit")
    assert after.value == "ok"


def test_a_large_message_within_the_cap_is_read_whole(serve: Serve) -> None:
    [large] = rounds(serve, ("huge", {"kilobytes": 4_000}))
    assert large.outcome == "success" and large.original_length == 4_000 * 1024


def test_a_bad_max_message_bytes_is_refused_before_a_server_starts() -> None:
    with pytest.raises(ValueError, match="max_message_bytes must be a positive int"):
        register(offline_chat(), max_message_bytes=0)


# -- registering ------------------------------------------------------------------------------


def test_a_server_that_lists_tools_forever_is_stopped_with_a_clear_error() -> None:
    chat = offline_chat()
    with pytest.raises(McpServerError, match="lists more than 10,000 tools"):
        register(chat, "endless", register_timeout=CALL_TIMEOUT)
    assert chat.get_tools() == []


def test_registering_has_a_deadline_of_its_own() -> None:
    chat = offline_chat()
    slow = [sys.executable, "-c", "import time; time.sleep(60)"]  # never answers
    registering = chat.register_mcp_tools_stdio_async(
        command=slow[0], args=slow[1:], transport_kwargs={**QUIET, "register_timeout": 0.5}
    )
    with pytest.raises(McpServerError, match=r"did not start, initialise and list .* 0\.5 s"):
        asyncio.run(asyncio.wait_for(registering, GUARD))
    assert chat.get_tools() == []
