"""A provider's web searches and fetches are echoed as chatlas shows them: one panel per
episode, "Searching the web…" while it runs, "Searched the web (N results · * K cited)"
once it ends; "Read the web" for fetches alone."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from chatlas_like import (
    ContentCitation,
    ContentToolRequestFetch,
    ContentToolRequestSearch,
    ContentToolResponseFetch,
    ContentToolResponseSearch,
)
from chatlas_like._display.notebook import NotebookEcho
from chatlas_like._display.terminal import ConsoleEcho
from chatlas_like._display.web_activity import WebActivity, web_activity_html
from chatlas_like.types import WebSource

SEARCH = ContentToolRequestSearch(id="srvtoolu_s", query="ggplot2 release")
FOUND = ContentToolResponseSearch(
    tool_use_id="srvtoolu_s",
    sources=[
        WebSource(url="https://cran.r-project.org/package=ggplot2", title="CRAN: ggplot2"),
        WebSource(url="https://en.wikipedia.org/wiki/Ggplot2", title="ggplot2 - Wikipedia"),
    ],
)
CITED = ContentCitation(
    source=WebSource(url="https://en.wikipedia.org/wiki/Ggplot2", title="ggplot2 - Wikipedia"),
    cited_quote="released in May 2014",
)
FETCH = ContentToolRequestFetch(id="srvtoolu_f", url="https://example.com/page")


def fetched(status: Any) -> ContentToolResponseFetch:
    return ContentToolResponseFetch(tool_use_id="srvtoolu_f", url=FETCH.url, status=status)


def terminal(mode: str = "output", *, live: bool = False) -> tuple[ConsoleEcho, io.StringIO]:
    output = io.StringIO()
    console = Console(file=output, width=80, force_terminal=live, color_system=None)
    echo = ConsoleEcho(mode, console, live=live, auto_refresh=False, grace=0.0)  # type: ignore[arg-type]
    return echo, output


def test_a_search_is_echoed_in_the_terminal_as_chatlas_labels_it_once_it_ends() -> None:
    echo, output = terminal()
    echo.content(SEARCH)
    echo.content(FOUND)
    assert output.getvalue() == ""  # still open: printed once, when it ends
    echo.text("May 2014.")
    echo.finish()
    lines = output.getvalue().splitlines()
    assert lines[0].startswith("╭─ Searched the web  (2 results) ─")
    assert "🔍 ggplot2 release" in lines[1]
    assert "CRAN: ggplot2" in lines[2] and lines[2].rstrip(" │").endswith("cran.r-project.org")
    assert lines[-1] == "May 2014."


def test_fetches_alone_read_the_web_and_a_failed_one_is_one_row_marked_failed() -> None:
    echo, output = terminal()
    echo.content(FETCH)
    echo.content(fetched("error"))
    echo.finish()
    text = output.getvalue()
    assert "╭─ Read the web ─" in text
    assert text.count("🌐 Read") == 1 and "🌐 Read example.com/page ✗" in text


def test_a_running_search_shows_as_searching_the_web_in_the_status_area() -> None:
    echo, output = terminal(live=True)
    echo.content(SEARCH)
    assert "Searching the web…  🔍 ggplot2 release" in output.getvalue()
    echo.finish()


def test_echo_text_leaves_web_activity_out_as_chatlas_does() -> None:
    echo, output = terminal("text")
    for item in (SEARCH, FOUND, CITED):
        echo.content(item)
    echo.text("May 2014.")
    echo.finish()
    assert output.getvalue() == "May 2014.\n"


class Display:
    def __init__(self) -> None:
        self.outputs: list[str] = []

    def __call__(self, payload: str, handle: Any) -> Any:
        if handle is None:
            self.outputs.append(payload)
            return len(self.outputs) - 1
        self.outputs[handle] = payload
        return handle


def test_a_notebook_updates_one_panel_from_searching_to_searched_and_cited() -> None:
    display = Display()
    echo = NotebookEcho("output", display)
    echo.content(SEARCH)
    assert "<summary>Searching the web…</summary>" in display.outputs[0]
    echo.content(FOUND)
    echo.text("It came out in May 2014.")
    echo.content(CITED)
    echo.finish()
    panel = display.outputs[0]
    assert "<summary>Searched the web <span class='chatlas-web-detail'>" in panel
    assert "(2 results · * 1 cited)" in panel
    assert "<li class='chatlas-web-src cited'>" in panel
    assert "<blockquote>released in May 2014</blockquote>" in panel
    assert "May 2014" in display.outputs[1]  # the answer, in its own output below


def test_a_citation_of_an_uploaded_document_is_not_web_activity() -> None:
    activity = WebActivity()
    activity.add(SEARCH)
    document = ContentCitation(cited_quote="page 3", extra={"document_title": "report.pdf"})
    assert activity.cite(document) is False
    assert activity.detail() == ""


def test_a_web_panel_escapes_what_a_page_or_the_model_wrote_and_links_only_http() -> None:
    activity = WebActivity()
    activity.add(ContentToolRequestSearch(id="s", query="<script>x()</script>"))
    hostile = WebSource(url="javascript:alert(1)", title="<img src=x onerror=alert(1)>")
    activity.add(ContentToolResponseSearch(tool_use_id="s", sources=[hostile]))
    html = web_activity_html(activity)
    assert "<script>x" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "href" not in html
