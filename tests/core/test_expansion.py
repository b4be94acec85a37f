"""Message expansion through real conversations: inserted in order, once, only when valid."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from chatlas_like import (
    ExpansionError,
    ExpansionWarning,
    MessageExpansion,
    UserTurn,
    expand,
    from_json,
    to_json,
)
from chatlas_like.providers._anthropic.provider import NO_PREFILL_MODELS
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat

DOCUMENT = "Section 1. Refunds are due within 30 days.\nSection 2. Keep the receipt."


def load_policy() -> Any:
    """Loads the refund policy."""
    return expand(
        DOCUMENT,
        [
            {"role": "assistant", "content": "I loaded the refund policy; here it is."},
            {"role": "user", "content": f"<policy>\n{DOCUMENT}\n</policy>\nAnswer from it."},
        ],
        result_content="The policy is in the conversation below.",
    )


def converse(serve: Any, **chat_options: Any) -> tuple[Any, LoopbackServer]:
    server = serve([Reply.tool_call("load_policy", {}), Reply.text("30 days."), Reply.text("ok")])
    chat = make_chat(server, **chat_options)
    chat.register_tool(load_policy)
    return chat, server


def test_the_next_request_holds_the_messages_in_order_after_the_trimmed_result(serve: Any) -> None:
    chat, server = converse(serve)
    chat.chat("How long for refunds?", echo="none")
    messages = server.message_requests()[1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    result_block = messages[2]["content"][0]
    assert result_block["content"] == "The policy is in the conversation below."
    assert messages[3]["content"] == [
        {"type": "text", "text": "I loaded the refund policy; here it is."}
    ]
    assert messages[4]["content"][0]["text"].startswith("<policy>\nSection 1.")


def test_inserted_turns_are_ordinary_history_after_the_result_turn(serve: Any) -> None:
    chat, _ = converse(serve)
    chat.chat("How long for refunds?", echo="none")
    turns = chat.get_turns()
    assert [t.role for t in turns] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    result = turns[2].tool_results[0]
    assert result.message_expansion is None
    assert result.value == "The policy is in the conversation below."


def test_applying_twice_inserts_once(serve: Any) -> None:
    chat, server = converse(serve)
    chat.chat("How long for refunds?", echo="none")
    chat.chat("Thanks", echo="none")
    third = server.message_requests()[2]["messages"]
    assert sum("<policy>" in str(m) for m in third) == 1


def test_a_pending_expansion_applies_before_the_next_model_call(serve: Any) -> None:
    from chatlas_like import ContentToolResult

    chat, server = converse(serve)
    stream = chat.stream("How long?", content="all")
    assert any(isinstance(item, ContentToolResult) for item in stream)  # stops at the result
    stream.close()  # the run ends before another model call
    assert chat.get_turns()[-1].tool_results[0].message_expansion is not None
    chat.chat("How long?", echo="none")
    messages = server.message_requests()[-1]["messages"]
    assert sum("<policy>" in str(m) for m in messages) == 1
    assert messages[2]["content"][0]["content"] == "The policy is in the conversation below."


def test_stream_content_all_yields_each_inserted_turn_once(serve: Any) -> None:
    chat, _ = converse(serve)
    items = list(chat.stream("How long?", content="all"))
    inserted = [i for i in items if isinstance(i, UserTurn) or type(i).__name__ == "AssistantTurn"]
    assert [t.role for t in inserted] == ["assistant", "user"]


@pytest.mark.parametrize(
    ("role", "why"), [("system", "one system prompt"), ("tool", "against the call")]
)
def test_system_and_tool_roles_are_refused_where_the_expansion_is_built(
    role: str, why: str
) -> None:
    with pytest.raises(ExpansionError, match=f"role '{role}'.*{why}"):
        MessageExpansion([{"role": "user", "content": "ok"}, {"role": role, "content": "x"}])


def test_a_failed_result_cannot_carry_an_expansion() -> None:
    from chatlas_like import ContentToolResult

    with pytest.raises(ExpansionError, match="error result"):
        ContentToolResult(error="no", message_expansion=MessageExpansion([]))


def test_a_round_trip_through_json_drops_a_pending_expansion(serve: Any) -> None:
    from chatlas_like import ContentToolResult

    chat, _ = converse(serve)
    stream = chat.stream("How long?", content="all")
    assert any(isinstance(item, ContentToolResult) for item in stream)
    stream.close()
    assert chat.get_turns()[-1].tool_results[0].message_expansion is not None
    restored = from_json(to_json(chat.get_turns()))
    result = restored[-1].tool_results[0]
    assert result.message_expansion is None
    assert result.get_model_value() == DOCUMENT


def test_an_expansion_over_the_size_limit_sends_the_full_content_and_warns(serve: Any) -> None:
    chat, server = converse(serve, max_result_bytes=80)
    with pytest.warns(ExpansionWarning, match="load_policy.*over max_result_bytes=80"):
        chat.chat("How long?", echo="none")
    messages = server.message_requests()[1]["messages"]
    assert len(messages) == 3
    assert messages[2]["content"][0]["content"].startswith("Section 1.")


def test_a_trailing_assistant_message_is_not_applied_where_prefill_is_refused(serve: Any) -> None:
    def prefill() -> Any:
        """Ends with an assistant message."""
        return expand(DOCUMENT, [{"role": "assistant", "content": "The policy says"}])

    model = NO_PREFILL_MODELS[0]
    server = serve(
        [Reply.tool_call("prefill", {}), Reply.text("30 days.")],
        no_prefill_models=NO_PREFILL_MODELS,
    )
    chat = make_chat(server, model=model)
    chat.register_tool(prefill)
    with pytest.warns(ExpansionWarning, match="prefill"):
        chat.chat("How long?", echo="none")
    assert [r.response_status for r in server.requests] == [200, 200]
    assert server.message_requests()[1]["messages"][-1]["role"] == "user"


def test_a_trailing_assistant_message_is_a_prefill_where_the_model_accepts_it(serve: Any) -> None:
    def prefill() -> Any:
        """Ends with an assistant message."""
        return expand(DOCUMENT, [{"role": "assistant", "content": "The policy says"}])

    server = serve([Reply.tool_call("prefill", {}), Reply.text(" 30 days.")])
    chat = make_chat(server, model="claude-haiku-4-5")
    chat.register_tool(prefill)
    chat.chat("How long?", echo="none")
    assert server.message_requests()[1]["messages"][-1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "The policy says"}],
    }


def test_a_pending_server_tool_blocks_the_expansion_and_the_request_stays_valid(serve: Any) -> None:
    search = {"type": "server_tool_use", "name": "web_search", "input": {"query": "refund law"}}
    ask = {"type": "tool_use", "name": "load_policy", "input": {}}
    server = serve([Reply.blocks_of(search, ask, stop_reason="tool_use"), Reply.text("30 days.")])
    chat = make_chat(server)
    chat.register_tool(load_policy)
    with pytest.warns(ExpansionWarning, match="server tool `web_search`"):
        chat.chat("How long?", echo="none")
    assert [r.response_status for r in server.requests] == [200, 200]
    answer = server.message_requests()[1]["messages"][-1]["content"]
    assert [b["type"] for b in answer] == ["tool_result"]
    assert answer[0]["content"] == DOCUMENT


def history_via(verb: str, serve: Any) -> str:
    chat, _ = converse(serve)
    if verb == "chat":
        chat.chat("How long?", echo="none")
    elif verb == "stream":
        list(chat.stream("How long?", content="all"))
    elif verb == "chat_async":
        asyncio.run(chat.chat_async("How long?", echo="none"))
    else:

        async def consume() -> None:
            async for _ in await chat.stream_async("How long?", content="all"):
                pass

        asyncio.run(consume())
    return to_json(chat.get_turns())


def test_all_four_verbs_expand_identically(serve: Any) -> None:
    histories = {v: history_via(v, serve) for v in ("chat", "stream", "chat_async", "stream_async")}
    assert len(set(histories.values())) == 1


def test_a_result_content_with_no_form_sends_the_full_content_and_warns(serve: Any) -> None:
    class Pointer:
        """Has no JSON form."""

    def load() -> Any:
        """Loads a document."""
        return expand(
            {"doc": "policy"},
            [UserTurn("Follow it.")],
            result_content=Pointer(),
            model_format="json",
        )

    server = serve([Reply.tool_call("load", {}), Reply.text("Done."), Reply.text("ok")])
    chat = make_chat(server)
    chat.register_tool(load)
    with pytest.warns(ExpansionWarning, match="result_content has no form"):
        chat.chat("Go", echo="none")
    assert (
        server.message_requests()[1]["messages"][-1]["content"][0]["content"] == '{"doc":"policy"}'
    )
    assert str(chat.chat("Next", echo="none")) == "ok"
