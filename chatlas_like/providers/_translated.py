"""Each turn's translation into a provider's wire, kept by the turn's identity.

A turn is a value: once made, its contents do not change, so what a wire makes of it
does not either, and a long chat translates each turn once instead of at every request
(the client's cost per request then stays flat but for encoding). Turns compare by value
and are unhashable, so the cache is keyed by ``id(turn)`` beside a weak reference that
drops the entry when the turn goes. A copy of a turn (a context-budget view with results
elided) is another object, translated anew.

``variant`` tells apart translations of one turn that differ (two wires, or a setting
such as sending reasoning back). Callers must not change what they are given.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

from .._core.turn import Turn

__all__ = ["PrefixCache", "cached", "translated"]

T = TypeVar("T")

_CACHE: dict[tuple[int, Hashable], tuple[weakref.ref[Turn], Any]] = {}


def cached(turn: Turn, variant: Hashable) -> Any | None:
    """``turn``'s translation of ``variant`` if one was made, else None."""
    hit = _CACHE.get((id(turn), variant))
    return hit[1] if hit is not None and hit[0]() is turn else None


def translated(turn: Turn, variant: Hashable, make: Callable[[], T]) -> T:
    """``turn``'s translation of ``variant``: made by ``make`` the first time only."""
    key = (id(turn), variant)
    hit = _CACHE.get(key)
    if hit is not None and hit[0]() is turn:
        return hit[1]
    value = make()
    _CACHE[key] = (weakref.ref(turn, lambda _, key=key: _CACHE.pop(key, None)), value)
    return value


class PrefixCache:
    """A provider's last request, by turns: the items the turns became, reused while
    those turns stay a prefix of the next request's.

    Between two requests a history usually only grows (a prompt, an answer, results), so
    each request translates just the new turns and copies the rest as one list. Any
    other change (``set_turns``, an expansion inserting turns, a repair replacing one)
    breaks the prefix and every turn is translated again (from the per-turn cache). The
    state is one tuple, swapped whole, so chats sharing a provider from several threads
    only cost each other a rebuild.
    """

    __slots__ = ("_state",)

    def __init__(self) -> None:
        self._state: tuple[list[Turn], list[Any]] = ([], [])

    def unseen(self, turns: Sequence[Turn]) -> Sequence[Turn]:
        """The turns past those the last request sent (all of them after any change)."""
        return turns[len(self._state[0]) :] if self._extends(turns) else turns

    def _extends(self, turns: Sequence[Turn]) -> bool:
        done = self._state[0]
        k = len(done)
        # Identity, not equality: a view's copy of a turn (results elided) compares
        # equal to the turn it replaces, and must be translated anew.
        return bool(k) and len(turns) >= k and all(map(operator.is_, turns[:k], done))

    def items(self, turns: Sequence[Turn], translate: Callable[[Turn], list[Any]]) -> list[Any]:
        """Every turn's items, in order: ``translate(turn)`` for the turns not seen last."""
        done, known = self._state
        if self._extends(turns):
            items = list(known)
            new = turns[len(done) :]
        else:
            items, new = [], turns
        for turn in new:
            items.extend(translate(turn))
        self._state = (list(turns), list(items))
        return items
