"""``chat.app()`` driven in a real headless Chromium, as a person uses it.

Debian's chromium through Playwright's Python API (no browser download), a fresh
profile, every request routed: anything not for 127.0.0.1 is aborted and fails the
test. The model is scripted on a loopback server; the app is served on another
loopback port from this process, so the slow tool can wait on an event the test sets.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from chatlas_like.shiny import AppServer
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
WAIT_MS = 30_000
INPUT = "#chat .shiny-chat-input [role='textbox']"  # shinychat's composer
slow_started = threading.Event()
release_slow = threading.Event()


def weather(city: str) -> str:
    """The current weather in a city.

    Parameters
    ----------
    city
        The city.
    """
    return f"<script>window.__pwned = true</script> sunny in {city}, 21 °C"


def slow_report() -> str:
    """A report that takes a while to build."""
    slow_started.set()
    release_slow.wait(timeout=120)
    return "the report is ready"


gates = {name: threading.Event() for name in ("first", "second", "third", "halfway")}
running = threading.Semaphore(0)


def first() -> str:
    """The first of three calls."""
    running.release()
    gates["first"].wait(timeout=120)
    return "first done"


def second() -> Iterator[str]:
    """The second of three calls: reports progress."""
    running.release()
    gates["halfway"].wait(timeout=120)
    yield "halfway there"
    gates["second"].wait(timeout=120)
    yield "second done"


def third() -> str:
    """The third of three calls."""
    running.release()
    gates["third"].wait(timeout=120)
    return "third done"


def quarterly_sales() -> Any:
    """Sales by region."""
    import pandas as pd

    regions = [f"Region <{i}>" for i in range(25)]
    return pd.DataFrame({"region": regions, "q3": range(100, 125)})


def model(body: Mapping[str, Any]) -> Reply:
    messages: list[dict[str, Any]] = body["messages"]
    last: list[dict[str, Any]] = messages[-1]["content"]
    texts = [b["text"] for b in last if b["type"] == "text"]
    if not texts:
        asked = {b["id"]: b["name"] for b in messages[-2]["content"] if b["type"] == "tool_use"}
        if asked[last[0]["tool_use_id"]] == "weather":
            return Reply.text("It is **sunny** in Paris, 21 °C.", chunks=8)
        if asked[last[0]["tool_use_id"]] == "quarterly_sales":
            return Reply.text("Region 24 sold most.")
        if asked[last[0]["tool_use_id"]] == "first":
            return Reply.text("All three are done.")
        return Reply.text("The slow report is done.")
    prompt = texts[-1].lower()
    if "weather" in prompt:
        return Reply.tool_call("weather", {"city": "Paris"}, text="Let me check the weather.")
    if "three" in prompt:
        return Reply.tool_calls([("first", {}), ("second", {}), ("third", {})])
    if "sales" in prompt:
        return Reply.tool_call("quarterly_sales", {})
    if "both" in prompt:
        return Reply.tool_calls([("slow_report", {}), ("weather", {"city": "Paris"})])
    if "slow" in prompt:
        return Reply.tool_call("slow_report", {}, text="Building the report.")
    if "fail" in prompt:
        return Reply.error(400, "invalid_request_error", "scripted failure for the test")
    return Reply.text(f"pong: {texts[-1]}")


@pytest.fixture
def app() -> Iterator[tuple[AppServer, LoopbackServer]]:
    slow_started.clear()
    release_slow.clear()
    for gate in gates.values():
        gate.clear()
    with LoopbackServer(model) as api:
        chat = make_chat(api, system_prompt="Be brief.", max_retries=0)
        for tool in (weather, slow_report, first, second, third, quarterly_sales):
            chat.register_tool(tool)
        server = chat.app(launch_browser=False, bg_thread=True)
        try:
            yield server, api
        finally:
            release_slow.set()
            for gate in gates.values():
                gate.set()
            server.stop()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    assert executable, "chromium is not installed: run scripts/system-deps.sh"
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=executable,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1000, "height": 1400},
        )
        yield context
        context.close()


class Outside:
    """Routes every request of a page: loopback goes through, anything else is aborted."""

    def __init__(self) -> None:
        self.blocked: list[str] = []

    def route(self, route: Any) -> None:
        if urlparse(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()


def open_page(context: Any, url: str, outside: Outside) -> Any:
    page = context.new_page()
    page.route("**/*", outside.route)
    page.goto(url)
    page.locator(INPUT).wait_for(timeout=WAIT_MS)
    return page


def send(page: Any, text: str) -> None:
    box = page.locator(INPUT)
    box.type(text)
    box.press("Enter")


def test_the_app_streams_answers_and_tool_cards_and_keeps_sessions_apart(
    app: tuple[AppServer, LoopbackServer], browser: Any
) -> None:
    from playwright.sync_api import expect

    server, api = app
    outside = Outside()
    sockets: list[str] = []
    browser.on("page", lambda p: p.on("websocket", lambda ws: sockets.append(ws.url)))
    first = open_page(browser, server.url, outside)

    # A question with a tool call: the streamed answer and the result card appear.
    send(first, "What's the weather in Paris?")
    expect(first.get_by_text("It is sunny in Paris, 21 °C.")).to_be_visible(timeout=WAIT_MS)
    card = first.locator(".chatlas-like-tool-result").first
    expect(card).to_be_visible()
    expect(card).to_contain_text("✔ result")
    expect(card).to_contain_text('weather(city="Paris")')

    # The tool's <script> is shown as text, never run.
    card.locator("summary").click()
    expect(card.locator("pre").last).to_contain_text("<script>window.__pwned = true</script>")
    assert card.locator("script").count() == 0
    assert first.evaluate("window.__pwned === undefined")

    # A failing answer shows an error box in the chat, and the session goes on.
    send(first, "Please fail.")
    expect(first.locator(".chatlas-like-error")).to_contain_text("BadRequestError", timeout=WAIT_MS)
    send(first, "ping after the error")
    expect(first.get_by_text("pong: ping after the error")).to_be_visible(timeout=WAIT_MS)

    # While the first session's slow tool runs, a second session answers.
    send(first, "Build the slow report.")
    assert slow_started.wait(timeout=WAIT_MS / 1000)
    expect(first.locator(".chatlas-like-tool-request[data-tool='slow_report']")).to_be_visible()
    second = open_page(browser, server.url, outside)
    send(second, "ping from the second session")
    expect(second.get_by_text("pong: ping from the second session")).to_be_visible(timeout=WAIT_MS)
    assert not release_slow.is_set()  # the slow tool was still running all along
    release_slow.set()
    expect(first.get_by_text("The slow report is done.")).to_be_visible(timeout=WAIT_MS)

    # Each session has its own history: the second one's request held one message.
    bodies = api.message_requests()
    (second_request,) = [b for b in bodies if "second session" in str(b["messages"][-1])]
    assert len(second_request["messages"]) == 1

    ARTIFACTS.mkdir(exist_ok=True)
    first.screenshot(path=str(ARTIFACTS / "shiny-chat.png"))
    assert outside.blocked == []
    assert sockets and all(urlparse(url).hostname == "127.0.0.1" for url in sockets)


def test_the_app_shows_the_history_the_chat_already_had(browser: Any) -> None:
    from playwright.sync_api import expect

    from chatlas_like import AssistantTurn, ContentToolRequest, ContentToolResult, UserTurn

    request = ContentToolRequest(id="toolu_9", name="weather", arguments={"city": "Oslo"})
    earlier = [
        UserTurn("Weather in Oslo?"),
        AssistantTurn([request]),
        UserTurn([ContentToolResult(value="snow <b>heavy</b>", request=request)]),
        AssistantTurn("It is snowing in Oslo."),
    ]
    with LoopbackServer([Reply.text("pong")]) as api:
        chat = make_chat(api)
        chat.register_tool(weather)
        chat.set_turns(earlier)
        with chat.app(launch_browser=False, bg_thread=True) as server:
            outside = Outside()
            page = open_page(browser, server.url, outside)
            expect(page.get_by_text("It is snowing in Oslo.")).to_be_visible(timeout=WAIT_MS)
            expect(page.get_by_text("Weather in Oslo?")).to_be_visible()
            card = page.locator(".chatlas-like-tool-result")
            expect(card).to_contain_text('weather(city="Oslo")')
            # One card per call: the request's card is hidden by its result's.
            expect(page.locator(".chatlas-like-tool:visible")).to_have_count(1)
            card.locator("summary").click()
            expect(card.locator("pre").last).to_contain_text("snow <b>heavy</b>")
            assert outside.blocked == []


def test_a_running_card_turns_into_its_result_card_while_another_call_still_runs(
    app: tuple[AppServer, LoopbackServer], browser: Any
) -> None:
    """Needs results delivered as calls finish (issue 14's tool runner)."""
    from playwright.sync_api import expect

    server, _ = app
    outside = Outside()
    page = open_page(browser, server.url, outside)
    send(page, "Run both tools.")
    assert slow_started.wait(timeout=WAIT_MS / 1000)
    slow = ".chatlas-like-tool[data-tool='slow_report']:visible"
    weather_cards = ".chatlas-like-tool[data-tool='weather']:visible"

    # The fast call's card turns into its result while the slow one still runs.
    expect(page.locator(".chatlas-like-tool-result[data-tool='weather']")).to_be_visible(
        timeout=WAIT_MS
    )
    expect(page.locator(weather_cards)).to_have_count(1)
    expect(page.locator(slow)).to_have_count(1)
    expect(page.locator(slow)).to_contain_text("⏳ running")
    assert not release_slow.is_set()

    release_slow.set()
    expect(page.locator(".chatlas-like-tool-result[data-tool='slow_report']")).to_be_visible(
        timeout=WAIT_MS
    )
    expect(page.locator(slow)).to_have_count(1)
    expect(page.locator(slow)).to_contain_text("✔ result")
    expect(page.locator(weather_cards)).to_have_count(1)
    assert page.evaluate("window.__pwned === undefined")
    assert outside.blocked == []


# The visible tool cards, top to bottom: (tool, what its outcome label says).
CARDS_SHOWN = """() => Array.from(document.querySelectorAll('.chatlas-like-tool'))
  .filter((card) => card.checkVisibility())
  .map((card) => [card.getBoundingClientRect().top, card.dataset.tool,
                  card.querySelector('.chatlas-like-outcome').textContent])
  .sort((a, b) => a[0] - b[0])
  .map(([, tool, label]) => [tool, label])"""


def cards_shown(page: Any) -> list[tuple[str, str]]:
    return [(tool, label) for tool, label in page.evaluate(CARDS_SHOWN)]


def wait_for_cards(page: Any, expected: list[tuple[str, str]]) -> None:
    """Wait until the page shows these cards, top to bottom; fail with what it shows."""
    try:
        page.wait_for_function(
            f"(expected) => JSON.stringify(({CARDS_SHOWN})()) === JSON.stringify(expected)",
            arg=[list(card) for card in expected],
            timeout=WAIT_MS,
        )
    except Exception:
        pytest.fail(f"the page shows {cards_shown(page)}, not {expected}")


def test_cards_stay_in_call_order_and_update_in_place_while_calls_finish_out_of_order(
    app: tuple[AppServer, LoopbackServer], browser: Any
) -> None:
    from playwright.sync_api import expect

    server, _ = app
    outside = Outside()
    page = open_page(browser, server.url, outside)
    send(page, "Run three tools.")
    for _ in range(3):
        assert running.acquire(timeout=WAIT_MS / 1000)
    run, done = "⏳ running", "✔ result"
    wait_for_cards(page, [("first", run), ("second", run), ("third", run)])

    gates["third"].set()  # the last call finishes first
    wait_for_cards(page, [("first", run), ("second", run), ("third", done)])
    gates["halfway"].set()  # the middle one reports progress, in its place
    expect(page.locator(".chatlas-like-progress-line:visible")).to_contain_text("halfway")
    wait_for_cards(page, [("first", run), ("second", run), ("third", done)])
    gates["first"].set()
    wait_for_cards(page, [("first", done), ("second", run), ("third", done)])
    gates["second"].set()
    wait_for_cards(page, [("first", done), ("second", done), ("third", done)])
    expect(page.get_by_text("All three are done.")).to_be_visible(timeout=WAIT_MS)
    wait_for_cards(page, [("first", done), ("second", done), ("third", done)])
    assert outside.blocked == []


def test_a_dataframe_result_is_a_table_with_what_the_model_read_one_click_away(
    app: tuple[AppServer, LoopbackServer], browser: Any
) -> None:
    from playwright.sync_api import expect

    server, _ = app
    outside = Outside()
    page = open_page(browser, server.url, outside)
    send(page, "What were the sales?")
    expect(page.get_by_text("Region 24 sold most.")).to_be_visible(timeout=WAIT_MS)
    card = page.locator(".chatlas-like-tool-result[data-tool='quarterly_sales']:visible")
    card.locator("summary").first.click()
    table = card.locator("table.chatlas-like-dataframe")
    expect(table).to_be_visible()
    expect(table.locator("tbody tr")).to_have_count(10)
    expect(table.locator("tbody tr").first).to_contain_text("Region <0>")  # escaped, shown
    expect(card).to_contain_text("first 10 of 25 rows · 2 columns")
    read = card.locator("details.chatlas-like-preview")
    expect(read.locator("pre")).to_be_hidden()  # one click away
    read.locator("summary").click()
    expect(read.locator("pre")).to_contain_text('"region":"Region <0>"')
    assert outside.blocked == []
