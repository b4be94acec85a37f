"""A copied chat (what each Shiny session gets) sends exactly what the original would."""

from __future__ import annotations

import copy
from typing import Any

from chatlas_like import AssistantTurn, ContentToolRequest, ContentToolResult, UserTurn
from chatlas_like.testing import Reply

from ..conftest import make_chat


def test_a_copied_chat_sends_results_whose_model_value_was_not_computed_yet(serve: Any) -> None:
    server = serve([Reply.text("OK."), Reply.text("OK.")])
    request = ContentToolRequest(id="toolu_9", name="weather", arguments={"city": "Oslo"})
    turns = [
        UserTurn("Weather in Oslo?"),
        AssistantTurn([request]),
        UserTurn([ContentToolResult(value="snow", request=request)]),
        AssistantTurn("It is snowing."),
    ]
    original = make_chat(server)
    original.set_turns(turns)
    copied = original.copy()
    copied.chat("And tomorrow?", echo="none")
    original.chat("And tomorrow?", echo="none")
    sent_by_copy, sent_by_original = server.message_requests()
    assert sent_by_copy["messages"][2]["content"][0]["content"] == "snow"
    assert sent_by_copy["messages"] == sent_by_original["messages"]


def test_deepcopy_gives_a_chat_with_its_own_history_and_the_same_provider(serve: Any) -> None:
    server = serve([Reply.text("Hello."), Reply.text("Again.")])
    original = make_chat(server)
    original.chat("Hi", echo="none")
    copied = copy.deepcopy(original)
    copied.chat("More", echo="none")
    assert len(original.get_turns()) == 2 and len(copied.get_turns()) == 4
    assert copied.provider is original.provider
    assert copied.get_turns()[0] is not original.get_turns()[0]
