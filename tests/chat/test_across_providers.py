"""One scripted tool-calling conversation on Anthropic, OpenAI's Responses API and OpenAI's
Chat Completions: the same outcomes, store records, expansion, truncation and echo on
each, through each provider's real SDK and the loopback server speaking its wire."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from chatlas_like import (
    Chat,
    ChatAnthropic,
    ChatOpenAI,
    ChatOpenAICompletions,
    ContentToolResult,
    ToolRejectError,
    expand,
    open_store,
)
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import TEST_KEY, TEST_MODEL

PROVIDERS: dict[str, Callable[..., Chat]] = {
    "anthropic": lambda server, **kw: ChatAnthropic(
        base_url=server.url, api_key=TEST_KEY, model=TEST_MODEL, **kw
    ),
    "responses": lambda server, **kw: ChatOpenAI(
        base_url=server.openai_url, api_key=TEST_KEY, model="gpt-4.1", **kw
    ),
    "completions": lambda server, **kw: ChatOpenAICompletions(
        base_url=server.openai_url, api_key=TEST_KEY, model="gpt-4.1", **kw
    ),
}


def lookup(card: int) -> dict[str, Any]:
    """Looks a card up."""
    return {"card": card, "valid": True}


def broken() -> str:
    """Always fails."""
    raise RuntimeError("the ledger is offline")


def refunds() -> Any:
    """Loads the refund policy."""
    return expand(
        "Refunds within 30 days.",
        [{"role": "user", "content": "<policy>Refunds within 30 days.</policy>"}],
        result_content="The policy is in the conversation below.",
    )


def huge() -> str:
    """Returns a very long report."""
    return "é" * 5_000


def guarded() -> str:
    """A call the user turns down."""
    raise ToolRejectError("not today")


CALLS = [
    ("lookup", {"card": 42}),
    ("broken", {}),
    ("nowhere", {}),
    ("refunds", {}),
    ("huge", {}),
    ("lookup", '{"card": '),
    ("guarded", {}),
]


@pytest.fixture(params=list(PROVIDERS))
def conversation(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Chat, Any, str]]:
    """A chat on each provider that asked for the seven calls and answered; its store and
    what its echo printed."""

    with LoopbackServer([Reply.tool_calls(CALLS), Reply.text("All done.")]) as server:
        store = open_store(tmp_path / "results.sqlite")
        chat = PROVIDERS[request.param](
            server, store=store, tenant_id="acme", max_result_bytes=1_000
        )
        for tool in (lookup, broken, refunds, huge, guarded):
            chat.register_tool(tool)
        output = io.StringIO()
        chat.set_echo_options(rich_console={"file": output, "width": 120, "force_terminal": False})
        with pytest.warns(Warning, match="led to an error"):  # as chatlas warns
            chat.chat("Check card 42 and the rest.", echo="output")
        yield chat, store, output.getvalue()
        store.close()


def results(chat: Chat) -> list[ContentToolResult]:
    return [r for t in chat.get_turns() for r in t.tool_results]


def test_every_call_has_the_same_outcome_on_each_provider(conversation: Any) -> None:
    chat, _, _ = conversation
    assert [r.outcome for r in results(chat)] == [
        "success",
        "exception",
        "refused",
        "success",
        "success",
        "refused",
        "refused",
    ]
    assert str(chat.get_last_turn()) == "All done."


def test_the_model_reads_the_same_result_texts_on_each_provider(conversation: Any) -> None:
    chat, _, _ = conversation
    texts = [r.get_model_value() for r in results(chat)]
    assert texts[0] == '{"card":42,"valid":true}'
    assert texts[1] == "Tool call failed with error: 'the ledger is offline'"
    assert texts[2].startswith("Tool call failed with error: 'Unknown tool `nowhere`")
    assert texts[3] == "The policy is in the conversation below."
    assert "not valid JSON" in texts[5]


def test_a_result_over_the_limit_is_cut_in_utf8_bytes_on_each_provider(conversation: Any) -> None:
    chat, _, _ = conversation
    cut = results(chat)[4]
    assert cut.is_truncated
    assert cut.original_length == 10_000 and cut.stored_length is not None
    assert len(str(cut.get_model_value()).encode()) <= 1_000 + 400  # the cut and its notice


def test_the_expansion_is_inserted_before_the_next_request_on_each_provider(
    conversation: Any,
) -> None:
    chat, _, _ = conversation
    texts = [t.text for t in chat.get_turns()]
    assert any("<policy>Refunds within 30 days.</policy>" in text for text in texts)


def test_the_store_holds_the_same_records_on_each_provider(conversation: Any) -> None:
    chat, store, _ = conversation
    records = store.list("acme", chat.run_id)
    assert sorted(r.sequence for r in records) == list(range(1, 8))  # numbered as they finish
    by_call = {r.tool_call_id: r for r in records}
    kept = [by_call[r.request.id] for r in results(chat)]
    assert [r.is_error for r in kept] == [False, True, True, False, False, True, True]
    # The store keeps the long result whole (the model read it cut, and can page on).
    assert kept[4].result == "é" * 5_000 and not kept[4].is_truncated


def test_the_echo_shows_each_call_with_its_outcome_on_each_provider(conversation: Any) -> None:
    _, _, shown = conversation
    assert "lookup(card=42)" in shown
    assert "✖ exception broken()" in shown
    assert "All done." in shown
