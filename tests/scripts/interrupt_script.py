"""A chat run in a subprocess so that tests can interrupt it with a real SIGINT.

Usage: ``python -m tests.scripts.interrupt_script MODE`` with MODE one of ``tool`` (Ctrl-C while two
slow sync calls run), ``one-tool`` (Ctrl-C while one slow sync call runs, in the caller's
thread), ``stream`` (Ctrl-C while text streams), ``tool-raises`` (a tool
raises KeyboardInterrupt itself) or ``tool-after-result`` (Ctrl-C once one call's result
has arrived while another still runs). Prints ``READY`` when the interrupt should come, then
after the interrupt a JSON summary of the history and of a follow-up ``chat()``.
"""

from __future__ import annotations

import sys
import threading

import orjson

from chatlas_like import ChatAnthropic, ContentToolResult
from chatlas_like.testing import LoopbackServer, Reply


def main(mode: str) -> None:
    release = threading.Event()
    running: list[int] = []
    lock = threading.Lock()
    expected = 2 if mode == "tool" else 1  # every slow call of the mode runs by READY

    def slow_tool() -> str:
        """Takes a long time."""
        with lock:
            running.append(1)
            ready = len(running) == expected
        if ready:
            sys.stdout.write("READY\n")
            sys.stdout.flush()
        release.wait(30)
        return "finished late"

    def raising_tool() -> str:
        """Raises KeyboardInterrupt itself."""
        raise KeyboardInterrupt

    waiting_started = threading.Event()

    def quick_tool() -> str:
        """Answers once the other call runs."""
        waiting_started.wait(30)
        return "quick"

    def waiting_tool() -> str:
        """Runs until released."""
        waiting_started.set()
        release.wait(30)
        return "finished late"

    if mode == "tool":
        first = Reply.tool_calls([("slow_tool", {}), ("slow_tool", {})])
    elif mode == "one-tool":
        first = Reply.tool_call("slow_tool", {})
    elif mode == "tool-after-result":
        first = Reply.tool_calls([("quick_tool", {}), ("waiting_tool", {})])
    elif mode == "tool-raises":
        first = Reply.tool_calls([("raising_tool", {}), ("slow_tool", {})])
    else:
        first = Reply.text(" ".join(f"word{i}" for i in range(200))).drip(0.05)
    replies = [first, Reply.text("Still here.")]
    with LoopbackServer(replies) as server:
        chat = ChatAnthropic(base_url=server.url, api_key="test", model="claude-haiku-4-5")
        chat.register_tool(slow_tool)
        chat.register_tool(raising_tool)
        chat.register_tool(quick_tool)
        chat.register_tool(waiting_tool)
        outcome = "no interrupt"
        try:
            for chunk in chat.stream("Go", content="all"):
                if mode == "stream" and isinstance(chunk, str) and chunk.startswith("word2"):
                    print("READY", flush=True)
                if mode == "tool-after-result" and isinstance(chunk, ContentToolResult):
                    print("READY", flush=True)
        except KeyboardInterrupt:
            outcome = "KeyboardInterrupt"
        history = [
            {
                "role": t.role,
                "finish_reason": t.finish_reason,
                "text": t.text,
                "results": [[r.outcome, r.get_model_value()] for r in t.tool_results],
            }
            for t in chat.get_turns()
        ]
        release.set()
        follow_up = str(chat.chat("Are you there?", echo="none"))
        statuses = [r.response_status for r in server.requests]
    sys.stdout.write(
        orjson.dumps(
            {"outcome": outcome, "history": history, "follow_up": follow_up, "statuses": statuses}
        ).decode()
        + "\n"
    )


if __name__ == "__main__":
    main(sys.argv[1])
