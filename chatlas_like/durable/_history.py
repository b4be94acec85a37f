"""A conversation's history, read from the turns DBOS recorded.

Each turn's workflow returns the turns it added (its prompt, the answers, the tool
results) and the run's last tool-result sequence number; the history is those, in
turn order. A turn that failed as a workflow (an error DBOS recorded, a cancel) added
nothing. Reads here are made outside any workflow context, so inside a turn they are
not recorded as steps: the outputs of finished turns never change, so a replay reads
the same history.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .._core.turn import Turn
from ._codec import decode_turns
from ._ids import turn_index, turn_workflow_id

__all__ = ["FINISHED", "Recorded", "TurnOutput", "load_history", "off_loop", "outside_workflow"]

T = TypeVar("T")
FINISHED = frozenset({"SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"})
_WAIT_POLL = 0.05
_FIRST_WINDOW = 16  # turn ids asked for at first: most conversations have fewer turns
_MAX_IDS = 500  # ids in one query (SQLite's older builds allow 999 parameters)


@dataclass(slots=True)
class TurnOutput:
    """What a turn's workflow returns (stored by DBOS as plain data)."""

    turns: dict[str, Any]
    last_sequence: int
    answer: str
    error: dict[str, Any] | None
    token: str
    tail: dict[str, Any] | None = None  # the stream's last items (Recorder.tail)

    def as_data(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "last_sequence": self.last_sequence,
            "answer": self.answer,
            "error": self.error,
            "token": self.token,
            "tail": self.tail,
        }

    @classmethod
    def from_data(cls, data: Any) -> TurnOutput | None:
        if not isinstance(data, dict) or "turns" not in data:
            return None
        return cls(**data)  # pyright: ignore[reportUnknownArgumentType]


@dataclass(slots=True)
class Recorded:
    """A conversation as recorded: its turns, the last sequence number, the next turn."""

    turns: list[Turn] = field(default_factory=lambda: [])
    last_sequence: int = 0
    next_index: int = 0
    running: list[str] = field(default_factory=lambda: [])  # turns not finished yet


def outside_workflow(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(...)`` in an empty context: a DBOS call made there is not a workflow step."""
    return contextvars.Context().run(fn, *args, **kwargs)


def off_loop(fn: Callable[[], T]) -> T:
    """``fn()``, in a thread of its own when an event loop runs in this one (DBOS's
    sync calls refuse to run beside a running loop, e.g. in Jupyter)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return fn()
    box: list[Any] = []

    def run() -> None:
        try:
            box.append((True, fn()))
        except BaseException as e:
            box.append((False, e))

    thread = threading.Thread(target=run, name="chatlas-like-durable", daemon=True)
    thread.start()
    thread.join()
    ok, value = box[0]
    if not ok:
        raise value
    return value


def conversation_workflows(
    name: str, conversation_id: str, *, load_output: bool, before: int | None = None
) -> list[Any]:
    """The workflow statuses of the conversation's turns (those numbered below
    ``before``, when given), in turn order.

    Read by their exact ids, a window at a time (the turns of a conversation are
    numbered from 0 without gaps), never by an id prefix: DBOS matches a prefix with
    SQL ``LIKE``, which PostgreSQL answers by reading every workflow of the application
    (its collation keeps the primary key's index out of ``LIKE``) and SQLite without
    regard to case (``"alice"`` would read ``"ALICE"``'s turns).
    """
    if before is not None:
        return _statuses(name, conversation_id, range(before), load_output)
    statuses: list[Any] = []
    start, size = 0, _FIRST_WINDOW
    while True:
        found = _statuses(name, conversation_id, range(start, start + size), load_output)
        statuses += found
        if len(found) < size:
            return statuses
        start, size = start + size, min(size * 4, _MAX_IDS)


def _statuses(name: str, conversation_id: str, indexes: range, load_output: bool) -> list[Any]:
    from dbos import DBOS

    statuses: list[Any] = []
    for first in range(indexes.start, indexes.stop, _MAX_IDS):
        ids = [
            turn_workflow_id(name, conversation_id, i)
            for i in range(first, min(first + _MAX_IDS, indexes.stop))
        ]
        statuses += outside_workflow(
            DBOS.list_workflows, workflow_ids=ids, load_input=False, load_output=load_output
        )
    return sorted(statuses, key=lambda s: s.workflow_id)


def load_history(name: str, conversation_id: str, before: int | None = None) -> Recorded:
    """The conversation's finished turns (those numbered below ``before``, when given,
    waiting for any of them still running)."""

    statuses = conversation_workflows(name, conversation_id, load_output=True, before=before)
    recorded = Recorded()
    for status in statuses:
        index = turn_index(status.workflow_id)
        recorded.next_index = max(recorded.next_index, index + 1)
        if status.status not in FINISHED:
            if before is None:
                recorded.running.append(status.workflow_id)
                continue
            status = _wait_for(status.workflow_id)
        output = TurnOutput.from_data(status.output) if status.status == "SUCCESS" else None
        if output is not None:
            recorded.turns.extend(decode_turns(output.turns))
            recorded.last_sequence = max(recorded.last_sequence, output.last_sequence)
    return recorded


def _wait_for(workflow_id: str) -> Any:
    """The status of ``workflow_id`` once it has finished (an earlier turn still running,
    e.g. being recovered, must end before the next one reads the history)."""
    from dbos import DBOS

    while True:
        [status] = outside_workflow(
            DBOS.list_workflows, workflow_ids=[workflow_id], load_input=False, load_output=True
        )
        if status.status in FINISHED:
            return status
        time.sleep(_WAIT_POLL)
