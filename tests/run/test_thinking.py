"""Extended thinking: the request, blocks kept with their signatures, deltas, echo."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from chatlas_like import ContentThinking, ContentThinkingDelta, from_json, to_json
from chatlas_like.testing import Reply

from ..conftest import make_chat

THINKING = {
    "type": "thinking",
    "thinking": "The user wants the date. A tool has it.",
    "signature": "sig-1",
}
REDACTED = {"type": "redacted_thinking", "data": "EncryptedBlob=="}


def get_date() -> str:
    """Gets the current date."""
    return "2024-01-01"


def thinking_then_tool() -> list[Reply]:
    return [
        Reply.blocks_of(
            THINKING,
            {"type": "tool_use", "name": "get_date", "input": {}},
            stop_reason="tool_use",
        ),
        Reply.blocks_of(
            {"type": "thinking", "thinking": "Now answer.", "signature": "sig-2"},
            {"type": "text", "text": "It is 2024-01-01."},
        ),
    ]


def test_an_int_reasoning_is_a_thinking_budget(serve: Any) -> None:
    server = serve([Reply.text("Hi")])
    make_chat(server, reasoning=2048).chat("Hi", echo="none")
    assert server.message_requests()[0]["thinking"] == {"type": "enabled", "budget_tokens": 2048}


def test_an_effort_reasoning_turns_on_adaptive_thinking(serve: Any) -> None:
    server = serve([Reply.text("Hi")])
    make_chat(server, reasoning="high").chat("Hi", echo="none")
    body = server.message_requests()[0]
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "high"}


def test_effort_and_a_structured_answer_share_the_output_config(serve: Any) -> None:
    class City(BaseModel):
        name: str

    server = serve([Reply.text('{"name": "Paris"}')])
    chat = make_chat(server, reasoning="low")
    assert chat.chat_structured("Capital of France?", data_model=City).name == "Paris"
    config = server.message_requests()[0]["output_config"]
    assert config["effort"] == "low"
    assert config["format"]["type"] == "json_schema"


def test_a_budget_at_or_over_max_tokens_is_refused(serve: Any) -> None:
    server = serve([])
    with pytest.raises(ValueError, match="below max_tokens"):
        make_chat(server, reasoning=4096, max_tokens=4096)


def test_the_thinking_block_goes_back_with_its_signature_in_a_tool_loop(serve: Any) -> None:
    server = serve(thinking_then_tool())
    chat = make_chat(server, reasoning=2048)
    chat.register_tool(get_date)
    assert str(chat.chat("What's the date?", echo="none")) == "It is 2024-01-01."
    sent = server.message_requests()[1]["messages"][1]["content"]
    assert sent[0] == THINKING  # unchanged, first, as the API requires in a tool loop
    thinking = chat.get_turns()[1].contents[0]
    assert isinstance(thinking, ContentThinking)
    assert thinking.signature == "sig-1"
    assert thinking.thinking == THINKING["thinking"]


def test_redacted_thinking_is_kept_and_sent_back_unchanged(serve: Any) -> None:
    server = serve([Reply.blocks_of(REDACTED, {"type": "text", "text": "Done."}), Reply.text("Ok")])
    chat = make_chat(server, reasoning=2048)
    chat.chat("Think hard.", echo="none")
    redacted = chat.get_turns()[1].contents[0]
    assert isinstance(redacted, ContentThinking) and redacted.redacted
    chat.chat("Again", echo="none")
    assert server.message_requests()[1]["messages"][1]["content"][0] == REDACTED


def test_stream_content_all_yields_thinking_deltas_before_the_text(serve: Any) -> None:
    server = serve([Reply.blocks_of(THINKING, {"type": "text", "text": "Hello"})])
    items = list(make_chat(server, reasoning=2048).stream("Hi", content="all"))
    assert items == [
        ContentThinkingDelta("", "start"),
        ContentThinkingDelta(THINKING["thinking"]),
        ContentThinkingDelta("", "end"),
        "Hello",
    ]


def test_stream_text_yields_no_thinking(serve: Any) -> None:
    server = serve([Reply.blocks_of(THINKING, {"type": "text", "text": "Hello"})])
    assert list(make_chat(server, reasoning=2048).stream("Hi")) == ["Hello"]


def test_a_non_streamed_answer_yields_the_same_thinking_deltas(serve: Any) -> None:
    server = serve([Reply.blocks_of(THINKING, {"type": "text", "text": "Hello"})])
    chat = make_chat(server, reasoning=2048)
    chat.chat("Hi", echo="none", stream=False)
    assert chat.get_turns()[1].contents[0] == ContentThinking(THINKING["thinking"], THINKING)


def test_stream_async_yields_thinking_deltas(serve: Any) -> None:
    server = serve([Reply.blocks_of(THINKING, {"type": "text", "text": "Hello"})])
    chat = make_chat(server, reasoning=2048)

    async def collect() -> list[Any]:
        return [i async for i in await chat.stream_async("Hi", content="all")]

    items = asyncio.run(collect())
    assert ContentThinkingDelta(THINKING["thinking"]) in items


def test_echo_shows_thinking_and_hides_it_when_asked(
    serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    server = serve([Reply.blocks_of(THINKING, {"type": "text", "text": "Hello"})] * 2)
    chat = make_chat(server, reasoning=2048)
    chat.chat("Hi")
    shown = capsys.readouterr().out
    assert "💭 The user wants the date." in shown and "Hello" in shown
    chat.chat("Hi", echo_thinking=False)
    hidden = capsys.readouterr().out
    assert "The user wants" not in hidden and "Hello" in hidden


def test_thinking_cut_off_before_its_signature_is_not_sent_back(serve: Any) -> None:
    from chatlas_like import StreamInterruptedError

    server = serve(
        [
            Reply.blocks_of(THINKING, {"type": "text", "text": "Hello there"}).cut(after=3),
            Reply.text("Hi"),
        ]
    )
    chat = make_chat(server, reasoning=2048)
    with pytest.raises(StreamInterruptedError):
        chat.chat("Hi", echo="none", max_retries=0)
    partial = chat.get_turns()[1]
    assert partial.finish_reason is None
    assert isinstance(partial.contents[0], ContentThinking)
    assert partial.contents[0].signature is None
    chat.chat("Again", echo="none")  # the validator refuses unsigned thinking
    sent = server.message_requests()[-1]["messages"]
    assert [b["type"] for m in sent for b in m["content"]] == ["text", "text"]


def test_thinking_survives_a_json_round_trip(serve: Any) -> None:
    server = serve(thinking_then_tool())
    chat = make_chat(server, reasoning=2048)
    chat.register_tool(get_date)
    chat.chat("What's the date?", echo="none")
    assert from_json(to_json(chat.get_turns())) == chat.get_turns()


def test_a_forced_tool_cannot_be_combined_with_thinking(serve: Any) -> None:
    class City(BaseModel):
        name: str

    server = serve([])
    chat = make_chat(server, model="claude-sonnet-4-20250514", reasoning=2048)
    with pytest.raises(ValueError, match="extended thinking"):
        chat.chat_structured("Capital of France?", data_model=City)
    assert chat.get_turns() == []  # refused before the prompt entered the history
