"""Replays of real recorded Anthropic exchanges, read in place from the shared fixtures.

Serving a recorded answer proves nothing by itself, so every request the client sends
must equal the recorded request after :func:`chatlas_like.testing.comparable`, which
takes out only what carries no meaning: key order, ``cache_control`` breakpoints,
``is_error: false`` (the API default), chatlas's ``"[empty string]"`` placeholder for
blank text (we drop blank text instead; the API merges the neighbouring user messages
that leaves, so the merge is applied to both sides), and an empty ``tools`` list.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from chatlas_like import AssistantTurn, Chat, ContentImageInline, ContentImageRemote, Turn, UserTurn
from chatlas_like.testing import CassetteReplay, LoopbackServer, comparable

from ..conftest import make_chat

pytestmark = pytest.mark.cassette


def get_date() -> str:
    """Gets the current date"""
    return "2024-01-01"


def weather_forecast(city: str) -> str:
    """Gets the weather forecast for a city"""
    return "rainy" if city == "New York" else "sunny"


def equipment(weather: str) -> str:
    """Gets the equipment needed for a weather condition"""
    return "umbrella" if weather == "rainy" else "sunscreen"


def favorite_color(_person: str) -> str:
    """Returns a person's favourite colour"""
    return "sage green" if _person == "Joe" else "red"


def replay(fixtures_dir: Path, name: str) -> tuple[CassetteReplay, LoopbackServer]:
    cassette = CassetteReplay(fixtures_dir / f"{name}.yaml")
    return cassette, LoopbackServer(cassette).start()


def assert_same_requests(cassette: CassetteReplay) -> None:
    assert cassette.exhausted, "the client sent fewer requests than were recorded"
    for i, (recorded, sent) in enumerate(cassette.pairs()):
        assert comparable(sent) == comparable(recorded), f"request {i} differs"


def test_simple_request(fixtures_dir: Path) -> None:
    cassette, server = replay(fixtures_dir, "simple_request")
    with server:
        chat = make_chat(server, system_prompt="Be as terse as possible; no punctuation")
        assert str(chat.chat("What is 1 + 1?", echo="none")) == "2"
    assert_same_requests(cassette)
    last = chat.get_last_turn()
    assert last is not None and last.tokens == (26, 5, 0)


def test_simple_streaming_request(fixtures_dir: Path) -> None:
    cassette, server = replay(fixtures_dir, "simple_streaming_request")

    async def run(chat: Chat) -> list[str]:
        return [chunk async for chunk in await chat.stream_async("What is 1 + 1?")]

    with server:
        chat = make_chat(server, system_prompt="Be as terse as possible; no punctuation")
        assert "".join(asyncio.run(run(chat))) == "2"
    assert_same_requests(cassette)


def test_empty_response(fixtures_dir: Path) -> None:
    cassette, server = replay(fixtures_dir, "empty_response")
    with server:
        chat = make_chat(server)
        assert not str(chat.chat("Respond with only two blank lines", echo="none")).strip()
        assert str(chat.chat("What's 1+1? Just give me the number", echo="none")) == "2"
    assert_same_requests(cassette)


def test_respects_turns_interface(fixtures_dir: Path) -> None:
    cassette, server = replay(fixtures_dir, "respects_turns_interface")
    system = "Return very minimal output, AND ONLY USE UPPERCASE."
    question = "What is the name of Winnie the Pooh's human friend?"
    with server:
        chat = make_chat(server, system_prompt=system)
        assert "CHRISTOPHER ROBIN" in str(chat.chat(question, echo="none"))
        seeded = make_chat(server)
        seeded.set_turns([Turn("system", system)])
        assert seeded.system_prompt == system
        assert "CHRISTOPHER ROBIN" in str(seeded.chat(question, echo="none"))
        steve = make_chat(server)
        steve.set_turns(
            [UserTurn("My name is Steve"), AssistantTurn("Hello Steve, how can I help you today?")]
        )
        assert "Steve" in str(steve.chat("What is my name?", echo="none"))
    assert_same_requests(cassette)


def test_tool_variations(fixtures_dir: Path) -> None:
    cassette, server = replay(fixtures_dir, "tool_variations")
    with server:
        chat = make_chat(
            server, system_prompt="Always use a tool to help you answer. Reply with 'It is ____.'."
        )
        chat.register_tool(get_date)
        assert "2024-01-01" in str(
            chat.chat("What's the current date in YYYY-MM-DD format?", echo="none")
        )
        assert "January" in str(chat.chat("What month is it? Provide the full name.", echo="none"))

        terse = make_chat(server, system_prompt="Be very terse, not even punctuation.")
        terse.register_tool(get_date)
        assert "2024-01-01" in str(
            terse.chat("What's the current date in YYYY-MM-DD format?", echo="none")
        )

        packing = make_chat(
            server,
            system_prompt="""
        Be very terse, not even punctuation. If asked for equipment to pack,
        first use the weather_forecast tool provided to you. Then, use the
        equipment tool provided to you.
        """,
        )
        packing.register_tool(weather_forecast)
        packing.register_tool(equipment)
        answer = str(packing.chat("What should I pack for New York this weekend?", echo="none"))
        assert "umbrella" in answer
    assert_same_requests(cassette)


def test_tool_variations_parallel(fixtures_dir: Path) -> None:
    cassette, server = replay(fixtures_dir, "tool_variations_parallel")
    with server:
        chat = make_chat(server, system_prompt="Be very terse, not even punctuation.")
        chat.register_tool(favorite_color)
        answer = chat.chat(
            """
        What are Joe and Hadley's favourite colours?
        Answer like name1: colour1, name2: colour2
    """,
            echo="none",
        )
        assert "Joe: sage green, Hadley: red" in str(answer)
    assert_same_requests(cassette)
    results = chat.get_turns()[2].tool_results
    assert [r.arguments for r in results] == [{"_person": "Joe"}, {"_person": "Hadley"}]


def _recorded_image(cassette: CassetteReplay) -> str:
    blocks: list[Any] = cassette.interactions[0].body["messages"][0]["content"]
    return next(b["source"]["data"] for b in blocks if b["type"] == "image")


def test_images(fixtures_dir: Path) -> None:
    cassette, server = replay(fixtures_dir, "images")
    with server:
        chat = make_chat(server)
        inline = ContentImageInline("image/png", _recorded_image(cassette))
        assert "red" in str(chat.chat("What's in this image?", inline, echo="none")).lower()
        chat2 = make_chat(server)
        remote = ContentImageRemote("https://httr2.r-lib.org/logo.png")
        answer = str(
            chat2.chat(
                "What's in this image? (Be sure to mention the outside shape)", remote, echo="none"
            )
        )
        assert "hexagon" in answer.lower()
    assert_same_requests(cassette)
