"""Renderings of a tool result: terminal (rich), notebook (HTML, Markdown), Shiny (tagify).

Snapshots pin each rendering per outcome; the other tests prove that a huge result is not
re-formatted to be shown and that nothing the model or a tool controls is rendered as
markup.
"""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from rich.console import Console
from syrupy.assertion import SnapshotAssertion

from chatlas_like import ContentToolRequest, ContentToolResult
from chatlas_like._display.render import PREVIEW_CHARS, format_result

REQUEST = ContentToolRequest("toolu_0001", "get_weather", {"city": "Paris", "days": 3})

CUT = "xxxxx\n[truncated: showing the first 5 of 50 bytes of this tool result]"
RESULTS = {
    "success": ContentToolResult(value={"temp": 21.5, "sky": "clear"}, request=REQUEST),
    "error": ContentToolResult(error="no station near Paris", request=REQUEST),
    "exception": ContentToolResult(
        error=ValueError("bad day count"), outcome="exception", request=REQUEST
    ),
    "refused": ContentToolResult(
        error="Unknown tool `get_weather`. Available tools: none.",
        outcome="refused",
        request=REQUEST,
    ),
    "denied": ContentToolResult(
        value="The user keeps Paris private.", outcome="denied", request=REQUEST
    ),
    "truncated": ContentToolResult(value="x" * 50, request=REQUEST).with_model_value(
        CUT,
        original_length=50,
        stored_length=len(CUT),  # what was sent: the kept text and the notice
        is_truncated=True,
    ),
}


def _console_text(result: ContentToolResult) -> str:
    console = Console(file=io.StringIO(), width=100, color_system=None, record=True)
    console.print(result)
    return console.export_text()


@pytest.mark.parametrize("outcome", list(RESULTS))
def test_html_rendering_per_outcome(outcome: str, snapshot: SnapshotAssertion) -> None:
    assert RESULTS[outcome]._repr_html_() == snapshot


@pytest.mark.parametrize("outcome", list(RESULTS))
def test_markdown_rendering_per_outcome(outcome: str, snapshot: SnapshotAssertion) -> None:
    assert RESULTS[outcome]._repr_markdown_() == snapshot


@pytest.mark.parametrize("outcome", list(RESULTS))
def test_console_rendering_per_outcome(outcome: str, snapshot: SnapshotAssertion) -> None:
    assert _console_text(RESULTS[outcome]) == snapshot


@pytest.mark.parametrize("outcome", list(RESULTS))
def test_plain_text_rendering_per_outcome(outcome: str, snapshot: SnapshotAssertion) -> None:
    assert str(RESULTS[outcome]) == snapshot


def test_tagify_gives_the_same_html_as_the_notebook() -> None:
    result = RESULTS["success"]
    assert str(result.tagify()) == result._repr_html_()


# -- escaping -----------------------------------------------------------------------------------

HOSTILE = "<script>alert('x')</script>"
HOSTILE_REQUEST = ContentToolRequest("toolu_9", "<img src=x onerror=alert(1)>", {HOSTILE: HOSTILE})
HOSTILE_RESULTS = [
    ContentToolResult(value=HOSTILE, request=HOSTILE_REQUEST),
    ContentToolResult(error=HOSTILE, request=HOSTILE_REQUEST),
    ContentToolResult(value=HOSTILE, outcome="denied", request=HOSTILE_REQUEST),
]


@pytest.mark.parametrize("result", HOSTILE_RESULTS, ids=["value", "error", "denied"])
def test_html_escapes_everything_the_model_or_a_tool_controls(result: ContentToolResult) -> None:
    for rendered in (result._repr_html_(), str(result.tagify())):
        assert "<script" not in rendered and "<img" not in rendered
        assert "&lt;script&gt;" in rendered
        assert "&lt;img src=x onerror=alert(1)&gt;" in rendered


@pytest.mark.parametrize("result", HOSTILE_RESULTS, ids=["value", "error", "denied"])
def test_markdown_keeps_markup_inside_code(result: ContentToolResult) -> None:
    rendered = result._repr_markdown_()
    fence = rendered.index("\n```")
    head, body = rendered[:fence], rendered[fence + 1 :]
    outside_code = re.sub(r"(`+).*?\1", "", head)  # code spans show markup literally
    assert "<script" not in outside_code and "<img" not in outside_code
    assert body.startswith("```\n") and body.endswith("\n```")


def test_a_fence_inside_a_result_cannot_close_the_markdown_block() -> None:
    result = ContentToolResult(value="```\n<script>x</script>\n````", request=REQUEST)
    rendered = result._repr_markdown_()
    assert "`````\n```\n<script>x</script>\n````\n`````" in rendered


# -- size -----------------------------------------------------------------------------------------


class Counted:
    """A 5 MB value that counts how often it is converted for the model."""

    calls = 0

    def to_dict(self) -> dict[str, Any]:
        Counted.calls += 1
        return {"rows": [f"row {i:06d}" + "." * 40 for i in range(100_000)]}


def _renderings(result: ContentToolResult) -> list[str]:
    return [
        result._repr_html_(),
        result._repr_markdown_(),
        str(result.tagify()),
        _console_text(result),
        format_result(result),
    ]


def test_a_5_mb_result_is_formatted_once_and_shown_as_a_short_preview() -> None:
    Counted.calls = 0
    result = ContentToolResult(value=Counted(), request=REQUEST)
    assert len(result.get_model_value()) > 5_000_000
    for _ in range(3):  # re-renders, as a notebook or a Shiny app does
        for rendered in _renderings(result):
            assert len(rendered) < 3 * PREVIEW_CHARS
    assert Counted.calls == 1


def test_a_5_mb_argument_is_cut_before_it_is_encoded() -> None:
    request = ContentToolRequest(
        "toolu_2", "store", {"text": "y" * 5_000_000, "n": list(range(10**5))}
    )
    result = ContentToolResult(value="stored", request=request)
    for rendered in _renderings(result):
        assert len(rendered) < 3 * PREVIEW_CHARS


def test_a_preview_says_how_much_was_left_out() -> None:
    result = ContentToolResult(value="z" * 10_000, request=REQUEST)
    assert f"… {10_000 - PREVIEW_CHARS:,} more characters" in format_result(result)
