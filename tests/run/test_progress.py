"""Progress of long work where the output is no terminal (a pipe, CI, a log), or nowhere.

parallel_chat and batch_chat run against the loopback server through the real SDK;
under pytest, standard error is a capture (no terminal), so what they show is the plain
lines a log would get. The terminal is tested in
``tests/display/test_progress_terminal.py``, the notebook in
``tests/display/test_progress_notebook.py``.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from chatlas_like import batch_chat_text, parallel_chat_text
from chatlas_like._display.progress import PlainView, ProgressReporter, progress_reporter
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat
from ..scripts.batch_job import PROMPTS, job_chat

CLOCK = r"\d+:\d\d:\d\d"


def first_prompt(body: Mapping[str, Any]) -> str:
    return next(b["text"] for b in body["messages"][0]["content"] if b.get("type") == "text")


class Flaky:
    """Echoes each prompt; ``fail`` is refused; ``busy`` and ``down`` fail once first
    (a 529 asking for no wait, a 500 with no retry-after)."""

    def __init__(self) -> None:
        self.failed: set[str] = set()
        self.lock = threading.Lock()

    def __call__(self, body: Mapping[str, Any]) -> Reply:
        prompt = first_prompt(body)
        if prompt == "fail":
            return Reply.error(400, "invalid_request_error", "this prompt is refused")
        with self.lock:
            once = prompt in ("busy", "down") and prompt not in self.failed
            self.failed.add(prompt)
        if once and prompt == "busy":
            return Reply.error(529, "overloaded_error", "busy", headers={"retry-after": "0"})
        if once:
            return Reply.error(500, "api_error", "down for a moment")
        return Reply.text(f"You said {prompt}.")


def lines(text: str) -> list[str]:
    return text.splitlines()


@pytest.fixture
def no_rich_silence() -> Iterator[None]:
    """Leave rich's global console as it was (a test silences it)."""
    import rich

    console = rich.get_console()
    quiet = console.quiet
    yield
    console.quiet = quiet


# -- the reporter ----------------------------------------------------------------------------


def test_piped_output_gets_a_line_at_most_every_thirty_seconds_and_one_at_the_end() -> None:
    now = [0.0]
    out = io.StringIO()
    view = PlainView(out, every=30.0, clock=lambda: now[0])
    with ProgressReporter("Waiting for 4 conversations", 4, ("done", "failed"), view) as progress:
        progress.advance()
        now[0] = 29.0
        progress.advance()
        assert out.getvalue() == ""  # quick changes write nothing
        now[0] = 31.0
        progress.advance("failed")
        now[0] = 40.0
        progress.advance()
    written = lines(out.getvalue())
    assert len(written) == 2
    assert re.fullmatch(
        rf"Waiting for 4 conversations: 3/4 \(75%\), {CLOCK}, 2 done \| 1 failed", written[0]
    )
    assert re.fullmatch(
        rf"Waiting for 4 conversations: 4/4 \(100%\), {CLOCK}, 3 done \| 1 failed", written[1]
    )


def test_plain_output_holds_no_control_characters() -> None:
    out = io.StringIO()
    with progress_reporter("Bell \x07 and \x1b[2J escape", 2, stream=out) as progress:
        progress.advance()
        progress.advance("failed")
    assert re.fullmatch(
        rf"Bell  and  escape: 2/2 \(100%\), {CLOCK}, 1 done \| 1 failed\n", out.getvalue()
    )


def test_code_waiting_on_results_drives_the_reporter_with_start_advance_and_finish() -> None:
    out = io.StringIO()
    progress = progress_reporter("Waiting for 2 conversations", 2, stream=out)
    progress.start()
    progress.advance("done")
    progress.tally("retried")
    progress.advance("failed")
    progress.finish()
    snapshot = progress.snapshot()
    assert (snapshot.completed, snapshot.counts, snapshot.ok) == (
        2,
        (("done", 1), ("failed", 1), ("retried", 1)),
        True,
    )
    assert lines(out.getvalue())[-1].endswith("1 done | 1 failed | 1 retried")


def test_work_that_raises_ends_its_progress_as_failed_with_a_last_line() -> None:
    out = io.StringIO()
    progress = progress_reporter("Waiting for 3 conversations", 3, stream=out)

    def work() -> None:
        with progress:
            progress.advance()
            raise KeyError("lost")

    with pytest.raises(KeyError):
        work()
    assert not progress.snapshot().ok and not progress.running
    assert re.fullmatch(
        rf"Waiting for 3 conversations: 1/3 \(33%\), {CLOCK}, 1 done \| 0 failed\n", out.getvalue()
    )


def test_a_reporter_started_later_counts_its_time_from_when_the_work_began() -> None:
    out = io.StringIO()
    with progress_reporter("Resumed", None, stream=out).start(since=time.time() - 3725):
        pass
    assert re.fullmatch(r"Resumed: 1:02:0\d, 0 done \| 0 failed\n", out.getvalue())


def test_echo_none_keeps_the_numbers_and_shows_nothing() -> None:
    out = io.StringIO()
    with progress_reporter("Quiet", 1, echo="none", stream=out) as progress:
        progress.advance()
    assert out.getvalue() == ""
    assert progress.snapshot().completed == 1


def test_an_unknown_echo_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="echo must be one of none, text, output, all"):
        progress_reporter("x", 1, echo="loud")  # pyright: ignore[reportArgumentType]


def test_a_quiet_rich_console_silences_progress_as_it_does_in_chatlas(
    no_rich_silence: None,
) -> None:
    import rich

    rich.reconfigure(quiet=True)
    out = io.StringIO()
    with progress_reporter("Quiet", 1, stream=out) as progress:
        progress.advance()
    assert out.getvalue() == ""


def test_importing_parallel_chat_and_batch_chat_loads_no_rich() -> None:
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from chatlas_like import parallel_chat, batch_chat; "
            "print('rich' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert probe.stdout.strip() == "False"


# -- parallel_chat ---------------------------------------------------------------------------


def test_parallel_chat_piped_ends_with_one_line_of_done_failed_and_retried(
    serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    chat = make_chat(serve(Flaky()))
    texts = asyncio.run(
        parallel_chat_text(chat, ["a", "busy", "fail", "b"], rpm=None, on_error="continue")
    )
    assert texts[:2] == ["You said a.", "You said busy."]
    captured = capsys.readouterr()
    assert captured.out == ""  # progress never goes to standard output
    assert re.fullmatch(
        rf"Answering 4 prompts: 4/4 \(100%\), {CLOCK}, 3 done \| 1 failed \| 1 retried\n",
        captured.err,
    )


def test_a_retry_after_a_server_error_with_no_retry_after_counts_as_retried(
    serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    chat = make_chat(serve(Flaky()))
    asyncio.run(parallel_chat_text(chat, ["down"], rpm=None))
    assert capsys.readouterr().err.rstrip().endswith("1 done | 0 failed | 1 retried")


def test_requests_of_tool_rounds_are_not_counted_as_retries(
    serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    def model(body: Mapping[str, Any]) -> Reply:
        if any(b.get("type") == "tool_result" for b in body["messages"][-1]["content"]):
            return Reply.text("Twice is done.")
        return Reply.tool_call("double", {"x": 2})

    def double(x: int) -> int:
        """Doubles a number."""
        return 2 * x

    chat = make_chat(serve(model))
    chat.register_tool(double)
    asyncio.run(parallel_chat_text(chat, ["a", "b"], rpm=None))
    assert capsys.readouterr().err.rstrip().endswith("2 done | 0 failed | 0 retried")


def test_conversations_never_started_are_counted_at_the_end(
    serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    chat = make_chat(serve(Flaky()))
    prompts = ["fail", "a", "b", "c"]
    texts = asyncio.run(parallel_chat_text(chat, prompts, max_active=1, rpm=None))
    assert texts[1:] == [None, None, None]
    assert re.fullmatch(
        rf"Answering 4 prompts: 1/4 \(25%\), {CLOCK}, 0 done \| 1 failed \| 0 retried \| 3 not started\n",
        capsys.readouterr().err,
    )


def test_parallel_chat_with_echo_none_shows_nothing(
    serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    chat = make_chat(serve(Flaky()))
    asyncio.run(parallel_chat_text(chat, ["a", "fail"], rpm=None, echo="none"))
    assert capsys.readouterr() == ("", "")


# -- batch_chat ------------------------------------------------------------------------------


def capitals(body: Mapping[str, Any]) -> Reply:
    text = next(b["text"] for b in body["messages"][-1]["content"] if b.get("type") == "text")
    return Reply.text({"Capital of France?": "Paris", "Capital of Peru?": "Lima"}.get(text, "?"))


def test_batch_chat_piped_ends_with_one_line_of_pending_done_and_failed(
    serve: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server: LoopbackServer = serve(capitals)
    server.batches.per_poll = 1
    server.batches.expire = {"prompt-2"}
    with pytest.warns(UserWarning, match="prompt 2: the batch request expired"):
        texts = batch_chat_text(
            job_chat(server.url), PROMPTS, tmp_path / "job.json", poll_interval=0.001
        )
    assert texts == ["Paris", "Lima", None]
    assert re.fullmatch(
        rf"Processing 3 prompts: 3/3 \(100%\), {CLOCK}, 0 pending \| 2 done \| 1 failed\n",
        capsys.readouterr().err,
    )


def test_batch_chat_with_echo_none_shows_nothing(
    serve: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server: LoopbackServer = serve(capitals)
    batch_chat_text(
        job_chat(server.url), PROMPTS, tmp_path / "job.json", poll_interval=0.001, echo="none"
    )
    assert capsys.readouterr() == ("", "")


def test_batch_chat_that_does_not_wait_shows_nothing(
    serve: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server: LoopbackServer = serve(capitals)
    assert batch_chat_text(job_chat(server.url), PROMPTS, tmp_path / "job.json", wait=False) is None
    assert capsys.readouterr().err == ""


def test_batch_chat_reading_downloaded_results_shows_nothing(
    serve: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server: LoopbackServer = serve(capitals)
    chat, path = job_chat(server.url), tmp_path / "job.json"
    batch_chat_text(chat, PROMPTS, path, poll_interval=0.001)
    capsys.readouterr()
    batch_chat_text(chat, PROMPTS, path, poll_interval=0.001)
    assert capsys.readouterr().err == ""


def test_a_batch_picked_up_again_shows_the_time_since_its_submission(
    serve: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server: LoopbackServer = serve(capitals)
    chat, path = job_chat(server.url), tmp_path / "job.json"
    assert batch_chat_text(chat, PROMPTS, path, wait=False) is None
    state = json.loads(path.read_text())
    assert time.time() - 60 < state["submitted_at"] <= time.time()
    state["submitted_at"] -= 7200  # as if another process submitted it two hours ago
    path.write_text(json.dumps(state))
    batch_chat_text(chat, PROMPTS, path, poll_interval=0.001)
    assert re.search(r", 2:0[01]:\d\d, 0 pending \| 3 done \| 0 failed$", capsys.readouterr().err)
