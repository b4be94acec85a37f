"""Chat methods chatlas code calls: export, console, echo options, kwargs_chat, views, close."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from chatlas_like import AssistantTurn, Chat, ContentToolResult, UserTurn
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import TEST_KEY, make_chat


def lookup(term: str) -> str:
    """Looks a term up."""
    return f"<script>alert('{term}')</script> found"


TOOL_SCRIPT = [
    Reply.tool_call("lookup", {"term": "x"}, text="Looking <b>it</b> up."),
    Reply.text(
        "It is <img src=https://tracker.example/x.png> **found**. ![pic](https://e.x/p.png)"
    ),
]


def chat_with_tool_loop(server: LoopbackServer) -> Chat:
    chat = make_chat(server, system_prompt="Be <i>brief</i>.")
    chat.register_tool(lookup)
    chat.chat("Look up <x>", echo="none")
    return chat


# -- export ----------------------------------------------------------------------------------


def test_export_writes_an_escaped_self_contained_html_transcript(tmp_path: Path) -> None:
    with LoopbackServer(TOOL_SCRIPT) as server:
        chat = chat_with_tool_loop(server)
    path = chat.export(tmp_path / "chat.html", title="My <chat>", content="all")
    html = path.read_text()
    assert path == (tmp_path / "chat.html").resolve()
    assert "<h1>My &lt;chat&gt;</h1>" in html
    assert "<script" not in html and "<img" not in html and "&lt;script&gt;" in html
    assert "https://" not in html.split("<body>")[0]  # nothing fetched to show it
    assert "chatlas-like-tool-result" in html
    assert "Be &lt;i&gt;brief&lt;/i&gt;." in html


def test_export_writes_a_markdown_transcript_with_raw_html_neutralised(tmp_path: Path) -> None:
    with LoopbackServer(TOOL_SCRIPT) as server:
        chat = chat_with_tool_loop(server)
    text = chat.export(tmp_path / "chat.md", title="Notes").read_text()
    assert text.startswith("# Notes\n\n## User\n\nLook up &lt;x>")
    assert "## Assistant" in text and "**found**" in text
    assert "<img" not in text and "&lt;img" in text
    assert "!\\[pic](https://e.x/p.png)" in text  # shows "![", starts no image or link
    assert "lookup" not in text  # content="text" leaves tool calls out


def test_export_keeps_code_as_written(tmp_path: Path) -> None:
    chat = make_chat_offline()
    chat.set_turns(
        [UserTurn("Show me"), AssistantTurn("Use `a<b` or:\n\n```html\n<p>hi</p>\n```\n")]
    )
    text = chat.export(tmp_path / "code.md").read_text()
    assert "`a<b`" in text and "```html\n<p>hi</p>\n```" in text


def test_export_of_everything_keeps_a_long_structured_answer_and_thinking_whole(
    tmp_path: Path,
) -> None:
    from chatlas_like import ContentJson, ContentThinking

    notes = {"notes": [f"note {i}" for i in range(400)]}
    thinking = "\n".join(f"step {i}" for i in range(400))
    chat = make_chat_offline()
    chat.set_turns(
        [UserTurn("Notes?"), AssistantTurn([ContentThinking(thinking), ContentJson(notes)])]
    )
    for name in ("all.md", "all.html"):
        text = chat.export(tmp_path / name, content="all").read_text()
        assert "note 399" in text and "step 399" in text


def test_an_export_carries_no_control_sequence_of_the_models(tmp_path: Path) -> None:
    chat = make_chat_offline()
    chat.set_turns([UserTurn("Hi"), AssistantTurn("Hello\x1b]0;pwned\x07 \x1b[2Jthere\tyou")])
    for name in ("t.md", "t.html"):
        text = chat.export(tmp_path / name).read_text()
        assert "\x1b" not in text and "\x07" not in text
        assert "Hello there\tyou" in text


def test_export_refuses_to_overwrite_unless_asked(tmp_path: Path) -> None:
    chat = make_chat_offline()
    chat.set_turns([UserTurn("Hi"), AssistantTurn("Hello")])
    chat.export(tmp_path / "a.md")
    with pytest.raises(ValueError, match="overwrite=True"):
        chat.export(tmp_path / "a.md")
    assert chat.export(tmp_path / "a.md", overwrite=True).exists()


def test_export_takes_only_markdown_or_html(tmp_path: Path) -> None:
    chat = make_chat_offline()
    chat.set_turns([UserTurn("Hi"), AssistantTurn("Hello")])
    with pytest.raises(ValueError, match=r"\.md or \.html"):
        chat.export(tmp_path / "a.txt")


def make_chat_offline() -> Chat:
    from chatlas_like import ChatAnthropic

    return ChatAnthropic(api_key=TEST_KEY)


# -- console ---------------------------------------------------------------------------------

CONSOLE_SCRIPT = textwrap.dedent(
    """
    import os
    from chatlas_like import ChatAnthropic

    def lookup(term: str) -> str:
        '''Looks a term up.'''
        return f"{term} means hello"

    chat = ChatAnthropic(base_url=os.environ["TEST_BASE_URL"], api_key="test")
    chat.register_tool(lookup)
    chat.console()
    print("console ended with", len(chat.get_turns()), "turns")
    """
)


def test_console_chats_with_this_chat_and_its_tools(tmp_path: Path) -> None:
    script = tmp_path / "console_app.py"
    script.write_text(CONSOLE_SCRIPT)
    with LoopbackServer(
        [Reply.tool_call("lookup", {"term": "hej"}), Reply.text("It means hello.")]
    ) as server:
        child = pexpect.spawn(
            sys.executable,
            [str(script)],
            env={**os.environ, "TEST_BASE_URL": server.url, "COLUMNS": "100"},
            encoding="utf-8",
            timeout=60,
        )
        try:
            child.expect("you>")
            child.sendline("What does hej mean?")
            child.expect_exact('lookup(term="hej")')
            child.expect_exact("It means hello.")
            child.expect("you>")
            child.sendline("exit()")  # as in chatlas: not sent to the model
            child.expect_exact("console ended with 4 turns")
        finally:
            child.close(force=True)


# -- echo options ----------------------------------------------------------------------------


@contextlib.contextmanager
def ten_line_result_chat() -> Iterator[tuple[Chat, io.StringIO]]:
    """A chat whose tool returns ten lines, echoing to a buffer with three result lines."""
    output = io.StringIO()
    lines = "\n".join(f"line {i}" for i in range(10))
    with LoopbackServer([Reply.tool_call("many", {}), Reply.text("done")]) as server:
        chat = make_chat(server)
        chat.register_tool(make_many(lines))
        chat.set_echo_options(rich_console={"file": output, "width": 120}, tool_result_max_lines=3)
        yield chat, output


def test_echo_options_go_to_the_console_chat_too(monkeypatch: pytest.MonkeyPatch) -> None:
    with ten_line_result_chat() as (chat, output):
        monkeypatch.setattr(sys, "stdin", io.StringIO("go\nexit\n"))
        chat.console()
    shown = output.getvalue()
    assert "you>" in shown and "done" in shown
    assert "line 2" in shown and "line 3" not in shown


def test_echo_options_go_to_the_terminal_echo() -> None:
    with ten_line_result_chat() as (chat, output):
        chat.chat("go", echo="output")
    shown = output.getvalue()
    assert "line 2" in shown and "line 3" not in shown
    assert "done" in shown


def make_many(text: str) -> Any:
    def many() -> str:
        """Many lines."""
        return text

    return many


def test_each_set_echo_options_call_replaces_every_option() -> None:
    chat = make_chat_offline()
    chat.set_echo_options(tool_result_max_lines=3)
    chat.set_echo_options(thinking_max_lines=2)
    assert chat._echo_options.tool_result_max_lines == 12  # pyright: ignore[reportPrivateUsage]


def test_echo_options_are_checked() -> None:
    chat = make_chat_offline()
    with pytest.raises(ValueError, match="tool_result_max_lines must be at least 1"):
        chat.set_echo_options(tool_result_max_lines=0)
    with pytest.raises(ValueError, match="not a plain CSS declaration"):
        chat.set_echo_options(css_styles={"color": "red;background:url(x)"})


# -- request parameters and views ------------------------------------------------------------


def test_kwargs_chat_go_with_every_request_and_per_call_kwargs_win() -> None:
    with LoopbackServer([Reply.text("a"), Reply.text("b")]) as server:
        chat = make_chat(server)
        chat.kwargs_chat = {"temperature": 0.2, "top_k": 5}
        chat.chat("one", echo="none")
        chat.chat("two", echo="none", kwargs={"temperature": 0.9})
        first, second = server.message_requests()
    assert (first["temperature"], first["top_k"]) == (0.2, 5)
    assert (second["temperature"], second["top_k"]) == (0.9, 5)


def test_kwargs_chat_is_a_chat_argument() -> None:
    chat = Chat(make_chat_offline().provider, kwargs_chat={"top_k": 3})
    assert chat.kwargs_chat == {"top_k": 3}


def test_tool_results_can_be_read_as_part_of_one_assistant_turn() -> None:
    with LoopbackServer(TOOL_SCRIPT) as server:
        chat = chat_with_tool_loop(server)
    turns = chat.get_turns(tool_result_role="assistant")
    assert [t.role for t in turns] == ["user", "assistant"]
    kinds = [type(c).__name__ for c in turns[1].contents]
    assert kinds == ["ContentText", "ContentToolRequest", "ContentToolResult", "ContentText"]
    assert [t.role for t in chat.get_turns()] == ["user", "assistant", "user", "assistant"]


def test_a_bad_tool_result_role_is_refused() -> None:
    with pytest.raises(ValueError, match="tool_result_role"):
        make_chat_offline().get_turns(tool_result_role="tool")  # pyright: ignore[reportArgumentType]


def test_the_system_prompt_is_a_property_that_later_requests_use() -> None:
    with LoopbackServer([Reply.text("a")]) as server:
        chat = make_chat(server)
        chat.system_prompt = "Answer in French."
        chat.chat("hi", echo="none")
        (body,) = server.message_requests()
    assert body["system"][0]["text"] == "Answer in French."
    with pytest.raises(TypeError, match="system_prompt must be a string"):
        chat.system_prompt = 42  # pyright: ignore[reportAttributeAccessIssue]


def test_a_chat_closes_as_a_context_manager() -> None:
    with LoopbackServer([Reply.text("a")]) as server:
        with make_chat(server) as chat:
            chat.chat("hi", echo="none")
            assert chat.provider._client.made  # pyright: ignore[reportAttributeAccessIssue]
        assert not chat.provider._client.made  # pyright: ignore[reportAttributeAccessIssue]


def test_close_async_closes_the_async_client_of_the_loop() -> None:
    async def run(server: LoopbackServer) -> Any:
        async with make_chat(server) as chat:
            await chat.chat_async("hi", echo="none")
            clients = chat.provider._async_clients  # pyright: ignore[reportAttributeAccessIssue]
            client = clients.current()
        return client, len(clients)

    with LoopbackServer([Reply.text("a")]) as server:
        client, left = asyncio.run(run(server))
    assert left == 0
    assert client.is_closed()


class Mine(ContentToolResult):
    pass


def mine() -> Mine:
    """Mine."""
    return Mine(value=1)


def test_a_tool_result_subclass_survives_the_assistant_view() -> None:
    with LoopbackServer([Reply.tool_call("mine", {}), Reply.text("ok")]) as server:
        chat = make_chat(server)
        chat.register_tool(mine)
        chat.chat("go", echo="none")
    (merged,) = [t for t in chat.get_turns(tool_result_role="assistant") if t.role == "assistant"]
    assert any(type(c) is Mine for c in merged.contents)


# -- state for Shiny bookmarks ---------------------------------------------------------------


def test_the_state_round_trips_the_history_with_tool_results() -> None:
    with LoopbackServer(TOOL_SCRIPT) as server:
        chat = chat_with_tool_loop(server)
    state = asyncio.run(chat.get_state())
    restored = make_chat_offline()
    asyncio.run(restored.set_state(state))
    assert restored.get_turns() == chat.get_turns()
    (result,) = restored.get_turns()[2].tool_results
    assert "found" in str(result.get_model_value())


def test_the_state_is_plain_json() -> None:
    import json

    with LoopbackServer(TOOL_SCRIPT) as server:
        chat = chat_with_tool_loop(server)
    state = asyncio.run(chat.get_state())
    assert json.loads(json.dumps(state)) == state


def test_a_bookmark_of_a_chatlas_app_restores_its_history() -> None:
    state = {  # what shinychat keeps for a chatlas client: chatlas's turn dumps
        "version": 1,
        "turns": [UserTurn("Hi").model_dump(), AssistantTurn("Hello from chatlas.").model_dump()],
    }
    restored = make_chat_offline()
    asyncio.run(restored.set_state(state))
    assert [str(t) for t in restored.get_turns()] == ["Hi", "Hello from chatlas."]


def test_a_chatlas_bookmark_with_a_malformed_turn_is_refused_naming_it() -> None:
    from chatlas_like import PersistenceError

    state = {"version": 1, "turns": [{"role": "user", "contents": [{"content_type": 5}]}]}
    with pytest.raises(PersistenceError, match=r"turns\[0\]"):
        asyncio.run(make_chat_offline().set_state(state))


def test_a_state_of_another_version_is_refused() -> None:
    with pytest.raises(ValueError, match="version 2"):
        asyncio.run(make_chat_offline().set_state({"version": 2, "turns": []}))
