"""What a newcomer meets in the first minutes: the demo, its next steps, the clear errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from chatlas_like import AuthenticationError, ChatAnthropic

ROOT = Path(__file__).resolve().parent.parent
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def run_demo(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chatlas_like", "demo", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, **env},
        check=False,
    )


def test_the_demo_ends_with_what_to_try_next() -> None:
    done = run_demo()
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no warning, no traceback
    tail = done.stdout.rstrip().splitlines()[-5:]
    assert tail[0] == "Next:"
    assert "-m chatlas_like chat --offline" in tail[1]
    assert "-m chatlas_like demo --live" in tail[2]
    assert tail[3].lstrip().startswith("notebooks/")
    assert tail[4].lstrip().startswith("docs/")


def test_the_demo_counts_the_notebooks_and_names_the_extra_the_durable_one_needs() -> None:
    done = run_demo()
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    line = next(x for x in done.stdout.splitlines() if x.lstrip().startswith("notebooks/"))
    assert f"{len(notebooks)} notebooks" in line
    assert "04 needs pip install 'chatlas_like[durable]'" in line


def test_the_demo_in_a_terminal_shows_the_answer_as_markdown() -> None:
    child = pexpect.spawn(
        sys.executable,
        ["-m", "chatlas_like", "demo"],
        cwd=str(ROOT),
        env={**os.environ, "TERM": "xterm"},
        encoding="utf-8",
        dimensions=(40, 120),
        timeout=120,
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    # The answer's redraw: back to its first row, clear below, draw it as Markdown.
    streamed, _, rendered = (child.before or "").rpartition("\x1b[J")
    streamed = streamed.rpartition("\n")[2]  # the answer's row as it streamed
    assert "**Midwest**" in streamed  # raw while the answer streamed
    assert "\x1b[1mMidwest\x1b[0m had the highest Q3 sales" in rendered  # then bold
    assert "**" not in ANSI.sub("", rendered)


def test_the_live_demo_without_a_key_says_so_in_one_line() -> None:
    done = run_demo("--live", ANTHROPIC_API_KEY="")
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("ANTHROPIC_API_KEY is not set")
    assert "chatlas_like demo` (without --live)" in line


def test_a_live_demo_that_cannot_connect_says_so_in_one_line() -> None:
    # The test run's ANTHROPIC_BASE_URL is a closed loopback port.
    done = run_demo("--live", ANTHROPIC_API_KEY="not-a-real-key")
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("✖ ProviderConnectionError:")
    assert "Traceback" not in done.stdout


def test_the_missing_key_error_says_how_to_try_the_library_offline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    chat = ChatAnthropic()
    with pytest.raises(AuthenticationError, match=r"python -m chatlas_like chat --offline"):
        chat.chat("Hello", echo="none")
    assert chat.get_turns() == []


APP = """
from chatlas_like import ChatAnthropic
from chatlas_like.testing import LoopbackServer, Reply

with LoopbackServer([Reply.text("Hi")]) as server:
    ChatAnthropic(base_url=server.url, api_key="test").app(launch_browser=False)
print("the script goes on")
"""


def test_ctrl_c_stops_a_blocking_app_quietly(tmp_path: Path) -> None:
    script = tmp_path / "app.py"
    script.write_text(APP)
    child = pexpect.spawn(sys.executable, [str(script)], encoding="utf-8", timeout=120)
    child.expect_exact("the chat app is at")
    child.expect_exact("\n")
    child.sendintr()  # a real SIGINT, through the terminal
    child.expect(pexpect.EOF)
    child.close()
    output = child.before or ""
    assert "Traceback" not in output and "KeyboardInterrupt" not in output
    assert "the chat app stopped" in output and "the script goes on" in output
    assert child.exitstatus == 0


def test_the_readmes_first_screen_gives_the_two_commands() -> None:
    first_screen = (ROOT / "README.md").read_text().splitlines()[:25]
    commands = [line.split("#")[0].strip() for line in first_screen if line.startswith("make ")]
    assert commands == ["make demo", "make test"]


BROWSER_TEST = """
import pytest


@pytest.mark.browser
def test_in_a_browser():
    pass
"""


def run_a_browser_test(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """pytest in a subprocess, with this suite's hooks, on one browser test (no plugins:
    shiny's and hypothesis's would take seconds to import for nothing)."""
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    browser: a browser test\n")
    (tmp_path / "conftest.py").write_text(
        "from tests.conftest import pytest_collection_modifyitems, pytest_runtest_makereport\n"
    )
    (tmp_path / "test_page.py").write_text(BROWSER_TEST)
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "SKIP_BROWSER")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "test_page.py"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**base, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **env},
        check=False,
    )


def test_skip_browser_skips_the_browser_tests_saying_why(tmp_path: Path) -> None:
    done = run_a_browser_test(tmp_path, SKIP_BROWSER="1")
    assert done.returncode == 0, done.stdout
    assert "1 skipped" in done.stdout and "SKIP_BROWSER=1 asked to skip" in done.stdout


def test_under_ci_a_browser_test_skipped_by_skip_browser_fails(tmp_path: Path) -> None:
    done = run_a_browser_test(tmp_path, SKIP_BROWSER="1", CI="true")
    assert done.returncode == 1, done.stdout
    assert "skipped under CI=true, which counts as a failure" in done.stdout
