"""What the Shiny integration hands to shinychat, checked without a browser."""

from __future__ import annotations

from typing import Any

import pytest

from chatlas_like import (
    AssistantTurn,
    ChatAnthropic,
    ContentText,
    ContentThinking,
    ContentToolRequest,
    ContentToolResult,
    UserTurn,
)
from chatlas_like.shiny import SessionServer, answer_stream, chat_app, register_shinychat
from chatlas_like.testing import Reply

from ..conftest import make_chat

REQUEST = ContentToolRequest(id="toolu_1", name="lookup", arguments={"q": "<b>x</b>"})
RESULT = ContentToolResult(value="<script>alert(1)</script>", request=REQUEST)


def shown(message: Any) -> str:
    """What shinychat will put on the page: its text plus its HTML blocks."""
    blocks = "".join(b["content"] for b in message.blocks if b["type"] == "html_block")
    return f"{message.content}{blocks}"


@pytest.fixture(scope="module")
def shinychat() -> Any:
    import shinychat

    register_shinychat()
    register_shinychat()  # registering twice is harmless
    return shinychat


def test_a_streamed_tool_result_becomes_its_escaped_card(shinychat: Any) -> None:
    html = shown(shinychat.message_content_chunk(RESULT))
    assert "chatlas-like-tool-result" in html
    assert "<script" not in html and "&lt;script&gt;" in html


def test_a_streamed_tool_request_becomes_a_card(shinychat: Any) -> None:
    html = shown(shinychat.message_content_chunk(REQUEST))
    assert "chatlas-like-tool-request" in html and "&lt;b&gt;" in html


def test_restored_turns_keep_their_roles(shinychat: Any) -> None:
    assert shinychat.message_content(UserTurn("Hi")).role == "user"
    assert shinychat.message_content(AssistantTurn("Hello")).content == "Hello"
    tool_turn = shinychat.message_content(UserTurn([RESULT]))
    assert tool_turn.role == "assistant"  # tool results show on the model's side
    assert "chatlas-like-tool-result" in shown(tool_turn)


def test_text_content_stays_markdown(shinychat: Any) -> None:
    assert shinychat.message_content(ContentText("**hi**")).content == "**hi**"


async def test_a_failed_answer_ends_with_an_error_box(serve: Any) -> None:
    server = serve([Reply.error(400, "invalid_request_error", "no <good>")])
    chat = make_chat(server, max_retries=0)
    pieces = [piece async for piece in answer_stream(chat, "Hi")]
    assert len(pieces) == 1
    assert "chatlas-like-error" in str(pieces[0]) and "no &lt;good&gt;" in str(pieces[0])
    assert chat.get_turns() == []  # the prompt was taken back: nothing was answered


async def test_an_answer_streams_text_then_tool_cards(serve: Any) -> None:
    server = serve(
        [Reply.tool_call("lookup", {"q": "x"}, text="Looking."), Reply.text("Found it.")]
    )
    chat = make_chat(server)
    chat.register_tool(lambda q: "found", name="lookup")
    pieces = [piece async for piece in answer_stream(chat, "Find x")]
    kinds = [type(p).__name__ for p in pieces]
    assert kinds[0] == "str" and "ContentToolRequest" in kinds and "ContentToolResult" in kinds
    assert "".join(p for p in pieces if isinstance(p, str)).endswith("Found it.")


THINKING = {"type": "thinking", "thinking": "First this, then that.", "signature": "sig-1"}
CITED = {
    "type": "text",
    "text": "The page is called Example Domain.",
    "citations": [
        {
            "type": "char_location",
            "document_index": 0,
            "document_title": "Example Domain",
            "cited_text": "Example Domain",
            "start_char_index": 0,
            "end_char_index": 14,
        }
    ],
}


async def test_thinking_streams_into_the_app_as_one_collapsed_block(
    serve: Any, shinychat: Any
) -> None:
    server = serve([Reply.blocks_of(THINKING, {"type": "text", "text": "Hello"})])
    chat = make_chat(server, reasoning=2048)
    pieces = [piece async for piece in answer_stream(chat, "Hi")]
    assert pieces == [ContentThinking("First this, then that."), "Hello"]
    html = shown(shinychat.message_content_chunk(pieces[0]))
    assert html.count("<details") == 1 and "First this, then that." in html


async def test_citations_are_not_streamed_into_the_app(serve: Any) -> None:
    server = serve([Reply.blocks_of(CITED)])
    chat = make_chat(server)
    pieces = [piece async for piece in answer_stream(chat, "Read it")]
    assert "".join(pieces) == "The page is called Example Domain."


def test_the_app_hands_kwargs_stream_echo_and_content_to_its_sessions() -> None:
    chat = ChatAnthropic(api_key="test", model="claude-haiku-4-5")
    app = chat_app(chat, kwargs={"temperature": 0.25}, stream=False, echo="all", content="text")
    assert isinstance(app.server, SessionServer)
    assert app.server.kwargs == {"temperature": 0.25}
    assert (app.server.stream, app.server.echo, app.server.content) == (False, "all", "text")
    assert "temperature" not in str(app.ui["html"])  # not an HTML attribute


def test_chat_app_takes_chatlas_app_arguments_without_making_them_attributes(
    serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    chat = make_chat(serve([]))
    server = chat.app(
        launch_browser=False,
        bg_thread=True,
        stream=False,
        echo="none",
        content="text",
        kwargs={"temperature": 0.25},
        bookmark_store="disable",
    )
    try:
        assert server.app.server.kwargs == {"temperature": 0.25}
        assert server.app.server.content == "text" and server.app.server.stream is False
        assert "bookmark_store" not in str(server.app.ui["html"])
    finally:
        server.stop()
    assert server.url in capsys.readouterr().out


def test_without_streaming_the_app_echoes_text_by_default_as_chatlas() -> None:
    chat = ChatAnthropic(api_key="test", model="claude-haiku-4-5")
    assert SessionServer(chat, stream=False).echo == "text"
    assert SessionServer(chat).echo == "none"


async def test_an_answer_is_asked_with_the_apps_kwargs(serve: Any) -> None:
    server = serve([Reply.text("Hi.")])
    chat = make_chat(server)
    _ = [piece async for piece in answer_stream(chat, "Hi", {"temperature": 0.25})]
    assert server.message_requests()[0]["temperature"] == 0.25


async def test_an_answer_without_streaming_comes_whole(serve: Any) -> None:
    server = serve([Reply.text("It is sunny in Paris today.", chunks=6)])
    chat = make_chat(server)
    pieces = [piece async for piece in answer_stream(chat, "Weather?", stream=False)]
    assert pieces == ["It is sunny in Paris today."]


async def test_text_content_leaves_the_tool_cards_out(serve: Any) -> None:
    server = serve(
        [Reply.tool_call("lookup", {"q": "x"}, text="Looking."), Reply.text("Found it.")]
    )
    chat = make_chat(server)
    chat.register_tool(lambda q: "found", name="lookup")
    pieces = [piece async for piece in answer_stream(chat, "Find x", content="text")]
    assert all(isinstance(p, str) for p in pieces)
    assert "".join(pieces) == "Looking.\n\nFound it."


async def test_an_answer_is_echoed_where_the_app_runs_when_asked(
    serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    server = serve([Reply.text("Echoed answer.")])
    chat = make_chat(server)
    _ = [piece async for piece in answer_stream(chat, "Hi", echo="text")]
    assert "Echoed answer." in capsys.readouterr().out


def test_a_replayed_history_leaves_out_a_turn_holding_only_answered_tool_calls() -> None:
    from chatlas_like.shiny import _replayed

    asked, answered, said = AssistantTurn([REQUEST]), UserTurn([RESULT]), AssistantTurn("Done.")
    assert _replayed([UserTurn("Look up x"), asked, answered, said]) == [
        UserTurn("Look up x"),
        answered,
        said,
    ]
