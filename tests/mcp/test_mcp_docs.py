"""The example of docs/mcp.md runs as written: its server, its chat, its output."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from chatlas_like.testing import LoopbackServer

from ..conftest import TEST_KEY, Reply

PAGE = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


def titled_blocks() -> dict[str, str]:
    """The page's code blocks that carry a file name (```python title="...")."""
    found = re.findall(r'```python title="([^"]+)"\n(.*?)```', PAGE.read_text(), flags=re.DOTALL)
    return dict(found)


def run_example(
    serve: Callable[..., LoopbackServer], folder: Path, script: str
) -> subprocess.CompletedProcess[str]:
    """``script`` of the page, beside its server, against a model that calls the forecast."""
    for name, code in titled_blocks().items():
        (folder / name).write_text(code)
    server = serve([Reply.tool_call("forecast", {"city": "Oslo"}), Reply.text("Sunny, 21 °C.")])
    env = {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": TEST_KEY}
    env["PYTHONPATH"] = os.pathsep.join([str(PAGE.parent.parent), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, script],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_page_holds_a_server_and_two_chats() -> None:
    assert set(titled_blocks()) == {"weather_server.py", "ask.py", "ask_sync.py"}


def test_the_async_example_runs_as_written(
    serve: Callable[..., LoopbackServer], tmp_path: Path
) -> None:
    done = run_example(serve, tmp_path, "ask.py")
    assert done.returncode == 0, done.stderr
    assert "tools: forecast, clear_cache" in done.stdout
    assert "result: success 'Oslo: sunny, 21 °C'" in done.stdout
    assert "Sunny, 21 °C." in done.stdout  # the answer was echoed


def test_the_sync_example_runs_as_written(
    serve: Callable[..., LoopbackServer], tmp_path: Path
) -> None:
    done = run_example(serve, tmp_path, "ask_sync.py")
    assert done.returncode == 0, done.stderr
    assert "Oslo: sunny, 21 °C" in done.stdout  # the tool's result, echoed
    assert "Sunny, 21 °C." in done.stdout
