"""Progress on a terminal: parallel_chat and batch_chat run in a child process whose
standard error is a pseudo-terminal, against a loopback server of its own.

What rich draws is read back with its control sequences taken out: each redraw writes
the whole line again, so every state the line went through can be found in order.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect
import pytest

JOB = r"""
import asyncio, sys, threading
from chatlas_like import ChatAnthropic, batch_chat_text, parallel_chat_text
from chatlas_like.testing import LoopbackServer, Reply

seen = set()
lock = threading.Lock()


def model(body):
    prompt = next(b["text"] for b in body["messages"][0]["content"] if b.get("type") == "text")
    if prompt == "fail":
        return Reply.error(400, "invalid_request_error", "refused")
    with lock:
        first = prompt not in seen
        seen.add(prompt)
    if prompt == "busy" and first:
        return Reply.error(529, "overloaded_error", "busy", headers={"retry-after": "0"})
    return Reply.text(f"You said {prompt}.")


mode, path = sys.argv[1], sys.argv[2]
with LoopbackServer(model) as server:
    chat = ChatAnthropic(base_url=server.url, api_key="test", model="claude-haiku-4-5-20251001")
    if mode == "parallel":
        prompts = ["a", "busy", "fail", "b"]
        print(asyncio.run(parallel_chat_text(chat, prompts, rpm=None, on_error="continue")))
    else:
        server.batches.per_poll = 1
        server.batches.polls_to_end = 10**9 if mode == "stuck" else 2
        server.batches.expire = {"prompt-2"}
        # Polls further apart than the line's redraws: each state is drawn when polled.
        print(batch_chat_text(chat, ["a", "b", "c"], path, poll_interval=0.15))
print("FINISHED")
"""
CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def spawn(mode: str, tmp_path: Path) -> pexpect.spawn:
    return pexpect.spawn(
        sys.executable,
        ["-c", JOB, mode, str(tmp_path / "job.json")],
        env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "140", "LINES": "30"},
        encoding="utf-8",
        dimensions=(30, 140),
        timeout=60,
    )


def screen_text(mode: str, tmp_path: Path) -> str:
    """All the child wrote, without control sequences (each redraw on its own line)."""
    child = spawn(mode, tmp_path)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return readable(child.before or "")


def readable(written: str) -> str:
    """What was written, without control sequences; each redraw on a line of its own."""
    return CSI.sub("", written).replace("\r", "\n")


def in_order(text: str, *pieces: str) -> bool:
    at = 0
    for piece in pieces:
        at = text.find(piece, at)
        if at < 0:
            return False
    return True


def test_parallel_chat_draws_chatlas_columns_and_our_counts_on_a_terminal(
    tmp_path: Path,
) -> None:
    text = screen_text("parallel", tmp_path)
    last = re.search(
        r"✔ Answering 4 prompts ━{40} 100% \d+:\d\d:\d\d 3 done \| 1 failed \| 1 retried", text
    )
    assert last is not None, text
    assert in_order(text, "Answering 4 prompts", "  0% ", last.group(0), "FINISHED")


@pytest.fixture(scope="module")
def batch_screen(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One batch job's screen, read by the tests below."""
    return screen_text("batch", tmp_path_factory.mktemp("batch"))


def test_the_spinner_turns_while_the_work_runs_and_the_last_frame_stays(batch_screen: str) -> None:
    text = batch_screen
    assert any(c in text for c in SPINNER)
    frames = [line for line in text.splitlines() if "Processing 3 prompts" in line]
    assert frames[-1].startswith("✔ Processing 3 prompts")
    assert text.rstrip().endswith("FINISHED")


def test_batch_chat_shows_each_polled_state_pending_done_and_failed(batch_screen: str) -> None:
    text = batch_screen
    assert in_order(
        text,
        " 33% ",
        "2 pending | 1 done | 0 failed",
        " 66% ",
        "1 pending | 2 done | 0 failed",
        "100% ",
        "0 pending | 2 done | 1 failed",
        "['You said a.', 'You said b.', None]",
    ), text


def test_ctrl_c_while_a_batch_waits_ends_the_line_with_a_cross_and_keeps_the_job(
    tmp_path: Path,
) -> None:
    child = spawn("stuck", tmp_path)
    child.expect_exact("2 pending")  # polled once: the batch runs
    child.sendintr()
    child.expect(pexpect.EOF)
    text = readable(child.before or "")
    assert "✘ Processing 3 prompts" in text
    assert "KeyboardInterrupt" in text
    assert "\x1b[?25h" in (child.before or "")  # the cursor is shown again
    assert (tmp_path / "job.json").exists()  # a later call carries on with the batch
