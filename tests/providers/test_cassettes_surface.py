"""Replays of the recorded exchanges for structured data, documents, PDFs, images, web
search and the model list, read in place from the shared fixtures.

As in ``test_cassettes.py``, each request the client sends must equal the recorded one
after :func:`chatlas_like.testing.comparable`. One more difference is normalised here:
chatlas drops the ``citations`` of the model's text when it sends the text back, and we
keep them (they are part of what the model said, and the API takes them back), so
``citations`` is taken out of both sides before comparing. Files the helpers read (the
CSV, the PDF, the PNG) are written to a temporary directory from the recorded requests,
so the bytes the client sends can be compared with the recorded ones.
"""

from __future__ import annotations

import base64
import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from chatlas_like import (
    ContentCitation,
    ContentJson,
    ContentToolRequestSearch,
    ContentToolResponseSearch,
    content_document_file,
    content_image_file,
    content_image_url,
    content_pdf_file,
    tool_web_search,
)
from chatlas_like.testing import CassetteReplay, LoopbackServer, comparable

from ..conftest import make_chat

pytestmark = pytest.mark.cassette

ARTICLE = """
# Apples are tasty

By Hadley Wickham
Apples are delicious and tasty and I like to eat them.
Except for red delicious, that is. They are NOT delicious.
"""


class ArticleSummary(BaseModel):
    """Summary of the article"""

    title: str
    author: str


class Person(BaseModel):
    name: str
    age: int


def replay(fixtures_dir: Path, name: str) -> tuple[CassetteReplay, LoopbackServer]:
    cassette = CassetteReplay(fixtures_dir / f"{name}.yaml")
    return cassette, LoopbackServer(cassette).start()


def without_citations(body: Any) -> Any:
    if isinstance(body, dict):
        return {k: without_citations(v) for k, v in body.items() if k != "citations"}
    if isinstance(body, list):
        return [without_citations(v) for v in body]
    return body


def assert_same_requests(cassette: CassetteReplay) -> None:
    assert cassette.exhausted, "the client sent fewer requests than were recorded"
    for i, (recorded, sent) in enumerate(cassette.pairs()):
        assert comparable(without_citations(sent)) == comparable(without_citations(recorded)), (
            f"request {i} differs"
        )


def recorded_source(cassette: CassetteReplay, block_type: str) -> str:
    blocks: list[Any] = cassette.interactions[0].body["messages"][0]["content"]
    return next(b["source"]["data"] for b in blocks if b["type"] == block_type)


def test_data_extraction_returns_validated_models_and_keeps_the_json(fixtures_dir: Path) -> None:
    cassette, server = replay(fixtures_dir, "data_extraction")
    with server:
        chat = make_chat(server)
        first = chat.chat_structured(ARTICLE, data_model=ArticleSummary)
        second = chat.chat_structured(ARTICLE, data_model=ArticleSummary)
        person = chat.chat_structured(
            "Generate the name and age of a random person.", data_model=Person
        )
        answer = str(chat.chat("What is the name of the person?", echo="none"))
    assert_same_requests(cassette)
    assert first == second == ArticleSummary(title="Apples are tasty", author="Hadley Wickham")
    assert person == Person(name="James Mitchell", age=34)
    assert "James Mitchell" in answer
    json_turn = chat.get_turns()[5]
    assert json_turn.contents == [ContentJson({"name": "James Mitchell", "age": 34})]


def test_a_csv_document_is_sent_as_a_titled_text_document(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    cassette, server = replay(fixtures_dir, "document")
    csv = tmp_path / "quarterly_sales.csv"
    csv.write_text(recorded_source(cassette, "document"))
    with server:
        chat = make_chat(server)
        answer = chat.chat(
            "Which region in the attached CSV had the highest q3 value?",
            "Reply with the region name only.",
            content_document_file(csv),
            echo="none",
        )
    assert_same_requests(cassette)
    assert str(answer) == "Midwest"


def test_a_pdf_file_is_sent_inline_and_stays_in_the_history(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    cassette, server = replay(fixtures_dir, "pdfs")
    pdf = tmp_path / "apples.pdf"
    pdf.write_bytes(base64.b64decode(recorded_source(cassette, "document")))
    with server:
        chat = make_chat(server)
        title = chat.chat("What's the title of this document?", content_pdf_file(pdf), echo="none")
        follow_up = chat.chat(
            "What apple is not tasty according to the document?",
            "Two word answer only.",
            echo="none",
        )
    assert_same_requests(cassette)
    assert "Apples are tasty" in str(title)
    assert "red delicious" in str(follow_up).lower()


def test_image_helpers_send_the_recorded_image_blocks(fixtures_dir: Path, tmp_path: Path) -> None:
    cassette, server = replay(fixtures_dir, "images")
    png = tmp_path / "red.png"
    png.write_bytes(base64.b64decode(recorded_source(cassette, "image")))
    with server:
        chat = make_chat(server)
        # A small image is sent as it is, not re-encoded, even with resize="low".
        inline = content_image_file(png, resize="low")
        assert "red" in str(chat.chat("What's in this image?", inline, echo="none")).lower()
        chat2 = make_chat(server)
        remote = content_image_url("https://httr2.r-lib.org/logo.png")
        answer = chat2.chat(
            "What's in this image? (Be sure to mention the outside shape)", remote, echo="none"
        )
    assert_same_requests(cassette)
    assert "hexagon" in str(answer).lower()


def _response_blocks(cassette: CassetteReplay) -> dict[str, Any]:
    """The server blocks of the recorded streamed answer, by type, as the API sent them."""
    blocks: dict[str, Any] = {}
    for line in cassette.interactions[0].response.decode().splitlines():
        if line.startswith("data:"):
            event = orjson.loads(line[5:])
            if event.get("type") == "content_block_start":
                blocks.setdefault(event["content_block"]["type"], event["content_block"])
    return blocks


def test_web_search_blocks_go_back_byte_for_byte(fixtures_dir: Path) -> None:
    cassette, server = replay(fixtures_dir, "web_search")
    with server:
        chat = make_chat(server)
        chat.register_tool(tool_web_search())
        items = list(
            chat.stream(
                "When was ggplot2 1.0.0 released to CRAN? Answer in YYYY-MM-DD format.",
                content="all",
            )
        )
        month = str(chat.chat("What month was that?", echo="none"))
    assert_same_requests(cassette)
    assert "May" in month
    kinds = [type(i).__name__ for i in items if not isinstance(i, str)]
    assert kinds[:2] == ["ContentToolRequestSearch", "ContentToolResponseSearch"]
    assert "2014-05-21" in "".join(i for i in items if isinstance(i, str))

    sent = cassette.sent[1]["messages"][1]["content"]
    received = _response_blocks(cassette)
    result = received["web_search_tool_result"]
    assert orjson.dumps(sent[1]) == orjson.dumps(result)
    assert sent[0] == {
        **received["server_tool_use"],
        "input": {"query": "ggplot2 1.0.0 CRAN release date"},
    }
    assert list(sent[0]) == list(received["server_tool_use"])  # key order kept too

    turn = chat.get_turns()[1]
    search, found = turn.contents[0], turn.contents[1]
    assert isinstance(search, ContentToolRequestSearch)
    assert search.query == "ggplot2 1.0.0 CRAN release date"
    assert isinstance(found, ContentToolResponseSearch)
    assert found.sources[0].url == "https://cran.r-project.org/package=ggplot2"
    assert len(found.sources) == 10
    cited = turn.contents[2]
    assert cited.citations[0].source is not None  # pyright: ignore[reportAttributeAccessIssue]
    citation = turn.contents[3]  # chatlas's citation item, right after the text it grounds
    assert isinstance(citation, ContentCitation)
    assert citation.grounded_span == cited.text  # pyright: ignore[reportAttributeAccessIssue]


def test_list_models_reads_the_recorded_model_list(fixtures_dir: Path) -> None:
    cassette, server = replay(fixtures_dir, "list_models")
    with server:
        models = make_chat(server).list_models()
    assert cassette.exhausted
    assert models[0]["id"] == "claude-opus-4-5-20251101"
    assert models[0]["created_at"] == datetime.date(2025, 11, 24)
    assert "claude-haiku-4-5-20251001" in [m["id"] for m in models]
    dates = [m["created_at"] for m in models]
    assert dates == sorted(dates, reverse=True)
    assert models[0]["name"] == "Claude Opus 4.5"
