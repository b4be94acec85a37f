"""Hostile input, tool results: text that is not Unicode, and calls that ran are never "refused".

A tool may hand back text with surrogate escapes (``os.listdir`` of a non-UTF-8 file
name): it is sent with replacement characters and the result says so. Whatever goes
wrong after a call ran, the call is never recorded as ``refused`` (which tells the model
it is safe to send again).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from chatlas_like import Chat, ContentToolRequest, ContentToolResult, UserTurn
from chatlas_like._core.history import History
from chatlas_like._display.console import ProgressEcho
from chatlas_like._display.console import ask as ask_chat
from chatlas_like._run.echo import NULL_ECHO
from chatlas_like._run.loop import END, NEXT_EVENT, NEXT_RESULT, ModelCall, Run, RunTools, turn_loop
from chatlas_like._tools.runner import Delivery, Finished, Stopped
from chatlas_like.providers._anthropic.provider import AnthropicProvider
from chatlas_like.providers._anthropic.wire import message_events
from chatlas_like.providers._base import RequestSpec
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat

NAME = "caf\udce9.txt"  # what os.listdir gives for b"caf\xe9.txt" on a UTF-8 system
runs: list[str] = []


def list_files() -> str:
    """Lists a folder holding a Latin-1 file name."""
    runs.append("list_files")
    return f"{NAME}\nnotes.txt"


def list_files_as_data() -> dict[str, Any]:
    """The same listing as data."""
    runs.append("list_files_as_data")
    return {"files": [NAME, "notes.txt"], NAME: 1}


def open_file() -> str:
    """Fails naming the file it could not open."""
    runs.append("open_file")
    raise ValueError(f"cannot open {NAME}")


def chat_calling(serve: Callable[..., LoopbackServer], tool: Callable[..., Any]) -> Chat:
    server = serve([Reply.tool_call(tool.__name__, {}), Reply.text("ok"), Reply.text("ok")])
    chat = make_chat(server)
    chat.register_tool(tool)
    runs.clear()
    chat.chat("Go", echo="none")
    return chat


@pytest.mark.parametrize("tool", [list_files, list_files_as_data, open_file])
def test_text_that_is_not_unicode_is_sent_with_replacement_characters(
    serve: Callable[..., LoopbackServer], tool: Callable[..., Any]
) -> None:
    server = serve([Reply.tool_call(tool.__name__, {}), Reply.text("ok")])
    chat = make_chat(server)
    chat.register_tool(tool)
    runs.clear()
    chat.chat("Go", echo="none")
    assert runs == [tool.__name__]  # ran once
    sent = server.message_requests()[1]["messages"][-1]["content"][0]
    text = sent["content"] if isinstance(sent["content"], str) else str(sent["content"])
    assert "caf\ufffd.txt" in text
    assert "not valid Unicode" in text  # the result says so


def test_a_result_with_replacements_keeps_its_outcome(serve: Callable[..., LoopbackServer]) -> None:
    chat = chat_calling(serve, list_files)
    (result,) = chat.get_turns()[2].tool_results
    assert result.outcome == "success"
    assert result.get_model_value().startswith("caf\ufffd.txt\nnotes.txt")


def test_data_with_replacements_is_still_sent_as_json(serve: Callable[..., LoopbackServer]) -> None:
    chat = chat_calling(serve, list_files_as_data)
    text = chat.get_turns()[2].tool_results[0].get_model_value()
    document, _, note = text.partition("\n")
    assert orjson.loads(document) == {"files": ["caf\ufffd.txt", "notes.txt"], "caf\ufffd.txt": 1}
    assert "replaced" in note


def test_a_chat_with_such_a_result_saves_and_continues(
    serve: Callable[..., LoopbackServer], tmp_path: Path
) -> None:
    chat = chat_calling(serve, open_file)
    chat.save(tmp_path / "chat.json")
    chat.chat("Again", echo="none")
    assert chat.get_last_turn() is not None and chat.get_last_turn().text == "ok"  # pyright: ignore[reportOptionalMemberAccess]


def test_the_terminal_chat_survives_such_a_result(serve: Callable[..., LoopbackServer]) -> None:
    from rich.console import Console

    server = serve([Reply.tool_call("list_files", {}), Reply.text("Two files.")])
    chat = make_chat(server)
    chat.register_tool(list_files)
    output = io.StringIO()
    echo = ProgressEcho("output", Console(file=output, width=120, force_terminal=True))
    assert ask_chat(chat, "What is there?", echo) is True
    assert "Two files." in output.getvalue() and "caf\ufffd.txt" in output.getvalue()


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text for you")


def unprintable() -> ContentToolResult:
    """Ran, then returned a block the library cannot put into words."""
    runs.append("unprintable")
    return ContentToolResult(value=[Unprintable()], model_format="as_is")


def test_a_call_that_ran_and_cannot_be_sent_is_an_error_not_a_refusal(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = chat_calling(serve, unprintable)
    (result,) = chat.get_turns()[2].tool_results
    assert runs == ["unprintable"]
    assert result.outcome == "error" and "ran" in result.get_model_value()


class StartedAll:
    """The loop's handle on a round stepped by hand, whose one call had started."""

    def stop(self) -> Stopped:
        return Stopped(frozenset({0}))


def test_a_failure_after_the_tools_ran_answers_them_as_errors_not_refusals() -> None:
    """Stepped by hand: whatever breaks once results exist, the calls are not "not run"."""

    def broken_finalize(results: list[ContentToolResult]) -> list[ContentToolResult]:
        if any(r.outcome == "success" for r in results):
            raise MemoryError("no room to record the results")
        return results

    provider = AnthropicProvider(model="m", cache="none")
    run = Run(History(), provider, RequestSpec(), echo=NULL_ECHO, finalize=broken_finalize)
    loop = turn_loop(run, UserTurn("Go"))
    assert isinstance(next(loop), ModelCall)
    assert next(loop) is NEXT_EVENT
    block = {"type": "tool_use", "id": "toolu_1", "name": "pay", "input": {}}
    message = {"id": "m", "content": [block], "stop_reason": "tool_use", "usage": {}}
    for event in message_events(message):
        assert loop.send(event) is NEXT_EVENT
    step = loop.send(END)
    assert isinstance(step, RunTools)
    (request,) = step.requests
    assert isinstance(request, ContentToolRequest)
    assert loop.send(StartedAll()) is NEXT_RESULT
    with pytest.raises(MemoryError):
        loop.send(Delivery([Finished(0, ContentToolResult(value="paid", request=request))]))
    (answer,) = run.history.turns[-1].tool_results
    assert answer.outcome == "error" and "may have run" in answer.get_model_value()
