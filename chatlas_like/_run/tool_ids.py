"""Tool-use ids a conversation can send back: one id, one request.

The Messages API refuses a request in which two ``tool_use`` blocks share an id, so a
model that repeats an id (twice in one response, or one an earlier response used)
would leave every later request failing. As a response arrives, a repeated request is
given an id of its own (``<id>_dup2``...) and marked so that the tool runner refuses
it without running it (a duplicate must not repeat a side effect); the first request
with the id runs. The stream, the echo and the history all see the same, renamed,
request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .._core.content import Content, ContentToolRequest
from .._core.turn import AssistantTurn

__all__ = ["DUPLICATE", "UniqueIds"]

DUPLICATE = (
    "Not run: this call repeated the id `{id}` of another call, so it was refused as a "
    "duplicate; send it again as a new call if it is still needed."
)


class UniqueIds:
    """Renames the tool requests of one response whose id the conversation already has."""

    __slots__ = ("_earlier", "_order", "_seen")

    def __init__(self, earlier: Callable[[], set[str]]) -> None:
        self._earlier = earlier  # the conversation's ids (History.request_ids), not changed
        self._seen: set[str] | None = None  # read on the first request: most answers have none
        # Each request checked as it streamed, in order: (as received, as kept).
        self._order: list[tuple[ContentToolRequest, ContentToolRequest]] = []

    def check(self, content: Content) -> Content:
        """``content``, or the request renamed when its id was used before."""
        if type(content) is not ContentToolRequest:
            return content
        assert isinstance(content, ContentToolRequest)
        for received, kept in self._order:
            if received is content:
                return kept
        kept = self._checked(content)
        self._order.append((content, kept))
        return kept

    def turn(self, turn: AssistantTurn) -> AssistantTurn:
        """``turn`` with its requests as they streamed (the same object when none changed).

        The k-th request of the turn is the k-th that streamed; the turn may hold it as
        a new object (a cut by ``max_tokens`` rewrites its ``parse_error``), which keeps
        the id it was given then.
        """
        contents: list[Content] = []
        k = 0
        for content in turn.contents:
            if type(content) is ContentToolRequest:
                assert isinstance(content, ContentToolRequest)
                if k < len(self._order):
                    received, kept = self._order[k]
                    if content is received:
                        content = kept
                    elif kept is not received and content.id == received.id:
                        content = replace(content, id=kept.id, parse_error=kept.parse_error)
                else:
                    content = self.check(content)
                k += 1
            contents.append(content)
        if all(new is old for new, old in zip(contents, turn.contents, strict=True)):
            return turn
        changed = turn.copy_with(contents)
        assert isinstance(changed, AssistantTurn)
        return changed

    def _checked(self, request: ContentToolRequest) -> ContentToolRequest:
        if self._seen is None:
            self._seen = set()  # this response's ids
        earlier, seen = self._earlier(), self._seen
        kept = request
        if request.id in earlier or request.id in seen:
            n = 2
            while f"{request.id}_dup{n}" in earlier or f"{request.id}_dup{n}" in seen:
                n += 1
            fresh = f"{request.id}_dup{n}"
            kept = replace(request, id=fresh, parse_error=DUPLICATE.format(id=request.id))
        seen.add(kept.id)
        return kept
