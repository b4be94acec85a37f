"""Structured data through the real SDK: the four verbs, nested models, the forced-tool path."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import orjson
import pytest
from pydantic import BaseModel, Field, ValidationError

from chatlas_like import ContentJson, to_json
from chatlas_like.providers._anthropic.schema import closed_schema, supports_structured_outputs
from chatlas_like.testing import Reply

from ..conftest import make_chat

OLD_MODEL = "claude-sonnet-4-20250514"  # no structured outputs: the forced tool is used


class Address(BaseModel):
    city: str
    country: str = "France"


class Person(BaseModel):
    """A person in the text."""

    name: str
    age: int = Field(ge=0, le=150, description="Age in years")
    address: Address


class People(BaseModel):
    people: list[Person]


PEOPLE = {
    "people": [
        {"name": "Ada", "age": 36, "address": {"city": "London", "country": "UK"}},
        {"name": "Marie", "age": 66, "address": {"city": "Paris", "country": "France"}},
    ]
}


def answer_json(body: Mapping[str, Any]) -> Reply:
    assert body["output_config"]["format"]["type"] == "json_schema"
    return Reply.text(orjson.dumps(PEOPLE).decode(), chunks=7)


def test_chat_structured_returns_nested_models_and_lists_of_models(serve: Any) -> None:
    server = serve(answer_json)
    people = make_chat(server).chat_structured("Ada and Marie...", data_model=People)
    assert people == People.model_validate(PEOPLE)
    assert people.people[1].address.city == "Paris"


def test_the_answer_is_kept_in_the_history_as_json(serve: Any) -> None:
    server = serve(answer_json)
    chat = make_chat(server)
    chat.chat_structured("Ada and Marie...", data_model=People)
    last = chat.get_last_turn()
    assert last is not None
    assert last.contents == [ContentJson(PEOPLE)]


def test_every_object_in_the_sent_schema_is_closed(serve: Any) -> None:
    server = serve(answer_json)
    make_chat(server).chat_structured("Ada and Marie...", data_model=People)
    schema = server.message_requests()[0]["output_config"]["format"]["schema"]
    assert schema["additionalProperties"] is False
    assert schema["$defs"]["Person"]["additionalProperties"] is False
    assert schema["$defs"]["Address"]["additionalProperties"] is False
    assert schema["properties"]["people"]["items"] == {"$ref": "#/$defs/Person"}


def test_constraints_the_api_does_not_enforce_move_into_the_description() -> None:
    age = closed_schema(Person)["properties"]["age"]
    assert "minimum" not in age and "maximum" not in age
    assert age["description"] == "Age in years\n\n{maximum: 150, minimum: 0}"


def test_the_json_is_sent_back_compactly_on_the_next_turn(serve: Any) -> None:
    server = serve([Reply.text(orjson.dumps(PEOPLE).decode()), Reply.text("Two people.")])
    chat = make_chat(server)
    chat.chat_structured("Ada and Marie...", data_model=People)
    chat.chat("How many?", echo="none")
    sent = server.message_requests()[1]["messages"][1]
    assert sent == {
        "role": "assistant",
        "content": [{"type": "text", "text": orjson.dumps(PEOPLE).decode()}],
    }
    assert "output_config" not in server.message_requests()[1]


def test_stream_with_a_data_model_yields_the_json_as_text(serve: Any) -> None:
    server = serve(answer_json)
    chunks = list(make_chat(server).stream("Ada and Marie...", data_model=People))
    assert len(chunks) == 7
    assert People.model_validate_json("".join(chunks)) == People.model_validate(PEOPLE)


def test_stream_content_all_also_yields_the_finished_json(serve: Any) -> None:
    server = serve(answer_json)
    items = list(make_chat(server).stream("...", data_model=People, content="all"))
    assert items[-1] == ContentJson(PEOPLE)


def test_the_four_verbs_give_the_same_structured_history(serve: Any) -> None:
    def history(verb: str) -> str:
        server = serve(answer_json)
        chat = make_chat(server)
        if verb == "chat_structured":
            chat.chat_structured("Ada and Marie...", data_model=People, stream=True)
        elif verb == "chat_structured_async":
            asyncio.run(
                chat.chat_structured_async("Ada and Marie...", data_model=People, stream=True)
            )
        elif verb == "stream":
            list(chat.stream("Ada and Marie...", data_model=People))
        else:

            async def consume() -> None:
                async for _ in await chat.stream_async("Ada and Marie...", data_model=People):
                    pass

            asyncio.run(consume())
        return to_json(chat.get_turns())

    verbs = ("chat_structured", "chat_structured_async", "stream", "stream_async")
    histories = {verb: history(verb) for verb in verbs}
    assert len(set(histories.values())) == 1, histories


def test_chat_structured_async_returns_the_model(serve: Any) -> None:
    server = serve(answer_json)
    chat = make_chat(server)
    people = asyncio.run(chat.chat_structured_async("Ada and Marie...", data_model=People))
    assert people.people[0].name == "Ada"


def test_a_model_without_structured_outputs_answers_through_a_forced_tool(serve: Any) -> None:
    server = serve([Reply.tool_call("_structured_tool_call", PEOPLE)])
    chat = make_chat(server, model=OLD_MODEL)
    assert chat.chat_structured("Ada and Marie...", data_model=People).people[0].age == 36
    body = server.message_requests()[0]
    assert "output_config" not in body
    assert body["tool_choice"] == {"type": "tool", "name": "_structured_tool_call"}
    assert body["tools"][-1]["input_schema"] == closed_schema(People)
    assert chat.get_turns()[-1].contents == [ContentJson(PEOPLE)]


def test_the_forced_tool_answer_streams_as_text_and_is_never_run(serve: Any) -> None:
    server = serve([Reply.tool_call("_structured_tool_call", PEOPLE), Reply.text("Done.")])
    chat = make_chat(server, model=OLD_MODEL)
    chunks = list(chat.stream("Ada and Marie...", data_model=People))
    assert orjson.loads("".join(chunks)) == PEOPLE
    assert len(server.message_requests()) == 1  # no tool result round
    chat.chat("Thanks", echo="none")  # the history holds no unanswered tool call
    assert server.message_requests()[1]["messages"][1]["content"][0]["type"] == "text"


def test_structured_output_mode_tool_forces_the_tool_on_a_new_model(serve: Any) -> None:
    server = serve([Reply.tool_call("_structured_tool_call", PEOPLE)])
    chat = make_chat(server, structured_output_mode="tool")
    chat.chat_structured("...", data_model=People)
    assert "tool_choice" in server.message_requests()[0]


def test_an_answer_that_is_not_json_raises_a_clear_error(serve: Any) -> None:
    server = serve([Reply.text("I cannot do that.")])
    chat = make_chat(server)
    with pytest.raises(ValueError, match=r"0 structured results.*I cannot do that"):
        chat.chat_structured("...", data_model=People)


def test_data_that_does_not_validate_raises_a_validation_error(serve: Any) -> None:
    server = serve([Reply.text('{"people": [{"name": "Ada"}]}')])
    with pytest.raises(ValidationError):
        make_chat(server).chat_structured("...", data_model=People)


def test_a_data_model_must_be_a_pydantic_model(serve: Any) -> None:
    server = serve([])
    with pytest.raises(TypeError, match="pydantic BaseModel"):
        make_chat(server).chat_structured("...", data_model=dict)  # pyright: ignore[reportArgumentType]
    assert server.message_requests() == []


def test_a_mapping_field_is_refused_naming_the_field_not_closed_to_an_empty_object(
    serve: Any,
) -> None:
    from pydantic import BaseModel

    class Team(BaseModel):
        name: str
        scores: dict[str, int]

    server = serve([])
    chat = make_chat(server)
    with pytest.raises(TypeError, match=r"Team\.scores is a mapping .* list of key/value models"):
        chat.chat_structured("Ada 3, Alan 5", data_model=Team)
    assert server.message_requests() == [] and chat.get_turns() == []


def test_an_untyped_mapping_field_is_refused_too() -> None:
    from typing import Any as AnyValue

    from pydantic import BaseModel

    from chatlas_like.providers._anthropic.schema import closed_schema

    class Settings(BaseModel):
        options: dict[str, AnyValue]

    with pytest.raises(TypeError, match=r"Settings\.options is a mapping"):
        closed_schema(Settings)


def test_models_from_claude_4_5_on_have_structured_outputs() -> None:
    assert supports_structured_outputs("claude-haiku-4-5-20251001")
    assert supports_structured_outputs("claude-opus-4-6")
    assert supports_structured_outputs("claude-sonnet-5")
    assert not supports_structured_outputs("claude-sonnet-4-20250514")
    assert not supports_structured_outputs("claude-3-5-haiku-20241022")
