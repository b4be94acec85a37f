"""Each turn translated once: the per-turn cache and the prefix cache the OpenAI wires use,
and what they save a long chat (a document by URL fetched once, not at every request)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from chatlas_like import AssistantTurn, ChatOpenAICompletions, UserTurn, content_document_url
from chatlas_like.providers._openai import completions, responses
from chatlas_like.providers._translated import PrefixCache, cached, translated
from chatlas_like.providers._types import RequestSpec
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import TEST_KEY


def test_a_turn_is_translated_once_per_variant() -> None:
    turn = UserTurn("hello")
    made: list[str] = []

    def make(variant: str) -> list[str]:
        made.append(variant)
        return [variant]

    first = translated(turn, "a", lambda: make("a"))
    assert translated(turn, "a", lambda: make("a")) is first
    assert translated(turn, "b", lambda: make("b")) == ["b"]
    assert made == ["a", "b"]
    assert cached(UserTurn("hello"), "a") is None  # an equal turn is another turn


def test_the_prefix_cache_translates_only_the_turns_added_since_the_last_request() -> None:
    cache, seen = PrefixCache(), list[str]()

    def translate(turn: Any) -> list[str]:
        seen.append(turn.text)
        return [turn.text]

    turns: list[Any] = [UserTurn("a"), AssistantTurn("b")]
    assert cache.items(turns, translate) == ["a", "b"]
    turns.append(UserTurn("c"))
    assert cache.items(turns, translate) == ["a", "b", "c"]
    assert seen == ["a", "b", "c"]
    assert list(cache.unseen([*turns, last := UserTurn("d")])) == [last]


def test_a_changed_prefix_is_translated_again() -> None:
    cache = PrefixCache()
    turns: list[Any] = [UserTurn("a"), AssistantTurn("b")]
    cache.items(turns, lambda t: [t.text])
    turns[0] = UserTurn("changed")
    assert list(cache.unseen(turns)) == turns
    assert cache.items(turns, lambda t: [t.text]) == ["changed", "b"]


@pytest.mark.parametrize("wire", ["responses", "completions"])
def test_an_openai_request_is_the_same_with_and_without_the_prefix_cache(wire: str) -> None:
    build: Any = responses.build_request if wire == "responses" else completions.build_request
    cache = PrefixCache()
    turns: list[Any] = [UserTurn("a"), AssistantTurn("b"), UserTurn("c")]
    spec = RequestSpec(system_prompt="Be brief.")
    build(turns[:2], spec, model="m", prefix=cache)
    assert build(turns, spec, model="m", prefix=cache) == build(turns, spec, model="m")


@pytest.fixture
def file_server() -> Iterator[tuple[str, list[str]]]:
    fetched: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fetched.append(self.path)
            body = b"city,rain\nOslo,12\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/csv")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", fetched
    httpd.shutdown()
    httpd.server_close()


def test_a_document_by_url_is_fetched_once_over_a_chats_requests(
    file_server: tuple[str, list[str]],
) -> None:
    url, fetched = file_server
    with LoopbackServer([Reply.text("Rain in Oslo."), Reply.text("Yes.")]) as server:
        chat = ChatOpenAICompletions(base_url=server.openai_url, api_key=TEST_KEY, model="m")
        chat.chat(
            "What is it?", content_document_url(f"{url}/a.csv", allow_private=True), echo="none"
        )
        chat.chat("Sure?", echo="none")
        first, second = server.message_requests()
    assert fetched == ["/a.csv"]
    assert second["messages"][0] == first["messages"][0]  # the file's bytes sent both times
