"""Echo sinks are pluggable: ``echo=`` takes a sink of the user's own, through the interface
the terminal, notebook and Shiny renderings implement."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from chatlas_like import (
    ContentToolRequest,
    ContentToolResult,
    EchoSink,
    Turn,
)
from chatlas_like._display.notebook import NotebookEcho
from chatlas_like._display.terminal import ConsoleEcho
from chatlas_like.shiny import ShinyEcho
from chatlas_like.testing import Reply

from ..conftest import make_chat


class Recorder(EchoSink):
    """Writes down every call, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def user_turn(self, turn: Turn) -> None:
        self.calls.append(("user_turn", turn.text))

    def text(self, delta: str) -> None:
        self.calls.append(("text", delta))

    def content(self, item: Any) -> None:
        self.calls.append(("content", type(item).__name__))

    def tool_started(self, request: ContentToolRequest) -> None:
        self.calls.append(("tool_started", request.name))

    def finish(self) -> None:
        self.calls.append(("finish", None))


def lookup(q: str) -> str:
    """Look something up."""
    return "found"


def tool_conversation(serve: Any) -> Any:
    server = serve([Reply.tool_call("lookup", {"q": "x"}), Reply.text("Found it.")])
    chat = make_chat(server)
    chat.register_tool(lookup)
    return chat


def test_a_sink_of_your_own_receives_the_call_as_it_happens_in_order(serve: Any) -> None:
    recorder = Recorder()
    tool_conversation(serve).chat("Find x", echo=recorder)
    calls = [c for c in recorder.calls if c[0] != "text"]
    assert calls == [
        ("user_turn", "Find x"),
        ("content", "ContentToolRequest"),
        ("tool_started", "lookup"),
        ("content", "ContentToolResult"),
        ("finish", None),
    ]
    assert "".join(d for kind, d in recorder.calls if kind == "text") == "Found it."


def test_a_sink_overriding_one_method_inherits_quiet_defaults(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    class LogSink(EchoSink):
        def content(self, item: Any) -> None:
            logging.getLogger("my.app").info("%s", type(item).__name__)

    with caplog.at_level(logging.INFO, logger="my.app"):
        tool_conversation(serve).chat("Find x", echo=LogSink())
    assert [r.getMessage() for r in caplog.records if r.name == "my.app"] == [
        "ContentToolRequest",
        "ContentToolResult",
    ]


def test_a_sink_serves_streams_and_async_calls_alike(serve: Any) -> None:
    streamed = Recorder()
    list(tool_conversation(serve).stream("Find x", echo=streamed))

    async def call() -> Recorder:
        recorder = Recorder()
        await tool_conversation(serve).chat_async("Find x", echo=recorder)
        return recorder

    assert asyncio.run(call()).calls == streamed.calls


def test_an_echo_that_is_neither_a_mode_nor_a_sink_is_a_type_error(serve: Any) -> None:
    chat = make_chat(serve([]))
    with pytest.raises(TypeError, match="or an EchoSink, not int"):
        chat.chat("Hi", echo=3)  # pyright: ignore[reportArgumentType]


def test_an_unknown_mode_still_names_the_modes(serve: Any) -> None:
    chat = make_chat(serve([]))
    with pytest.raises(ValueError, match="echo must be one of none, text, output, all"):
        chat.chat("Hi", echo="loud")  # pyright: ignore[reportArgumentType]


async def test_the_terminal_notebook_and_shiny_renderings_implement_the_interface() -> None:
    assert isinstance(ConsoleEcho("output"), EchoSink)
    assert isinstance(NotebookEcho("output", display=lambda *a, **k: None), EchoSink)
    assert isinstance(ShinyEcho(), EchoSink)


async def test_the_shiny_rendering_turns_a_tool_round_into_text_and_cards(serve: Any) -> None:
    shown = ShinyEcho()
    chat = tool_conversation(serve)
    call = asyncio.ensure_future(chat.chat_async("Find x", echo=shown))
    pieces = [piece async for piece in shown.pieces()]
    await call
    kinds = [type(p).__name__ for p in pieces]
    assert kinds == ["ContentToolRequest", "ContentToolResult", "str", "str"]
    assert isinstance(pieces[1], ContentToolResult) and pieces[1].value == "found"
