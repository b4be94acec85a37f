"""Hostile input, tool media: one huge image or document cannot break a chat for good.

Every result stays in the history, and every request resends it: a 30 MB image kept
whole made every later request too large for the API. Images, PDFs and other media
share a budget of their own (the larger of ``max_result_bytes`` and ``MEDIA_BYTES``);
one past it is replaced by a line telling the model what it was. Text documents (an MCP
server's embedded text resources) are cut like text. The history and the store keep the
whole result.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from chatlas_like import (
    ContentDocument,
    ContentImageInline,
    ContentToolResult,
    Tool,
    ToolBuiltIn,
)
from chatlas_like._tools.finalize import MEDIA_BYTES
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat
from ..support.mcp import converse, kitchen_over_each, results_of, sent_results

__all__ = ["kitchen_over_each"]  # a fixture, used by name

Serve = Callable[..., LoopbackServer]
HUGE = base64.b64encode(bytes(4 * MEDIA_BYTES // 3 + 300_000)).decode()  # past the budget


def screenshot() -> ContentImageInline:
    """Takes a screenshot (a huge one)."""
    return ContentImageInline("image/png", HUGE)


def request_sizes(server: LoopbackServer) -> list[int]:
    return [len(orjson.dumps(body)) for body in server.message_requests()]


def test_a_huge_image_from_a_local_tool_is_not_sent_and_the_model_is_told(serve: Serve) -> None:
    server = serve([Reply.tool_call("screenshot", {}), Reply.text("Too big."), Reply.text("ok")])
    chat = make_chat(server)
    chat.register_tool(screenshot)
    chat.chat("Look", echo="none")
    chat.chat("And then?", echo="none")  # the chat goes on: no request carries the image
    [block] = sent_results(server)
    [stand_in] = block["content"]
    assert stand_in["type"] == "text"
    assert stand_in["text"].startswith("[an image (image/png) of ")
    assert f"not sent, over the {MEDIA_BYTES:,} bytes" in stand_in["text"]
    assert max(request_sizes(server)) < 100_000


def test_the_history_and_the_store_keep_a_huge_image_whole(serve: Serve, tmp_path: Path) -> None:
    server = serve([Reply.tool_call("screenshot", {}), Reply.text("Too big.")])
    chat = make_chat(server, store=tmp_path / "r.db", tenant_id="acme", store_max_bytes=2**25)
    chat.register_tool(screenshot)
    chat.chat("Look", echo="none")
    [result] = results_of(chat)
    assert result.value == ContentImageInline("image/png", HUGE)
    assert result.is_truncated
    assert chat.store is not None
    [record] = chat.store.list("acme", chat.run_id)
    assert record.result is not None and HUGE in record.result


def test_an_image_within_the_budget_is_still_sent(serve: Serve) -> None:
    small = ContentImageInline("image/png", base64.b64encode(bytes(200_000)).decode())

    def photo() -> ContentImageInline:
        """Takes a photo."""
        return small

    server = serve([Reply.tool_call("photo", {}), Reply.text("Nice.")])
    chat = make_chat(server)  # max_result_bytes is 100,000: the image has a budget of its own
    chat.register_tool(photo)
    chat.chat("Look", echo="none")
    [block] = sent_results(server)
    assert block["content"][0]["type"] == "image"


def test_media_past_the_budget_are_left_out_in_order_keeping_the_first(serve: Serve) -> None:
    half = base64.b64encode(bytes(MEDIA_BYTES // 2)).decode()  # 2/3 of the budget as sent

    def album() -> ContentToolResult:
        """Two photos and a caption."""
        photos = [ContentImageInline("image/png", half), ContentImageInline("image/png", half)]
        return ContentToolResult(value=["Two photos:", *photos], model_format="as_is")

    server = serve([Reply.tool_call("album", {}), Reply.text("One came.")])
    chat = make_chat(server)
    chat.register_tool(album)
    chat.chat("Look", echo="none")
    [block] = sent_results(server)
    caption, image, stand_in = block["content"]
    assert caption == {"type": "text", "text": "Two photos:"}
    assert image["type"] == "image" and "not sent" in stand_in["text"]


# -- from MCP servers, over stdio and streamable HTTP ----------------------------------------


def test_a_huge_image_from_an_mcp_server_is_not_sent_and_the_chat_goes_on(
    serve: Serve, kitchen_over_each: list[Tool | ToolBuiltIn]
) -> None:
    kilobytes = MEDIA_BYTES // 1024  # 4/3 of the budget once in base64
    chat, server = converse(serve, kitchen_over_each, ("big_picture", {"kilobytes": kilobytes}))
    [block] = sent_results(server)
    caption, stand_in = block["content"]
    assert caption == {"type": "text", "text": "The picture:"}
    assert stand_in["text"].startswith("[an image (image/png) of ")
    assert max(request_sizes(server)) < 100_000
    [result] = results_of(chat)
    kept: Any = result.value
    assert isinstance(kept[1], ContentImageInline) and len(kept[1].data) > MEDIA_BYTES


def test_a_huge_embedded_text_resource_is_cut_like_text(
    serve: Serve, kitchen_over_each: list[Tool | ToolBuiltIn]
) -> None:
    chat, server = converse(serve, kitchen_over_each, ("big_report", {"kilobytes": 1_000}))
    [block] = sent_results(server)
    document, notice = block["content"]
    assert document["type"] == "document" and document["title"] == "file:///reports/all.csv"
    assert 90_000 < len(document["source"]["data"]) < 100_000  # max_result_bytes
    assert notice["text"].startswith("[truncated: showing the first")
    assert max(request_sizes(server)) < 200_000
    [result] = results_of(chat)
    whole = result.value  # one block: the value itself, as chatlas makes it
    assert isinstance(whole, ContentDocument) and len(whole.data or b"") > 1_000_000
