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


def test_every_public_name_has_an_api_reference_entry() -> None:
    reference = (DOCS / "reference.md").read_text()
    documented = set(re.findall(r"^::: chatlas_like\.(\w+)$", reference, flags=re.MULTILINE))
    assert set(chatlas_like.__all__) <= documented, set(chatlas_like.__all__) - documented


def test_every_page_is_in_the_navigation() -> None:
    nav = config()["nav"]
    assert isinstance(nav, list)
    listed = {page for entry in nav for page in entry.values()}  # pyright: ignore
    assert listed == {p.name for p in DOCS.glob("*.md")}


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
    assert "chatlas_like.expand" in (tmp_path / "reference" / "index.html").read_text()


@pytest.mark.parametrize("name", ["testing", "shiny"])
def test_the_public_modules_are_documented(name: str) -> None:
    assert f"::: chatlas_like.{name}" in (DOCS / "reference.md").read_text()
