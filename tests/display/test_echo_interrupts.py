"""After Ctrl-C, the terminal shows how each interrupted call ended.

Ctrl-C is a real SIGINT to a subprocess (``tests/scripts/echo_interrupt_script.py``): a
KeyboardInterrupt inside pytest would end the whole run.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def terminal_output(mode: str) -> str:
    """What the script's terminal showed, control sequences left out."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.scripts.echo_interrupt_script", mode],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    if mode == "chat":
        line = process.stderr.readline()
        assert line.strip() == "READY", line + process.stderr.read()
        process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert out.endswith("--- end\n")  # the chat went on
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out)


def test_ctrl_c_in_the_console_chats_own_code_still_echoes_the_calls_outcome() -> None:
    shown = terminal_output("console")
    outcome = shown.index("✖ error working()")
    assert shown.index("interrupted while running", outcome) < shown.index("⏹ interrupted")


def test_ctrl_c_while_a_call_runs_echoes_each_calls_outcome_in_call_order() -> None:
    shown = terminal_output("chat")
    held = shown.index("✔ result quick()  ")  # its status line, under the running call's
    stopped, printed = shown.index("✖ error waiting()"), shown.index("✔ result quick()\nquick")
    assert held < stopped < printed < shown.index("⏹ interrupted")
    assert "interrupted while running" in shown[stopped:printed]
