"""Hostile input, notebooks: Markdown renderings carry no raw HTML and fetch no image.

A notebook renders ``_repr_markdown_`` with raw HTML on and loads every image it
names. Model-written HTML and remote images must be shown as text there, as the HTML
rendering already does; code blocks and spans keep their text exactly.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from markdown_it import MarkdownIt

from chatlas_like import AssistantTurn, Chat, ContentText, UserTurn
from chatlas_like._display.safe_markdown import safe_markdown
from chatlas_like.providers._anthropic.provider import AnthropicProvider
from chatlas_like.testing import LoopbackServer, Reply

from .conftest import make_chat

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
