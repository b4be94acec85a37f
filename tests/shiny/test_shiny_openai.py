"""The Shiny app on OpenAI's two APIs: the same tool cards and outcomes as on Anthropic,
driven in headless Chromium, the model a loopback server speaking each API."""

from __future__ import annotations

from typing import Any

import pytest

from chatlas_like import ChatOpenAI, ChatOpenAICompletions
from chatlas_like.testing import LoopbackServer, Reply

from .test_shiny_browser import WAIT_MS, Outside, open_page, send
from .test_shiny_browser import browser as browser  # the fixture

pytestmark = pytest.mark.browser


def weather(city: str) -> str:
    """The current weather in a city."""
    return f"<b>sunny</b> in {city}"


def forecast(city: str) -> str:
    """Tomorrow's forecast for a city."""
    raise RuntimeError("the forecast service is down")


@pytest.mark.parametrize(
    "make", [ChatOpenAI, ChatOpenAICompletions], ids=["responses", "completions"]
)
def test_the_app_shows_a_card_per_call_with_its_outcome_on_openai(browser: Any, make: Any) -> None:
    from playwright.sync_api import expect

    calls = [("weather", {"city": "Paris"}), ("forecast", {"city": "Paris"})]
    script = [Reply.tool_calls(calls), Reply.text("Sunny today; no forecast.")]
    with LoopbackServer(script) as api:
        chat = make(base_url=api.openai_url, api_key="test", model="gpt-4.1")
        chat.register_tool(weather)
        chat.register_tool(forecast)
        outside = Outside()
        with chat.app(launch_browser=False, bg_thread=True, bookmark_store="disable") as server:
            page = open_page(browser, server.url, outside)
            send(page, "Weather in Paris, and tomorrow?")
            expect(page.get_by_text("Sunny today; no forecast.")).to_be_visible(timeout=WAIT_MS)
            cards = page.locator(".chatlas-like-tool-result")
            expect(cards).to_have_count(2, timeout=WAIT_MS)
            expect(cards.nth(0)).to_contain_text('weather(city="Paris")')
            expect(cards.nth(1)).to_contain_text("exception")
            assert page.evaluate("document.querySelectorAll('b').length") == 0  # escaped
        assert [r.response_status for r in api.requests if r.method == "POST"] == [200, 200]
    assert outside.blocked == []
