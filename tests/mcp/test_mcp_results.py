"""An MCP tool's result becomes one ContentToolResult that says truly what happened.

Real conversations: the real SDK talks to the loopback model, which calls the kitchen
MCP server's tools, once over stdio and once over streamable HTTP; each test checks the
result and what the model received.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import pytest

from chatlas_like import (
    Chat,
    ContentDocument,
    ContentImageInline,
    ContentPDF,
    Tool,
    ToolBuiltIn,
)
from chatlas_like.providers._base import RequestSpec
from chatlas_like.testing import LoopbackServer
from chatlas_like.types import ToolFailureWarning

from ..conftest import TEST_KEY, Reply, make_chat
from ..support.mcp import converse, kitchen_over_each, results_of, sent_results

__all__ = ["kitchen_over_each"]  # a fixture, used by name

Serve = Callable[..., LoopbackServer]
Tools = list[Tool | ToolBuiltIn]


def test_a_text_block_is_the_value_and_what_the_model_reads(
    serve: Serve, kitchen_over_each: Tools
) -> None:
    chat, server = converse(serve, kitchen_over_each, ("echo", {"text": "hello"}))
    [result] = results_of(chat)
    assert (result.outcome, result.value) == ("success", "hello")
    assert sent_results(server)[0]["content"] == "hello"


def test_several_text_blocks_are_joined_with_newlines_as_chatlas_joins_them(
    serve: Serve, kitchen_over_each: Tools
) -> None:
    chat, server = converse(serve, kitchen_over_each, ("two_paragraphs", {}))
    [block] = sent_results(server)
    assert block["content"] == "First.\nSecond."
    assert results_of(chat)[0].value == "First.\nSecond."


def test_an_image_is_sent_as_a_native_image_inside_the_tool_result(
    serve: Serve, kitchen_over_each: Tools
) -> None:
    chat, server = converse(serve, kitchen_over_each, ("picture", {}))
    caption, image = sent_results(server)[0]["content"]
    assert caption == {"type": "text", "text": "A 1x1 PNG:"}
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]).startswith(b"\x89PNG")
    assert isinstance(results_of(chat)[0].value[1], ContentImageInline)


def test_an_image_type_the_api_does_not_take_becomes_a_text_stand_in(
    serve: Serve, kitchen_over_each: Tools
) -> None:
    _, server = converse(serve, kitchen_over_each, ("drawing", {}))
    text = sent_results(server)[0]["content"]
    assert "image/svg+xml" in text and "not sent" in text


def test_audio_becomes_a_text_stand_in_naming_its_type(
    serve: Serve, kitchen_over_each: Tools
) -> None:
    chat, server = converse(serve, kitchen_over_each, ("sound", {}))
    assert results_of(chat)[0].outcome == "success"
    assert "audio (audio/wav, 16 bytes)" in sent_results(server)[0]["content"]


def test_an_embedded_text_resource_is_a_document_titled_by_its_uri(
    serve: Serve, kitchen_over_each: Tools
) -> None:
    chat, server = converse(serve, kitchen_over_each, ("report", {}))
    [document] = sent_results(server)[0]["content"]
    assert document["type"] == "document"
    assert document["title"] == "file:///reports/q1.csv"
    assert document["source"]["data"] == "region,sales\nWest,10\n"
    assert isinstance(results_of(chat)[0].value, ContentDocument)  # one part: the value


def test_an_embedded_pdf_is_sent_as_a_pdf_document(serve: Serve, kitchen_over_each: Tools) -> None:
    chat, server = converse(serve, kitchen_over_each, ("brochure", {}))
    [document] = sent_results(server)[0]["content"]
    assert document["source"]["media_type"] == "application/pdf"
    assert base64.b64decode(document["source"]["data"]).startswith(b"%PDF-1.4")
    assert isinstance(results_of(chat)[0].value, ContentPDF)


def test_an_embedded_blob_of_another_type_is_a_stand_in_naming_uri_and_type(
    serve: Serve, kitchen_over_each: Tools
) -> None:
    chat, server = converse(serve, kitchen_over_each, ("archive", {}))
    assert results_of(chat)[0].outcome == "success"
    assert sent_results(server)[0]["content"] == (
        "[resource file:///backups/site.zip (application/zip, 64 bytes): "
        "binary content the model cannot read]"
    )


def test_a_resource_link_is_a_stand_in_naming_its_uri_type_and_size(
    serve: Serve, kitchen_over_each: Tools
) -> None:
    _, server = converse(serve, kitchen_over_each, ("link", {}))
    assert sent_results(server)[0]["content"] == (
        "[resource link: q2.csv <file:///reports/q2.csv> (text/csv, 2,048 bytes): Sales for Q2]"
    )


def test_the_model_reads_the_text_blocks_and_structured_content_stays_in_extra(
    serve: Serve, kitchen_over_each: Tools
) -> None:
    chat, server = converse(serve, kitchen_over_each, ("point", {"x": 3}))
    [result] = results_of(chat)
    assert result.value == '{\n  "x": 3,\n  "double": 6\n}'
    assert result.extra == {"structured_content": {"x": 3, "double": 6}}
    assert sent_results(server)[0]["content"] == '{\n  "x": 3,\n  "double": 6\n}'


def test_is_error_is_an_error_outcome_with_the_servers_message(
    serve: Serve, kitchen_over_each: Tools
) -> None:
    with pytest.warns(ToolFailureWarning, match="Calling tool 'refuse' led to an error: "):
        chat, server = converse(
            serve, kitchen_over_each, ("refuse", {"reason": "the disk is full"})
        )
    [result] = results_of(chat)
    assert result.outcome == "error" and result.is_error and not result.is_exception
    assert isinstance(result.error, RuntimeError) and "the disk is full" in str(result.error)
    [block] = sent_results(server)
    assert block["is_error"] is True
    assert block["content"] == f"Tool call failed with error: '{result.error}'"


def test_a_servers_error_text_is_redacted_like_our_own(
    serve: Serve, kitchen_over_each: Tools, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BILLING_API_KEY", "hunter2-very-secret")
    with pytest.warns(ToolFailureWarning) as warned:
        _, server = converse(
            serve, kitchen_over_each, ("refuse", {"reason": "bad key hunter2-very-secret"})
        )
    assert "hunter2" not in str(warned[0].message)
    content = sent_results(server)[0]["content"]
    assert "hunter2" not in content and "[REDACTED]" in content


def test_arguments_that_do_not_fit_the_servers_schema_are_refused_before_the_call(
    serve: Serve, kitchen_over_each: Tools
) -> None:
    with pytest.warns(ToolFailureWarning, match="Invalid arguments for `point`"):
        chat, server = converse(serve, kitchen_over_each, ("point", {"x": "three", "y": 1}))
    [result] = results_of(chat)
    assert result.outcome == "refused"
    message = sent_results(server)[0]["content"]
    assert "argument `x`: 'three' is not of type 'integer'" in message
    assert "accepted: x" in message


def test_a_dotted_mcp_name_is_called_by_a_safe_name_and_reaches_the_server(
    serve: Serve, kitchen_over_each: Tools
) -> None:
    chat, _ = converse(serve, kitchen_over_each, ("files_read", {"path": "a.txt"}))
    assert results_of(chat)[0].value == "contents of a.txt"


def test_a_long_mcp_result_is_truncated_like_any_other(
    serve: Serve, kitchen_over_each: Tools
) -> None:
    chat, server = converse(
        serve, kitchen_over_each, ("long_text", {"lines": 2000}), max_result_bytes=2_000
    )
    [result] = results_of(chat)
    assert result.is_truncated and result.original_length is not None
    assert result.original_length > 50_000 and result.stored_length is not None
    assert result.stored_length <= 2_000
    assert "[truncated: showing the first" in sent_results(server)[0]["content"]


def test_the_result_store_keeps_an_mcp_result_whole(
    serve: Serve, kitchen_over_each: Tools, tmp_path: Path
) -> None:
    chat, _ = converse(
        serve,
        kitchen_over_each,
        ("long_text", {"lines": 500}),
        max_result_bytes=1_000,
        store=str(tmp_path / "results.db"),
    )
    assert chat.store is not None
    [record] = chat.store.list(None, chat.run_id)
    assert record.tool_call_id == results_of(chat)[0].id
    assert record.result is not None and "line 00499 of the long text" in record.result
    assert not record.is_truncated and results_of(chat)[0].is_truncated


def test_a_saved_chat_with_mcp_results_loads_and_continues_without_the_server(
    serve: Serve, kitchen_over_each: Tools, tmp_path: Path
) -> None:
    with pytest.warns(ToolFailureWarning):
        chat, _ = converse(
            serve,
            kitchen_over_each,
            ("picture", {}),
            ("point", {"x": 1}),
            ("refuse", {"reason": "no"}),
        )
    chat.save(tmp_path / "chat.json")
    with pytest.warns(UserWarning, match="calls tools not given"):
        loaded = Chat.load(tmp_path / "chat.json", api_key=TEST_KEY)
    assert [r.outcome for r in results_of(loaded)] == ["success", "success", "error"]
    assert results_of(loaded)[1].value == '{\n  "x": 1,\n  "double": 2\n}'
    spec = RequestSpec()
    sent_before = chat.provider.build_request(chat.get_turns(), spec)["messages"]
    assert loaded.provider.build_request(loaded.get_turns(), spec)["messages"] == sent_before
    loaded.provider = make_chat(serve([Reply.text("Still here.")])).provider
    assert str(loaded.chat("And now?", echo="none")) == "Still here."


def test_display_shows_an_mcp_result_with_its_outcome(
    serve: Serve, kitchen_over_each: Tools
) -> None:
    with pytest.warns(ToolFailureWarning):
        chat, _ = converse(serve, kitchen_over_each, ("refuse", {"reason": "no such user"}))
    shown = str(results_of(chat)[0])
    assert "refuse" in shown and "no such user" in shown


def test_the_model_is_offered_the_servers_schema_as_sent(
    serve: Serve, kitchen_over_each: Tools
) -> None:
    _, server = converse(serve, kitchen_over_each, ("echo", {"text": "x"}))
    offered = {t["name"]: t for t in server.message_requests()[0]["tools"]}
    assert offered["echo"]["input_schema"] == {
        "properties": {"text": {"title": "Text", "type": "string"}},
        "required": ["text"],
        "type": "object",
        "title": "echoArguments",
    }
    assert offered["echo"]["description"] == "Says the text back."
