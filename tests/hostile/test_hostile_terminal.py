"""Hostile input, terminals: nothing the model or a tool writes reaches the terminal as a
control sequence (clipboard writes, title changes, hidden links, screen clears).

Whatever the model or a tool controls (text, thinking, tool names, results, error
messages, server-tool titles, inserted messages) has its control sequences stripped
before the echo or the console chat writes it; the library's own styling stays.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from chatlas_like import ContentToolResult
from chatlas_like._core.terminal_safe import strip_controls
from chatlas_like._display.console import ProgressEcho
from chatlas_like._display.console import ask as ask_chat
from chatlas_like._display.terminal import ConsoleEcho
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat

CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"  # OSC 52: write the clipboard
TITLE = "\x1b]0;pwned\x1b\\"  # OSC 0: the window title
LINK = "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"  # OSC 8: a hidden link
CLEAR = "\x1b[2J\x1b[3J\x1b[H\x1bc"  # clear screen and scrollback, home, full reset
C1 = "\x9b2J\x9d0;title\x9c"  # the 8-bit forms
PAYLOAD = f"A{CLIPBOARD}B{TITLE}C{LINK}D{CLEAR}E{C1}F\x08\x7f\rG"
FORBIDDEN = ("\x1b]", "\x1b[2J", "\x1b[3J", "\x1b[H", "\x1bc", "\x07", "\x9b", "\x9d", "\x08")


def assert_clean(output: str) -> None:
    for sequence in FORBIDDEN:
        assert sequence not in output, f"{sequence!r} reached the terminal"


def terminal() -> tuple[Console, io.StringIO]:
    output = io.StringIO()
    return Console(file=output, width=200, force_terminal=True, color_system="standard"), output


def test_the_sanitiser_keeps_text_and_drops_every_control_sequence() -> None:
    assert strip_controls(PAYLOAD) == "ABCclickDEFG"
    assert strip_controls("tabs\tand\nnewlines stay, ünïcode too") == (
        "tabs\tand\nnewlines stay, ünïcode too"
    )


def test_a_sequence_split_across_two_deltas_leaves_no_escape() -> None:
    console, output = terminal()
    echo = ConsoleEcho("output", console)
    for cut in (1, 2, 5, len(CLIPBOARD) - 1):  # inside the introducer, the body, the end
        echo.text(f"x{CLIPBOARD[:cut]}")
        echo.text(f"{CLIPBOARD[cut:]}y\n")
    echo.finish()
    assert_clean(output.getvalue())
    assert "\x1b" not in output.getvalue().replace("\x1b[", "")  # only rich's own styling


def test_model_text_streams_to_the_terminal_without_control_sequences(
    serve: Callable[..., LoopbackServer], capsys: pytest.CaptureFixture[str]
) -> None:
    chat = make_chat(serve([Reply.text(f"Hello {PAYLOAD} there", chunks=7)]))
    chat.chat("Hi", echo="all")
    out = capsys.readouterr().out
    assert_clean(out)
    assert "Hello" in out and "there" in out


def greet(name: str) -> str:
    """Greets with whatever the name holds.

    Parameters
    ----------
    name
        Who to greet.
    """
    return f"hi {name} {PAYLOAD}"


def explode() -> str:
    """Fails with a message full of escapes."""
    raise RuntimeError(f"boom {PAYLOAD}")


@pytest.mark.parametrize(
    "reply",
    [
        Reply.tool_call("greet", {"name": f"x{CLEAR}"}),  # a result carrying escapes
        Reply.tool_call("explode", {}),  # an error message carrying escapes
        Reply.tool_call(f"ev{TITLE}il", {}),  # a tool name the model made up
    ],
    ids=["result", "error", "tool-name"],
)
def test_tool_calls_and_results_reach_the_terminal_without_control_sequences(
    serve: Callable[..., LoopbackServer], capsys: pytest.CaptureFixture[str], reply: Reply
) -> None:
    chat = make_chat(serve([reply, Reply.text("ok")]))
    chat.register_tool(greet)
    chat.register_tool(explode)
    chat.chat("Go", echo="output")
    assert_clean(capsys.readouterr().out)


def test_the_console_chat_writes_no_control_sequences(
    serve: Callable[..., LoopbackServer],
) -> None:
    console, output = terminal()
    server = serve(
        [
            Reply.tool_call("greet", {"name": "you"}, text=f"Let me {TITLE}greet."),
            Reply.text(f"Done {LINK}."),
        ]
    )
    chat = make_chat(server)
    chat.register_tool(greet)
    assert (
        ask_chat(chat, "Hi", ProgressEcho("output", console, auto_refresh=False, grace=0.0)) is True
    )
    assert_clean(output.getvalue())
    assert "\x1b[" in output.getvalue()  # the library's own styling stays


def test_an_api_error_message_reaches_the_console_without_control_sequences(
    serve: Callable[..., LoopbackServer],
) -> None:
    console, output = terminal()
    server = serve([Reply.error(400, "invalid_request_error", f"bad {PAYLOAD}")])
    echo = ProgressEcho("output", console, auto_refresh=False, grace=0.0)
    assert ask_chat(make_chat(server, max_retries=0), "Hi", echo) is False
    assert_clean(output.getvalue())
    assert "BadRequestError" in output.getvalue()


def test_thinking_and_server_tool_titles_reach_the_terminal_clean(
    serve: Callable[..., LoopbackServer],
) -> None:
    console, output = terminal()
    thinking = {"type": "thinking", "thinking": f"hmm {CLIPBOARD}", "signature": "sig"}
    search = {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": {"query": f"q{TITLE}"},
    }
    found = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [
            {
                "type": "web_search_result",
                "title": f"T{LINK}",
                "url": f"https://example.org/{CLEAR}",
                "encrypted_content": "x",
            }
        ],
    }
    chat = make_chat(
        serve([Reply.blocks_of(thinking, search, found, {"type": "text", "text": "ok"})])
    )
    echo = ProgressEcho("output", console, auto_refresh=False, grace=0.0)
    assert ask_chat(chat, "Search", echo) is True
    assert_clean(output.getvalue())


def test_an_inserted_message_and_a_user_turn_reach_the_terminal_clean() -> None:
    from chatlas_like import UserTurn

    console, output = terminal()
    echo = ConsoleEcho("all", console)
    echo.user_turn(UserTurn([f"pasted {CLEAR} text"]))
    echo.inserted_turn(UserTurn([f"inserted {CLIPBOARD}"]))
    echo.content(ContentToolResult(value=f"result {TITLE}"))
    echo.finish()
    assert_clean(output.getvalue())


def test_text_that_is_not_unicode_never_crashes_the_echo() -> None:
    console, output = terminal()
    echo = ConsoleEcho("all", console)
    echo.text("caf\udce9")
    echo.finish()
    assert "caf\ufffd" in output.getvalue()


# -- what we print or log besides the echo: warnings, log lines, a result printed with rich --


def test_the_load_warning_names_the_files_tools_without_control_sequences(
    tmp_path: Path,
) -> None:
    from chatlas_like import AssistantTurn, Chat, ContentToolRequest, UserTurn
    from chatlas_like.providers._anthropic.provider import AnthropicProvider

    chat = Chat(AnthropicProvider(model="m", api_key="k"))
    request = ContentToolRequest(id="toolu_1", name=f"tool{CLIPBOARD}{TITLE}", arguments={})
    chat.set_turns([UserTurn(["Go"]), AssistantTurn([request])])
    chat.save(tmp_path / "chat.json")
    with pytest.warns(UserWarning, match="the history calls tools not given") as caught:
        Chat.load(tmp_path / "chat.json", api_key="k")
    for warning in caught:
        assert_clean(str(warning.message))


def test_the_include_tools_warning_names_the_servers_tools_without_control_sequences() -> None:
    import asyncio
    import sys

    from ..support.mcp import QUIET, SERVERS, offline_chat

    chat = offline_chat()
    registering = chat.register_mcp_tools_stdio_async(
        command=sys.executable,
        args=[str(SERVERS / "hostile.py"), "ansi"],
        include_tools=["nope"],
        transport_kwargs=dict(QUIET),
    )
    with chat, pytest.warns(UserWarning, match="has no tool named 'nope'") as caught:
        asyncio.run(asyncio.wait_for(registering, 60))
    for warning in caught:
        assert_clean(str(warning.message))


def test_the_log_line_of_a_tool_call_carries_no_control_sequences(
    serve: Callable[..., LoopbackServer], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="chatlas_like")
    chat = make_chat(serve([Reply.tool_call(f"ev{TITLE}il{CLIPBOARD}", {}), Reply.text("ok")]))
    chat.chat("Go", echo="none")
    lines = [record.getMessage() for record in caplog.records]
    assert any(line.startswith("tool evil") for line in lines)
    for line in lines:
        assert_clean(line)


def test_a_result_printed_with_rich_carries_no_control_sequences() -> None:
    from chatlas_like import ContentToolRequest

    console, output = terminal()
    request = ContentToolRequest(id="toolu_1", name=f"ev{TITLE}il", arguments={"q": CLEAR})
    console.print(ContentToolResult(value=f"result {PAYLOAD}", request=request))
    assert_clean(output.getvalue())
    assert "result" in output.getvalue()
