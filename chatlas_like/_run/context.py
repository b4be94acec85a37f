"""What is sent of a long conversation: old tool results as short references, elided in steps.

The history keeps every result whole (``get_turns()``, saved chats); the request is a
view of it. When a request would exceed the chat's ``context_budget`` (tokens; off by
default, as chatlas sends the whole history), or 90% of the model's context window
(always: such a request would only fail), old tool results are replaced in the view by
a reference naming the tool, the call, the outcome, the size, a preview, and how to read
it back with the ``read_tool_result`` paging tool.

Elision goes in steps: once over the threshold, results are elided down to half of it
at once, and the view then stays as it is until the threshold is reached again, so the
prompt's prefix (and the prompt cache behind it) survives round after round. Large
successful results go first, oldest first; failures, refusals and small results last;
the newest results (not yet seen by the model) and the pages the model read back in the
last rounds never.

With a budget, a result that alone takes a tenth of it or more is sent once: whole in
the request that follows its call, as a reference from the next one on, once the model
has answered it. Kept, such a result would be written to the prompt cache, read back at
every round and soon elided by a step anyway, which rewrites every cached block after it;
sent once, it costs its own tokens once and the prefix only grows at its end. The view
names the results it sends for the last time (:attr:`View.transient`), so that a provider
with cache breakpoints ends the cached prefix before them.

Tokens are estimated by one rule: the last answer's reported input and output tokens
(the exact size of what was sent then), plus UTF-8 bytes / 4 for what was added since;
with no answer yet, bytes / 4 of every turn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from .._core.tool_result import ContentToolResult
from .._core.turn import Turn
from .._core.utf8 import cut_to_bytes, utf8_length

__all__ = ["BYTES_PER_TOKEN", "ContextView", "View", "reference_text"]

BYTES_PER_TOKEN = 4
LOW_WATER = 0.5  # elide down to this fraction of the threshold at once
WINDOW_SHARE = 0.9  # the model's window is a threshold at 90%
SMALL_BYTES = 1_000  # a result this small saves little: elided last
SEND_ONCE_SHARE = 0.1  # a result this share of the budget or more is sent once
PREVIEW_BYTES = 160
READ_BACK_ROUNDS = 2  # pages read back in the last rounds stay whole
READ_TOOL = "read_tool_result"


def reference_text(result: ContentToolResult, size: int, sequence: int | None) -> str:
    """What the model reads in place of an elided result."""
    request = result.request
    name = request.name if request is not None else "tool"
    call = request.id if request is not None else "?"
    preview = " ".join(_model_text(result).split())
    cut = cut_to_bytes(preview, PREVIEW_BYTES)
    if len(cut) < len(preview):
        cut += "…"
    how = (
        f"read it with {READ_TOOL}(sequence={sequence}) (offset= for later parts)"
        if sequence is not None
        else "it cannot be read back; call the tool again if you need it"
    )
    return (
        f"[Result elided from the conversation to save context: `{name}` call {call}, "
        f"{result.outcome}, {size:,} bytes. Preview: {cut} — {how}.]"
    )


class View(NamedTuple):
    """What one request sends of the history."""

    turns: Sequence[Turn]
    # Tool call ids whose results this request carries whole for the last time.
    transient: frozenset[str] = frozenset()


@dataclass(slots=True)
class ContextView:
    """A chat's view of its history for requests: which results are sent as references.

    Parameters
    ----------
    budget
        Tokens a request may reach before old results are elided; None for no budget
        (the model's window still applies).
    window
        The model's context window in tokens, or None when unknown.
    sequences
        Each stored result's sequence number by tool call id (None: results cannot be
        read back, and only the window elides them).
    """

    budget: int | None = None
    window: Callable[[], int | None] = lambda: None
    sequences: Callable[[], Mapping[str, int]] | None = None
    elided: dict[str, ContentToolResult] = field(default_factory=lambda: {})
    _turns: dict[int, tuple[Turn, Turn]] = field(default_factory=lambda: {})
    # The latest answer (by id) whose usage counts results sent once and elided since,
    # and the tokens their references save.
    _since: tuple[int, int] = (0, 0)
    _known: dict[str, int] = field(default_factory=lambda: {})

    def __call__(self, turns: Sequence[Turn]) -> View:
        """The turns to send: ``turns`` with the elided results as references."""
        transient = self._send_once(turns)
        threshold = self._threshold()
        if threshold is not None:
            estimate = self._estimate(turns)
            if estimate > threshold:
                self._elide(turns, self._stored(()), estimate - int(threshold * LOW_WATER))
        if not self.elided:
            return View(turns, transient)
        return View([self._viewed(turn) for turn in turns], transient)

    def _stored(self, ids: Iterable[str]) -> Mapping[str, int]:
        """Stored results' sequences, read from the store again only when one of ``ids``
        (every one, when empty) is not known yet: a sequence never changes."""
        if self.sequences is not None and (not ids or any(i not in self._known for i in ids)):
            self._known = dict(self.sequences())
        return self._known

    def _threshold(self) -> float | None:
        window = self.window()
        limits = [
            *([self.budget] if self.budget is not None else []),
            *([window * WINDOW_SHARE] if window else []),
        ]
        return min(limits) if limits else None

    def _estimate(self, turns: Sequence[Turn]) -> int:
        """Tokens of the request the view of ``turns`` makes (see the module docstring)."""
        index = _last_answer(turns)
        if index is None:
            return sum(self._bytes(self._viewed(t)) for t in turns) // BYTES_PER_TOKEN
        usage = turns[index].usage
        assert usage is not None
        added = sum(self._bytes(self._viewed(t)) for t in turns[index + 1 :])
        since = self._since[1] if self._since[0] == id(turns[index]) else 0
        return usage.total - since + added // BYTES_PER_TOKEN

    def _send_once(self, turns: Sequence[Turn]) -> frozenset[str]:
        """Elide the answered results that are sent once; those of the request to come."""
        if self.budget is None or self.sequences is None:
            return frozenset()
        least = max(SMALL_BYTES, int(self.budget * BYTES_PER_TOKEN * SEND_ONCE_SHARE))
        recent = _read_back(turns)
        transient: set[str] = set()
        answered: list[tuple[Turn, ContentToolResult, int]] = []
        after = False  # an assistant turn follows the one looked at
        for turn in reversed(turns):
            if turn.role == "assistant":
                after = True
                continue
            for result in turn.tool_results:
                request = result.request
                if request is None or request.id in self.elided or request.id in recent:
                    continue
                size = _size(result)
                if result.outcome != "success" or size < least:
                    continue
                if after:
                    answered.append((turn, result, size))
                else:
                    transient.add(request.id)
        if answered:
            self._elide_answered(turns, answered)
        return frozenset(transient)

    def _elide_answered(
        self, turns: Sequence[Turn], answered: list[tuple[Turn, ContentToolResult, int]]
    ) -> None:
        sequences = self._stored([r.request.id for _, r, _ in answered if r.request is not None])
        latest = _last_answer(turns)
        counted = id(turns[latest]) if latest is not None else 0  # its request sent them
        saved = self._since[1] if self._since[0] == counted else 0
        for turn, result, size in answered:
            request = result.request
            assert request is not None
            if request.id not in sequences:
                continue  # cannot be read back: kept
            text = reference_text(result, size, sequences[request.id])
            if utf8_length(text) >= size:
                continue
            self.elided[request.id] = result.with_model_value(text)
            saved += (size - utf8_length(text)) // BYTES_PER_TOKEN
            self._turns.pop(id(turn), None)
        self._since = (counted, saved)

    def _elide(self, turns: Sequence[Turn], sequences: Mapping[str, int], tokens: int) -> None:
        """Elide results saving at least ``tokens`` (or all there are), in one step."""
        window_only = self.budget is None or self.sequences is None
        saved = 0
        for result, size in self._candidates(turns, sequences, window_only):
            if saved >= tokens:
                break
            request = result.request
            assert request is not None
            text = reference_text(result, size, sequences.get(request.id))
            if utf8_length(text) >= size:
                continue  # the reference would be no shorter than the result
            self.elided[request.id] = result.with_model_value(text)
            saved += (size - utf8_length(text)) // BYTES_PER_TOKEN
        self._turns.clear()

    def _candidates(
        self, turns: Sequence[Turn], sequences: Mapping[str, int], window_only: bool
    ) -> list[tuple[ContentToolResult, int]]:
        """Results that may be elided, in the order they are: large successes first, oldest
        first; then the rest."""
        last_results = max((i for i, t in enumerate(turns) if t.tool_results), default=-1)
        recent = _read_back(turns)
        found: list[tuple[bool, int, ContentToolResult, int]] = []
        for index, turn in enumerate(turns[:last_results]):
            for result in turn.tool_results:
                request = result.request
                if request is None or request.id in self.elided or request.id in recent:
                    continue
                if not window_only and request.id not in sequences:
                    continue  # cannot be read back: only the window may elide it
                size = _size(result)
                later = result.outcome != "success" or size < SMALL_BYTES
                found.append((later, index, result, size))
        found.sort(key=lambda item: (item[0], item[1]))
        return [(result, size) for _, _, result, size in found]

    def _viewed(self, turn: Turn) -> Turn:
        if not self.elided or not any(
            r.request is not None and r.request.id in self.elided for r in turn.tool_results
        ):
            return turn
        seen = self._turns.get(id(turn))
        if seen is not None and seen[0] is turn:
            return seen[1]  # the same object each time: its wire translation is cached
        contents = [
            self.elided.get(c.request.id, c)
            if isinstance(c, ContentToolResult) and c.request is not None
            else c
            for c in turn.contents
        ]
        viewed = turn.copy_with(contents)
        self._turns[id(turn)] = (turn, viewed)
        return viewed

    def _bytes(self, turn: Turn) -> int:
        return sum(
            _size(c) if isinstance(c, ContentToolResult) else utf8_length(str(c))
            for c in turn.contents
        )


def _size(result: ContentToolResult) -> int:
    if result.stored_length is not None:
        return result.stored_length
    return utf8_length(_model_text(result))


def _model_text(result: ContentToolResult) -> str:
    value = result.get_model_value()
    return value if isinstance(value, str) else str(value)


def _last_answer(turns: Sequence[Turn]) -> int | None:
    """Index of the last assistant turn that reports its tokens."""
    for index in range(len(turns) - 1, -1, -1):
        usage = turns[index].usage
        if turns[index].role == "assistant" and usage is not None and usage.total:
            return index
    return None


def _read_back(turns: Sequence[Turn]) -> set[str]:
    """Ids of the paging tool's calls in the last rounds: the pages they read stay."""
    ids: set[str] = set()
    rounds = 0
    for turn in reversed(turns):
        if turn.role != "assistant":
            continue
        rounds += 1
        if rounds > READ_BACK_ROUNDS:
            break
        ids.update(r.id for r in turn.tool_requests if r.name == READ_TOOL)
    return ids
