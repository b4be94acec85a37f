"""One turn of a durable conversation: the body of its DBOS workflow.

The workflow's inputs are plain data (the conversation id, the turn's number, the
prompt and the call's settings); what only the calling process has (its echo, the
sink of a stream) is looked up by the call's token in :data:`CALLERS`, so a turn
recovered in another process runs the same, silently. The turn reads the history the
earlier turns recorded (or takes it from :data:`~._recent.RECENT` when this process
ran the turn before), runs the turn loop on a copy of the chat with that history
(:func:`~chatlas_like.durable._driver.drive_durable`), and returns the turns it added.
The call is prepared with ``shown_by`` the wrapped chat, so ``chat.current_display``
(the chat the tools were written against) is the turn's display while it runs, as in a
plain call: a tool's ``chat.current_display.echo(...)`` shows where the turn's echo
goes (nowhere, for a recovered or queued turn).
A turn whose loop raised still returns them (the loop repaired the history first),
with the error, which the caller raises.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._chat import Chat
from .._core.history import History
from ._codec import decode_prompt, encode_error, encode_turns
from ._driver import Recorder, drive_durable
from ._history import Recorded, TurnOutput, load_history
from ._ids import run_id
from ._recent import LEFT, RECENT

__all__ = ["CALLERS", "Caller", "run_turn"]


@dataclass(frozen=True, slots=True)
class Caller:
    """The process that asked for a turn: its echo, and where streamed items go."""

    echo: Any = "none"
    sink: Callable[[Any], None] | None = None


CALLERS: dict[str, Caller] = {}
_NO_CALLER = Caller()


def run_turn(
    chat: Chat,
    name: str,
    publish_after: float | None,
    conversation_id: str,
    index: int,
    prompt: list[Any],
    call: dict[str, Any],
) -> dict[str, Any]:
    """The workflow's body (see the module docstring)."""
    from dbos import error as dbos_errors

    token = call.get("token", "")
    caller = CALLERS.get(token, _NO_CALLER)
    recorded = (
        Recorded()  # the first turn: nothing before it to read
        if index == 0
        else RECENT.starting(name, conversation_id, index)
        or load_history(name, conversation_id, before=index)
    )
    turn_chat = _turn_chat(chat, name, conversation_id, recorded)
    history = turn_chat.history
    recorder = Recorder(
        caller.sink, publish=publish_after is not None, publish_after=publish_after or 0.0
    )
    error: dict[str, Any] | None = None
    try:
        prepared = turn_chat.prepare_call(
            decode_prompt(prompt),
            caller.echo,
            "all",  # everything is published; the caller's sink picks what it asked for
            call["stream"],
            call["kwargs"],
            call["options"],
            shown_by=chat,
        )
        where = f"conversation {conversation_id!r} of durable chat {name!r}, turn {index}"
        drive_durable(prepared.steps, prepared.sender, recorder, where=where)
    except dbos_errors.DBOSException:
        raise  # the engine's own failure: DBOS retries or records it
    except (Exception, KeyboardInterrupt) as e:
        error = encode_error(e)
    added = history.turns[len(recorded.turns) :]
    if token in CALLERS:  # its caller keeps this once the output is recorded
        LEFT[token] = Recorded(list(history.turns), history.last_sequence, index + 1)
    return TurnOutput(
        turns=encode_turns(added),
        last_sequence=history.last_sequence,
        answer="".join(recorder.answer),
        error=error,
        token=token,
        tail=recorder.tail(),
    ).as_data()


def _turn_chat(chat: Chat, name: str, conversation_id: str, recorded: Recorded) -> Chat:
    """A copy of ``chat`` holding the conversation: its turns, its run in the store."""
    history = History(recorded.turns, run_id=run_id(name, conversation_id))
    history.last_sequence = recorded.last_sequence
    turn_chat = chat.copy(history=history)
    turn_chat.conversation_id = conversation_id
    return turn_chat
