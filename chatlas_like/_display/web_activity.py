"""A provider's web searches and fetches, echoed as chatlas shows them.

One panel per episode (the search and fetch blocks between other content, grouped as
chatlas groups them), headed ``Searching the web…`` or ``Reading the web…`` (only
fetches) while it runs and ``Searched the web`` or ``Read the web`` once it ends, with
a detail such as ``(3 results · * 1 cited)``; rows for each query (``🔍 ...``) and
fetch (``🌐 Read example.com/page ✓``), then the sources found, cited ones marked
``*``. A citation marks the source it points at in the latest episode, open or closed.

Where chatlas shows wrong data, this does not: a fetch is matched with its result by
the call's id (chatlas matches by URL, and a failed fetch's result names none, so it
shows the fetch still pending plus a second failed row), and a citation that points at
no web page (an uploaded document's) is not web activity (chatlas lists the cited
answer text as a source of a "Searched the web" panel).

Everything a model or a web page controls is escaped (HTML, where only ``http(s)``
addresses become links) or made safe for a terminal by the echo.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from .._core.content import (
    ContentCitation,
    ContentToolRequestFetch,
    ContentToolRequestSearch,
    ContentToolResponseFetch,
    ContentToolResponseSearch,
    WebSource,
)

__all__ = ["WEB_ITEMS", "WebActivity", "web_activity_html", "web_activity_rich"]

# The content an episode is made of (a citation joins the latest one).
WEB_ITEMS = (
    ContentToolRequestSearch,
    ContentToolResponseSearch,
    ContentToolRequestFetch,
    ContentToolResponseFetch,
)


@dataclass(slots=True)
class SourceRow:
    """A source found or cited."""

    url: str
    title: str | None = None
    cited: bool = False
    quote: str | None = None


@dataclass(slots=True)
class FetchRow:
    """A page fetched: its call's id, address, title once read, and status (None while
    it runs)."""

    id: str
    url: str
    title: str | None = None
    status: str | None = None


@dataclass(slots=True)
class WebActivity:
    """One episode of web activity, as it grows."""

    queries: list[str] = field(default_factory=lambda: [])
    fetches: list[FetchRow] = field(default_factory=lambda: [])
    sources: list[SourceRow] = field(default_factory=lambda: [])
    is_open: bool = True

    def add(self, item: Any) -> None:
        """Take a search or fetch block (one of :data:`WEB_ITEMS`)."""
        if isinstance(item, ContentToolRequestSearch):
            self.queries.append(item.query)
        elif isinstance(item, ContentToolResponseSearch):
            for source in item.sources:
                if not any(row.url == source.url for row in self.sources):
                    self.sources.append(SourceRow(source.url, source.title))
        elif isinstance(item, ContentToolRequestFetch):
            self.fetches.append(FetchRow(item.id, item.url))
        elif isinstance(item, ContentToolResponseFetch):
            row = next((f for f in self.fetches if f.id and f.id == item.tool_use_id), None)
            if row is None:
                row = FetchRow(item.tool_use_id, item.url)
                self.fetches.append(row)
            row.status, row.title = item.status or "success", item.title

    def cite(self, citation: ContentCitation) -> bool:
        """Mark the source ``citation`` points at (a row of its own if none matches);
        False when it points at no web page."""
        source = citation.source
        url = source.url if isinstance(source, WebSource) else ""
        title = source.title if isinstance(source, WebSource) else None
        if not url:  # a fetched page's citation names the page's title, not its address
            named = (citation.extra or {}).get("document_title")
            fetched = next((f for f in self.fetches if named and f.title == named), None)
            if fetched is None:
                return False
            url, title = fetched.url, named
        for row in self.sources:
            if row.url == url:
                row.cited, row.quote = True, row.quote or citation.cited_quote
                return True
        self.sources.append(SourceRow(url, title, cited=True, quote=citation.cited_quote))
        return True

    @property
    def fetch_only(self) -> bool:
        return bool(self.fetches) and not self.queries

    def header(self) -> str:
        """chatlas's heading: what it is doing, or did."""
        if self.is_open:
            return "Reading the web…" if self.fetch_only else "Searching the web…"
        return "Read the web" if self.fetch_only else "Searched the web"

    def detail(self) -> str:
        """chatlas's detail: ``N results · * K cited`` (empty when there is neither)."""
        bits: list[str] = []
        if self.sources:
            n = len(self.sources)
            bits.append(f"{n} result{'' if n == 1 else 's'}")
        cited = sum(row.cited for row in self.sources)
        if cited:
            bits.append(f"* {cited} cited")  # the mark of each cited row
        return " · ".join(bits)

    def shown_sources(self, most: int | None) -> tuple[list[SourceRow], int]:
        """The sources to list under a cap of ``most`` and how many are left out: cited
        ones first, then the others, earliest first, in their order (as chatlas)."""
        if most is None or len(self.sources) <= most:
            return self.sources, 0
        cited = [row for row in self.sources if row.cited][:most]
        others = [row for row in self.sources if not row.cited][: max(most - len(cited), 0)]
        keep = {id(row) for row in (*cited, *others)}
        shown = [row for row in self.sources if id(row) in keep]
        return shown, len(self.sources) - len(shown)


def _safe_url(url: str | None) -> str | None:
    """``url`` if it may be a link (``http`` or ``https``), else None."""
    return url if url and urlparse(url).scheme in ("http", "https") else None


def _domain(url: str | None) -> str:
    return (urlparse(url).hostname or url) if url else ""


def _source_label(row: SourceRow) -> str:
    return row.title or _domain(_safe_url(row.url)) or "(source)"


def _fetch_label(url: str) -> str:
    """A fetched address without its scheme; an unsafe one is not shown."""
    return re.sub(r"^https?://(www\.)?", "", url) if _safe_url(url) else "(url)"


def _mark(status: str | None) -> str:
    return "✗" if status == "error" else "✓" if status == "success" else "…"


def web_activity_rich(activity: WebActivity, max_sources: int | None) -> Any:
    """The episode as a terminal panel (made safe by the echo that prints it)."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    rows: list[Any] = []
    for query in activity.queries:
        rows.append(Text("🔍 ", style="dim") + Text(query, style="italic"))
    for fetch in activity.fetches:
        rows.append(
            Text("🌐 Read ", style="dim")
            + Text(_fetch_label(fetch.url))
            + Text(f" {_mark(fetch.status)}", style="dim")
        )
    shown, left = activity.shown_sources(max_sources)
    if shown:
        table = Table.grid(padding=(0, 1), expand=True)
        table.add_column(width=1, no_wrap=True)
        table.add_column(ratio=1, overflow="ellipsis", no_wrap=True)
        table.add_column(justify="right", no_wrap=True)
        for row in shown:
            table.add_row(
                Text("*" if row.cited else " ", style="yellow" if row.cited else ""),
                Text(_source_label(row)),
                Text(_domain(_safe_url(row.url)), style="dim"),
            )
        rows.append(table)
    if left:
        rows.append(Text(f"  … {left} more", style="dim italic"))
    detail = activity.detail()
    title = activity.header() + (f"  ({detail})" if detail else "")
    body = Group(*rows) if rows else Text("")
    return Panel(body, title=title, title_align="left", border_style="dim")


# chatlas's stylesheet for these panels (its WEB_CSS), sent with each panel.
WEB_CSS = (
    ".chatlas-web-activity details{border:1px solid rgba(128,128,128,.35);border-radius:6px;"
    "padding:.25rem .6rem;margin:.5rem 0;font-size:.92em}"
    ".chatlas-web-activity summary{cursor:pointer;font-weight:600;opacity:.85}"
    ".chatlas-web-detail{font-weight:400;opacity:.6}"
    ".chatlas-web-body{max-height:var(--chatlas-tool-result-max-height,400px);"
    "overflow-y:auto;margin:.35rem 0 .3rem}"
    ".chatlas-web-q{margin:.15rem 0}.chatlas-web-ico{opacity:.55;margin-right:.35rem}"
    ".chatlas-web-lbl{font-size:.85em;text-transform:uppercase;letter-spacing:.05em;"
    "opacity:.55}.chatlas-web-st.ok{color:#1a7f37}.chatlas-web-st.err{color:#b42318}"
    ".chatlas-web-st.pending{opacity:.55}ol.chatlas-web-srcs{margin:.3rem 0 .1rem 1.3rem;"
    "padding:0}li.chatlas-web-src{margin:.15rem 0}li.chatlas-web-src.cited > a{font-weight:600}"
    'li.chatlas-web-src.cited::marker{content:"* "}'
    ".chatlas-web-dom{opacity:.5;font-size:.85em;margin-left:.4rem}"
    ".chatlas-web-activity blockquote{margin:.2rem 0;padding-left:.5rem;"
    "border-left:2px solid rgba(128,128,128,.4);font-size:.9em;opacity:.75}"
)


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _link(label: str, url: str | None) -> str:
    safe = _safe_url(url)
    if safe is None:
        return _esc(label)
    return f'<a href="{_esc(safe)}" target="_blank" rel="noopener noreferrer">{_esc(label)}</a>'


def web_activity_html(activity: WebActivity) -> str:
    """The episode as chatlas's collapsed ``<details>`` block, everything escaped."""
    parts: list[str] = []
    for query in activity.queries:
        parts.append(
            "<div class='chatlas-web-q'><span class='chatlas-web-ico'>🔍</span>"
            f"<em>{_esc(query)}</em></div>"
        )
    for fetch in activity.fetches:
        status = {"error": "err", "success": "ok"}.get(fetch.status or "", "pending")
        parts.append(
            "<div class='chatlas-web-q'><span class='chatlas-web-ico'>🌐</span>"
            "<span class='chatlas-web-lbl'>Read</span> "
            f"{_link(_fetch_label(fetch.url), fetch.url)}"
            f" <span class='chatlas-web-st {status}'>{_mark(fetch.status)}</span></div>"
        )
    if activity.sources:
        items: list[str] = []
        for row in activity.sources:
            quote = f"<blockquote>{_esc(row.quote)}</blockquote>" if row.cited and row.quote else ""
            items.append(
                f"<li class='chatlas-web-src{' cited' if row.cited else ''}'>"
                f"{_link(_source_label(row), row.url)}"
                f"<span class='chatlas-web-dom'>{_esc(_domain(_safe_url(row.url)))}</span>"
                f"{quote}</li>"
            )
        parts.append(f"<ol class='chatlas-web-srcs'>{''.join(items)}</ol>")
    detail = activity.detail()
    summary = _esc(activity.header())
    if detail:
        summary += f" <span class='chatlas-web-detail'>({_esc(detail)})</span>"
    return (
        f"<style>{WEB_CSS}</style><div class='chatlas-web-activity'><details>"
        f"<summary>{summary}</summary>"
        f"<div class='chatlas-web-body'>{''.join(parts)}</div></details></div>"
    )
