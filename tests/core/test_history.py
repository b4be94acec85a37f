"""History.request_ids: the conversation's tool-request ids, kept up to date as turns are
added, walked again when the history changes in place."""

from __future__ import annotations

from chatlas_like import AssistantTurn, ContentToolRequest, ContentToolResult, UserTurn
from chatlas_like._core.history import History


def asks(*ids: str) -> AssistantTurn:
    return AssistantTurn([ContentToolRequest(id=i, name="step", arguments={}) for i in ids])


def answers(turn: AssistantTurn) -> UserTurn:
    return UserTurn([ContentToolResult(value="ok", request=r) for r in turn.tool_requests])


def test_the_ids_of_turns_added_since_the_last_call_are_included() -> None:
    history = History([UserTurn("go"), first := asks("a", "b"), answers(first)])
    assert history.request_ids() == {"a", "b"}
    token = history.claim()
    history.append(second := asks("c"), token)
    history.append(answers(second), token)
    assert history.request_ids() == {"a", "b", "c"}


def test_a_removed_turn_takes_its_ids_with_it() -> None:
    history = History([UserTurn("go"), asked := asks("a")])
    assert history.request_ids() == {"a"}
    history.turns.remove(asked)
    history.turns.append(asks("b"))
    assert history.request_ids() == {"b"}


def test_a_turn_inserted_before_the_last_one_seen_is_counted() -> None:
    history = History([UserTurn("go"), asks("a"), UserTurn("more")])
    assert history.request_ids() == {"a"}
    history.turns.insert(1, asks("z"))
    assert history.request_ids() == {"a", "z"}


def test_replaced_turns_are_walked_again_even_when_they_end_alike() -> None:
    last = UserTurn("same end")
    history = History([asks("a"), last])
    assert history.request_ids() == {"a"}
    history.replace([asks("b"), last])
    assert history.request_ids() == {"b"}
