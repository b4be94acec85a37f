"""Shared fixtures: no network but loopback, servers started by the tests themselves."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from chatlas_like import Chat, ChatAnthropic
from chatlas_like.testing import LoopbackServer, Reply, default_fixtures_dir

TEST_MODEL = "claude-haiku-4-5-20251001"
TEST_KEY = "test-key-not-a-secret"
GATED_MARKERS = ("cassette", "postgres", "browser", "notebook")
_LOOPBACK = {"127.0.0.1", "localhost", "::1", "0.0.0.0", ""}
_real_getaddrinfo = socket.getaddrinfo


def _loopback_only(host: Any, *args: Any, **kwargs: Any) -> Any:
    name = host.decode() if isinstance(host, bytes) else str(host or "")
    if name not in _LOOPBACK:
        raise OSError(f"tests may only reach 127.0.0.1, not {name!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


def pytest_configure(config: pytest.Config) -> None:
    # Tests register lambdas as tools: chatlas's no-type-hint warning for them is pinned
    # once, in test_chatlas_compat, and ignored for lambdas elsewhere.
    config.addinivalue_line(
        "filterwarnings",
        r"ignore:Parameter `\w+` of function `<lambda>` has no type hint:UserWarning",
    )


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the SDK at a closed loopback port and refuse every non-loopback lookup."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setattr(socket, "getaddrinfo", _loopback_only)


@pytest.fixture(scope="session")
def _state_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("state")


@pytest.fixture(autouse=True)
def _own_state_dir(monkeypatch: pytest.MonkeyPatch, _state_home: Path) -> None:
    """What the library keeps between runs (Shiny's bookmarked conversations) goes to
    the test session's own folder, never the user's."""
    monkeypatch.setenv("XDG_STATE_HOME", str(_state_home))


def skip_browser() -> bool:
    """Whether the user asked to skip the browser tests (``SKIP_BROWSER=1``)."""
    return os.environ.get("SKIP_BROWSER", "") not in ("", "0")


def pytest_report_header(config: pytest.Config) -> str | None:
    if skip_browser():
        return "SKIP_BROWSER=1: the browser tests are skipped (under CI=true each skip fails)"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``SKIP_BROWSER=1`` skips every browser test, each with the reason."""
    if skip_browser():
        skip = pytest.mark.skip(reason="SKIP_BROWSER=1 asked to skip the browser tests")
        for item in items:
            if item.get_closest_marker("browser"):
                item.add_marker(skip)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Under CI=true a skipped cassette, database, browser or notebook test fails (also
    one that SKIP_BROWSER=1 skipped)."""
    report = yield
    if (
        os.environ.get("CI") == "true"
        and report.skipped
        and any(item.get_closest_marker(m) for m in GATED_MARKERS)
    ):
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true, which counts as a failure: {report.longrepr}"
    return report


@pytest.fixture
def serve() -> Iterator[Callable[..., LoopbackServer]]:
    """Start a loopback server for a script; every server stops at teardown."""
    servers: list[LoopbackServer] = []

    def start(model: Any, **kwargs: Any) -> LoopbackServer:
        server = LoopbackServer(model, **kwargs).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


_CHATS: list[Chat] = []


def make_chat(server: LoopbackServer, **kwargs: Any) -> Chat:
    """A chat against ``server`` with the test model and key (its SDK client is closed
    after the test)."""
    kwargs.setdefault("model", TEST_MODEL)
    chat = ChatAnthropic(base_url=server.url, api_key=TEST_KEY, **kwargs)
    _CHATS.append(chat)
    return chat


@pytest.fixture(autouse=True)
def _close_sdk_clients() -> Iterator[None]:
    """Close the sync SDK clients a test opened: a pooled keep-alive socket left to the
    garbage collector raises ResourceWarning in whichever later test collects it."""
    yield
    while _CHATS:
        client = getattr(_CHATS.pop().provider, "_client", None)
        if client is not None:
            client.close()


@pytest.fixture
def fixtures_dir() -> Path:
    """The recorded cassettes; the test is skipped (a failure under CI) without them."""
    directory = default_fixtures_dir()
    if directory is None:
        pytest.skip(
            "recorded fixtures not found: set CHATLAS_LIKE_FIXTURES or put ../shared beside"
        )
    return directory


@pytest.fixture
def openai_fixtures_dir() -> Path:
    """OpenAI's recorded cassettes; skipped (a failure under CI) without them."""
    directory = default_fixtures_dir("openai")
    if directory is None:
        pytest.skip("recorded OpenAI fixtures not found: put ../shared beside the checkout")
    return directory


__all__ = ["TEST_KEY", "TEST_MODEL", "Reply", "make_chat"]


def run_in_child(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -c code`` in a child process, with no log setting but those in ``env``."""
    base = {k: v for k, v in os.environ.items() if k not in ("CHATLAS_LOG", "CHATLAS_LIKE_LOG")}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**base, **env},
        check=False,
    )
