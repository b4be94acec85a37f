"""Turns and contents in chatlas's JSON shape: chatlas's saved histories load here, ours in chatlas.

``tests/data/chatlas/`` holds what chatlas 0.23.0 dumped after the conversations below
(run against the loopback server with the same replies; see its README). Each test
loads chatlas's data, or holds the same conversation here, and compares with it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from chatlas_like import (
    AssistantTurn,
    Chat,
    Content,
    ContentCitation,
    ContentImageInline,
    ContentJson,
    ContentText,
    ContentThinking,
    ContentToolRequest,
    ContentToolRequestSearch,
    ContentToolResponseSearch,
    ContentToolResult,
    ContentUploaded,
    SystemTurn,
    Turn,
    UserTurn,
    content_document_file,
    content_image_file,
    content_image_url,
    content_pdf_file,
    content_pdf_url,
    tool_web_search,
)
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat

DATA = Path(__file__).parent.parent / "data" / "chatlas"
HISTORIES = sorted(p.stem for p in DATA.glob("*.json") if p.stem != "contents")
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
THINKING = {"type": "thinking", "thinking": "The user wants a greeting.", "signature": "sig-abc123"}
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
            "page_age": None,
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
HELLO = Reply.text("Hello there, friend.").with_usage(input_tokens=12, output_tokens=5)


def saved(name: str) -> list[dict[str, Any]]:
    """What chatlas dumped for ``name``, one dict per turn."""
    return json.loads((DATA / f"{name}.json").read_text())


def chatlas_view(data: Any) -> Any:
    """``data`` as chatlas reads it: without the keys only we write (chatlas ignores them)."""
    if isinstance(data, dict):
        ours = {"usage", "outcome"} | ({"extra"} if data.get("content_type") == "text" else set())
        return {k: chatlas_view(v) for k, v in data.items() if k not in ours}
    if isinstance(data, list):
        return [chatlas_view(v) for v in data]
    return data


def dumped(chat: Chat) -> list[dict[str, Any]]:
    return [orjson.loads(t.model_dump_json()) for t in chat.get_turns(include_system_prompt=True)]


# -- chatlas's histories, read here --------------------------------------------------------


@pytest.mark.parametrize("name", HISTORIES)
def test_a_history_saved_by_chatlas_loads_and_dumps_back_as_chatlas_saved_it(name: str) -> None:
    data = saved(name)
    turns = [Turn.model_validate_json(json.dumps(d)) for d in data]
    assert [orjson.loads(t.model_dump_json()) for t in turns] == chatlas_view(data)


def test_turn_model_validate_picks_the_class_by_role() -> None:
    turns = [Turn.model_validate(d) for d in saved("text")]
    assert [type(t) for t in turns] == [SystemTurn, UserTurn, AssistantTurn]


def test_an_assistant_turn_from_chatlas_keeps_tokens_finish_reason_and_cost() -> None:
    answer = AssistantTurn.model_validate(saved("tools")[1])
    assert answer.tokens == (30, 10, 0)
    assert answer.finish_reason == "tool_use"
    assert answer.cost == pytest.approx(8e-05)
    assert [type(c) for c in answer.contents] == [ContentText, ContentToolRequest]


def test_a_subclass_refuses_a_turn_of_another_role() -> None:
    with pytest.raises(ValueError, match="UserTurn cannot hold a turn of role 'assistant'"):
        UserTurn.model_validate(saved("text")[2])


def test_an_unknown_content_type_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown content type: 'hologram'"):
        Turn.model_validate({"role": "user", "contents": [{"content_type": "hologram"}]})


def test_each_content_chatlas_saved_loads_as_its_class_and_dumps_back() -> None:
    data = saved("contents")
    contents = [Content.model_validate(d) for d in data]
    assert [type(c).__name__ for c in contents] == [
        "ContentUploaded",
        "ContentThinkingDelta",
        "ContentToolResult",
        "ContentToolResult",
        "ContentCitation",
    ]
    assert [c.model_dump(mode="json") for c in contents] == data


def test_content_nested_in_a_tool_result_value_comes_back_as_content() -> None:
    result = ContentToolResult.model_validate(saved("contents")[2])
    image, caption = result.value
    assert isinstance(image, ContentImageInline) and caption == "caption"
    assert result.model_format == "as_is"
    assert result.request is not None and result.request.arguments == {"w": 2}


def test_a_tool_error_saved_by_chatlas_reads_as_an_error_result() -> None:
    result = UserTurn.model_validate(saved("tool_error")[2]).contents[0]
    assert isinstance(result, ContentToolResult)
    assert (result.outcome, result.error, result.value) == ("error", "it broke", None)


def test_a_partial_turn_saved_by_chatlas_stays_partial() -> None:
    answer = AssistantTurn.model_validate(saved("partial")[1])
    assert answer.is_partial and answer.partial_reason == "cancelled"


def test_a_history_saved_by_chatlas_carries_on_here(serve: Callable[..., LoopbackServer]) -> None:
    server = serve([Reply.text("Tomorrow is 2024-01-02.")])
    chat = make_chat(server)
    chat.set_turns([Turn.model_validate(d) for d in saved("tools")])
    assert str(chat.chat("And tomorrow?", echo="none")) == "Tomorrow is 2024-01-02."
    sent = server.message_requests()[0]["messages"]
    assert sent[1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_0001",
        "name": "get_date",
        "input": {},
    }
    assert sent[2]["content"][0]["tool_use_id"] == "toolu_0001"


def test_thinking_saved_by_chatlas_goes_back_with_its_signature(
    serve: Callable[..., LoopbackServer],
) -> None:
    server = serve([Reply.text("Hi again.")])
    chat = make_chat(server, reasoning=1024)
    chat.set_turns([Turn.model_validate(d) for d in saved("thinking")])
    chat.chat("Again", echo="none")
    assert server.message_requests()[0]["messages"][1]["content"][0] == THINKING


def test_web_search_saved_by_chatlas_goes_back_as_the_api_sent_it(
    serve: Callable[..., LoopbackServer],
) -> None:
    server = serve([Reply.text("In May.")])
    chat = make_chat(server)
    chat.register_tool(tool_web_search())
    turns = [Turn.model_validate(d) for d in saved("search")]
    assert [type(c) for c in turns[1].contents] == [
        ContentToolRequestSearch,
        ContentToolResponseSearch,
        ContentText,
        ContentCitation,
        ContentText,
    ]
    chat.set_turns(turns)
    chat.chat("Which month?", echo="none")
    content = server.message_requests()[0]["messages"][1]["content"]
    assert content[:2] == [SEARCH, FOUND]


# -- our histories, read by chatlas ---------------------------------------------------------


def _text(chat: Chat, tmp: Path) -> None:
    chat.chat("Say hi", echo="none")


def _tools(chat: Chat, tmp: Path) -> None:
    def get_date() -> str:
        """Gets the current date"""
        return "2024-01-01"

    chat.register_tool(get_date)
    chat.chat("What is the date? [tools]", echo="none")


def _images(chat: Chat, tmp: Path) -> None:
    (tmp / "tiny.png").write_bytes(PNG)
    chat.chat(
        "What is in these? [img]",
        content_image_url("https://example.com/a.png"),
        content_image_file(str(tmp / "tiny.png"), resize="none"),
        echo="none",
    )


def _thinking(chat: Chat, tmp: Path) -> None:
    chat.chat("Greet me [think]", echo="none")


class Person(BaseModel):
    name: str
    age: int


def _structured(chat: Chat, tmp: Path) -> None:
    chat.chat_structured("Ann is 3 [json]", data_model=Person)


def _documents(chat: Chat, tmp: Path) -> None:
    (tmp / "notes.txt").write_text("a,b\n1,2\n")
    chat.chat("Read [doc]", content_document_file(str(tmp / "notes.txt")), echo="none")


def _pdfs(chat: Chat, tmp: Path) -> None:
    (tmp / "tiny.pdf").write_bytes(PDF)
    pdfs = content_pdf_file(str(tmp / "tiny.pdf")), content_pdf_url("https://example.com/a.pdf")
    chat.chat("Read [pdf]", *pdfs, echo="none")


def _search(chat: Chat, tmp: Path) -> None:
    chat.register_tool(tool_web_search())
    chat.chat("When was ggplot2 1.0.0 released? [search]", echo="none")


def _tool_error(chat: Chat, tmp: Path) -> None:
    def boom(x: int) -> str:
        """Always fails"""
        raise RuntimeError("it broke")

    chat.register_tool(boom)
    chat.chat("Run it [boom]", echo="none")


SAME = {
    "text": ([HELLO], {"system_prompt": "Be terse."}, _text),
    "tools": (
        [
            Reply.tool_call("get_date", {}, text="Let me check.").with_usage(
                input_tokens=30, output_tokens=10
            ),
            Reply.text("It is 2024-01-01.").with_usage(input_tokens=40, output_tokens=8),
        ],
        {},
        _tools,
    ),
    "images": ([HELLO], {}, _images),
    "thinking": (
        [
            Reply.blocks_of(THINKING, {"type": "text", "text": "Hello!"}).with_usage(
                input_tokens=20,
                output_tokens=15,
                cache_creation_input_tokens=100,
                cache_read_input_tokens=50,
            )
        ],
        {"reasoning": 1024},
        _thinking,
    ),
    "structured": (
        [Reply.text('{"name": "Ann", "age": 3}').with_usage(input_tokens=25, output_tokens=9)],
        {},
        _structured,
    ),
    "documents": ([HELLO], {}, _documents),
    "pdfs": ([HELLO], {}, _pdfs),
    "search": (
        [
            Reply.blocks_of(
                SEARCH,
                FOUND,
                {"type": "text", "text": "It was released on 2014-05-21", "citations": [CITATION]},
                {"type": "text", "text": "."},
            ).with_usage(input_tokens=200, output_tokens=30)
        ],
        {},
        _search,
    ),
    "tool_error": (
        [
            Reply.tool_call("boom", {"x": 1}).with_usage(input_tokens=29, output_tokens=16),
            Reply.text("It is 2024-01-01.").with_usage(input_tokens=40, output_tokens=8),
        ],
        {},
        _tool_error,
    ),
}


@pytest.mark.parametrize("name", sorted(SAME))
def test_the_same_conversation_here_dumps_what_chatlas_saved(
    name: str, serve: Callable[..., LoopbackServer], tmp_path: Path
) -> None:
    replies, options, converse = SAME[name]
    chat = make_chat(serve(replies), model="claude-haiku-4-5", **options)
    converse(chat, tmp_path)
    assert chatlas_view(dumped(chat)) == chatlas_view(saved(name))


def test_our_additions_ride_along_under_keys_chatlas_ignores(
    serve: Callable[..., LoopbackServer], tmp_path: Path
) -> None:
    replies, options, converse = SAME["search"]
    chat = make_chat(serve(replies), model="claude-haiku-4-5", **options)
    converse(chat, tmp_path)
    answer = dumped(chat)[1]
    assert answer["usage"] == {"input": 200, "output": 30, "cache_read": 0, "cache_creation": 0}
    assert answer["contents"][2]["extra"] == {"citations": [CITATION]}


def test_our_history_round_trips_through_chatlas_json_unchanged(
    serve: Callable[..., LoopbackServer], tmp_path: Path
) -> None:
    replies, options, converse = SAME["search"]
    chat = make_chat(serve(replies), model="claude-haiku-4-5", **options)
    converse(chat, tmp_path)
    turns = chat.get_turns()
    again = [Turn.model_validate_json(t.model_dump_json()) for t in turns]
    assert again == turns
    assert [t.usage for t in again] == [t.usage for t in turns]


# -- the methods ---------------------------------------------------------------------------


def test_model_dump_in_python_mode_keeps_tokens_a_tuple() -> None:
    turn = AssistantTurn("Hi", tokens=(3, 2, 1), finish_reason="success")
    assert turn.model_dump() == {
        "contents": [{"content_type": "text", "text": "Hi"}],
        "role": "assistant",
        "tokens": (3, 2, 1),
        "finish_reason": "success",
        "cost": None,
        "partial_reason": None,
    }


def test_model_dump_takes_include_exclude_and_exclude_none() -> None:
    turn = AssistantTurn("Hi", tokens=[3, 2, 1])
    assert turn.model_dump(include={"role", "tokens"}) == {"role": "assistant", "tokens": (3, 2, 1)}
    assert set(turn.model_dump(exclude={"contents"}, exclude_none=True)) == {"role", "tokens"}


def test_model_dump_json_indents_when_asked() -> None:
    text = ContentText("Hi").model_dump_json(indent=2)
    assert text == '{\n  "content_type": "text",\n  "text": "Hi"\n}'


def test_bytes_are_base64_in_both_modes_as_chatlas_writes_them() -> None:
    uploaded = ContentUploaded("file_1", "application/pdf", filename="a.pdf")
    assert uploaded.model_dump()["filename"] == "a.pdf"
    pdf = content_pdf_url("https://example.com/a.pdf")
    assert pdf.model_dump()["data"] is None
    thinking = ContentThinking("hm", {"type": "thinking", "thinking": "hm", "signature": "s"})
    assert thinking.model_dump()["extra"] == {"signature": "s"}


def test_model_copy_changes_the_fields_given() -> None:
    turn = UserTurn("Hi")
    copy = turn.model_copy(update={"contents": [ContentText("Bye")]})
    assert (turn.text, copy.text, type(copy)) == ("Hi", "Bye", UserTurn)
    assert ContentJson({"a": 1}).model_copy(update={"value": {"a": 2}}) == ContentJson({"a": 2})


def test_model_construct_builds_content_from_its_fields_by_name() -> None:
    assert ContentText.model_construct(text="a") == ContentText("a")
    assert ContentJson.model_construct(value={"a": 1}) == ContentJson({"a": 1})


def test_model_copy_refuses_a_field_a_turn_does_not_have() -> None:
    with pytest.raises(ValueError, match="has no field 'colour'"):
        UserTurn("Hi").model_copy(update={"colour": "red"})


def test_a_result_that_is_not_plain_data_dumps_what_the_model_read_with_a_warning() -> None:
    result = ContentToolResult(
        value={1, 2}, request=ContentToolRequest("t1", "nums", {}), model_format="str"
    )
    with pytest.warns(UserWarning, match="saved as what the model read"):
        data = result.model_dump(mode="json")
    assert data["value"] == "{1, 2}"


def test_a_refused_result_keeps_its_outcome_through_chatlas_json() -> None:
    request = ContentToolRequest("t1", "rm", {})
    result = ContentToolResult(error="not allowed", outcome="refused", request=request)
    again = ContentToolResult.model_validate_json(result.model_dump_json())
    assert (again.outcome, again.error) == ("refused", "not allowed")


def test_importing_the_package_does_not_import_pydantic_for_the_json_shape() -> None:
    import subprocess
    import sys

    code = (
        "import sys, chatlas_like; t = chatlas_like.UserTurn('hi');"
        "chatlas_like.Turn.model_validate_json(t.model_dump_json());"
        "print('pydantic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
