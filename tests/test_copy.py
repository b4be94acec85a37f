"""A copied chat (what each Shiny session gets) sends exactly what the original would."""

from __future__ import annotations

from typing import Any

from chatlas_like import AssistantTurn, ContentToolRequest, ContentToolResult, UserTurn
from chatlas_like.testing import Reply

from .conftest import make_chat


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
