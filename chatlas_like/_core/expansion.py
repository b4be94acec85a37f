"""Message expansion: a tool result that puts messages into the conversation.

A result normally reaches the model as one ``tool_result`` block: right for an answer,
wrong for a body of material the model should treat as established (a document to
follow, records to reason over). A :class:`MessageExpansion` asks for ``messages`` to be
inserted into the conversation right before the next model call, and for the result
itself to keep only ``result_content`` once they are in. :func:`expand` builds a result
carrying both forms, so they cannot drift. The step that applies them is
:mod:`chatlas_like._run.expansion`; expansions are never persisted.

Anthropic shaping: a list starting with a user message is merged by the API into the
tool-result message (tool results first, then the text); starting with an assistant
message keeps them apart. ``[assistant, user]`` is the recommended shape for
established material: the assistant message frames it, the user message re-anchors
the request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from .content import Content
from .errors import ExpansionError
from .tool_result import ContentToolResult, ModelFormat
from .turn import AssistantTurn, Turn, UserTurn

__all__ = ["ExpansionWarning", "MessageExpansion", "expand"]

MessageLike = Turn | Mapping[str, Any]
_REFUSED_ROLES = {
    "system": "a conversation has one system prompt; put the material in a user message",
    "tool": "a tool message only means something against the call that asked for it; "
    "return it as the result instead",
}


class ExpansionWarning(UserWarning):
    """An expansion was not applied; the result's full content was sent instead."""


@dataclass(frozen=True, slots=True)
class MessageExpansion:
    """Messages a tool result inserts into the conversation before the next model call.

    Parameters
    ----------
    messages
        ``UserTurn``, ``AssistantTurn`` or ``{"role": ..., "content": ...}`` dicts, in
        the order the model will see them. Only the user and assistant roles.
    result_content
        What the result itself keeps once the messages are in; None keeps it as is.

    Raises
    ------
    ExpansionError
        For a system or tool role (or any other role), naming it and why.
    """

    messages: tuple[Turn, ...]
    result_content: Any = None

    def __init__(self, messages: Iterable[MessageLike], result_content: Any = None) -> None:
        object.__setattr__(self, "messages", tuple(_as_turn(m, i) for i, m in enumerate(messages)))
        object.__setattr__(self, "result_content", result_content)


def _as_turn(message: MessageLike, index: int) -> Turn:
    role = message.role if isinstance(message, Turn) else str(message.get("role"))
    if role in _REFUSED_ROLES:
        raise ExpansionError(
            f"message {index} of the expansion has role {role!r}, which cannot be inserted: "
            f"{_REFUSED_ROLES[role]}"
        )
    if role not in ("user", "assistant"):
        raise ExpansionError(
            f"message {index} of the expansion has role {role!r}; use 'user' or 'assistant'"
        )
    if isinstance(message, Turn):
        return message
    content: Any = message.get("content", "")
    contents: list[Content | str] = (
        [content] if isinstance(content, (str, Content)) else list(cast(Iterable[Any], content))
    )
    return UserTurn(contents) if role == "user" else AssistantTurn(contents)


def expand(
    raw_text: Any,
    messages: Iterable[MessageLike],
    *,
    result_content: Any = None,
    model_format: ModelFormat = "auto",
    extra: Any = None,
) -> ContentToolResult:
    """A result whose whole answer is ``raw_text`` and which inserts ``messages``.

    Wherever the expansion is not applied (too large, no prefill, a pending server
    tool) the model reads ``raw_text`` as an ordinary result.

    Parameters
    ----------
    raw_text
        The whole answer.
    messages
        The messages to insert (user and assistant roles only).
    result_content
        What the result keeps once the messages are in (e.g. a short pointer to
        them); None keeps ``raw_text``.
    model_format, extra
        As for :class:`ContentToolResult`.
    """
    return ContentToolResult(
        value=raw_text,
        model_format=model_format,
        extra=extra,
        message_expansion=MessageExpansion(messages, result_content),
    )
