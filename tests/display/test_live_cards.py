"""Live tool cards: one card per call, from running to its outcome, in every display.

The echoes are driven directly with the sequence the turn loop sends per call
(request, started, progress..., result), calls interleaved; the end-to-end tests go
through a real Chat on the loopback server.
"""

from __future__ import annotations

import io
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from chatlas_like import (
    ContentToolRequest,
    ContentToolResult,
    ContentToolResultProgress,
    SqliteStore,
)
from chatlas_like._display.console import ProgressEcho
from chatlas_like._display.live_cards import call_key
from chatlas_like._display.live_status import GRACE_S
from chatlas_like._display.notebook import NotebookEcho
from chatlas_like._display.render import content_html, truncation_note
from chatlas_like._display.terminal import ConsoleEcho
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat

SLOW = ContentToolRequest(id="toolu_slow", name="slow", arguments={"n": 1})
FAST = ContentToolRequest(id="toolu_fast", name="fast", arguments={"n": 2})
HOSTILE = "\x1b]52;c;cGF3bmVk\x07<script>x()</script>\x1b[2J"


def progress(request: ContentToolRequest, text: str) -> ContentToolResultProgress:
    return ContentToolResultProgress(value=text, request=request)


def result(request: ContentToolRequest, text: str) -> ContentToolResult:
    return ContentToolResult(value=text, request=request)


class Display:
    """A notebook front end: each output's current HTML, and how often it changed."""

    def __init__(self) -> None:
        self.outputs: list[str] = []
        self.updates = 0

    def __call__(self, payload: str, handle: Any) -> Any:
        if handle is None:
            self.outputs.append(payload)
            return len(self.outputs) - 1
        self.outputs[handle] = payload
        self.updates += 1
        return handle


def plain_echo() -> tuple[ConsoleEcho, io.StringIO]:
    output = io.StringIO()
    return ConsoleEcho("output", Console(file=output, width=200, force_terminal=False)), output


def terminal_echo(
    clock: Callable[[], float], grace: float = 0.0
) -> tuple[ConsoleEcho, io.StringIO]:
    """A terminal echo drawn only when it changes; without a grace unless asked (most
    tests here are about what the area shows, not when it appears)."""
    output = io.StringIO()
    console = Console(file=output, width=200, force_terminal=True, color_system=None)
    return ConsoleEcho("output", console, auto_refresh=False, grace=grace, clock=clock), output


class WatchedOutput(io.StringIO):
    """A terminal's output that says when ``awaited`` has been written."""

    def __init__(self, awaited: str) -> None:
        super().__init__()
        self.awaited = awaited
        self.seen = threading.Event()

    def write(self, s: str) -> int:
        n = super().write(s)
        if self.awaited in self.getvalue():
            self.seen.set()
        return n


def two_calls_fast_first(echo: Any) -> None:
    """Two calls asked for; the second finishes while the first still runs."""
    echo.content(SLOW)
    echo.content(FAST)
    echo.tool_started(SLOW)
    echo.tool_started(FAST)
    echo.content(progress(SLOW, "step 1 of 3"))
    echo.content(result(FAST, "fast done"))
    echo.content(progress(SLOW, "step 2 of 3"))
    echo.content(result(SLOW, "slow done"))
    echo.finish()


# -- terminal ---------------------------------------------------------------------------


def test_output_that_is_not_a_terminal_gets_each_line_once_in_order_and_no_live_area() -> None:
    echo, output = plain_echo()
    two_calls_fast_first(echo)
    lines = [line for line in output.getvalue().splitlines() if line.strip()]
    assert lines == [
        "🔧 slow(n=1)",
        "🔧 fast(n=2)",
        "  ↳ slow: step 1 of 3",
        "✔ result fast(n=2)",
        "fast done",
        "  ↳ slow: step 2 of 3",
        "✔ result slow(n=1)",
        "slow done",
    ]
    assert "\x1b" not in output.getvalue()  # no cursor moves, no styling: a file stays plain


def test_a_terminal_shows_each_running_call_with_its_elapsed_time_and_latest_progress() -> None:
    now = [0.0]
    echo, output = terminal_echo(lambda: now[0])
    echo.content(SLOW)
    now[0] = 1.0
    echo.tool_started(SLOW)
    now[0] = 3.5
    echo.content(progress(SLOW, "step 1 of 3"))
    assert "running slow(n=1)  2.5s  · step 1 of 3" in output.getvalue()
    echo.content(result(SLOW, "slow done"))
    echo.finish()


def test_a_call_finishing_first_stays_in_its_place_and_results_print_in_call_order() -> None:
    echo, output = terminal_echo(lambda: 0.0)
    echo.content(SLOW)
    echo.content(FAST)
    echo.tool_started(SLOW)
    echo.tool_started(FAST)
    before = len(output.getvalue())
    echo.content(result(FAST, "fast done"))
    drawn = output.getvalue()[before:]
    assert "fast done" not in drawn  # held until the call asked for first is done
    assert drawn.index("running slow(n=1)") < drawn.index("✔ result fast(n=2)")  # in place
    echo.content(result(SLOW, "slow done"))
    echo.finish()
    printed = output.getvalue()[before:]
    assert printed.index("slow done") < printed.index("fast done")
    assert printed.count("slow done") == printed.count("fast done") == 1


def test_a_call_that_finishes_within_the_grace_never_draws_the_live_area() -> None:
    now = [0.0]
    echo, output = terminal_echo(lambda: now[0], grace=GRACE_S)
    echo.content(SLOW)
    echo.tool_started(SLOW)
    now[0] = GRACE_S / 2
    echo.content(progress(SLOW, "step 1 of 3"))
    echo.content(result(SLOW, "slow done"))
    echo.finish()
    assert "running" not in output.getvalue()
    assert "\x1b" not in output.getvalue()  # no cursor moves: nothing was drawn or erased


def test_a_call_open_past_the_grace_is_drawn_with_its_elapsed_time() -> None:
    now = [0.0]
    echo, output = terminal_echo(lambda: now[0], grace=GRACE_S)
    echo.content(SLOW)
    echo.tool_started(SLOW)
    now[0] = GRACE_S / 2
    echo.content(progress(SLOW, "step 1 of 3"))
    assert "running" not in output.getvalue()
    now[0] = GRACE_S + 0.05
    echo.content(progress(SLOW, "step 2 of 3"))
    assert f"running slow(n=1)  {GRACE_S + 0.05:.1f}s  · step 2 of 3" in output.getvalue()
    echo.content(result(SLOW, "slow done"))
    echo.finish()


def test_a_call_still_under_review_is_not_drawn_so_a_review_prompt_keeps_the_terminal() -> None:
    now = [0.0]
    echo, output = terminal_echo(lambda: now[0], grace=GRACE_S)
    echo.content(SLOW)
    now[0] = GRACE_S * 4  # a review hook asking the user, at this terminal
    echo.content(FAST)
    assert "running" not in output.getvalue()
    echo.tool_started(SLOW)
    now[0] = GRACE_S * 6
    echo.tool_started(FAST)
    assert f"running slow(n=1)  {GRACE_S * 2:.1f}s" in output.getvalue()  # since it started
    echo.finish()


def test_the_ticker_draws_the_thinking_spinner_once_the_wait_outlasts_the_grace() -> None:
    now = [0.0]
    output = WatchedOutput("thinking… 1.0s")
    console = Console(file=output, width=200, force_terminal=True, color_system=None)
    echo = ProgressEcho("output", console, refresh_per_second=50, clock=lambda: now[0])
    echo.waiting()
    assert "thinking" not in output.getvalue()  # not before a tick past the grace
    now[0] = 1.0
    assert output.seen.wait(timeout=30)
    echo.text("Hello")  # the first token ends the wait and erases the spinner
    echo.finish()
    assert output.getvalue().endswith("Hello\n")


def test_the_ticker_draws_a_slow_call_and_is_gone_after_finish() -> None:
    now = [0.0]
    output = WatchedOutput("running slow(n=1)  1.0s")
    console = Console(file=output, width=200, force_terminal=True, color_system=None)
    echo = ConsoleEcho("output", console, refresh_per_second=50, clock=lambda: now[0])
    before = set(threading.enumerate())
    echo.content(SLOW)
    echo.tool_started(SLOW)
    tickers = [
        t for t in threading.enumerate() if t not in before and t.name == "chatlas_like-live-area"
    ]
    assert len(tickers) == 1  # one thread for the area, not one per call
    now[0] = 1.0  # the call has now run past its grace: the next tick draws it
    assert output.seen.wait(timeout=30)
    echo.content(result(SLOW, "slow done"))
    echo.finish()
    assert not tickers[0].is_alive()
    assert "running" not in output.getvalue().rpartition("slow done")[2]


def test_a_ticker_that_cannot_draw_stops_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rich.live import Live

    def broken_terminal(self: Live, refresh: bool = False) -> None:
        raise OSError("the terminal went away")

    raised: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: raised.append(args.exc_value))
    monkeypatch.setattr(Live, "start", broken_terminal)
    output = io.StringIO()
    console = Console(file=output, width=200, force_terminal=True, color_system=None)
    echo = ConsoleEcho("output", console, refresh_per_second=50, grace=0.0)
    before = set(threading.enumerate())
    echo.content(SLOW)
    echo.tool_started(SLOW)
    (ticker,) = [t for t in threading.enumerate() if t not in before]
    ticker.join(timeout=30)
    assert not ticker.is_alive()  # it gave up drawing
    echo.content(result(SLOW, "slow done"))
    echo.finish()
    assert raised == []
    assert "slow done" in output.getvalue()


def test_the_live_area_is_erased_and_not_redrawn_once_every_call_is_done() -> None:
    echo, output = terminal_echo(lambda: 0.0)
    two_calls_fast_first(echo)
    tail = output.getvalue().rpartition("slow done")[2]
    assert "running" not in tail


def test_text_deltas_never_redraw_the_live_area() -> None:
    echo, output = terminal_echo(lambda: 0.0)
    echo.content(SLOW)
    echo.text("more text ")  # hides the area (drawn once more as it is erased)
    drawn = output.getvalue().count("running slow")
    for _ in range(50):
        echo.text("more text ")
    assert output.getvalue().count("running slow") == drawn
    echo.finish()


def test_progress_from_a_tool_reaches_the_terminal_without_control_sequences() -> None:
    for echo, output in (plain_echo(), terminal_echo(lambda: 0.0)):
        echo.content(SLOW)
        echo.content(progress(SLOW, HOSTILE))
        text = output.getvalue()
        echo.content(result(SLOW, "done"))
        echo.finish()
        assert "<script>x()</script>" in text
        text = output.getvalue()
        assert "\x1b]52" not in text and "\x1b[2J" not in text and "\x07" not in text


# -- notebook ---------------------------------------------------------------------------


def test_a_notebook_shows_one_card_per_call_that_goes_from_running_to_its_outcome() -> None:
    display = Display()
    echo = NotebookEcho("output", display)
    echo.content(SLOW)
    assert len(display.outputs) == 1 and "⏳ running" in display.outputs[0]
    echo.content(progress(SLOW, "step <1>"))
    assert len(display.outputs) == 1 and "step &lt;1&gt;" in display.outputs[0]
    echo.content(result(SLOW, "slow done"))
    echo.finish()
    assert display.outputs == [content_html(result(SLOW, "slow done"))]
    assert display.updates == 2


def test_a_notebook_updates_each_calls_own_card_whichever_finishes_first() -> None:
    display = Display()
    two_calls_fast_first(NotebookEcho("output", display))
    assert display.outputs == [
        content_html(result(SLOW, "slow done")),
        content_html(result(FAST, "fast done")),
    ]


def test_a_notebook_card_shows_a_dataframe_result_as_a_table() -> None:
    import pandas as pd

    display = Display()
    echo = NotebookEcho("output", display)
    echo.content(SLOW)
    frame = pd.DataFrame({"region": ["North", "South"], "q3": [150, 88]})
    echo.content(ContentToolResult(value=frame, request=SLOW))
    echo.finish()
    (card,) = display.outputs
    assert '<table class="dataframe chatlas-like-dataframe">' in card
    assert "<td>South</td>" in card and "what the model read" in card


def test_a_notebook_card_escapes_what_a_tool_yields() -> None:
    display = Display()
    echo = NotebookEcho("output", display)
    echo.content(SLOW)
    echo.content(progress(SLOW, "<img src=x onerror=alert(1)>"))
    assert "<img" not in display.outputs[0] and "&lt;img" in display.outputs[0]


# -- Shiny (what shinychat receives) -------------------------------------------------------


def shown(message: Any) -> str:
    blocks = "".join(b["content"] for b in message.blocks if b["type"] == "html_block")
    return f"{message.content}{blocks}"


def test_shiny_cards_of_a_call_each_hide_the_card_they_supersede() -> None:
    import shinychat

    from chatlas_like.shiny import register_shinychat

    register_shinychat()
    key = call_key(SLOW.id)
    running = shown(shinychat.message_content_chunk(SLOW))
    first = shown(shinychat.message_content_chunk(progress(SLOW, "<b>one</b>")))
    second = shown(shinychat.message_content_chunk(progress(SLOW, "two")))
    done = shown(shinychat.message_content_chunk(result(SLOW, "done")))
    assert f"data-call='{key}' data-step='0'" in running and "⏳ running" in running
    assert f".chatlas-like-live[data-call='{key}'][data-step='0']{{display:none}}" in first
    assert "&lt;b&gt;one&lt;/b&gt;" in first and "<b>one" not in first
    assert f"[data-call='{key}'][data-step='1']{{display:none}}" in second
    assert f".chatlas-like-live[data-call='{key}']{{display:none}}" in done
    assert (
        "chatlas-like-tool-result" in done and "chatlas-like-live" not in done.split("</style>")[1]
    )


def test_a_call_key_is_safe_in_css_whatever_the_id() -> None:
    assert re.fullmatch(r"[0-9a-f]{16}", call_key("x']{}</style><script>"))


# -- truncation: one set of numbers ---------------------------------------------------------


def big() -> str:
    """A large report."""
    return "line of the report\n" * 5000


def test_a_truncated_results_card_gives_the_numbers_the_model_and_the_store_have(
    serve: Callable[..., LoopbackServer], tmp_path: Path
) -> None:
    server = serve([Reply.tool_call("big", {}), Reply.text("ok")])
    store = SqliteStore(tmp_path / "r.db")
    chat = make_chat(server, store=store, paging=True, max_result_bytes=2000)
    chat.register_tool(big)
    chat.chat("go", echo="none")
    (cut,) = chat.get_turns()[2].tool_results
    sent = server.message_requests()[1]["messages"][-1]["content"][0]["content"]
    kept, original, stored = map(
        lambda n: int(n.replace(",", "")),
        re.search(r"first ([\d,]+) of ([\d,]+) bytes.*?; ([\d,]+) bytes are stored", sent).groups(),  # pyright: ignore[reportOptionalMemberAccess]
    )
    record = store.get(None, chat.run_id, 1)
    assert record is not None
    assert (record.original_length, record.stored_length) == (original, stored)
    assert (cut.original_length, cut.stored_length) == (original, len(sent.encode()))
    note = truncation_note(cut)
    assert note == (
        f"cut for the model: {len(sent.encode()):,} bytes sent, the first {kept:,} of "
        f"{original:,} and a notice; {stored:,} bytes stored"
    )
    assert note in cut._repr_html_() and note in cut._repr_markdown_()


# -- end to end: a real chat with two tools ---------------------------------------------------


def test_a_chat_with_two_concurrent_tools_echoes_one_outcome_per_call(
    serve: Callable[..., LoopbackServer],
) -> None:
    fast_delivered = threading.Event()

    def slow_tool() -> str:
        """Waits until the fast tool's result has been delivered."""
        assert fast_delivered.wait(timeout=30)  # it finished while this one was blocked
        return "slow done"

    def fast_tool() -> str:
        """Returns at once."""
        return "fast done"

    server = serve(
        [Reply.tool_calls([("slow_tool", {}), ("fast_tool", {})]), Reply.text("Both done.")]
    )
    output = io.StringIO()
    chat = make_chat(server)
    chat.register_tool(slow_tool)
    chat.register_tool(fast_tool)
    chat.on_tool_result(lambda r: fast_delivered.set() if r.value == "fast done" else None)
    chat.set_echo_options(rich_console={"file": output, "width": 200, "force_terminal": False})
    chat.chat("Run both", echo="output")
    text = output.getvalue()
    assert text.count("✔ result slow_tool()") == 1 and text.count("✔ result fast_tool()") == 1
    assert text.index("✔ result fast_tool()") < text.index("✔ result slow_tool()")  # as finished
    assert "running" not in text  # a file gets no live area
    assert text.index("🔧 fast_tool()") < text.index("✔ result")  # asked before answered


# -- a generator tool: its yields, then its one final result ------------------------------


def generator_call(echo: Any, final: ContentToolResult) -> None:
    echo.content(SLOW)
    echo.tool_started(SLOW)
    echo.content(progress(SLOW, "step 1 of 2"))
    echo.content(progress(SLOW, "step 2 of 2"))
    echo.content(final)
    echo.finish()


def test_a_generators_running_card_ends_with_its_final_result_in_a_notebook() -> None:
    from chatlas_like._tools.yields import combine

    display = Display()
    final = combine(SLOW, ["step 1 of 2", "step 2 of 2"])
    generator_call(NotebookEcho("output", display), final)
    assert display.outputs == [content_html(final)]
    assert "✔ result" in display.outputs[0] and "step 2 of 2" in display.outputs[0]


def test_a_generators_running_card_ends_with_its_final_result_in_shiny() -> None:
    import shinychat

    from chatlas_like._tools.yields import combine
    from chatlas_like.shiny import register_shinychat

    register_shinychat()
    final = combine(SLOW, ["step 1 of 2", "step 2 of 2"])
    done = shown(shinychat.message_content_chunk(final))
    assert f".chatlas-like-live[data-call='{call_key(SLOW.id)}']{{display:none}}" in done
    assert "chatlas-like-tool-result" in done and "step 2 of 2" in done


def test_a_generators_status_line_ends_with_its_yields_or_its_failure_in_a_terminal() -> None:
    from chatlas_like._tools.yields import combine

    echo, output = terminal_echo(lambda: 0.0)
    generator_call(echo, combine(SLOW, ["step 1 of 2", "step 2 of 2"]))
    assert "✔ result" not in output.getvalue()  # its yields were its display, as in chatlas
    assert "running" not in output.getvalue().rpartition("step 2 of 2")[2]
    echo, output = terminal_echo(lambda: 0.0)
    failed = ContentToolResult(error="the disk is full", request=SLOW)
    generator_call(echo, combine(SLOW, ["step 1 of 2", failed]))
    assert "✖ error slow(n=1)" in output.getvalue()
