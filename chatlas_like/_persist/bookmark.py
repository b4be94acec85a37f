"""A chat's state for Shiny bookmarks: shinychat's ``enable_bookmarking(client)`` protocol.

shinychat asks the client for ``await get_state()`` when the page is bookmarked and hands
it back to ``await set_state(state)`` when a bookmarked page is opened. The state is the
history (tool results included) as plain JSON (a bookmark shinychat made of a chatlas
client, its turns as chatlas dumps them, restores too): shinychat may keep it in the page's URL
(``bookmark_store="url"``) or on the server. Never in it: the API key, exception objects,
pending message expansions (as in a saved chat, see :mod:`chatlas_like._persist.serialize`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

import orjson

from .._core.errors import PersistenceError
from .._core.turn import Turn

if TYPE_CHECKING:
    from collections.abc import Sequence

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
    turns = data.get("turns")
    if isinstance(turns, list):  # a chatlas app's bookmark: chatlas's turn dumps
        chat.set_turns(_chatlas_turns(cast(list[Any], turns)))
        return
    chat.set_turns(turns_from_data(turns))


def _chatlas_turns(items: list[Any]) -> list[Turn]:
    """The turns of a bookmark shinychat made of a chatlas client, each read as
    :meth:`Turn.model_validate` reads chatlas's data (every field checked)."""
    turns: list[Turn] = []
    for index, item in enumerate(items):
        try:
            turns.append(Turn.model_validate(item))
        except (ValueError, TypeError) as e:
            raise PersistenceError(f"turns[{index}]: {e}") from None
    return turns
