"""Durable conversations stopped at chosen points by a SIGKILL, and their recovery.

``python tests/scripts/durable_crash_script.py crash DB_URL STATE_DIR CASE,CASE,...`` starts
turn 0 of one conversation per case, each on a durable chat of its own
(``battery-CASE``), all at once. Each conversation holds still at its case's point
(see ``POINTS``); once every one is there, the process sends itself SIGKILL.

``python tests/scripts/durable_crash_script.py recover DB_URL STATE_DIR CASE,...`` is the next
process on the same database: its ``DBOS.launch()`` recovers every turn; it waits for
each, asks one more question on each conversation and prints one JSON report, keyed
by case. The case ``tool_gone`` crashes as ``charge`` does, and its recovering process
does not register ``charge``. The case ``options`` crashes as ``lookup`` does, with
``lookup`` registered as ``durable="rerun"`` (no annotations) and ``charge`` as
``durable="once"`` despite an ``idempotentHint``.

Each process serves the scripted model on its own loopback server. A case's tools log
their runs in ``STATE_DIR/CASE/`` (``charge.log``, ``lookup.log``), and its results go
to the SQLite store ``STATE_DIR/CASE/results.db``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from chatlas_like import ChatAnthropic, ContentToolResult, EchoSink
from chatlas_like.testing import LoopbackServer, Reply

CONVERSATION = "c-42"
PROMPT = "Charge $5 to card 42 and look the card up."
ANSWER = "All done: card 42 was charged."
THANKS = "You're welcome."
POINTS = {
    "before_model": "the turn began; no model request was sent",
    "mid_stream": "during the first streamed response",
    "before_tools": "the model asked for tools; none started",
    "charge": "inside charge (side effects), after lookup's result was recorded",
    "lookup": "inside lookup (idempotent), while charge runs",
    "after_tools": "both results recorded; the next request not sent",
    "final_answer": "during the streamed final answer",
    "tool_gone": "as charge; recovered without charge registered",
    "options": "as lookup; each tool's rerun decided by register_tool(durable=)",
}
HOLD_LIMIT = 120  # seconds the crashing process waits for every case to reach its point

_reached: set[str] = set()
_reached_lock = threading.Lock()


def hold(case: str) -> None:
    """Stay here (this conversation is at its point) until the process is killed."""
    with _reached_lock:
        _reached.add(case)
    threading.Event().wait()


def workflow_id(case: str) -> str:
    return f"chatlas_like/battery-{case}/{CONVERSATION}/00000000"


class Case:
    """One conversation's tools, model echo and kill point."""

    def __init__(self, name: str, state: Path, crashing: bool) -> None:
        self.name = name
        self.point = (
            {"tool_gone": "charge", "options": "lookup"}.get(name, name) if crashing else ""
        )
        self.state = state / name
        self.state.mkdir(exist_ok=True)
        self.lookup_recorded = threading.Event()

    def log(self, tool: str, what: str) -> None:
        with open(self.state / f"{tool}.log", "a") as f:
            f.write(f"{what} {os.getpid()}\n")
            f.flush()
            os.fsync(f.fileno())

    def tools(self) -> tuple[Any, Any]:
        def charge(card: int) -> str:
            """Charge $5 to a card.

            Parameters
            ----------
            card
                The card number.
            """
            self.log("charge", "start")
            if self.point == "charge":
                self.lookup_recorded.wait(HOLD_LIMIT)
                hold(self.name)
            if self.point == "lookup":
                threading.Event().wait()  # still running when lookup's point is reached
            time.sleep(0.3)
            self.log("charge", "done")
            return f"charged card {card}"

        def lookup(card: int) -> str:
            """Look a card up.

            Parameters
            ----------
            card
                The card number.
            """
            self.log("lookup", "start")
            if self.point == "lookup":
                while not (self.state / "charge.log").exists():
                    time.sleep(0.01)
                hold(self.name)
            self.log("lookup", "done")
            return f"card {card} is valid"

        return charge, lookup


class Holder(EchoSink):
    """Holds the conversation at its point, seen through the echo."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.results = 0
        self.texts = 0

    def user_turn(self, turn: Any) -> None:
        if self.case.point == "before_model":
            hold(self.case.name)

    def text(self, delta: str) -> None:
        self.texts += 1
        if self.case.point == "mid_stream" and self.texts == 1:
            hold(self.case.name)
        if self.case.point == "final_answer" and self.results == 2:
            hold(self.case.name)

    def content(self, item: Any) -> None:
        if type(item) is not ContentToolResult:
            return
        self.results += 1
        if item.request is not None and item.request.name == "lookup":
            self.case.lookup_recorded.set()
        if self.case.point == "after_tools" and self.results == 2:
            hold(self.case.name)


def model(body: dict[str, Any]) -> Reply:
    last = body["messages"][-1]["content"]
    if isinstance(last, list) and any(block.get("type") == "tool_result" for block in last):
        return Reply.text(ANSWER)
    if _text(last) == "Thanks":
        return Reply.text(THANKS)
    return Reply.tool_calls(
        [("charge", {"card": 42}), ("lookup", {"card": 42})], text="Charging and checking."
    )


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


def main() -> None:
    from dbos import DBOS

    from chatlas_like.durable import DurableChat

    mode, url, state, names = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4]
    crashing = mode == "crash"
    cases = [Case(name, state, crashing) for name in names.split(",")]
    with LoopbackServer(model) as server:
        durables: dict[str, Any] = {}
        for case in cases:
            chat = ChatAnthropic(
                base_url=server.url,
                api_key="test-key-not-a-secret",
                model="claude-haiku-4-5-20251001",
                store=str(case.state / "results.db"),
            )
            charge, lookup = case.tools()
            if case.name == "options":
                chat.register_tool(charge, annotations={"idempotentHint": True}, durable="once")
                chat.register_tool(lookup, durable="rerun")
            else:
                if crashing or case.name != "tool_gone":
                    chat.register_tool(charge)
                chat.register_tool(lookup, annotations={"idempotentHint": True})
            if case.point == "before_tools":
                chat.on_tool_request(lambda request, case=case: hold(case.name))
            durables[case.name] = DurableChat(chat, name=f"battery-{case.name}")
        DBOS(
            config={
                "name": "durable-battery",
                "system_database_url": url,
                "log_level": "WARNING",
                "notification_listener_polling_interval_sec": 0.05,
            }
        )
        DBOS.launch()
        if crashing:
            crash(cases, durables)
        print(json.dumps({case.name: report(case, durables[case.name]) for case in cases}))
        DBOS.destroy()


def crash(cases: list[Case], durables: dict[str, Any]) -> None:
    for case in cases:

        def talk(case: Case = case) -> None:
            durables[case.name].chat(PROMPT, conversation_id=CONVERSATION, echo=Holder(case))

        threading.Thread(target=talk, daemon=True).start()
    deadline = time.monotonic() + HOLD_LIMIT
    while time.monotonic() < deadline:
        with _reached_lock:
            if len(_reached) == len(cases):
                os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.02)
    missing = sorted({c.name for c in cases} - _reached)
    raise SystemExit(f"these cases never reached their point: {missing}")


def report(case: Case, durable: Any) -> dict[str, Any]:
    from dbos import DBOS

    from chatlas_like.durable import DurableHandle

    answer = DurableHandle(workflow_id(case.name), CONVERSATION, 0.05).result()
    thanks = str(durable.chat("Thanks", conversation_id=CONVERSATION, echo="none"))
    turns = [
        {
            "role": turn.role,
            "text": turn.text,
            "results": [
                {"name": r.request.name, "outcome": r.outcome, "error": str(r.error or "")}
                for r in turn.tool_results
                if r.request is not None
            ],
            "requests": [r.name for r in turn.tool_requests],
        }
        for turn in durable.get_turns(CONVERSATION)
    ]
    records = durable.wrapped.store.list(None, durable.run_id(CONVERSATION))
    logs = {
        tool: (case.state / f"{tool}.log").read_text().splitlines()
        if (case.state / f"{tool}.log").exists()
        else []
        for tool in ("charge", "lookup")
    }
    return {
        "answer": answer,
        "thanks": thanks,
        "turns": turns,
        "records": [{"sequence": r.sequence, "is_error": r.is_error} for r in records],
        "status": DBOS.get_workflow_status(workflow_id(case.name)).status,
        "logs": logs,
    }


if __name__ == "__main__":
    main()
