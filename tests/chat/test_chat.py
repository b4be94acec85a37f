"""A chat through the real SDK against the loopback server: the four verbs and their parity."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from chatlas_like import (
    AssistantTurn,
    ContentText,
    ContentToolRequest,
    ContentToolResult,
    UserTurn,
    to_json,
)
from chatlas_like.testing import Reply

from ..conftest import make_chat


def get_date() -> str:
    """Gets the current date."""
    return "2024-01-01"


def add(x: int, y: int) -> int:
    """Adds two numbers."""
    return x + y


def script() -> list[Reply]:
    return [
        Reply.tool_call("get_date", {}, text="Let me check."),
        Reply.text("It is 2024-01-01."),
        Reply.tool_calls([("add", {"x": 1, "y": 2}), ("add", {"x": "3", "y": 4})]),
        Reply.text("3 and 7."),
    ]


def test_chat_returns_the_answer_text(serve: Any) -> None:
    server = serve([Reply.text("Hello there!")])
    chat = make_chat(server)
    response = chat.chat("Hi", echo="none")
    assert str(response) == "Hello there!"


def test_chat_runs_a_tool_and_sends_its_result_back(serve: Any) -> None:
    server = serve(script()[:2])
    chat = make_chat(server)
    chat.register_tool(get_date)
    assert "2024-01-01" in str(chat.chat("What's the date?", echo="none"))
    second = server.message_requests()[1]["messages"]
    assert second[-1]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_0001",
        "content": "2024-01-01",
        "is_error": False,
        "cache_control": {"type": "ephemeral", "ttl": "5m"},
    }


def test_history_holds_prompt_request_result_and_answer(serve: Any) -> None:
    server = serve(script()[:2])
    chat = make_chat(server)
    chat.register_tool(get_date)
    chat.chat("What's the date?", echo="none")
    turns = chat.get_turns()
    assert [type(t) for t in turns] == [UserTurn, AssistantTurn, UserTurn, AssistantTurn]
    assert isinstance(turns[1].contents[1], ContentToolRequest)
    result = turns[2].contents[0]
    assert isinstance(result, ContentToolResult)
    assert result.value == "2024-01-01" and result.outcome == "success"
    assert turns[3].text == "It is 2024-01-01."


def test_assistant_turn_carries_tokens_and_finish_reason(serve: Any) -> None:
    server = serve([Reply.text("Hi").with_usage(input_tokens=26, output_tokens=5)])
    chat = make_chat(server)
    chat.chat("Hi", echo="none")
    last = chat.get_last_turn()
    assert last is not None
    assert last.tokens == (26, 5, 0)
    assert last.finish_reason == "success"


def test_stream_yields_text_chunks_as_they_arrive(serve: Any) -> None:
    server = serve([Reply.text("one two three")])
    chat = make_chat(server)
    chunks = list(chat.stream("Count"))
    assert chunks == ["one ", "two ", "three"]


def test_stream_content_all_yields_requests_and_results_in_order(serve: Any) -> None:
    server = serve(script()[:2])
    chat = make_chat(server)
    chat.register_tool(get_date)
    items = list(chat.stream("What's the date?", content="all"))
    kinds = [type(i).__name__ for i in items if not isinstance(i, str)]
    assert kinds == ["ContentToolRequest", "ContentToolResult"]
    text = "".join(i for i in items if isinstance(i, str))
    assert text == "Let me check.\n\nIt is 2024-01-01."
    assert isinstance(items[3], ContentToolRequest)  # right after the text before it


def test_non_streaming_chat_takes_the_same_path(serve: Any) -> None:
    server = serve(script()[:2])
    chat = make_chat(server)
    chat.register_tool(get_date)
    response = chat.chat("What's the date?", stream=False, echo="none")
    assert str(response) == "Let me check.\n\nIt is 2024-01-01."
    assert server.message_requests()[0]["stream"] is False


async def test_chat_async_runs_tools(serve: Any) -> None:
    server = serve(script()[:2])
    chat = make_chat(server)
    chat.register_tool(get_date)
    response = await chat.chat_async("What's the date?", echo="none")
    assert str(response).endswith("It is 2024-01-01.")


async def test_stream_async_yields_chunks(serve: Any) -> None:
    server = serve([Reply.text("a b")])
    chat = make_chat(server)
    chunks = [c async for c in await chat.stream_async("Hi")]
    assert chunks == ["a ", "b"]


def test_async_tools_work_in_a_sync_chat(serve: Any) -> None:
    async def slow_date() -> str:
        """Gets the date, slowly."""
        await asyncio.sleep(0.01)
        return "2024-01-01"

    server = serve([Reply.tool_call("slow_date", {}), Reply.text("done")])
    chat = make_chat(server)
    chat.register_tool(slow_date)
    chat.chat("date?", echo="none")
    assert chat.get_turns()[2].tool_results[0].value == "2024-01-01"


def _run_verb(verb: str, serve: Any) -> str:
    server = serve(script())
    chat = make_chat(server)
    chat.register_tool(get_date)
    chat.register_tool(add)
    for prompt in ("What's the date?", "Add things"):
        if verb == "chat":
            chat.chat(prompt, echo="none")
        elif verb == "stream":
            list(chat.stream(prompt, content="all"))
        elif verb == "chat_async":
            asyncio.run(chat.chat_async(prompt, echo="none"))
        else:

            async def consume(p: str) -> None:
                async for _ in await chat.stream_async(p, content="all"):
                    pass

            asyncio.run(consume(prompt))
    return to_json(chat.get_turns())


def test_all_four_verbs_give_identical_histories(serve: Any) -> None:
    histories = {
        verb: _run_verb(verb, serve) for verb in ("chat", "stream", "chat_async", "stream_async")
    }
    assert len(set(histories.values())) == 1, histories
    assert "toolu_0003" in histories["chat"]


def test_string_arguments_are_coerced_to_the_declared_type(serve: Any) -> None:
    server = serve(script()[2:])
    chat = make_chat(server)
    chat.register_tool(add)
    chat.chat("Add", echo="none")
    results = chat.get_turns()[2].tool_results
    assert [r.value for r in results] == [3, 7]


def test_parallel_results_go_back_in_one_message_in_call_order(serve: Any) -> None:
    server = serve(script()[2:])
    chat = make_chat(server)
    chat.register_tool(add)
    chat.chat("Add", echo="none")
    last = server.message_requests()[1]["messages"][-1]
    assert [b["tool_use_id"] for b in last["content"]] == ["toolu_0001", "toolu_0002"]
    assert [b["content"] for b in last["content"]] == ["3", "7"]


def test_get_last_turn_by_role(serve: Any) -> None:
    server = serve([Reply.text("Hi")])
    chat = make_chat(server, system_prompt="Be terse.")
    chat.chat("Hello", echo="none")
    user = chat.get_last_turn(role="user")
    system = chat.get_last_turn(role="system")
    assert user is not None and user.text == "Hello"
    assert system is not None and system.text == "Be terse."


def test_set_turns_seeds_the_conversation(serve: Any) -> None:
    server = serve([Reply.text("Blue.")])
    chat = make_chat(server)
    chat.set_turns([UserTurn("My favourite colour is blue."), AssistantTurn("Noted.")])
    chat.chat("What is it?", echo="none")
    messages = server.message_requests()[0]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [{"type": "text", "text": "Noted."}]


def test_system_prompt_goes_first_with_cache_control(serve: Any) -> None:
    server = serve([Reply.text("ok")])
    chat = make_chat(server, system_prompt="Be terse.")
    chat.chat("Hi", echo="none")
    assert server.message_requests()[0]["system"] == [
        {"type": "text", "text": "Be terse.", "cache_control": {"type": "ephemeral", "ttl": "5m"}}
    ]


def test_cache_none_sends_no_cache_control(serve: Any) -> None:
    server = serve([Reply.text("ok")])
    chat = make_chat(server, system_prompt="Be terse.", cache="none")
    chat.chat("Hi", echo="none")
    assert "cache_control" not in str(server.message_requests()[0])


def test_per_call_kwargs_reach_the_request(serve: Any) -> None:
    server = serve([Reply.text("ok")])
    chat = make_chat(server)
    chat.chat("Hi", echo="none", kwargs={"temperature": 0.2})
    assert server.message_requests()[0]["temperature"] == 0.2


def test_content_objects_are_accepted_as_prompt(serve: Any) -> None:
    server = serve([Reply.text("ok")])
    chat = make_chat(server)
    chat.chat(ContentText("Hi"), "there", echo="none")
    content = server.message_requests()[0]["messages"][0]["content"]
    assert [b["text"] for b in content] == ["Hi", "there"]


def test_token_usage_sums_the_conversation(serve: Any) -> None:
    server = serve([Reply.text("a").with_usage(input_tokens=10, output_tokens=2)] * 2)
    chat = make_chat(server)
    chat.chat("one", echo="none")
    chat.chat("two", echo="none")
    assert chat.token_usage().input == 20 and chat.token_usage().output == 4


def test_unknown_option_is_a_clear_error(serve: Any) -> None:
    server = serve([])
    chat = make_chat(server)
    with pytest.raises(TypeError, match="unknown option"):
        chat.chat("Hi", echo="none", max_tool_round=3)


def test_a_list_in_the_prompt_sends_each_item_as_its_own_content(serve: Any) -> None:
    server = serve([Reply.text("ok")])
    chat = make_chat(server)
    chat.chat(["text one", "text two"], "question", echo="none")
    sent = server.message_requests()[-1]["messages"][-1]["content"]
    assert [b["text"] for b in sent] == ["text one", "text two", "question"]


def test_a_prompt_part_that_is_neither_text_nor_content_is_refused_clearly(serve: Any) -> None:
    server = serve([Reply.text("ok")])
    chat = make_chat(server)
    with pytest.raises(TypeError, match="not int"):
        chat.chat(["text one", 42], echo="none")
    assert server.message_requests() == [] and chat.get_turns() == []
