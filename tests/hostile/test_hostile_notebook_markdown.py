"""Hostile input, notebooks: Markdown renderings carry no raw HTML and fetch no image.

A notebook renders ``_repr_markdown_`` with raw HTML on and loads every image it
names. Model-written HTML and remote images must be shown as text there, as the HTML
rendering already does; code blocks and spans keep their text exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from chatlas_like import AssistantTurn, Chat, ContentJson, ContentText, UserTurn
from chatlas_like._core.content import server_tool_request, server_tool_result
from chatlas_like._display.safe_markdown import safe_markdown
from chatlas_like.providers._anthropic.provider import AnthropicProvider
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat

HOSTILE = (
    "Here you go <img src=x onerror=alert(1)> and ![pixel](https://evil.example/t.png?u=1)\n\n"
    "<script>steal()</script>\n\n"
    "<div onclick='x()'>click</div>\n\n"
    "[ref image]: https://evil.example/r.png\n\n![again][ref image]"
)


def rendered(markdown: str) -> list[str]:
    """The token types a notebook's CommonMark renderer (raw HTML on) would see."""
    types: list[str] = []
    for token in MarkdownIt("commonmark").parse(markdown):
        types.append(token.type)
        types.extend(child.type for child in token.children or ())
    return types


def assert_inert(markdown: str) -> None:
    kinds = rendered(markdown)
    assert "html_inline" not in kinds and "html_block" not in kinds and "image" not in kinds
    html = MarkdownIt("commonmark").render(markdown)
    assert "<img" not in html and "<script" not in html and "<div" not in html


def chat_with(text: str) -> Chat:
    chat = Chat(AnthropicProvider(model="m"))
    chat.set_turns([UserTurn(["Show me"]), AssistantTurn([text])])
    return chat


def test_a_chats_markdown_carries_no_raw_html_or_image() -> None:
    assert_inert(chat_with(HOSTILE)._repr_markdown_())


def test_a_turns_markdown_carries_no_raw_html_or_image() -> None:
    assert_inert(AssistantTurn([HOSTILE])._repr_markdown_())


def test_a_contents_markdown_carries_no_raw_html_or_image() -> None:
    assert_inert(ContentText(HOSTILE)._repr_markdown_())


def test_a_responses_markdown_carries_no_raw_html_or_image(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([Reply.text(HOSTILE)]))
    response = chat.chat("Show me", echo="none")
    assert_inert(response._repr_markdown_())


async def test_an_async_responses_markdown_carries_no_raw_html_or_image(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([Reply.text(HOSTILE)]))
    response = await chat.chat_async("Show me", echo="none")
    assert_inert(response._repr_markdown_())


def test_the_text_of_html_and_images_is_still_shown() -> None:
    html = MarkdownIt("commonmark").render(safe_markdown(HOSTILE))
    assert "&lt;script&gt;steal()&lt;/script&gt;" in html
    assert "https://evil.example/t.png" in html and "pixel" in html


def test_code_blocks_and_spans_keep_their_text_exactly() -> None:
    text = "Use `<b>` or ``a `<i>` b``:\n\n```html\n<b>bold</b> ![x](y.png)\n```\n\n<br>"
    safe = safe_markdown(text)
    assert "`<b>`" in safe and "``a `<i>` b``" in safe
    assert "```html\n<b>bold</b> ![x](y.png)\n```" in safe
    assert_inert(safe)


def test_markdown_without_html_or_images_is_unchanged() -> None:
    text = "# Title\n\n- a < b and b > c\n- a [link](https://example.org)\n\n`x<y`"
    assert safe_markdown(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "\\`<img src=x onerror=y>`",  # an escaped backtick opens no code span
        "`` ` <img src=x> ``` x",  # unbalanced runs
        "> ```\n> <img src=x>\n<script>",  # a fence inside a quote
        "    <img src=x>\n<img src=y>",  # indented code next to HTML
        "<!-- comment --><img src=x>",
        "![a](b)![c](d)",
        "<a href='javascript:x()'>link</a>",
    ],
)
def test_tricky_markdown_is_made_inert(text: str) -> None:
    assert_inert(safe_markdown(text))


def test_every_piece_of_model_text_in_a_chat_is_covered() -> None:
    chat = chat_with("ok")
    chat.set_turns([UserTurn([HOSTILE]), AssistantTurn([ContentText(HOSTILE), HOSTILE])])
    assert_inert(chat._repr_markdown_())


# -- server-tool blocks, the system prompt, exports and the joins between contents ---------

EVIL = "<img src=x onerror=alert(1)>"
SEARCH = server_tool_request(
    "srvtoolu_1", "web_search", {"query": f"cats {EVIL}"}, {"type": "server_tool_use"}
)
FOUND = server_tool_result(
    "srvtoolu_1",
    {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [
            {
                "type": "web_search_result",
                "title": f"<script>steal()</script>\n\n{EVIL}",
                "url": "https://evil.example/<b>x</b>",
                "encrypted_content": "E",
            }
        ],
    },
)
FETCH = server_tool_request(
    "srvtoolu_2", "web_fetch", {"url": f"https://evil.example/{EVIL}"}, {"type": "server_tool_use"}
)
FETCHED = server_tool_result(
    "srvtoolu_2",
    {
        "type": "web_fetch_tool_result",
        "tool_use_id": "srvtoolu_2",
        "content": {
            "type": "web_fetch_result",
            "url": f"https://evil.example/{EVIL}",
            "content": {"type": "document", "title": f"![t](https://evil.example/t.png) {EVIL}"},
        },
    },
)
WEB = [SEARCH, FOUND, FETCH, FETCHED]


@pytest.mark.parametrize("block", WEB, ids=["search", "found", "fetch", "fetched"])
def test_a_server_tool_blocks_markdown_carries_no_raw_html_or_image(block: Any) -> None:
    assert_inert(block._repr_markdown_())


def test_a_turn_and_a_chat_with_web_activity_carry_no_raw_html_or_image() -> None:
    turn = AssistantTurn([*WEB, ContentText("Found it.")])
    assert_inert(turn._repr_markdown_())
    chat = Chat(AnthropicProvider(model="m"))
    chat.set_turns([UserTurn(["Search"]), turn])
    assert_inert(chat._repr_markdown_())


def test_the_system_prompt_in_a_chats_markdown_carries_no_raw_html_or_image() -> None:
    chat = Chat(AnthropicProvider(model="m"), system_prompt=f"Be kind.\n\n{HOSTILE}")
    chat.set_turns([UserTurn(["Hi"]), AssistantTurn(["Hello"])])
    assert_inert(chat._repr_markdown_())


def test_a_markdown_export_of_everything_carries_no_raw_html_or_image(tmp_path: Path) -> None:
    chat = Chat(AnthropicProvider(model="m"), system_prompt=HOSTILE)
    chat.set_turns([UserTurn(["Search"]), AssistantTurn([*WEB, ContentText(HOSTILE)])])
    path = chat.export(tmp_path / "chat.md", content="all", include_system_prompt=False)
    assert_inert(path.read_text())


@pytest.mark.parametrize(
    "pieces",
    [
        ["- a list item", "    <img src=x onerror=y>"],  # indented code, then prose in a list
        ["```", "<img src=x onerror=y>"],  # an open fence turns the next one inside out
    ],
    ids=["indented-after-a-list", "open-fence"],
)
def test_contents_joined_in_a_turn_stay_inert(pieces: list[str]) -> None:
    turn = AssistantTurn([ContentText(pieces[0]), ContentJson({"html": pieces[1]})])
    texts = AssistantTurn([ContentText(p) for p in pieces])
    assert_inert(turn._repr_markdown_())
    assert_inert(texts._repr_markdown_())
