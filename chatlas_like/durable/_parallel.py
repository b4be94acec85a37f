"""``parallel_chat`` for durable chats: one queued turn per prompt, shared by every worker."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from typing import Any

from .._core.content import Content
from .._display.progress import progress_reporter
from .._display.terminal import EchoMode
from ._chat import DurableChat

__all__ = ["parallel_chat"]

_WAITERS = 8  # threads waiting on the database for turns to finish


def parallel_chat(
    durable: DurableChat,
    prompts: Sequence[str | Sequence[Content | str]],
    *,
    conversation_ids: Sequence[str] | None = None,
    echo: EchoMode = "output",
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
    echo
        ``"none"`` shows no progress; otherwise this process shows the turns it waits
        for as they finish, as ``parallel_chat`` does (a live line in a terminal, one
        updated output in a notebook, a line now and then in a log).
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
    answers: list[str] = [""] * len(handles)
    waiting = f"Waiting for {len(handles)} queued conversations"
    with (
        progress_reporter(waiting, len(handles), ("done", "failed"), echo=echo) as progress,
        ThreadPoolExecutor(max_workers=min(_WAITERS, len(handles) or 1)) as pool,
    ):
        # Each turn is waited for in a thread of its own, so the count moves as turns
        # finish, in whatever order the workers finish them.
        futures: dict[Future[str], int] = {pool.submit(h.result): i for i, h in enumerate(handles)}
        for future in as_completed(futures):
            try:
                answers[futures[future]] = future.result()
            except Exception:
                progress.advance("failed")
                raise
            progress.advance("done")
    return answers


def _parts(prompt: str | Sequence[Content | str]) -> list[Content | str]:
    return [prompt] if isinstance(prompt, str) else list(prompt)
