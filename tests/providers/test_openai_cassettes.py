"""OpenAI's recorded exchanges replayed through ChatOpenAI (Responses) and
ChatOpenAICompletions, with the outcomes chatlas's own tests assert on them.

Each cassette (``../shared/fixtures/openai-recorded/``, read where it lies) is served in
order by the loopback server to the real ``openai`` SDK over a real socket; what the
client sent is checked by the API's rules as it arrives.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from chatlas_like import (
    AssistantTurn,
    Chat,
    ChatOpenAI,
    ChatOpenAICompletions,
    ContentToolRequest,
    ContentToolResult,
    UserTurn,
    content_document_file,
    content_image_file,
    content_image_url,
    content_pdf_file,
)
from chatlas_like.testing import CassetteReplay, LoopbackServer

pytestmark = pytest.mark.cassette

TERSE = "Be as terse as possible; no punctuation"
UPPERCASE = "Return very minimal output, AND ONLY USE UPPERCASE."
POOH = "What is the name of Winnie the Pooh's human friend?"
# A 1x1 red PNG: the recordings answer "red" whatever the image sent.
RED_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)
Maker = Callable[..., Chat]
APIS: dict[str, Maker] = {"responses": ChatOpenAI, "completions": ChatOpenAICompletions}


@pytest.fixture
def replay(
    openai_fixtures_dir: Path,
) -> Iterator[Callable[[str, str], tuple[Maker, CassetteReplay]]]:
    """``replay(api, name)``: a constructor pointed at a server replaying that cassette."""
    servers: list[LoopbackServer] = []

    def start(api: str, name: str) -> tuple[Maker, CassetteReplay]:
        cassette = CassetteReplay(openai_fixtures_dir / api / f"{name}.yaml")
        server = LoopbackServer(cassette).start()
        servers.append(server)

        def make(**kwargs: Any) -> Chat:
            return APIS[api](base_url=server.openai_url, api_key="test", **kwargs)

        return make, cassette

    yield start
    for server in servers:
        server.stop()


def tool_requests(chat: Chat) -> list[ContentToolRequest]:
    return [c for t in chat.get_turns() for c in t.contents if isinstance(c, ContentToolRequest)]


@pytest.mark.parametrize("api", APIS)
def test_a_simple_request_reports_its_tokens(replay: Any, api: str) -> None:
    make, cassette = replay(api, "simple_request")
    chat = make(model="gpt-5.4", system_prompt=TERSE)
    chat.chat("What is 1 + 1?", echo="none")
    turn = chat.get_last_turn()
    assert turn is not None and turn.tokens is not None
    assert len(turn.tokens) == 3 and turn.tokens[0] == 26
    assert turn.finish_reason == "success"
    assert cassette.exhausted


@pytest.mark.parametrize("api", APIS)
def test_a_streamed_request_streams_the_answer(replay: Any, api: str) -> None:
    make, _ = replay(api, "simple_streaming_request")
    chat = make(model="gpt-5.4", system_prompt=TERSE)

    async def pieces() -> list[str]:
        return [p async for p in await chat.stream_async("What is 1 + 1?")]

    assert "2" in "".join(asyncio.run(pieces()))
    last = chat.get_last_turn()
    assert last is not None and last.finish_reason == "success"


@pytest.mark.parametrize("api", APIS)
def test_the_system_prompt_and_existing_turns_are_sent(replay: Any, api: str) -> None:
    make, cassette = replay(api, "respects_turns_interface")
    chat = make(system_prompt=UPPERCASE)
    response = chat.chat(POOH, echo="none")
    assert len(chat.get_turns()) == 2
    assert "CHRISTOPHER ROBIN" in str(response).upper()
    chat = make()
    chat.system_prompt = UPPERCASE
    assert "CHRISTOPHER ROBIN" in str(chat.chat(POOH, echo="none")).upper()
    chat = make()
    chat.set_turns(
        [UserTurn("My name is Steve"), AssistantTurn("Hello Steve, how can I help you today?")]
    )
    assert "steve" in str(chat.chat("What is my name?", echo="none")).lower()
    assert len(chat.get_turns()) == 4
    assert cassette.exhausted


class ArticleSummary(BaseModel):
    """Summary of the article"""

    title: str
    author: str


class Person(BaseModel):
    name: str
    age: int


ARTICLE = """
# Apples are tasty

By Hadley Wickham
Apples are delicious and tasty and I like to eat them.
Except for red delicious, that is. They are NOT delicious.
"""


@pytest.mark.parametrize("api", APIS)
def test_structured_data_is_extracted_twice_then_chatted_about(replay: Any, api: str) -> None:
    make, cassette = replay(api, "data_extraction")
    chat = make()
    for _ in range(2):
        data = chat.chat_structured(ARTICLE, data_model=ArticleSummary, echo="none")
        assert isinstance(data, ArticleSummary)
        assert data.author == "Hadley Wickham"
        assert data.title.lower() == "apples are tasty"
    person = chat.chat_structured(
        "Generate the name and age of a random person.", data_model=Person, echo="none"
    )
    response = chat.chat("What is the name of the person?", echo="none")
    assert person.name in str(response)
    assert cassette.exhausted


@pytest.mark.parametrize("api", APIS)
def test_an_inline_and_a_remote_image_are_described(replay: Any, api: str, tmp_path: Path) -> None:
    make, cassette = replay(api, "images")
    picture = tmp_path / "red.png"
    picture.write_bytes(RED_PNG)
    chat = make()
    response = chat.chat(
        "What's in this image?", content_image_file(str(picture), resize="none"), echo="none"
    )
    assert "red" in str(response).lower()
    chat = make()
    response = chat.chat(
        "What's in this image? (Be sure to mention the outside shape)",
        content_image_url("https://httr2.r-lib.org/logo.png"),
        echo="none",
    )
    assert "baseball" in str(response).lower() and "hex" in str(response).lower()
    assert cassette.exhausted


@pytest.mark.parametrize("api", APIS)
def test_the_models_are_listed(replay: Any, api: str) -> None:
    make, _ = replay(api, "list_models")
    models = make().provider.list_models()
    assert models and "id" in models[0]
    assert models == sorted(models, key=lambda m: m["created_at"], reverse=True)


def get_date() -> str:
    """Gets the current date"""
    return "2024-01-01"


def favorite_color(_person: str) -> str:
    """Returns a person's favourite colour"""
    return "sage green" if _person == "Joe" else "red"


def weather_forecast(city: str) -> str:
    """Gets the weather forecast for a city"""
    return "rainy" if city == "New York" else "sunny"


def equipment(weather: str) -> str:
    """Gets the equipment needed for a weather condition"""
    return "umbrella" if weather == "rainy" else "sunscreen"


def test_tools_simple_streamed_parallel_and_sequential_on_the_responses_api(replay: Any) -> None:
    make, cassette = replay("responses", "tool_variations")
    chat = make(system_prompt="Always use a tool to help you answer. Reply with 'It is ____.'.")
    chat.register_tool(get_date)
    assert "2024-01-01" in str(
        chat.chat("What's the current date in YYYY-MM-DD format?", echo="none")
    )
    assert "January" in str(chat.chat("What month is it? Provide the full name.", echo="none"))

    chat = make(system_prompt="Be very terse, not even punctuation.")
    chat.register_tool(get_date, annotations={"title": "Get Date"})
    items = list(chat.stream("What's the current date in Y-M-D format?", content="all"))
    requests = [i for i in items if isinstance(i, ContentToolRequest)]
    results = [i for i in items if isinstance(i, ContentToolResult)]
    assert [r.name for r in requests] == ["get_date"]
    assert len(results) == 1 and results[0].request == requests[0]
    assert "2024-01-01" in "".join(str(i) for i in items)

    chat = make(system_prompt="Be very terse, not even punctuation.")
    chat.register_tool(favorite_color)
    answer = str(
        chat.chat(
            "What are Joe and Hadley's favourite colours? Answer like name1: colour1, name2: colour2",
            echo="none",
        )
    ).replace(":", "")
    assert "Joe sage green" in answer and "Hadley red" in answer
    assert len(chat.get_turns()) == 4

    chat = make(
        system_prompt="Be very terse, not even punctuation. If asked for equipment to pack, "
        "first use the weather_forecast tool provided to you. Then, use the equipment tool "
        "provided to you."
    )
    chat.register_tool(weather_forecast)
    chat.register_tool(equipment)
    answer = str(chat.chat("What should I pack for New York this weekend?", echo="none"))
    assert "umbrella" in answer.lower()
    assert len(chat.get_turns()) == 6
    assert [r.name for r in tool_requests(chat)] == ["weather_forecast", "equipment"]
    assert cassette.exhausted


def test_a_pdf_is_read_and_asked_about_again(replay: Any, tmp_path: Path) -> None:
    make, cassette = replay("responses", "pdf")
    pdf = tmp_path / "apples.pdf"
    pdf.write_bytes(b"%PDF-1.4\n% apples are tasty\n%%EOF\n")
    chat = make()
    response = chat.chat("What's the title of this document?", content_pdf_file(pdf), echo="none")
    assert "apples are tasty" in str(response).lower()
    response = chat.chat(
        "What apple is not tasty according to the document?", "Two word answer only.", echo="none"
    )
    assert "red delicious" in str(response).lower()
    assert cassette.exhausted


def test_a_csv_document_is_read(replay: Any, tmp_path: Path) -> None:
    make, cassette = replay("responses", "document")
    csv = tmp_path / "quarterly_sales.csv"
    csv.write_text("region,q3\nMidwest,10\nWest,4\n")
    chat = make()
    response = chat.chat(
        "Which region in the attached CSV had the highest q3 value?",
        "Reply with the region name only.",
        content_document_file(csv),
        echo="none",
    )
    assert "midwest" in str(response).lower()
    assert cassette.exhausted


def test_a_web_search_answers_with_citations_that_mark_their_sources(replay: Any) -> None:
    from chatlas_like import ContentCitation, ContentText, tool_web_search

    make, cassette = replay("responses", "web_search")
    chat = make(model="gpt-4.1")
    chat.register_tool(tool_web_search())
    answer = chat.chat(
        "When was ggplot2 1.0.0 released to CRAN? Answer in YYYY-MM-DD format. "
        "The CRAN archive page has this info.",
        echo="none",
    )
    assert "2014-05-21" in str(answer).replace("\u2011", "-")
    assert "May" in str(chat.chat("What month was that?", echo="none"))
    assert cassette.sent[0]["tools"] == [{"type": "web_search"}]
    assert [i.get("type") for i in cassette.sent[1]["input"]][1] == "web_search_call"
    cites = [c for t in chat.get_turns() for c in t.contents if isinstance(c, ContentCitation)]
    assert cites and all(c.source is not None and c.source.url for c in cites)
    for turn in chat.get_turns():
        text = "".join(c.text for c in turn.contents if type(c) is ContentText)
        for c in (c for c in turn.contents if isinstance(c, ContentCitation)):
            assert c.extra is not None and c.source is not None and c.grounded_span is None
            marker = text[c.extra["start_index"] : c.extra["end_index"]]
            assert marker.startswith("([") and f"]({c.source.url})" in marker
    assert cassette.exhausted
