"""``parallel_chat`` for durable chats: one queued turn per prompt, shared by every worker."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from .._core.content import Content
from ._chat import DurableChat

__all__ = ["parallel_chat"]


def parallel_chat(
    durable: DurableChat,
    prompts: Sequence[str | Sequence[Content | str]],
    *,
    conversation_ids: Sequence[str] | None = None,
    **options: Any,
) -> list[str]:
    """Ask each prompt on a conversation of its own, as queued durable turns; the answers
    in the order of ``prompts``.

    The turns go on ``durable``'s queue, so every process running that durable chat
    (at most ``max_concurrency`` turns each) shares the work, and a turn a dead process
    left unfinished is completed where it is recovered.

    Parameters
    ----------
    durable
        The durable chat.
    prompts
        One prompt per conversation: a string, or a list of strings and contents.
    conversation_ids
        The conversations' ids (new ones by default), to read them later with
        :meth:`DurableChat.get_turns`.
    **options
        Passed to :meth:`DurableChat.enqueue` for every prompt.
    """
    if conversation_ids is None:
        batch = uuid.uuid4().hex
        conversation_ids = [f"{batch}-{i}" for i in range(len(prompts))]
    if len(conversation_ids) != len(prompts):
        raise ValueError(
            f"{len(prompts)} prompts but {len(conversation_ids)} conversation_ids: give one each"
        )
    handles = [
        durable.enqueue(*_parts(prompt), conversation_id=conversation_id, **options)
        for prompt, conversation_id in zip(prompts, conversation_ids, strict=True)
    ]
    return [handle.result() for handle in handles]


def _parts(prompt: str | Sequence[Content | str]) -> list[Content | str]:
    return [prompt] if isinstance(prompt, str) else list(prompt)
