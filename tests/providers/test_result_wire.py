"""What a tool result becomes on the wire: flags, options, media, merged generator results.

Every test goes through a real conversation on the loopback server and reads the
tool_result block the model received from the server's request log.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import orjson
import pytest

from chatlas_like import (
    ContentDocument,
    ContentImageInline,
    ContentImageRemote,
    ContentPDF,
    ContentText,
    ContentToolResult,
    from_json,
    to_json,
)
from chatlas_like.providers._anthropic.wire import content_block
from chatlas_like.testing import Reply

from ..conftest import make_chat

PNG = base64.b64encode(b"\x89PNG fake image bytes").decode()
IMAGE = ContentImageInline("image/png", PNG)
IMAGE_BLOCK = {
    "type": "image",
    "source": {"type": "base64", "media_type": "image/png", "data": PNG},
}
REMOTE = ContentImageRemote("https://example.org/chart.png")
REMOTE_BLOCK = {"type": "image", "source": {"type": "url", "url": "https://example.org/chart.png"}}
PDF = ContentPDF(data=b"%PDF-1.4 fake", filename="report.pdf")
PDF_BLOCK = {
    "type": "document",
    "source": {
        "type": "base64",
        "media_type": "application/pdf",
        "data": base64.b64encode(b"%PDF-1.4 fake").decode(),
    },
}
DOC = ContentDocument(data=b"a,b\n1,2\n", filename="table.csv", mime_type="text/csv")
DOC_BLOCK = {
    "type": "document",
    "title": "table.csv",
    "source": {"type": "text", "media_type": "text/plain", "data": "a,b\n1,2\n"},
}


def _sent_block(serve: Any, tool: Callable[..., Any], **register: Any) -> dict[str, Any]:
    server = serve([Reply.tool_call(tool.__name__, {}), Reply.text("Seen.")])
    chat = make_chat(server)
    chat.register_tool(tool, **register)
    assert str(chat.chat("Go", echo="none")) == "Seen."
    block = server.message_requests()[1]["messages"][-1]["content"][0]
    block.pop("cache_control", None)  # the chat's own cache breakpoint on the last block
    return block


def _returning(value: Any) -> Callable[[], Any]:
    def tool() -> Any:
        """Returns a fixed value."""
        return value

    return tool


# -- is_error and options ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "flag"),
    [
        ("success", False),
        ("denied", False),
        ("error", True),
        ("exception", True),
        ("refused", True),
    ],
)
def test_is_error_is_true_for_failed_outcomes_and_false_otherwise(outcome: str, flag: bool) -> None:
    from chatlas_like import ContentToolRequest

    request = ContentToolRequest("toolu_1", "t", {})
    error = None if outcome in ("success", "denied") else "it failed"
    value = "no" if outcome == "denied" else "ok"
    result = ContentToolResult(value=value, error=error, outcome=outcome, request=request)  # pyright: ignore[reportArgumentType]
    block = content_block(result)
    assert block is not None
    assert block["is_error"] is flag  # always said, as chatlas says it


def cached() -> ContentToolResult:
    """Asks for a cache breakpoint on its result."""
    return ContentToolResult(
        value="big stable text", options={"cache_control": {"type": "ephemeral"}}
    )


def test_options_land_on_the_tool_result_block(serve: Any) -> None:
    server = serve([Reply.tool_call("cached", {}), Reply.text("Seen.")])
    chat = make_chat(server)
    chat.register_tool(cached)
    chat.chat("Go", echo="none")
    block = server.message_requests()[1]["messages"][-1]["content"][0]
    assert block["cache_control"] == {"type": "ephemeral"}
    assert block["content"] == "big stable text"


# -- media ---------------------------------------------------------------------------------------

MEDIA_CASES = [
    ("image", IMAGE, [IMAGE_BLOCK]),
    ("remote-image", REMOTE, [REMOTE_BLOCK]),
    ("pdf", PDF, [PDF_BLOCK]),
    ("document", DOC, [DOC_BLOCK]),
    (
        "mixed-list",
        ["Here is the chart:", IMAGE, ContentText("and the data:"), {"n": 1}, DOC],
        [
            {"type": "text", "text": "Here is the chart:"},
            IMAGE_BLOCK,
            {"type": "text", "text": "and the data:"},
            {"type": "text", "text": '{"n":1}'},
            DOC_BLOCK,
        ],
    ),
    ("tuple", (IMAGE, PDF), [IMAGE_BLOCK, PDF_BLOCK]),
    (
        "nested-in-dict",
        {"chart": IMAGE, "rows": 3},
        [{"type": "text", "text": '{"chart":"[image 1]","rows":3}'}, IMAGE_BLOCK],
    ),
]


@pytest.mark.parametrize("model_format", ["auto", "json"])
@pytest.mark.parametrize(
    ("value", "blocks"), [c[1:] for c in MEDIA_CASES], ids=[c[0] for c in MEDIA_CASES]
)
def test_images_and_documents_go_natively_inside_the_tool_result(
    serve: Any, value: Any, blocks: list[dict[str, Any]], model_format: str
) -> None:
    def tool() -> ContentToolResult:
        """Returns media."""
        return ContentToolResult(value=value, model_format=model_format)  # pyright: ignore[reportArgumentType]

    block = _sent_block(serve, tool)
    assert block["content"] == blocks
    assert block["is_error"] is False


def test_as_is_sends_a_content_list_as_it_is(serve: Any) -> None:
    def tool() -> ContentToolResult:
        """Returns content blocks."""
        return ContentToolResult(value=["chart:", IMAGE, ContentText("done")], model_format="as_is")

    block = _sent_block(serve, tool)
    assert block["content"] == [
        {"type": "text", "text": "chart:"},
        IMAGE_BLOCK,
        {"type": "text", "text": "done"},
    ]


def test_str_format_sends_media_as_their_text(serve: Any) -> None:
    def tool() -> ContentToolResult:
        """Returns an image as text."""
        return ContentToolResult(value=IMAGE, model_format="str")

    block = _sent_block(serve, tool)
    assert block["content"] == str(IMAGE)


def test_a_media_result_survives_a_save_and_a_load(serve: Any) -> None:
    server = serve([Reply.tool_call("tool", {}), Reply.text("Seen.")])
    chat = make_chat(server)
    chat.register_tool(_returning(["chart:", IMAGE, PDF]), name="tool")
    chat.chat("Go", echo="none")
    restored = from_json(to_json(chat.get_turns()))
    assert restored[2].tool_results[0].get_model_value() == [ContentText("chart:"), IMAGE, PDF]


def test_a_media_list_over_the_byte_limit_keeps_its_media_and_cuts_its_text(serve: Any) -> None:
    block = _sent_block(serve, _returning(["x" * 5_000, IMAGE]), max_result_bytes=1_000)
    text, image, notice = block["content"]
    assert image == IMAGE_BLOCK
    assert text["type"] == "text" and len(text["text"]) < 1_000
    assert notice["text"].startswith("[truncated: showing the first")


# -- generators ----------------------------------------------------------------------------------


def progress() -> Iterator[Any]:
    """Yields several plain values."""
    yield {"step": 1}
    yield {"step": 2}
    yield {"step": 3}


def report() -> Iterator[Any]:
    """Yields results with their own formats, then an image."""
    yield ContentToolResult(value="Summary first.")
    yield ContentToolResult(value={"rows": 2}, options={"cache_control": {"type": "ephemeral"}})
    yield IMAGE


async def areport() -> AsyncIterator[Any]:
    """The async twin of report."""
    for item in report():
        await asyncio.sleep(0)
        yield item


def half_failed() -> Iterator[Any]:
    """Yields a success, then a failure."""
    yield ContentToolResult(value="partial data")
    yield ContentToolResult(error="the second source is down")


def single() -> Iterator[Any]:
    """Yields once."""
    yield {"only": True}


def test_a_generator_of_plain_values_sends_one_result_of_their_texts_one_per_line(
    serve: Any,
) -> None:
    block = _sent_block(serve, progress)
    assert block["content"] == '{"step":1}\n{"step":2}\n{"step":3}'


@pytest.mark.parametrize("tool", [report, areport], ids=["sync", "async"])
def test_a_generator_of_results_sends_one_tool_result_with_their_blocks_in_order(
    serve: Any, tool: Callable[..., Any]
) -> None:
    server = serve([Reply.tool_call(tool.__name__, {}), Reply.text("Seen.")])
    chat = make_chat(server)
    chat.register_tool(tool)
    chat.chat("Go", echo="none")
    user = server.message_requests()[1]["messages"][-1]["content"]
    assert len(user) == 1
    block = user[0]
    assert block["content"] == [
        {"type": "text", "text": "Summary first."},
        {"type": "text", "text": '{"rows":2}'},
        IMAGE_BLOCK,
    ]
    assert block["cache_control"] == {"type": "ephemeral"}
    result = chat.get_turns()[2].tool_results[0]
    assert result.value == ["Summary first.", '{"rows":2}', IMAGE]  # as chatlas combines them
    assert [part.value for part in result.parts or ()] == ["Summary first.", {"rows": 2}, IMAGE]


def test_a_generator_with_a_failed_result_is_a_failure(serve: Any) -> None:
    block = _sent_block(serve, half_failed)
    assert block["is_error"] is True
    assert block["content"] == "Tool call failed with error: 'the second source is down'"


def test_a_generator_that_yields_once_sends_that_value(serve: Any) -> None:
    assert _sent_block(serve, single)["content"] == '{"only":true}'


# -- extra ---------------------------------------------------------------------------------------


class Handle:
    """Something orjson cannot encode."""


def with_extra() -> ContentToolResult:
    """Keeps processed data for the application."""
    return ContentToolResult(value="3 rows", extra={"rows": [1, 2, 3]})


def with_odd_extra() -> ContentToolResult:
    """Keeps something that cannot be saved."""
    return ContentToolResult(value="3 rows", extra=Handle())


def test_extra_is_never_sent_and_is_saved_when_orjson_encodes_it(serve: Any) -> None:
    server = serve([Reply.tool_call("with_extra", {}), Reply.text("Seen.")])
    chat = make_chat(server)
    chat.register_tool(with_extra)
    chat.chat("Go", echo="none")
    assert b'"rows"' not in orjson.dumps(server.message_requests()[1])
    assert server.message_requests()[1]["messages"][-1]["content"][0]["content"] == "3 rows"
    restored = from_json(to_json(chat.get_turns()))[2].tool_results[0]
    assert restored.extra == {"rows": [1, 2, 3]}


def test_extra_orjson_cannot_encode_is_dropped_with_one_warning_per_save(serve: Any) -> None:
    calls = [("with_odd_extra", {}), ("with_odd_extra", {})]
    server = serve([Reply.tool_calls(calls), Reply.text("Seen.")])
    chat = make_chat(server)
    chat.register_tool(with_odd_extra)
    chat.chat("Go", echo="none")
    with pytest.warns(UserWarning, match="`extra` of a result of type Handle") as caught:
        saved = to_json(chat.get_turns())
    assert len(caught) == 1
    restored = from_json(saved)[2].tool_results
    assert [r.extra for r in restored] == [None, None]
    assert [r.get_model_value() for r in restored] == ["3 rows", "3 rows"]
