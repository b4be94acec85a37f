"""What the Shiny integration hands to shinychat, checked without a browser."""

from __future__ import annotations

from typing import Any

import pytest

from chatlas_like import (
    AssistantTurn,
    ContentText,
    ContentThinking,
    ContentToolRequest,
    ContentToolResult,
    UserTurn,
)
from chatlas_like.shiny import answer_stream, register_shinychat
from chatlas_like.testing import Reply

from .conftest import make_chat

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
