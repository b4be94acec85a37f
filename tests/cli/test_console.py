"""``python -m chatlas_like chat`` driven through a pseudo-terminal, as a person uses it.

Ctrl-C is a real SIGINT: pexpect writes ``\\x03`` to the terminal, whose line
discipline signals the child process (never the pytest process).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from typing import Any

import pexpect
import pytest

from chatlas_like.__main__ import main
from chatlas_like._display.console import ProgressEcho
from chatlas_like._display.console import ask as ask_chat
from chatlas_like.testing import Reply

from ..conftest import TEST_KEY, make_chat

PROMPT = "you>"
SALES = "Which region had the highest Q3 sales?"


def spawn(*args: str, env: dict[str, str] | None = None) -> pexpect.spawn:
    child = pexpect.spawn(
        sys.executable,
        ["-m", "chatlas_like", "chat", *args],
        env={**os.environ, **(env or {}), "COLUMNS": "100", "LINES": "30"},
        encoding="utf-8",
        dimensions=(30, 100),
        timeout=60,
    )
    child.expect(PROMPT)
    return child


@pytest.fixture
def offline() -> Iterator[pexpect.spawn]:
    child = spawn("--offline")
    yield child
    child.close(force=True)


def ask(child: pexpect.spawn, prompt: str) -> None:
    child.sendline(prompt)
    child.expect_exact(prompt)  # the terminal's echo of what was typed


def test_the_offline_chat_says_the_model_is_scripted(offline: pexpect.spawn) -> None:
    assert "SCRIPTED" in (offline.before or "")


def test_the_chat_runs_a_tool_and_answers(offline: pexpect.spawn) -> None:
    ask(offline, SALES)
    offline.expect_exact("quarterly_sales()")
    offline.expect_exact("✔ result")
    offline.expect_exact("Midwest")
    offline.expect(PROMPT)


def test_a_running_tool_shows_a_progress_line_with_its_elapsed_time(
    offline: pexpect.spawn,
) -> None:
    ask(offline, "wait 1 seconds")
    offline.expect(r"running wait\(seconds=1\.0\)\s+\d+\.\ds")
    offline.expect_exact("Done: waited 1 seconds")
    offline.expect(PROMPT)


def test_a_spinner_shows_until_the_first_token(offline: pexpect.spawn) -> None:
    ask(offline, "take your time: 1 second")
    offline.expect(r"thinking… \d+\.\ds")
    offline.expect_exact("an answer that took its time")


def test_ctrl_c_stops_a_slow_answer_and_the_next_question_works(offline: pexpect.spawn) -> None:
    ask(offline, "take your time: 600 seconds")
    offline.expect_exact("thinking…")
    offline.sendintr()
    offline.expect_exact("interrupted")
    offline.expect(PROMPT)
    ask(offline, SALES)
    offline.expect_exact("Midwest")
    offline.expect(PROMPT)
    offline.sendline("exit")
    offline.expect(pexpect.EOF)
    offline.close()
    assert offline.exitstatus == 0


def test_ctrl_c_stops_a_running_tool_and_the_session_goes_on(offline: pexpect.spawn) -> None:
    ask(offline, "wait 600 seconds")
    offline.expect_exact("running wait(seconds=600.0)")
    offline.sendintr()
    offline.expect_exact("interrupted")
    offline.expect(PROMPT)
    ask(offline, SALES)
    offline.expect_exact("Midwest")
    offline.expect(PROMPT)


def test_after_ctrl_c_the_interrupted_call_has_its_outcome_line(offline: pexpect.spawn) -> None:
    ask(offline, "wait 600 seconds")
    offline.expect_exact("running wait(seconds=600.0)")
    offline.sendintr()
    offline.expect_exact("✖ error")
    offline.expect_exact("wait(seconds=600.0)")
    offline.expect_exact("interrupted while running")
    offline.expect_exact("⏹ interrupted")


def test_ctrl_d_ends_the_chat(offline: pexpect.spawn) -> None:
    # readline switches the terminal out of line mode after the prompt is drawn; an EOF
    # typed in between is swallowed by that switch, so type it again until it lands.
    for _ in range(20):
        offline.sendeof()
        if offline.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=3) == 0:
            break
    else:
        pytest.fail("Ctrl-D never ended the chat")
    offline.close()
    assert offline.exitstatus == 0


def test_with_a_key_the_chat_talks_to_the_api(serve: Any) -> None:
    server = serve([Reply.text("Hello from the API.")])
    child = spawn(env={"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": TEST_KEY})
    try:
        assert "talking to Claude" in (child.before or "")
        ask(child, "Hi")
        child.expect_exact("Hello from the API.")
        child.expect(PROMPT)
    finally:
        child.close(force=True)
    body = server.message_requests()[0]
    assert [m["content"][0]["text"] for m in body["messages"]] == ["Hi"]
    assert {tool["name"] for tool in body["tools"]} == {"quarterly_sales", "wait"}


def test_without_a_key_the_chat_points_to_offline(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert main(["chat"]) == 2
    assert "--offline" in capsys.readouterr().err


def test_an_error_message_with_square_brackets_is_printed_as_it_is(serve: Any) -> None:
    from rich.console import Console

    server = serve([Reply.error(400, "invalid_request_error", "bad file [/data/x] [bold]")])
    output = io.StringIO()
    echo = ProgressEcho("output", Console(file=output, width=200, force_terminal=False))
    assert ask_chat(make_chat(server, max_retries=0), "Hi", echo) is False
    assert "BadRequestError:" in output.getvalue()
    assert "bad file [x] [bold]" in output.getvalue()  # not markup; the path reduced


def test_the_answer_after_a_tool_result_follows_it_without_blank_lines(serve: Any) -> None:
    from rich.console import Console

    def lookup() -> str:
        """Looks it up."""
        return "42"

    server = serve([Reply.tool_call("lookup", {}, text="Looking."), Reply.text("It is 42.")])
    chat = make_chat(server)
    chat.register_tool(lookup)
    output = io.StringIO()
    echo = ProgressEcho("output", Console(file=output, width=200, force_terminal=False))
    assert ask_chat(chat, "What is it?", echo) is True
    lines = output.getvalue().splitlines()
    assert lines[lines.index("42") + 1] == "It is 42."  # as chat() echoes it


def test_piped_input_is_shown_on_the_prompt_line_and_the_answer_starts_below_it() -> None:
    import subprocess

    finished = subprocess.run(
        [sys.executable, "-m", "chatlas_like", "chat", "--offline"],
        input=f"{SALES}\nexit\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "100"},
        check=True,
    )
    lines = finished.stdout.splitlines()
    asked = lines.index(f"{PROMPT} {SALES}")
    assert lines[asked + 1] == "Let me look up the sales figures."
    assert lines[-1] == f"{PROMPT} exit"


def test_piped_questions_whose_answer_failed_end_with_exit_status_1(serve: Any) -> None:
    import subprocess

    server = serve([Reply.error(400, "invalid_request_error", "refused"), Reply.text("Fine.")])
    env = {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": TEST_KEY}
    finished = subprocess.run(
        [sys.executable, "-m", "chatlas_like", "chat"],
        input="First?\nSecond?\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert "Fine." in finished.stdout  # the session went on after the failed answer
    assert finished.returncode == 1


def test_the_offline_model_runs_two_calls_at_once_on_a_prompt_with_two_waits() -> None:
    import threading

    from chatlas_like import ChatAnthropic
    from chatlas_like._cli.chat_command import OFFLINE_HINTS, offline_model
    from chatlas_like.testing import LoopbackServer

    both_running = threading.Barrier(2, timeout=30)

    def wait(seconds: float) -> str:
        """Returns once the other call runs too (else the barrier breaks)."""
        both_running.wait()
        return f"waited {seconds:g} seconds"

    prompt = next(hint for hint in OFFLINE_HINTS if " and " in hint)
    with LoopbackServer(offline_model) as server:
        chat = ChatAnthropic(base_url=server.url, api_key="scripted-offline")
        chat.register_tool(wait)
        answer = chat.chat(prompt, echo="none")
    assert str(answer).endswith("Done: waited 4 seconds; waited 2 seconds.")


def test_the_chat_ends_quietly_when_the_reader_of_its_output_goes_away() -> None:
    import subprocess

    with subprocess.Popen(
        [sys.executable, "-m", "chatlas_like", "chat", "--offline"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "100"},
    ) as child:
        assert child.stdin and child.stdout and child.stderr
        # The answer streams a second after the question is shown: after the reader left.
        child.stdin.write(b"take your time: 1 second\nexit\n")
        child.stdin.close()
        while b"you> take your time" not in child.stdout.readline():
            pass
        child.stdout.close()  # as `| head` does once it has its lines
        errors = child.stderr.read().decode()
        assert child.wait(timeout=60) == 1
    assert "Traceback" not in errors and "BrokenPipe" not in errors, errors


def test_a_failed_answer_is_reported_on_stderr_not_among_the_answers(serve: Any) -> None:
    import subprocess

    server = serve([Reply.error(400, "invalid_request_error", "refused")])
    env = {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": TEST_KEY}
    finished = subprocess.run(
        [sys.executable, "-m", "chatlas_like", "chat"],
        input="First?\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert "BadRequestError" in finished.stderr
    assert "BadRequestError" not in finished.stdout
