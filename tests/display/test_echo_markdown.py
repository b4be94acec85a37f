"""The terminal echo shows each finished text segment as Markdown, once, over its raw text.

Renders are counted by the escape sequence that starts each one (back to the segment's
first row, clear below); the rendered output of a segment is read with its styles
stripped.
"""

from __future__ import annotations

import io
import os
import re
import sys

import pexpect
from rich.console import Console

from chatlas_like import ContentToolRequest, ContentToolResult
from chatlas_like._display.terminal import ConsoleEcho

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
RENDER = re.compile(r"\x1b\[\d+F\x1b\[J|\r\x1b\[J")
MARKDOWN = """# Sales

The **Midwest** led, see [the report](https://example.com/q3).

- Q3: $264k
- Q2: $205k

```python
best = "Midwest"
```
"""


def terminal(width: int = 80, height: int = 40) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=width, height=height)
    return console, out


def streamed(echo: ConsoleEcho, text: str) -> None:
    for word in re.findall(r"\S+\s*|\s+", text):
        echo.text(word)


def plain(text: str) -> str:
    return ANSI.sub("", text)


def test_raw_deltas_stream_while_the_segment_is_open() -> None:
    console, out = terminal()
    echo = ConsoleEcho("output", console)
    streamed(echo, MARKDOWN)
    assert out.getvalue() == MARKDOWN


def test_a_finished_segment_is_shown_rendered_as_markdown() -> None:
    console, out = terminal()
    echo = ConsoleEcho("output", console)
    streamed(echo, MARKDOWN)
    echo.finish()
    raw, rendered = RENDER.split(out.getvalue())
    assert raw == MARKDOWN
    text = plain(rendered)
    assert "# Sales" not in text and "Sales" in text
    assert "**" not in text and "Midwest" in text
    assert "\x1b[1m" in rendered  # bold
    assert "• Q3: $264k" in text
    assert "```" not in text and 'best = "Midwest"' in text
    assert "the report (https://example.com/q3)" in text  # a link shows where it goes
    assert "\x1b]8;" not in rendered  # and is no hidden terminal hyperlink


def test_the_render_goes_back_exactly_to_the_segments_first_row() -> None:
    console, out = terminal(width=20)
    echo = ConsoleEcho("output", console)
    echo.text("*" + "a" * 44 + "\nsecond* line")  # 3 rows, then 1
    echo.finish()
    assert "\x1b[3F\x1b[J" in out.getvalue()


def test_each_segment_is_rendered_once() -> None:
    console, out = terminal()
    echo = ConsoleEcho("output", console)
    for n in range(3):
        streamed(echo, f"Looking up **item {n}**. ")
        request = ContentToolRequest(id=f"toolu_{n}", name="lookup", arguments={"n": n})
        echo.content(request)
        echo.content(ContentToolResult(value=n, request=request))
    streamed(echo, "All **three** found.")
    echo.finish()
    assert len(RENDER.findall(out.getvalue())) == 4


def test_a_long_segment_is_rendered_once_not_once_per_delta() -> None:
    console, out = terminal(height=1_000)
    echo = ConsoleEcho("output", console)
    for _ in range(2_000):
        echo.text("**word** ")
    echo.finish()
    assert len(RENDER.findall(out.getvalue())) == 1


def test_plain_prose_stays_as_streamed_without_a_redraw() -> None:
    console, out = terminal()
    echo = ConsoleEcho("output", console)
    streamed(echo, "The Midwest had the highest sales in Q3, at 264k.\nNothing else stood out.")
    echo.finish()
    assert not RENDER.search(out.getvalue())
    assert "at 264k.\nNothing else" in out.getvalue()


def test_a_segment_taller_than_the_screen_stays_as_streamed() -> None:
    console, out = terminal(height=10)
    echo = ConsoleEcho("output", console)
    streamed(echo, "".join(f"- item {i}\n" for i in range(30)))
    echo.finish()
    assert not RENDER.search(out.getvalue())


def test_a_segment_holding_8_bit_controls_is_not_redrawn_over_rows_it_never_filled() -> None:
    console, out = terminal(width=20)
    echo = ConsoleEcho("output", console)
    streamed(echo, "\x9d" + "z" * 200 + "\x9c" + "All **good**.")  # stripped as it streams
    echo.finish()
    assert not RENDER.search(out.getvalue())  # a redraw would count 11 rows: 10 too many
    assert out.getvalue().rstrip("\n") == "All **good**."


def test_echo_text_stays_plain() -> None:
    console, out = terminal()
    echo = ConsoleEcho("text", console)
    streamed(echo, MARKDOWN)
    echo.finish()
    assert out.getvalue() == MARKDOWN


def test_output_that_is_not_a_terminal_stays_plain() -> None:
    out = io.StringIO()
    echo = ConsoleEcho("output", Console(file=out, width=80))
    streamed(echo, "The **Midwest** led.")
    echo.finish()
    assert out.getvalue() == "The **Midwest** led.\n"


def test_a_chat_in_a_terminal_shows_its_answer_rendered() -> None:
    script = (
        "from chatlas_like import ChatAnthropic\n"
        "from chatlas_like.testing import LoopbackServer, Reply\n"
        "with LoopbackServer([Reply.text('The **Midwest** led:\\n\\n- Q3: $264k')]) as s:\n"
        "    ChatAnthropic(base_url=s.url, api_key='test').chat('Who led?')\n"
        "print('DONE')\n"
    )
    child = pexpect.spawn(
        sys.executable,
        ["-c", script],
        env={**os.environ, "COLUMNS": "80", "LINES": "30", "TERM": "xterm"},
        encoding="utf-8",
        dimensions=(30, 80),
        timeout=60,
    )
    child.expect_exact("DONE")
    child.close()
    output = child.before or ""
    raw, rendered = RENDER.split(output)
    assert "The **Midwest** led:" in raw
    assert "The Midwest led:" in plain(rendered) and "• Q3: $264k" in plain(rendered)
