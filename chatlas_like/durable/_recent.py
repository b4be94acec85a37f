"""Where the conversations this process carried on stand after their last turn here.

A turn needs the number it takes and the history it starts from. Both are in the
database (the conversation's workflows, and the turns their outputs hold), and reading
them costs more at every turn of a long conversation. When this process ran the turn
before, it knows both already: the next turn takes the next number and starts from
that history without a read.

What is kept is what the database says: a turn's history is kept only once its
workflow has returned (its output recorded), and only for the caller that waited for
it. Another process may add a turn in between: the number taken is then another
call's turn, which the caller sees (its token is not in that turn's inputs) and reads
the database; a history is used only for the turn numbered right after it, and for
the DBOS instance it was read from.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any

from ._engine import dbos_instance
from ._history import Recorded

__all__ = ["LEFT", "RECENT", "Recent"]

# A turn's history as it ended, by the caller's token, until that caller takes it.
LEFT: dict[str, Recorded] = {}


class Recent:
    """The last known state of up to ``limit`` conversations (least recently used go)."""

    def __init__(self, limit: int = 256) -> None:
        self._limit = limit
        self._entries: OrderedDict[tuple[str, str], tuple[weakref.ref[Any], Recorded]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    def get(self, name: str, conversation_id: str) -> Recorded | None:
        """The conversation as its last turn in this process left it, on this DBOS."""
        instance = dbos_instance()
        with self._lock:
            entry = self._entries.get((name, conversation_id))
            if entry is None or instance is None or entry[0]() is not instance:
                return None
            self._entries.move_to_end((name, conversation_id))
            return entry[1]

    def starting(self, name: str, conversation_id: str, index: int) -> Recorded | None:
        """The history turn ``index`` starts from, when it is the one known here."""
        recorded = self.get(name, conversation_id)
        return recorded if recorded is not None and recorded.next_index == index else None

    def put(self, name: str, conversation_id: str, recorded: Recorded) -> None:
        instance = dbos_instance()
        if instance is None:
            return
        with self._lock:
            self._entries[(name, conversation_id)] = (weakref.ref(instance), recorded)
            self._entries.move_to_end((name, conversation_id))
            while len(self._entries) > self._limit:
                self._entries.popitem(last=False)

    def drop(self, name: str, conversation_id: str) -> None:
        with self._lock:
            self._entries.pop((name, conversation_id), None)


RECENT = Recent()
