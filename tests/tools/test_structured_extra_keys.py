"""A data model that allows extra keys (extra="allow") is never sent as a closed schema."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from chatlas_like.testing import Reply

from ..conftest import make_chat


class Tags(BaseModel):
    model_config = ConfigDict(extra="allow")

    title: str


class Article(BaseModel):
    headline: str
    tags: Tags


ANSWER = {"headline": "Rain", "tags": {"title": "weather", "region": "north", "severity": 2}}


def test_an_open_model_is_asked_for_through_a_tool_whose_schema_stays_open(serve: Any) -> None:
    server = serve([Reply.tool_call("_structured_tool_call", ANSWER)])
    article = make_chat(server).chat_structured("Rain in the north", data_model=Article)
    (body,) = server.message_requests()
    assert "output_config" not in body
    (tool,) = body["tools"]
    schema = tool["input_schema"]
    assert schema["additionalProperties"] is False  # Article itself is closed
    assert schema["$defs"]["Tags"]["additionalProperties"] is True
    assert article.tags.model_extra == {"region": "north", "severity": 2}


def test_asking_natively_for_an_open_model_is_a_type_error_before_any_request(
    serve: Any,
) -> None:
    server = serve([Reply.text("{}")])
    chat = make_chat(server, structured_output_mode="native")
    with pytest.raises(TypeError, match=r"Tags allows extra keys \(extra='allow'\)"):
        chat.chat_structured("Rain in the north", data_model=Article)
    assert server.message_requests() == []
    assert chat.get_turns() == []


def test_a_closed_model_is_still_asked_for_natively(serve: Any) -> None:
    class Closed(BaseModel):
        headline: str

    server = serve([Reply.text('{"headline": "Rain"}')])
    make_chat(server).chat_structured("Rain", data_model=Closed)
    (body,) = server.message_requests()
    assert body["output_config"]["format"]["schema"]["additionalProperties"] is False
