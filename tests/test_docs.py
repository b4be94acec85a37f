"""The documentation site: complete, and built without touching the network."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

import chatlas_like

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def config() -> dict[str, object]:
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


def test_every_public_name_has_an_api_reference_entry() -> None:
    documented = set(re.findall(r"^::: chatlas_like\.(\w+)$", reference(), flags=re.MULTILINE))
    assert set(chatlas_like.__all__) <= documented, set(chatlas_like.__all__) - documented


def test_the_api_reference_is_split_by_topic() -> None:
    topics = {p.stem for p in (DOCS / "reference").glob("*.md")}
    assert topics == {"chat", "tools", "content", "storage", "testing", "errors"}
    for topic in topics:
        assert f"(reference/{topic}.md)" in (DOCS / "reference.md").read_text()


def test_every_page_is_in_the_navigation() -> None:
    listed = pages_in(config()["nav"])
    assert listed == {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}


def test_the_site_asks_for_nothing_from_the_web() -> None:
    settings = config()
    theme = settings["theme"]
    assert isinstance(theme, dict) and theme["font"] is False
    plugins = str(settings["plugins"])
    for fetching in ("social", "privacy", "inventories", "import"):
        assert fetching not in plugins


def test_the_site_builds_strictly_offline_with_no_remote_assets(tmp_path: Path) -> None:
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    # In this process every non-loopback name lookup fails (conftest), so a build that
    # fetched anything would fail here.
    build(load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path), strict=True))
    pages = list(tmp_path.rglob("*.html"))
    assert len(pages) >= 12
    for page in pages:
        remote = re.findall(
            r'<(?:script|link|img)[^>]+(?:src|href)="(https?:[^"]+)"', page.read_text()
        )
        assert not remote, (page.name, remote)
    tools = (tmp_path / "reference" / "tools" / "index.html").read_text()
    assert 'id="chatlas_like.expand"' in tools


def test_the_reference_renders_cross_references_as_links_not_roles(tmp_path: Path) -> None:
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    build(load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path), strict=True))
    for page in (tmp_path / "reference").rglob("*.html"):
        leftover = re.findall(r":(?:class|meth|func|mod|attr|exc|data|obj):`?", page.read_text())
        assert not leftover, (page.parent.name, leftover[:5])
    chat = (tmp_path / "reference" / "chat" / "index.html").read_text()
    # ChatAnthropic's docstring names ToolResultStore: a link to the storage page.
    assert re.search(r'<a [^>]*href="\.\./storage/#chatlas_like\.ToolResultStore"', chat)


@pytest.mark.parametrize("name", ["testing", "shiny"])
def test_the_public_modules_are_documented(name: str) -> None:
    assert f"::: chatlas_like.{name}" in reference()
