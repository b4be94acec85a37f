"""A durable chat app in a real browser: the app process dies mid tool round, a new one
completes the turn, and the reloaded page shows the conversation with its answer."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..shiny.test_shiny_browser import WAIT_MS, Outside, browser, open_page, send

pytestmark = pytest.mark.browser
pytest.importorskip("dbos")

APP = Path(__file__).parent.parent / "scripts" / "durable_shiny_app.py"
__all__ = ["browser"]  # the fixture, shared with the other browser tests


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class App:
    """The app's processes: each serves on the same port and database."""

    def __init__(self, database: Path) -> None:
        self.database = database
        self.port = _free_port()
        self.processes: list[subprocess.Popen[str]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self, mode: str) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, str(APP), str(self.database), str(self.port), mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.processes.append(process)
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready", process.stderr
        return process

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            process.communicate(timeout=60)


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    served = App(tmp_path / "desk.sqlite")
    yield served
    served.stop()


def test_a_page_reloaded_after_the_app_died_mid_tool_round_shows_the_completed_turn(
    app: App, browser: Any
) -> None:
    from playwright.sync_api import expect

    outside = Outside()
    first = app.start("crash")
    page = open_page(browser, app.url, outside)
    page.wait_for_url("**/?c=*", timeout=WAIT_MS)  # the conversation's id is in the URL
    url = page.url
    send(page, "Build the slow report.")
    assert first.wait(timeout=WAIT_MS / 1000) == -signal.SIGKILL  # killed by its tool

    app.start("serve")  # its DBOS.launch() completes the turn
    page.goto(url)
    expect(page.get_by_text("The slow report is done.")).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_text("Build the slow report.")).to_be_visible()
    assert page.url == url
    assert outside.blocked == []

    fresh = open_page(browser, app.url, outside)  # another page, another conversation
    fresh.wait_for_url("**/?c=*", timeout=WAIT_MS)
    assert fresh.url != url
    assert fresh.get_by_text("The slow report is done.").count() == 0
