"""Hostile input, tool-use ids: a model that repeats an id cannot break the chat for good.

Two calls with one id in one turn (or an id the conversation already used) would make
every later request fail with a 400, as the real API refuses repeated ``tool_use``
ids. The repeat gets an id of its own and is answered as refused (a duplicate, not
run); the first runs. The loopback server's validator refuses what the API refuses, so
these tests prove the next request is valid.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from chatlas_like import Chat
from chatlas_like.testing import LoopbackServer, Reply
from chatlas_like.testing._validator import Rejection, validate_request

from ..conftest import make_chat

runs: list[str] = []


def pay(invoice: str) -> str:
    """Pays an invoice (a side effect that must not happen twice).

    Parameters
    ----------
    invoice
        The invoice number.
    """
    runs.append(invoice)
    return f"paid {invoice}"


def call(invoice: str, id: str = "toolu_same") -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": "pay", "input": {"invoice": invoice}}


def paying_chat(serve: Callable[..., LoopbackServer], *replies: Reply) -> tuple[Chat, Any]:
    server = serve([*replies, Reply.text("Done."), Reply.text("Still here.")])
    chat = make_chat(server)
    chat.register_tool(pay)
    runs.clear()
    return chat, server


def test_the_validator_refuses_repeated_tool_use_ids_as_the_api_does() -> None:
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "Pay"},
            {"role": "assistant", "content": [call("A"), call("B")]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_same", "content": "x"},
                ],
            },
        ],
    }
    with pytest.raises(Rejection, match="`tool_use` ids must be unique") as caught:
        validate_request(body, 100)
    assert caught.value.status == 400 and "messages.1.content.1" in str(caught.value)


def test_an_id_repeated_from_an_earlier_turn_is_refused_by_the_validator() -> None:
    result = {"type": "tool_result", "tool_use_id": "toolu_same", "content": "x"}
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "Pay"},
            {"role": "assistant", "content": [call("A")]},
            {"role": "user", "content": [result]},
            {"role": "assistant", "content": [call("B")]},
            {"role": "user", "content": [result]},
        ],
    }
    with pytest.raises(Rejection, match=r"messages\.3\.content\.0: `tool_use` ids must be unique"):
        validate_request(body, 100)


def test_two_calls_with_one_id_run_once_and_the_chat_goes_on(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat, server = paying_chat(serve, Reply.blocks_of(call("A"), call("B"), stop_reason="tool_use"))
    chat.chat("Pay both", echo="none")
    assert runs == ["A"]
    assert str(chat.chat("Anything else?", echo="none")) == "Still here."
    assert [r.response_status for r in server.requests if r.path == "/v1/messages"] == [200] * 3


def test_the_repeated_call_is_answered_as_a_refused_duplicate(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat, _ = paying_chat(serve, Reply.blocks_of(call("A"), call("B"), stop_reason="tool_use"))
    chat.chat("Pay both", echo="none")
    first, second = chat.get_turns()[2].tool_results
    assert (first.outcome, first.id) == ("success", "toolu_same")
    assert second.outcome == "refused" and second.id != "toolu_same"
    assert "repeated the id" in second.get_model_value()
    assert second.request is not None and second.request.arguments == {"invoice": "B"}


def test_the_ids_sent_back_are_unique_and_each_answered_once(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat, server = paying_chat(serve, Reply.blocks_of(call("A"), call("B"), stop_reason="tool_use"))
    chat.chat("Pay both", echo="none")
    messages = server.message_requests()[1]["messages"]
    uses = [b["id"] for b in messages[1]["content"] if b["type"] == "tool_use"]
    answers = [b["tool_use_id"] for b in messages[2]["content"] if b["type"] == "tool_result"]
    assert len(set(uses)) == 2 and answers == uses


def test_an_id_the_conversation_already_used_is_refused_as_a_duplicate(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat, server = paying_chat(
        serve,
        Reply.blocks_of(call("A"), stop_reason="tool_use"),
        Reply.blocks_of(call("B"), stop_reason="tool_use"),
    )
    chat.chat("Pay", echo="none")
    assert runs == ["A"]
    (repeat,) = chat.get_turns()[4].tool_results
    assert repeat.outcome == "refused" and repeat.id != "toolu_same"
    assert all(r.response_status == 200 for r in server.requests if r.path == "/v1/messages")


def test_the_stream_shows_the_request_with_the_id_the_history_keeps(
    serve: Callable[..., LoopbackServer],
) -> None:
    from chatlas_like import ContentToolRequest

    chat, _ = paying_chat(serve, Reply.blocks_of(call("A"), call("B"), stop_reason="tool_use"))
    shown = [
        item.id
        for item in chat.stream("Pay both", content="all")
        if isinstance(item, ContentToolRequest)
    ]
    kept = [r.id for r in chat.get_turns()[1].tool_requests]
    assert shown == kept
