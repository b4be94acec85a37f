"""The package as a user meets it: a light import, and the two commands' main job."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import chatlas_like

HEAVY = (
    "anthropic",
    "pandas",
    "numpy",
    "pydantic",
    "rich",
    "htmltools",
    "httpx2",
    "mcp",
    "opentelemetry",
    "docstring_parser",
    "markdown_it",
)


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
        check=False,
    )


def test_import_loads_no_sdk_and_no_data_library() -> None:
    probe = run_python(
        f"import sys, chatlas_like; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == ""


def test_every_public_name_is_importable_and_sorted() -> None:
    names = chatlas_like.__all__
    assert names == sorted(names)
    for name in names:
        assert getattr(chatlas_like, name) is not None


def test_the_demo_runs_offline_and_shows_a_dataframe_tool_call() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "chatlas_like", "demo"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "SCRIPTED" in out
    assert "quarterly_sales()" in out
    assert "Midwest" in out and "264" in out
    assert "DataFrame" in out


def test_the_live_demo_talks_to_the_configured_endpoint(serve: Any) -> None:
    from chatlas_like._cli.demo import demo_model

    server = serve(demo_model)
    result = subprocess.run(
        [sys.executable, "-m", "chatlas_like", "demo", "--live"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ANTHROPIC_API_KEY": "dummy-key", "ANTHROPIC_BASE_URL": server.url},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Midwest" in result.stdout
    assert len(server.message_requests()) == 2
    assert "dummy-key" in server.requests[0].headers["authorization"]
