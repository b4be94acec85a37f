"""Shiny bookmarks: a conversation survives a reload of a bookmarked page.

As chatlas's docs show it (``chat.enable_bookmarking(chat_client)`` with an app bookmark
store), and through ``chat.app(bookmark_store="url")``; driven in headless Chromium,
every request routed and anything not for 127.0.0.1 failing the test.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from chatlas_like import Chat
from chatlas_like.shiny import AppServer
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat
from .test_shiny_browser import INPUT, WAIT_MS, Outside, open_page, send
from .test_shiny_browser import browser as browser  # the fixture

pytestmark = pytest.mark.browser


def capital(country: str) -> str:
    """The capital of a country."""
    return f"The capital of {country} is <b>Paris</b>."


def model(body: dict[str, Any]) -> Reply:
    last = body["messages"][-1]["content"]
    texts = [b["text"] for b in last if b["type"] == "text"]
    if not texts:
        return Reply.text("Paris it is.")
    if "capital" in texts[-1]:
        return Reply.tool_call("capital", {"country": "France"})
    return Reply.text(f"You said: {texts[-1]} (I remember {len(body['messages'])} messages)")


def bookmarking_app(chat_client: Chat) -> Any:
    """The app of chatlas's chatbot docs, written with shiny's core API."""
    import shinychat
    from shiny import App, ui

    def app_ui(request: Any) -> Any:
        return ui.page_fillable(shinychat.chat_ui("chat"))

    def server(input: Any, output: Any, session: Any) -> None:
        chat = shinychat.Chat("chat")
        client = chat_client.copy()  # one conversation per session
        chat.enable_bookmarking(client)

        @chat.on_user_submit
        async def _(user_input: str) -> None:  # pyright: ignore[reportUnusedFunction]
            response = await client.stream_async(user_input, content="all")
            await chat.append_message_stream(response)

    return App(app_ui, server, bookmark_store="url")


@pytest.fixture
def api() -> Iterator[LoopbackServer]:
    with LoopbackServer(model) as server:
        yield server


def ask_and_bookmark(page: Any) -> str:
    from playwright.sync_api import expect

    send(page, "What is the capital of France?")
    expect(page.get_by_text("Paris it is.")).to_be_visible(timeout=WAIT_MS)
    page.wait_for_url("**_values_**", timeout=WAIT_MS)  # the bookmark is in the URL
    return str(page.url)


def reopen(context: Any, url: str, outside: Outside) -> Any:
    from playwright.sync_api import expect

    page = open_page(context, url, outside)
    expect(page.get_by_text("Paris it is.")).to_be_visible(timeout=WAIT_MS)
    return page


def test_a_bookmarked_conversation_comes_back_after_a_reload(
    api: LoopbackServer, browser: Any
) -> None:
    from playwright.sync_api import expect

    chat_client = make_chat(api)
    chat_client.register_tool(capital)
    outside = Outside()
    with AppServer(bookmarking_app(chat_client)) as server:
        first = open_page(browser, server.url, outside)
        url = ask_and_bookmark(first)
        first.close()
        page = reopen(browser, url, outside)
        expect(page.get_by_text("What is the capital of France?")).to_be_visible()
        # The history came back to the client as well: the model is sent all of it.
        send(page, "and now?")
        expect(page.get_by_text("You said: and now? (I remember 5 messages)")).to_be_visible(
            timeout=WAIT_MS
        )
    body = api.message_requests()[-1]
    assert any(b["type"] == "tool_result" for m in body["messages"] for b in m["content"])
    assert outside.blocked == []


def test_chat_app_bookmarks_its_conversations_in_the_url(api: LoopbackServer, browser: Any) -> None:
    from playwright.sync_api import expect

    chat = make_chat(api)
    chat.register_tool(capital)
    outside = Outside()
    with chat.app(launch_browser=False, bg_thread=True, bookmark_store="url") as server:
        first = open_page(browser, server.url, outside)
        url = ask_and_bookmark(first)
        first.close()
        page = reopen(browser, url, outside)
        card = page.locator(".chatlas-like-tool-result")
        expect(card).to_contain_text('capital(country="France")')
        send(page, "and now?")
        expect(page.get_by_text("(I remember 5 messages)")).to_be_visible(timeout=WAIT_MS)
    assert chat.get_turns() == []  # the sessions had their own copies
    assert outside.blocked == []


def test_a_chat_app_without_bookmarks_keeps_the_url_clean(
    api: LoopbackServer, browser: Any
) -> None:
    from playwright.sync_api import expect

    chat = make_chat(api)
    outside = Outside()
    with chat.app(launch_browser=False, bg_thread=True, bookmark_store="disable") as server:
        page = open_page(browser, server.url, outside)
        send(page, "hello")
        expect(page.get_by_text("You said: hello")).to_be_visible(timeout=WAIT_MS)
        assert "_values_" not in page.url
        assert page.locator(INPUT).count() == 1


def three_lookups(body: dict[str, Any]) -> Reply:
    """Three tool calls for every question, then an answer naming the question."""
    last = body["messages"][-1]["content"]
    texts = [b["text"] for b in last if b["type"] == "text"]
    if texts:
        calls = [("capital", {"country": c}) for c in ("France", "Spain", "Italy")]
        return Reply.tool_calls(calls)
    asked = sum(
        any(b["type"] == "text" for b in m["content"])
        for m in body["messages"]
        if m["role"] == "user"
    )
    return Reply.text(f"Answer {asked}: " + "Paris, Madrid and Rome. " * 20)


def kept_whole(folder: Any, text: str) -> None:
    """Wait until the conversation kept in ``folder`` holds ``text``."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        if any(text in p.read_text() for p in folder.glob("*.json")):
            return
        time.sleep(0.05)
    raise AssertionError(f"no bookmarked conversation in {folder} holds {text!r}")


def test_ten_answers_with_three_tool_calls_each_restore_from_a_url_under_8_kb(
    browser: Any, tmp_path: Any
) -> None:
    from playwright.sync_api import expect

    folder = tmp_path / "bookmarks"
    with LoopbackServer(three_lookups) as api:
        chat = make_chat(api)
        chat.register_tool(capital)
        outside = Outside()
        with chat.app(
            launch_browser=False, bg_thread=True, bookmark_store="url", bookmark_dir=folder
        ) as server:
            page = open_page(browser, server.url, outside)
            for n in range(1, 11):
                send(page, f"Question {n}: the capitals?")
                expect(page.get_by_text(f"Answer {n}:")).to_be_visible(timeout=WAIT_MS)
                kept_whole(folder, f"Answer {n}:")  # answered whole, and bookmarked
            page.wait_for_url("**_values_**", timeout=WAIT_MS)
            url = str(page.url)
            page.close()
            reopened = open_page(browser, url, outside)
            expect(reopened.get_by_text("Answer 10:")).to_be_visible(timeout=WAIT_MS)
            expect(reopened.get_by_text("Answer 1:")).to_be_visible()
            assert reopened.locator(".chatlas-like-tool-result").count() == 30
    assert len(url.encode()) < 8 * 1024, len(url)
    assert [p.suffix for p in folder.iterdir()] == [".json"]  # the conversation is here
    assert outside.blocked == []
