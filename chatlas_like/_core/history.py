"""The conversation a chat holds, and the one rule for writing to it.

Only the turn loop that claimed the history last may write to it, so an abandoned
stream resumed after a newer ``chat()`` cannot corrupt it. Dangling tool requests
(from an abandoned stream, or turns given to ``set_turns``) are answered with refused
results by :func:`answer_dangling`, the same repair the loop applies when interrupted.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

from .content import ContentToolRequest
from .errors import HistoryError
from .tool_result import ContentToolResult, failed, refused
from .turn import Turn, UserTurn

__all__ = ["History", "answer_dangling", "unanswered_requests"]

SUPERSEDED = (
    "this response was superseded by a newer chat() or stream() on the same chat; "
    "its history was left as the newer call made it"
)


class History:
    """The turns of a conversation, the run id, and the tool-result sequence counter.

    ``run_id`` is the run this history writes its tool results under: always its own
    (a loaded or copied chat gets a new one), so two chats never write over each
    other's results. ``parent_runs`` are the runs its earlier results were written
    under, nearest first: a loaded chat reads them (paging), never writes them.
    """

    __slots__ = ("_ids", "_owner", "last_sequence", "parent_runs", "run_id", "turns")

    def __init__(
        self,
        turns: Sequence[Turn] = (),
        run_id: str | None = None,
        parent_runs: Sequence[str] = (),
    ) -> None:
        self.turns: list[Turn] = list(turns)
        self.run_id = run_id or str(uuid.uuid4())
        self.parent_runs: tuple[str, ...] = tuple(parent_runs)
        self.last_sequence = 0
        self._owner: object | None = None
        # The tool-request ids of turns[:n], with the n-th turn itself: extended by the
        # turns added since, rebuilt when that turn is no longer where it was.
        self._ids: tuple[set[str], int, Turn | None] = (set(), 0, None)

    def claim(self) -> object:
        """Make a new writer the only one allowed; returns its token."""
        token = object()
        self._owner = token
        return token

    def release(self, token: object) -> None:
        """The writer holding ``token`` is done (a newer one keeps its claim)."""
        if self._owner is token:
            self._owner = None

    @property
    def busy(self) -> bool:
        """Whether a writer has claimed the history and not released it."""
        return self._owner is not None

    def owns(self, token: object) -> bool:
        """Whether ``token`` is still the writer."""
        return self._owner is token

    def check(self, token: object) -> None:
        """Raise :class:`HistoryError` when ``token`` was superseded."""
        if self._owner is not token:
            raise HistoryError(SUPERSEDED)

    def append(self, turn: Turn, token: object) -> None:
        self.check(token)
        self.turns.append(turn)

    def remove(self, turn: Turn, token: object) -> None:
        """Take ``turn`` (this very object) out again, e.g. a prompt whose call failed."""
        self.check(token)
        for i in range(len(self.turns) - 1, -1, -1):
            if self.turns[i] is turn:
                del self.turns[i]
                return

    def replace(self, turns: Sequence[Turn]) -> None:
        """New turns; any running writer is superseded."""
        self._owner = object()
        self.turns = list(turns)
        self._ids = (set(), 0, None)

    def request_ids(self) -> set[str]:
        """The ids of the tool requests in this history (do not change the set).

        Kept up to date at the cost of the turns added since the last call, so a long
        chat is not walked at every response; a history changed in place (a turn
        removed or inserted before the last one seen) is walked again.
        """
        ids, counted, last = self._ids
        turns = self.turns
        if counted > len(turns) or (counted and turns[counted - 1] is not last):
            ids, counted = set[str](), 0
        if counted < len(turns):
            for turn in turns[counted:]:
                if turn.role == "assistant":
                    ids.update(r.id for r in turn.tool_requests)
            counted = len(turns)
            self._ids = (ids, counted, turns[-1])
        return ids

    def answered_ids(self) -> set[str]:
        """The ids of the tool requests this history holds a result for."""
        return {
            result.request.id
            for turn in self.turns
            if turn.role == "user"
            for result in turn.tool_results
            if result.request is not None
        }

    def next_sequences(self, count: int) -> range:
        """The next ``count`` tool-result sequence numbers of this run (1-based)."""
        start = self.last_sequence + 1
        self.last_sequence += count
        return range(start, start + count)


def unanswered_requests(turns: Sequence[Turn]) -> list[ContentToolRequest]:
    """Tool requests of the last assistant turn that no later turn answers."""
    for i in range(len(turns) - 1, -1, -1):
        if turns[i].role == "assistant":
            return _unanswered_at(turns, i)
    return []


def _unanswered_at(turns: Sequence[Turn], index: int) -> list[ContentToolRequest]:
    """Requests of the assistant turn at ``index`` that no turn before the next
    assistant turn answers (the API wants each answer in the very next message)."""
    requests = turns[index].tool_requests
    if not requests:
        return []
    answered: set[str] = set()
    for later in turns[index + 1 :]:
        if later.role == "assistant":
            break
        answered.update(r.request.id for r in later.tool_results if r.request is not None)
    return [r for r in requests if r.id not in answered]


def _assistant_turns(turns: Sequence[Turn], every: bool) -> list[int]:
    """Indexes of the assistant turns, last first: all of them, or only the last (found
    from the end, so a long chat is not walked at every call)."""
    found: list[int] = []
    for i in range(len(turns) - 1, -1, -1):
        if turns[i].role == "assistant":
            found.append(i)
            if not every:
                break
    return found


def answer_dangling(
    turns: list[Turn],
    reason: str,
    finalize: Callable[[list[ContentToolResult]], list[ContentToolResult]] | None = None,
    *,
    ran: bool = False,
    everywhere: bool = False,
) -> list[ContentToolResult]:
    """Answer the last assistant turn's unanswered requests with refused results.

    The results go into the user turn right after the assistant turn (created if
    needed), tool results first, so the next request is valid. With ``ran`` (the calls
    ran, but their results were lost) they are ``error`` results: a refusal would tell
    the model it is safe to send the calls again. With ``everywhere``, every assistant
    turn's (turns handed in whole, as a loaded chat file's, may lack any).
    """
    answered: list[ContentToolResult] = []
    for index in _assistant_turns(turns, everywhere):
        pending = _unanswered_at(turns, index)
        if not pending:
            continue
        answer = failed if ran else refused
        results = [answer(request, reason) for request in pending]
        if finalize is not None:
            results = finalize(results)
        after = index + 1
        if after < len(turns) and turns[after].role == "user":
            follower = turns[after]
            existing = follower.tool_results
            others = [c for c in follower.contents if not isinstance(c, ContentToolResult)]
            turns[after] = follower.copy_with([*existing, *results, *others])
        else:
            turns.insert(after, UserTurn(results))
        answered[:0] = results
    return answered
