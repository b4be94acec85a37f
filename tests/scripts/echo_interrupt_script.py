"""A chat echoing to a terminal, run in a subprocess so that a test can stop it with a
real SIGINT and read what the terminal showed.

Usage: ``python -m tests.scripts.echo_interrupt_script MODE`` with MODE one of:

- ``console``: the console chat (``ask()``, as ``python -m chatlas_like chat`` runs it)
  while a generator tool runs; the SIGINT is sent by the echo to its own process while it
  prints the tool's first progress line, so Ctrl-C lands in the echo's code, outside the
  stream.
- ``chat``: ``chat.chat(echo="output")`` on a terminal (a status area) with two calls:
  ``quick`` finishes while ``waiting`` (asked for first) runs; once the status area shows
  ``quick`` finished, ``READY`` is printed to stderr for the test to send the SIGINT.

Prints the terminal's output (stdout), then ``--- end`` once the chat went on.
"""

from __future__ import annotations

import io
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

from rich.console import Console

from chatlas_like import ChatAnthropic, ContentToolResultProgress
from chatlas_like._display.console import ProgressEcho, ask
from chatlas_like.testing import LoopbackServer, Reply

release = threading.Event()


def working() -> Iterator[str]:
    """Reports that it has begun, then runs until released."""
    yield "begun"
    release.wait(30)
    yield "late"


def waiting() -> str:
    """Runs until released."""
    release.wait(30)
    return "late"


def quick() -> str:
    """Returns at once."""
    return "quick"


class Terminal(io.TextIOBase):
    """Standard output, saying ``READY`` on stderr once ``awaited`` has been drawn."""

    def __init__(self, awaited: str) -> None:
        self.awaited = awaited
        self.drawn = ""

    def write(self, s: str) -> int:
        sys.stdout.write(s)
        if self.awaited not in self.drawn:
            self.drawn += re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", s)
            if self.awaited in self.drawn:
                print("READY", file=sys.stderr, flush=True)
        return len(s)

    def flush(self) -> None:
        sys.stdout.flush()


class InterruptedWhilePrinting(ProgressEcho):
    """Sends SIGINT to its own process as it prints a progress line: the interrupt is
    raised in the echo's code, as a Ctrl-C typed at that moment would be."""

    def content(self, item: Any) -> None:
        if isinstance(item, ContentToolResultProgress):
            os.kill(os.getpid(), signal.SIGINT)
        super().content(item)


def main(mode: str) -> None:
    calls = [("working", {})] if mode == "console" else [("waiting", {}), ("quick", {})]
    replies = [Reply.tool_calls(calls), Reply.text("Still here.")]
    with LoopbackServer(replies) as server:
        chat = ChatAnthropic(base_url=server.url, api_key="test", model="claude-haiku-4-5")
        for tool in (working, waiting, quick):
            chat.register_tool(tool)
        if mode == "console":
            echo = InterruptedWhilePrinting("output", Console(file=sys.stdout, width=100))
            ask(chat, "Go", echo)
        else:  # a status area: the finished call's line waits under the running one's
            terminal = Terminal("✔ result quick()")
            chat.set_echo_options(
                rich_console={"file": terminal, "width": 100, "force_terminal": True}
            )
            try:
                chat.chat("Go", echo="output")
            except KeyboardInterrupt:
                print("⏹ interrupted", flush=True)
        release.set()
        chat.chat("Are you there?", echo="none")
    print("--- end", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
