"""The loopback server streams what the API streams: every event the scripted model sends
has the shape of an event in the recorded exchanges (key for key, type for type)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from chatlas_like.testing import CassetteReplay, Reply
from chatlas_like.testing._scripted import Counters, render_reply

SEARCH = {
    "type": "server_tool_use",
    "id": "srvtoolu_01",
    "name": "web_search",
    "input": {"query": "ggplot2 1.0.0 release"},
}
FOUND = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_01",
    "content": [
        {
            "type": "web_search_result",
            "title": "CRAN: Package ggplot2",
            "url": "https://cran.r-project.org/package=ggplot2",
            "encrypted_content": "EoAB",
            "page_age": "1 week ago",
        }
    ],
}
CITATION = {
    "type": "web_search_result_location",
    "cited_text": "ggplot2 1.0.0 (2014-05-21)",
    "url": "https://cran.r-project.org/package=ggplot2",
    "title": "CRAN: Package ggplot2",
    "encrypted_index": "Eo8B",
}
REPLIES = [
    Reply.text("One plus one is two."),
    Reply.tool_call("get_date", {}),
    Reply.tool_call("weather_forecast", {"city": "New York"}, text="Let me look."),
    Reply.blocks_of(SEARCH, FOUND, {"type": "text", "text": "In 2014", "citations": [CITATION]}),
]


def shape(value: Any) -> Any:
    """Keys and value types, recursively (a list by its first item)."""
    if isinstance(value, dict):
        return tuple(sorted((k, shape(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("list", shape(value[0])) if value else ("list",)
    return type(value).__name__


def kind(event: dict[str, Any]) -> str:
    inner = event.get("content_block") or event.get("delta") or {}
    return f"{event['type']}:{inner.get('type', '')}" if "index" in event else event["type"]


def streamed(reply: Reply) -> list[dict[str, Any]]:
    body = {"model": "claude-haiku-4-5", "messages": [], "stream": True}
    events = render_reply(reply, body, Counters()).events
    assert events is not None
    return events


@pytest.fixture
def recorded(fixtures_dir: Path) -> dict[str, set[Any]]:
    """The shapes of every streamed event in the recordings, by kind."""
    shapes: dict[str, set[Any]] = {}
    for path in sorted(fixtures_dir.glob("*.yaml")):
        for interaction in CassetteReplay(path).interactions:
            for line in interaction.response.decode().splitlines():
                if line.startswith("data:"):
                    event = orjson.loads(line[5:])
                    shapes.setdefault(kind(event), set()).add(shape(event))
    return shapes


@pytest.mark.cassette
@pytest.mark.parametrize("reply", REPLIES, ids=["text", "no-arguments", "arguments", "search"])
def test_every_event_the_scripted_model_streams_has_a_recorded_shape(
    reply: Reply, recorded: dict[str, set[Any]]
) -> None:
    for event in streamed(reply):
        assert shape(event) in recorded[kind(event)], f"no recorded {kind(event)} is shaped {event}"


@pytest.mark.cassette
def test_the_scripted_model_streams_every_kind_of_event_the_recordings_have(
    recorded: dict[str, set[Any]],
) -> None:
    sent = {kind(event) for reply in REPLIES for event in streamed(reply)}
    assert sent == set(recorded)


def test_a_streamed_thinking_block_starts_with_an_empty_signature() -> None:
    thinking = {"type": "thinking", "thinking": "Hmm.", "signature": "sig-1"}
    events = streamed(Reply.blocks_of(thinking, {"type": "text", "text": "Hi"}))
    assert events[1] == {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
    }
    deltas = [e["delta"] for e in events if e["type"] == "content_block_delta" and e["index"] == 0]
    assert deltas == [
        {"type": "thinking_delta", "thinking": "Hmm."},
        {"type": "signature_delta", "signature": "sig-1"},
    ]


def test_a_call_without_arguments_streams_one_empty_argument_delta() -> None:
    deltas = [e["delta"] for e in streamed(Reply.tool_call("get_date", {})) if "delta" in e]
    assert deltas[0] == {"type": "input_json_delta", "partial_json": ""}


def test_the_final_usage_reports_all_four_counts() -> None:
    reply = Reply.text("Hi").with_usage(
        input_tokens=10, output_tokens=2, cache_read_input_tokens=3, cache_creation_input_tokens=4
    )
    delta = next(e for e in streamed(reply) if e["type"] == "message_delta")
    assert delta["usage"] == {
        "input_tokens": 10,
        "cache_creation_input_tokens": 4,
        "cache_read_input_tokens": 3,
        "output_tokens": 2,
    }


@pytest.mark.cassette
def test_a_message_sent_whole_has_the_recorded_shape(fixtures_dir: Path) -> None:
    recorded = CassetteReplay(fixtures_dir / "data_extraction.yaml").interactions[0]
    message = orjson.loads(recorded.response)
    body = {"model": "claude-haiku-4-5", "messages": [], "stream": False}
    ours = render_reply(Reply.text('{"title": "Apples"}'), body, Counters()).json
    assert shape(ours) == shape(message)


def test_a_conversation_carried_to_a_new_server_gets_a_tool_call_id_it_has_not_seen(
    serve: Any,
) -> None:
    from chatlas_like import ContentToolRequest

    from ..conftest import make_chat

    def today() -> str:
        """Today's date."""
        return "2024-01-01"

    first = serve([Reply.tool_call("today", {}), Reply.text("It is 2024-01-01.")])
    chat = make_chat(first)
    chat.register_tool(today)
    chat.chat("What day is it?", echo="none")
    # A new server (a resumed process) numbers its calls from the start again...
    second = serve([Reply.tool_call("today", {}), Reply.text("Still 2024-01-01.")])
    chat.provider.base_url = second.url
    chat.provider.close()
    chat.chat("And now?", echo="none")  # ...and its call would have repeated toolu_0001
    ids = [c.id for t in chat.get_turns() for c in t.contents if isinstance(c, ContentToolRequest)]
    assert ids == ["toolu_0001", "toolu_0002"]
