"""The documentation site: complete, built without touching the network, browsable from disk.

The site is built once for the module (strictly, with every non-loopback name lookup
refused, as in every test). The browser tests open it from ``file://`` in Debian's
headless Chromium through Playwright's API, every request routed: anything that is not
a file is aborted and fails the test.
"""

from __future__ import annotations

import re
import shutil
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urlparse

import pytest
import yaml

import chatlas_like

from .conftest import _loopback_only as loopback_only

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
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
VIEWPORT = {"width": 1280, "height": 800}
# The Chat reference was one page 89,000 px tall; the longest guide is about 13,000.
TALLEST_PAGE_PX = 20_000


def config() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text())


def reference() -> str:
    """The API reference: its overview and every topic page."""
    pages = [DOCS / "reference.md", *sorted((DOCS / "reference").glob("*.md"))]
    return "\n".join(page.read_text() for page in pages)


def pages_in(nav: object) -> set[str]:
    """The pages a (nested) navigation lists."""
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, dict):
        return set().union(*(pages_in(v) for v in nav.values()))  # pyright: ignore
    if isinstance(nav, list):
        return set().union(*(pages_in(v) for v in nav))  # pyright: ignore
    return set()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once for this module, strictly, with the network refused."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    site_dir = tmp_path_factory.mktemp("site")
    with pytest.MonkeyPatch.context() as patch:  # the autouse guard is per test: set it here
        patch.setattr(socket, "getaddrinfo", loopback_only)
        build(load_config(str(ROOT / "mkdocs.yml"), site_dir=str(site_dir), strict=True))
    return site_dir


def test_every_public_name_has_an_api_reference_entry() -> None:
    documented = set(re.findall(r"^::: chatlas_like\.(\w+)$", reference(), flags=re.MULTILINE))
    assert set(chatlas_like.__all__) <= documented, set(chatlas_like.__all__) - documented


def public_anchors() -> list[str]:
    """The anchor each public name should have in the reference: the names of
    ``chatlas_like``, of its ``testing`` and ``shiny`` modules, and ``Chat``'s members."""
    import griffe

    from chatlas_like import shiny, testing

    chat = griffe.load("chatlas_like", search_paths=[str(ROOT)])["Chat"]
    return [
        *(f"chatlas_like.{name}" for name in chatlas_like.__all__),
        *(f"chatlas_like.testing.{name}" for name in testing.__all__),
        *(f"chatlas_like.shiny.{name}" for name in shiny.__all__),
        *(f"chatlas_like.Chat.{name}" for name in chat.members if not name.startswith("_")),
    ]


def test_every_public_name_and_chat_member_is_documented_once(site: Path) -> None:
    pages = [p.read_text() for p in (site / "reference").glob("*.html")]
    ids = [i for page in pages for i in re.findall(r'\bid="(chatlas_like\.[\w.]+)"', page)]
    counts = {anchor: ids.count(anchor) for anchor in public_anchors()}
    assert {a: n for a, n in counts.items() if n != 1} == {}


def test_every_reference_page_is_on_the_overview() -> None:
    overview = (DOCS / "reference.md").read_text()
    for page in (DOCS / "reference").glob("*.md"):
        assert f"(reference/{page.name})" in overview, page.name


def test_every_page_is_in_the_navigation() -> None:
    listed = pages_in(config()["nav"])
    assert listed == {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}


def test_the_site_asks_for_nothing_from_the_web() -> None:
    settings = config()
    theme = settings["theme"]
    assert isinstance(theme, dict) and theme["font"] is False
    plugins = str(settings["plugins"])
    for fetching in ("social", "privacy", "inventories", "import", "offline"):
        assert fetching not in plugins


def test_the_site_builds_strictly_offline_with_no_remote_assets(site: Path) -> None:
    pages = list(site.rglob("*.html"))
    assert len(pages) >= 12
    for page in pages:
        remote = re.findall(
            r'<(?:script|link|img)[^>]+(?:src|href)="(https?:[^"]+)"', page.read_text()
        )
        assert not remote, (page.name, remote)
    review = (site / "reference" / "review.html").read_text()
    assert 'id="chatlas_like.expand"' in review


def test_the_site_links_to_pages_not_folders(site: Path) -> None:
    for page in set(site.rglob("*.html")) - {site / "404.html"}:  # a server's, by absolute paths
        for href in re.findall(r'href="([^"#]*)(?:#[^"]*)?"', page.read_text()):
            if href and not urlparse(href).scheme:
                target = (page.parent / href).resolve()
                assert target.is_file(), (page.relative_to(site).as_posix(), href)


def test_the_reference_renders_cross_references_as_links_not_roles(site: Path) -> None:
    for page in (site / "reference").rglob("*.html"):
        leftover = re.findall(r":(?:class|meth|func|mod|attr|exc|data|obj):`?", page.read_text())
        assert not leftover, (page.name, leftover[:5])
    chat = (site / "reference" / "chat.html").read_text()
    # ChatAnthropic's docstring names ToolResultStore: a link to the storage page.
    assert re.search(r'<a [^>]*href="storage\.html#chatlas_like\.ToolResultStore"', chat)


@pytest.mark.parametrize("name", ["testing", "shiny"])
def test_the_public_modules_are_documented(name: str) -> None:
    assert f"::: chatlas_like.{name}" in reference()


# -- the built site in a browser, from file:// ----------------------------------------------


class Outside:
    """Routes every request of a page: files load, anything else is aborted and kept."""

    def __init__(self) -> None:
        self.blocked: list[str] = []

    def route(self, route: Any) -> None:
        if urlparse(route.request.url).scheme == "file":
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()


@pytest.fixture(scope="module")
def visited(site: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every page the navigation of ``site/index.html`` links to, opened in Chromium from
    ``file://`` by following the links: ``{url: (title, document height, heading)}``,
    with the requests that were not for a file under ``"blocked"``."""
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    assert executable, "chromium is not installed: run scripts/system-deps.sh"
    outside = Outside()
    seen: dict[str, Any] = {}
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("profile")),
            executable_path=executable,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport=VIEWPORT,  # pyright: ignore[reportArgumentType]
        )
        page = context.new_page()
        page.route("**/*", outside.route)
        page.goto((site / "index.html").as_uri())
        links = page.eval_on_selector_all(
            "nav.md-nav--primary a.md-nav__link[href]", "links => links.map(a => a.href)"
        )
        for url in dict.fromkeys(urldefrag(link).url for link in links):
            page.goto(url)
            heading = page.locator("article h1").first
            seen[url] = (
                page.title(),
                page.evaluate("document.documentElement.scrollHeight"),
                heading.inner_text() if heading.count() else "",
            )
        context.close()
    return {"pages": seen, "blocked": outside.blocked}


@pytest.mark.browser
def test_following_the_navigation_from_file_opens_every_page(
    site: Path, visited: dict[str, Any]
) -> None:
    pages: dict[str, Any] = visited["pages"]
    opened = {Path(urlparse(url).path).relative_to(site).as_posix() for url in pages}
    built = {p.relative_to(site).as_posix() for p in site.rglob("*.html")} - {"404.html"}
    assert opened == built
    for url, (title, _, heading) in pages.items():  # a page of the site, not a file listing
        assert heading and title.endswith("chatlas_like"), (url, title)
    assert visited["blocked"] == []


@pytest.mark.browser
def test_no_page_of_the_site_is_enormous(visited: dict[str, Any]) -> None:
    heights = {url.rsplit("/", 2)[-1]: height for url, (_, height, _) in visited["pages"].items()}
    assert {page: h for page, h in heights.items() if h > TALLEST_PAGE_PX} == {}
