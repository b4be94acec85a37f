"""A chat's state for Shiny bookmarks: shinychat's ``enable_bookmarking(client)`` protocol.

shinychat asks the client for ``await get_state()`` when the page is bookmarked and hands
it back to ``await set_state(state)`` when a bookmarked page is opened. The state is the
history (tool results included) as plain JSON: shinychat may keep it in the page's URL
(``bookmark_store="url"``) or on the server. Never in it: the API key, exception objects,
pending message expansions (as in a saved chat, see :mod:`chatlas_like._persist.serialize`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import orjson

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .._core.turn import Turn

__all__ = ["STATE_VERSION", "chat_state", "restore_chat_state"]

STATE_VERSION = 1


class _Turns(Protocol):
    """What a bookmark reads and restores of a chat."""

    def get_turns(self) -> list[Turn]: ...
    def set_turns(self, turns: Sequence[Turn]) -> None: ...


def chat_state(chat: _Turns) -> dict[str, Any]:
    """``chat``'s history as JSON-ready data."""
    from .serialize import to_json

    # Through JSON text: what shinychat stores must be plain JSON types.
    return {"version": STATE_VERSION, "turns": orjson.loads(to_json(chat.get_turns()))}


def restore_chat_state(chat: _Turns, state: Any) -> None:
    """Put the history of a :func:`chat_state` back into ``chat``."""
    from .serialize import turns_from_data

    if not isinstance(state, dict):
        raise ValueError(f"a chat state is a dict, not {type(state).__name__}")
    data: dict[str, Any] = state  # pyright: ignore[reportUnknownVariableType]
    if data.get("version") != STATE_VERSION:
        raise ValueError(
            f"a chat state of version {data.get('version')!r}; this chatlas_like reads "
            f"version {STATE_VERSION}"
        )
    chat.set_turns(turns_from_data(data.get("turns")))
