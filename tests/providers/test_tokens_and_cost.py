"""Tokens and cost as chatlas reports them: the (input, output, cached) triple, get_tokens()'s
dicts, get_cost() from a price table, and cost in token_usage()."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from chatlas_like import (
    AssistantTurn,
    Usage,
    UserTurn,
    set_token_price,
    token_usage,
)
from chatlas_like._observe.tokens import reset_token_usage
from chatlas_like.providers import _prices  # pyright: ignore[reportPrivateUsage]
from chatlas_like.providers._prices import PRICES_TAKEN, get_token_price
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat

HAIKU = "claude-haiku-4-5"
CACHED = Reply.text("Hello!").with_usage(
    input_tokens=20, output_tokens=15, cache_creation_input_tokens=100, cache_read_input_tokens=50
)


@pytest.fixture(autouse=True)
def _own_prices(monkeypatch: pytest.MonkeyPatch) -> None:
    """Prices set by a test stay in that test."""
    monkeypatch.setattr(_prices, "_custom", {})
    monkeypatch.setattr(_prices, "_resolved", {})


def test_a_turns_tokens_count_cache_writes_as_input_at_a_quarter_more(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([CACHED]))
    chat.chat("Hi", echo="none")
    last = chat.get_last_turn()
    assert last is not None
    assert last.tokens == (20 + 125, 15, 50)
    assert last.usage == Usage(input=20, output=15, cache_read=50, cache_creation=100)


def test_with_the_one_hour_cache_a_write_counts_twice(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([CACHED]), cache="1h")
    chat.chat("Hi", echo="none")
    last = chat.get_last_turn()
    assert last is not None and last.tokens == (20 + 200, 15, 50)


def test_tokens_given_by_hand_must_be_chatlas_three() -> None:
    assert AssistantTurn("x", tokens=[1, 2, 3]).tokens == (1, 2, 3)
    with pytest.raises(ValueError, match="three counts"):
        AssistantTurn("x", tokens=(1, 2, 3, 4))


def test_get_tokens_reports_each_turn_as_chatlas_does(serve: Callable[..., LoopbackServer]) -> None:
    server = serve(
        [
            Reply.text("One").with_usage(input_tokens=12, output_tokens=5),
            Reply.text("Two").with_usage(
                input_tokens=30, output_tokens=4, cache_read_input_tokens=8
            ),
        ]
    )
    chat = make_chat(server)
    chat.chat("First", echo="none")
    chat.chat("Second", echo="none")
    assert chat.get_tokens() == [
        {"role": "user", "tokens": 12, "tokens_cached": 0, "tokens_total": 12},
        {"role": "assistant", "tokens": 5, "tokens_cached": 0, "tokens_total": 5},
        # new input: all sent, less the first exchange (12 + 5 + 0)
        {"role": "user", "tokens": 13, "tokens_cached": 8, "tokens_total": 30},
        {"role": "assistant", "tokens": 4, "tokens_cached": 0, "tokens_total": 4},
    ]


def test_get_tokens_is_empty_before_the_first_answer(serve: Callable[..., LoopbackServer]) -> None:
    assert make_chat(serve([])).get_tokens() == []


def test_get_tokens_refuses_a_hand_made_history_without_counts(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([]))
    chat.set_turns([UserTurn("Hi"), AssistantTurn("Hello")])
    with pytest.raises(ValueError, match="token counts"):
        chat.get_tokens()


def test_get_cost_sums_every_answer_at_the_models_price(
    serve: Callable[..., LoopbackServer],
) -> None:
    server = serve([Reply.text("a").with_usage(input_tokens=1000, output_tokens=100)] * 2)
    chat = make_chat(server, model=HAIKU)
    chat.chat("One", echo="none")
    chat.chat("Two", echo="none")
    # Haiku 4.5: $1 in, $5 out per million tokens
    assert chat.get_cost() == pytest.approx(2 * (1000 * 1 + 100 * 5) / 1e6)
    assert chat.get_cost(include="last") == pytest.approx((1000 * 1 + 100 * 5) / 1e6)


def test_each_answer_carries_its_cost(serve: Callable[..., LoopbackServer]) -> None:
    chat = make_chat(serve([CACHED]), model=HAIKU)
    chat.chat("Hi", echo="none")
    last = chat.get_last_turn()
    assert last is not None and last.cost == pytest.approx((145 * 1 + 15 * 5 + 50 * 0.1) / 1e6)


def test_get_cost_with_token_price_uses_those_prices(serve: Callable[..., LoopbackServer]) -> None:
    chat = make_chat(serve([CACHED]), model=HAIKU)
    chat.chat("Hi", echo="none")
    assert chat.get_cost(token_price=(2.0, 10.0, 1.0)) == pytest.approx(
        (145 * 2 + 15 * 10 + 50 * 1) / 1e6
    )


def test_get_cost_of_a_model_without_a_price_says_how_to_give_one(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([Reply.text("a")]), model="claude-unreleased-9")
    chat.chat("Hi", echo="none")
    with pytest.raises(KeyError, match="token_price"):
        chat.get_cost()


def test_set_token_price_prices_a_model_the_table_lacks(
    serve: Callable[..., LoopbackServer],
) -> None:
    set_token_price("claude-unreleased-9", input=4.0, output=8.0, cached_input=0.4)
    server = serve([Reply.text("a").with_usage(input_tokens=1000, output_tokens=100)])
    chat = make_chat(server, model="claude-unreleased-9")
    chat.chat("Hi", echo="none")
    assert chat.get_cost() == pytest.approx((1000 * 4 + 100 * 8) / 1e6)


def test_get_cost_of_a_chat_without_answers_is_zero(serve: Callable[..., LoopbackServer]) -> None:
    assert make_chat(serve([])).get_cost() == 0.0


def test_get_cost_refuses_an_unknown_include(serve: Callable[..., LoopbackServer]) -> None:
    with pytest.raises(ValueError, match="'all' or 'last'"):
        make_chat(serve([])).get_cost(include="most")  # pyright: ignore[reportArgumentType]


def test_a_dated_model_id_costs_what_its_model_does() -> None:
    assert get_token_price("claude-haiku-4-5-20251001") == get_token_price(HAIKU)
    assert get_token_price("claude-unreleased-9") is None


def test_the_price_table_says_when_it_was_taken() -> None:
    year, month, day = (int(p) for p in PRICES_TAKEN.split("-"))
    assert year >= 2026 and 1 <= month <= 12 and 1 <= day <= 31


def test_token_usage_reports_chatlas_keys_and_the_cost_per_model(
    serve: Callable[..., LoopbackServer],
) -> None:
    reset_token_usage()
    chat = make_chat(serve([CACHED, CACHED]), model=HAIKU)
    chat.chat("One", echo="none")
    chat.chat("Two", echo="none")
    assert token_usage() == [
        {
            "name": "Anthropic",
            "model": HAIKU,
            "input": 2 * 145,
            "output": 2 * 15,
            "cached_input": 2 * 50,
            "cache_creation": 2 * 100,
            "cost": pytest.approx(2 * (145 * 1 + 15 * 5 + 50 * 0.1) / 1e6),
        }
    ]


def test_chat_token_usage_keeps_all_four_counts(serve: Callable[..., LoopbackServer]) -> None:
    chat = make_chat(serve([CACHED, CACHED]))
    chat.chat("One", echo="none")
    chat.chat("Two", echo="none")
    assert chat.token_usage() == Usage(input=40, output=30, cache_read=100, cache_creation=200)


def test_turns_saved_before_the_triple_load_with_chatlas_tokens() -> None:
    from chatlas_like import from_json

    version_1 = {
        "format": "chatlas_like.turns",
        "version": 1,
        "turns": [
            {"role": "user", "contents": [{"type": "text", "text": "Hi", "extra": None}]},
            {
                "role": "assistant",
                "contents": [{"type": "text", "text": "Hello", "extra": None}],
                "tokens": [20, 15, 50, 100],
                "finish_reason": "end_turn",
                "completion": {"id": "msg_1", "model": "claude-haiku-4-5"},
            },
        ],
    }
    answer = from_json(json.dumps(version_1))[1]
    assert answer.tokens == (145, 15, 50)
    assert answer.usage == Usage(input=20, output=15, cache_read=50, cache_creation=100)
    assert answer.finish_reason == "success"
