"""MCP sessions: registration, faults, cleanup, copies, re-listing and concurrency.

Real servers, started by the tests: the kitchen server (``tests/mcp_servers/kitchen.py``)
over stdio and over streamable HTTP on 127.0.0.1, and a hand-written JSON-RPC server
that misbehaves (``raw.py``). The model is the scripted loopback server.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chatlas_like import (
    Allow,
    Chat,
    ContentToolRequest,
    Deny,
    McpServerError,
    Tool,
    ToolBuiltIn,
)
from chatlas_like._mcp import McpTool
from chatlas_like.testing import LoopbackServer

from ..conftest import Reply, make_chat
from ..support.mcp import (
    KITCHEN,
    QUIET,
    RAW,
    HttpKitchen,
    converse,
    http_kitchen,
    kitchen_tools,
    offline_chat,
    open_connections_to,
    pid_from,
    process_gone,
    results_of,
    sent_results,
)

__all__ = ["http_kitchen", "kitchen_tools"]  # fixtures, used by name

Serve = Callable[..., LoopbackServer]
Tools = list[Tool | ToolBuiltIn]


def kitchen_options(pid_file: Path | None = None, **kwargs: Any) -> dict[str, Any]:
    """register_mcp_tools_stdio_async arguments for the kitchen server."""
    transport: dict[str, Any] = dict(QUIET)
    if pid_file is not None:
        transport["env"] = {"MCP_PID_FILE": str(pid_file)}
    return {
        "command": sys.executable,
        "args": [KITCHEN],
        "transport_kwargs": transport,
        **kwargs,
    }


def with_kitchen(chat: Chat, pid_file: Path | None = None, **kwargs: Any) -> Chat:
    """``chat`` with the kitchen server registered, from sync code."""
    asyncio.run(chat.register_mcp_tools_stdio_async(**kitchen_options(pid_file, **kwargs)))
    return chat


def names(chat: Chat) -> list[str]:
    return sorted(t.name for t in chat.get_tools())


# -- registration ---------------------------------------------------------------------------


def test_a_servers_tools_are_registered_with_description_schema_and_annotations(
    kitchen_tools: Tools,
) -> None:
    tools = {t.name: t for t in kitchen_tools}
    delete = tools["delete_everything"]
    assert isinstance(delete, McpTool) and delete.server == "kitchen"
    assert delete.description == "Deletes every file."
    assert delete.annotations == {"title": "Delete everything", "destructiveHint": True}
    assert tools["point"].parameters["properties"] == {  # type: ignore[union-attr]
        "x": {"title": "X", "type": "integer"}
    }


async def test_include_tools_registers_only_those_and_warns_of_a_name_the_server_lacks() -> None:
    chat = offline_chat()
    with pytest.warns(UserWarning, match="no tool named 'ehco'"):
        await chat.register_mcp_tools_stdio_async(
            **kitchen_options(include_tools=["echo", "point", "ehco"])
        )
    assert names(chat) == ["echo", "point"]
    await chat.cleanup_mcp_tools()


async def test_exclude_tools_and_a_namespace_name_the_rest_apart() -> None:
    chat = offline_chat()
    await chat.register_mcp_tools_stdio_async(
        **kitchen_options(exclude_tools=["crash", "hang"], namespace="kit", timeout=30)
    )
    registered = names(chat)
    assert "kit_echo" in registered and "kit_files_read" in registered
    assert "kit_crash" not in registered and "kit_hang" not in registered
    assert {t.timeout for t in chat.get_tools() if isinstance(t, Tool)} == {30}
    await chat.cleanup_mcp_tools()


async def test_a_namespace_the_model_could_not_call_is_refused_before_a_server_starts(
    tmp_path: Path,
) -> None:
    chat = offline_chat()
    pid_file = tmp_path / "pid"
    with pytest.raises(ValueError, match=r"namespace 'my\.tools' must be letters"):
        await chat.register_mcp_tools_stdio_async(**kitchen_options(pid_file, namespace="my.tools"))
    assert not pid_file.exists()


async def test_include_and_exclude_together_are_refused_before_a_server_starts(
    tmp_path: Path,
) -> None:
    chat = offline_chat()
    pid_file = tmp_path / "pid"
    with pytest.raises(ValueError, match="include_tools or exclude_tools, not both"):
        await chat.register_mcp_tools_stdio_async(
            **kitchen_options(pid_file, include_tools=["echo"], exclude_tools=["hang"])
        )
    assert not pid_file.exists()


async def test_a_name_clash_is_an_error_that_stops_the_new_server(tmp_path: Path) -> None:
    chat = offline_chat()

    def echo(text: str) -> str:
        """Our own echo."""
        return text

    chat.register_tool(echo)
    pid_file = tmp_path / "pid"
    with pytest.raises(ValueError, match="echo are registered already; give a namespace="):
        await chat.register_mcp_tools_stdio_async(**kitchen_options(pid_file))
    assert process_gone(pid_from(pid_file))
    assert names(chat) == ["echo"]


async def test_force_replaces_a_registered_tool_of_the_same_name() -> None:
    chat = offline_chat()

    def echo(text: str) -> str:
        """Our own echo."""
        return text

    chat.register_tool(echo)
    await chat.register_mcp_tools_stdio_async(**kitchen_options(force=True))
    [tool] = [t for t in chat.get_tools() if t.name == "echo"]
    assert isinstance(tool, McpTool)
    await chat.cleanup_mcp_tools()
    assert "echo" not in names(chat)


async def test_a_second_session_of_the_same_name_is_refused_before_it_starts(
    tmp_path: Path,
) -> None:
    chat = offline_chat()
    await chat.register_mcp_tools_stdio_async(**kitchen_options(include_tools=["echo"], name="kit"))
    pid_file = tmp_path / "second"
    with pytest.raises(ValueError, match="named 'kit' is registered already"):
        await chat.register_mcp_tools_stdio_async(
            **kitchen_options(pid_file, include_tools=["point"], name="kit")
        )
    assert not pid_file.exists()
    await chat.cleanup_mcp_tools()


async def test_an_unreachable_http_server_is_a_clear_error() -> None:
    chat = offline_chat()
    with pytest.raises(McpServerError, match=r"could not connect to the MCP server http://"):
        await chat.register_mcp_tools_http_stream_async(url="http://127.0.0.1:9/mcp")
    assert chat.get_tools() == []


async def test_a_server_command_that_exits_at_once_is_a_clear_error() -> None:
    chat = offline_chat()
    with pytest.raises(McpServerError, match="could not connect to the MCP server"):
        await chat.register_mcp_tools_stdio_async(
            command=sys.executable, args=["-c", "pass"], transport_kwargs=dict(QUIET)
        )


async def test_a_server_that_never_answers_can_be_given_up_on_leaving_nothing_behind(
    tmp_path: Path,
) -> None:
    chat = offline_chat()
    pid_file = tmp_path / "pid"
    transport = {**QUIET, "env": {"MCP_PID_FILE": str(pid_file)}}
    registering = asyncio.create_task(
        chat.register_mcp_tools_stdio_async(
            command=sys.executable, args=[RAW, "silent"], transport_kwargs=transport
        )
    )
    while not pid_file.exists():  # the server is up and reading what it never answers
        await asyncio.sleep(0.05)
    registering.cancel()
    with pytest.raises(asyncio.CancelledError):
        await registering
    assert process_gone(pid_from(pid_file))  # the cancel returned once it was stopped
    assert chat.get_tools() == []


async def test_an_http_server_answers_and_its_cleanup_leaves_no_connection_open(
    serve: Serve, http_kitchen: HttpKitchen
) -> None:
    server = serve([Reply.tool_call("point", {"x": 4}), Reply.text("done")])
    chat = make_chat(server)
    await chat.register_mcp_tools_http_stream_async(url=http_kitchen.url, name="web")
    await chat.chat_async("Go", echo="none")
    assert results_of(chat)[0].extra["structured_content"] == {"x": 4, "double": 8}
    assert open_connections_to(http_kitchen.port) > 0
    await chat.cleanup_mcp_tools(["web"])
    assert open_connections_to(http_kitchen.port) == 0
    assert chat.get_tools() == []
    assert http_kitchen.process.poll() is None  # the server itself keeps running


# -- faults ---------------------------------------------------------------------------------


def test_a_server_that_crashes_mid_call_answers_with_a_clear_error(serve: Serve) -> None:
    server = serve(
        [
            Reply.tool_call("crash", {}),
            Reply.tool_call("echo", {"text": "still there?"}),
            Reply.text("The server is down."),
        ]
    )
    with with_kitchen(make_chat(server)) as chat:
        assert str(chat.chat("Go", echo="none")) == "The server is down."
        crashed, after = results_of(chat)
    assert crashed.outcome == "error"
    assert "closed the connection during the call" in str(crashed.error)
    assert after.outcome == "error"
    assert str(after.error).startswith("Not run: the MCP server 'kitchen' closed the connection")


def test_a_server_that_hangs_is_stopped_by_the_tool_timeout(
    serve: Serve, kitchen_tools: Tools
) -> None:
    server = serve(
        [
            Reply.tool_call("hang", {}),
            Reply.tool_call("echo", {"text": "after"}),
            Reply.text("ok"),
        ]
    )
    chat = make_chat(server, tool_timeout=1)
    chat.set_tools(kitchen_tools)
    chat.chat("Go", echo="none")
    hung, after = results_of(chat)
    assert hung.outcome == "error" and "timed out after 1 s" in str(hung.error)
    assert after.value == "after"  # the session outlived the abandoned call


def test_malformed_results_are_error_results_naming_the_problem(serve: Serve) -> None:
    chat = offline_chat()
    with pytest.warns(UserWarning, match="'bad_schema' is not registered: its inputSchema"):
        asyncio.run(
            chat.register_mcp_tools_stdio_async(
                command=sys.executable, args=[RAW], transport_kwargs=dict(QUIET)
            )
        )
    with chat:
        ran, _ = converse(
            serve,
            chat.get_tools(),
            ("malformed", {}),
            ("hologram", {}),
            ("bad_base64", {}),
            ("noisy", {}),
            ("rpc_error", {}),
        )
        malformed, hologram, bad_base64, noisy, rpc_error = results_of(ran)
    assert malformed.outcome == "error"
    assert "malformed result for `malformed`: content: Input should be a valid list" in str(
        malformed.error
    )
    assert "content block 0 is not of any MCP content type" in str(hologram.error)
    assert bad_base64.outcome == "success" and "not valid base64" in bad_base64.value
    assert noisy.value == "still fine"  # a stray line does not end the session
    assert rpc_error.outcome == "error"
    assert "answered `rpc_error` with an error: the tool broke (code -32603)" in str(
        rpc_error.error
    )


async def test_an_http_server_that_went_away_answers_with_an_error_not_a_hang(
    serve: Serve,
) -> None:
    kitchen = HttpKitchen()
    server = serve([Reply.tool_call("echo", {"text": "anyone?"}), Reply.text("gone")])
    chat = make_chat(server, tool_timeout=60)
    await chat.register_mcp_tools_http_stream_async(url=kitchen.url)
    kitchen.stop()
    await chat.chat_async("Go", echo="none")
    [result] = results_of(chat)
    assert result.outcome == "error"
    assert "kitchen" in str(result.error) and "timed out" not in str(result.error)
    await chat.cleanup_mcp_tools()


# -- who owns a session, and closing ---------------------------------------------------------


async def test_cleanup_stops_a_stdio_server_and_removes_its_tools(tmp_path: Path) -> None:
    chat = offline_chat()
    pid_file = tmp_path / "pid"
    await chat.register_mcp_tools_stdio_async(**kitchen_options(pid_file))
    assert not process_gone(pid_from(pid_file))
    await chat.cleanup_mcp_tools()
    assert process_gone(pid_from(pid_file))
    assert chat.get_tools() == []


def test_a_sync_chat_calls_mcp_tools_and_leaving_its_with_block_stops_the_server(
    serve: Serve, tmp_path: Path
) -> None:
    server = serve([Reply.tool_call("echo", {"text": "sync"}), Reply.text("done")])
    pid_file = tmp_path / "pid"
    with with_kitchen(make_chat(server), pid_file, include_tools=["echo"]) as chat:
        chat.chat("Go", echo="none")  # the tools run on the chat's background loop
        assert results_of(chat)[0].value == "sync"
    assert process_gone(pid_from(pid_file))
    assert chat.get_tools() == []


async def test_leaving_an_async_with_block_stops_the_server(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    async with offline_chat() as chat:
        await chat.register_mcp_tools_stdio_async(**kitchen_options(pid_file))
    assert process_gone(pid_from(pid_file))


def test_a_server_left_open_is_stopped_when_the_interpreter_exits(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = textwrap.dedent(
        f"""
        import asyncio, subprocess, sys
        from chatlas_like import ChatAnthropic
        chat = ChatAnthropic(api_key="k", base_url="http://127.0.0.1:9")
        asyncio.run(chat.register_mcp_tools_stdio_async(
            command=sys.executable, args=[{KITCHEN!r}],
            transport_kwargs={{"errlog": subprocess.DEVNULL,
                               "env": {{"MCP_PID_FILE": {str(pid_file)!r}}}}}))
        print(len(chat.get_tools()))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 10
    assert process_gone(pid_from(pid_file))


def test_a_copy_calls_the_same_server_but_does_not_own_it(serve: Serve, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    original = with_kitchen(offline_chat(), pid_file, include_tools=["echo"])
    copy = original.copy()
    asyncio.run(copy.cleanup_mcp_tools())  # the copy lets go: the server keeps running
    assert copy.get_tools() == [] and names(original) == ["echo"]
    assert not process_gone(pid_from(pid_file))
    second = original.copy()
    original.close()
    assert process_gone(pid_from(pid_file))
    ran, _ = converse(serve, second.get_tools(), ("echo", {"text": "hello?"}))
    [result] = results_of(ran)
    assert result.outcome == "error" and "the MCP server 'kitchen' is closed" in str(result.error)


# -- what the server changes, and calls at once --------------------------------------------


def test_a_servers_list_changed_updates_the_tools_for_the_next_turn(serve: Serve) -> None:
    server = serve(
        [
            Reply.tool_call("grow", {}),
            Reply.text("grown"),
            Reply.tool_call("extra", {"a": 7}),
            Reply.text("done"),
        ]
    )
    with pytest.warns(UserWarning, match="no tool named 'extra'"):  # not yet
        chat = with_kitchen(make_chat(server), include_tools=["grow", "extra"])
    with chat:
        assert names(chat) == ["grow"]
        chat.chat("Grow", echo="none")
        chat.chat("Use it", echo="none")
        offered = [[t["name"] for t in body["tools"]] for body in server.message_requests()]
        assert offered[0] == ["grow"] and "extra" in offered[2]
        assert results_of(chat)[1].value == "7"


def test_a_tool_the_server_removes_is_no_longer_offered_and_a_call_to_it_is_refused(
    serve: Serve,
) -> None:
    server = serve(
        [
            Reply.tool_call("shrink", {}),
            Reply.text("shrunk"),
            Reply.tool_call("grow", {}),
            Reply.text("done"),
        ]
    )
    chat = with_kitchen(make_chat(server), include_tools=["grow", "shrink"])
    with chat:
        chat.chat("Shrink", echo="none")
        assert names(chat) == ["shrink"]
        chat.chat("Grow", echo="none")
        offered = [[t["name"] for t in body["tools"]] for body in server.message_requests()]
        assert offered[0] == ["grow", "shrink"] and offered[2] == ["shrink"]
        refused = results_of(chat)[1]
        assert refused.outcome == "refused" and "Unknown tool `grow`" in refused.get_model_value()


MEET = [("meet", {"seat": n}) for n in range(8)]
MET = [f"seat {n} met the other seven" for n in range(8)]
# The server's `meet` waits at a barrier for eight calls: run one by one, the first would
# wait forever (the timeouts are only there to fail instead of hanging).


def test_eight_mcp_calls_in_one_turn_run_at_once_over_stdio(
    serve: Serve, kitchen_tools: Tools
) -> None:
    chat, _ = converse(serve, kitchen_tools, *MEET, tool_timeout=60)
    assert [r.value for r in results_of(chat)] == MET


def test_eight_mcp_calls_in_one_turn_run_at_once_over_http(
    serve: Serve, http_kitchen: HttpKitchen
) -> None:
    server = serve([Reply.tool_calls(MEET), Reply.text("met")])
    chat = make_chat(server, tool_timeout=60)
    asyncio.run(
        chat.register_mcp_tools_http_stream_async(url=http_kitchen.url, include_tools=["meet"])
    )
    with chat:
        chat.chat("Meet", echo="none")
    assert [r.value for r in results_of(chat)] == MET


def test_a_review_hook_denies_a_destructive_mcp_tool_by_its_annotation(
    serve: Serve, kitchen_tools: Tools
) -> None:
    server = serve(
        [
            Reply.tool_calls([("delete_everything", {}), ("echo", {"text": "hi"})]),
            Reply.tool_call("tally", {}),
            Reply.text("done"),
        ]
    )

    def review(request: ContentToolRequest) -> Any:
        hints = (request.tool.annotations if request.tool else None) or {}
        return Deny("needs a person's approval") if hints.get("destructiveHint") else Allow()

    chat = make_chat(server)
    chat.set_tools(kitchen_tools)
    chat.on_tool_review(review)
    chat.chat("Clean up", echo="none")
    denied, echoed, tally = results_of(chat)
    assert (denied.outcome, echoed.outcome) == ("denied", "success")
    assert "echo" in tally.value and "delete_everything" not in tally.value
    assert sent_results(server)[0]["content"] == "needs a person's approval"
