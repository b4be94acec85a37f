"""Many independent conversations at once: ``parallel_chat`` and its two variants.

Each prompt gets its own conversation: a :meth:`Chat.copy` of the configured chat
(tools, system prompt, options, model parameters, the turns so far) with its own history
and run id. The whole turn loop runs in each, tool rounds included, so one conversation
waiting for its tools never holds up another. Results come back in input order.

Load is bounded two ways. ``max_active`` conversations are in progress at once (a
conversation keeps its slot across its tool rounds, so this also bounds how many run
tools at the same time). Every request of the batch passes one gate, a limiter spacing
sends to ``rpm`` per minute and joined to the chat's own limiter: when the provider
answers one conversation with 429 and a retry-after, every conversation of the batch
(and the chat itself) waits that long before its next send.

While they run, the progress shows (:mod:`chatlas_like._display.progress`; ``echo="none"``
hides it): one bar over the conversations, advancing as each ends, with how many are
``done`` and ``failed`` and how many model calls were ``retried``. chatlas shows one bar
per phase ("Submitting N prompts", then each tool round), because its conversations move
through the rounds in step; here each runs its own rounds, so there is one phase.

``parallel_chat_structured`` asks each conversation through
:meth:`Chat.chat_structured_async`, so it gets structured outputs (or the forced-tool
fallback) exactly as a single chat does.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast, overload

from ._chat import Chat, EchoOption
from ._core.content import Content
from ._display.progress import ProgressReporter, progress_reporter
from ._observe.telemetry import traced_batch
from ._run.limiter import Limiter

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "StructuredChatResult",
    "parallel_chat",
    "parallel_chat_structured",
    "parallel_chat_text",
]

ChatT = TypeVar("ChatT", bound=Chat)
BaseModelT = TypeVar("BaseModelT", bound="BaseModel")
R = TypeVar("R")
Prompt = str | Content | Sequence[str | Content]
OnError = Literal["return", "continue", "stop"]
_ON_ERROR = ("return", "continue", "stop")
OUTCOMES = ("done", "failed", "retried")  # the counts the progress shows, in order


@dataclass(frozen=True, slots=True)
class StructuredChatResult(Generic[BaseModelT, ChatT]):
    """One result of :func:`parallel_chat_structured`: the data and its conversation.

    Attributes
    ----------
    data
        The extracted data, an instance of the data model.
    chat
        The conversation it came from.
    """

    data: BaseModelT
    chat: ChatT


# -- parallel_chat ---------------------------------------------------------------------------


@overload
async def parallel_chat(
    chat: ChatT,
    prompts: Sequence[Prompt],
    *,
    max_active: int = 10,
    rpm: int | None = 500,
    on_error: Literal["stop"],
    kwargs: dict[str, Any] | None = None,
    echo: EchoOption = "output",
) -> list[ChatT]: ...
@overload
async def parallel_chat(
    chat: ChatT,
    prompts: Sequence[Prompt],
    *,
    max_active: int = 10,
    rpm: int | None = 500,
    on_error: Literal["continue"],
    kwargs: dict[str, Any] | None = None,
    echo: EchoOption = "output",
) -> list[ChatT | Exception]: ...
@overload
async def parallel_chat(
    chat: ChatT,
    prompts: Sequence[Prompt],
    *,
    max_active: int = 10,
    rpm: int | None = 500,
    on_error: Literal["return"] = "return",
    kwargs: dict[str, Any] | None = None,
    echo: EchoOption = "output",
) -> list[ChatT | Exception | None]: ...


async def parallel_chat(
    chat: Chat,
    prompts: Sequence[Prompt],
    *,
    max_active: int = 10,
    rpm: int | None = 500,
    on_error: OnError = "return",
    kwargs: dict[str, Any] | None = None,
    echo: EchoOption = "output",
) -> list[Any]:
    """Hold one conversation per prompt, many at once, each with the chat's tools.

    Parameters
    ----------
    chat
        The configured chat. Each prompt continues a copy of it (its own history and run
        id); ``chat`` itself is not changed.
    prompts
        One prompt per conversation: a string or content object, or a list of them.
    max_active
        Conversations in progress at once (a conversation keeps its slot while its
        tools run).
    rpm
        Requests per minute across the batch; None for no spacing. A 429 with a
        retry-after on any conversation pauses them all.
    on_error
        When a conversation fails: ``"return"`` (default) starts no new conversation,
        lets those in progress finish, and returns; ``"continue"`` carries on with every
        prompt; ``"stop"`` cancels those in progress and raises the first error.
    kwargs
        Extra request parameters for every model call.
    echo
        ``"none"``: show nothing. Otherwise (default) show the progress on standard
        error, or in place in a notebook: conversations finished, how many ``done`` and
        ``failed``, model calls ``retried`` (after a 429, 5xx or connection error), and
        at the end any ``not started``. No conversation is echoed, as in chatlas.

    Returns
    -------
    list
        One entry per prompt, in input order: the conversation (a :class:`Chat`), the
        exception that ended it, or None if it was never started.

    Examples
    --------
    >>> chats = await parallel_chat(chat, ["Capital of France?", "Capital of Peru?"])
    >>> [str(c.get_last_turn()) for c in chats]
    """
    return await _converse_all(
        chat,
        prompts,
        max_active=max_active,
        rpm=rpm,
        on_error=on_error,
        kwargs=kwargs,
        echo=echo,
        finish=_same_chat,
    )


@overload
async def parallel_chat_text(
    chat: Chat,
    prompts: Sequence[Prompt],
    *,
    max_active: int = 10,
    rpm: int | None = 500,
    on_error: Literal["stop"],
    kwargs: dict[str, Any] | None = None,
    echo: EchoOption = "output",
) -> list[str]: ...
@overload
async def parallel_chat_text(
    chat: Chat,
    prompts: Sequence[Prompt],
    *,
    max_active: int = 10,
    rpm: int | None = 500,
    on_error: Literal["continue"],
    kwargs: dict[str, Any] | None = None,
    echo: EchoOption = "output",
) -> list[str | Exception]: ...
@overload
async def parallel_chat_text(
    chat: Chat,
    prompts: Sequence[Prompt],
    *,
    max_active: int = 10,
    rpm: int | None = 500,
    on_error: Literal["return"] = "return",
    kwargs: dict[str, Any] | None = None,
    echo: EchoOption = "output",
) -> list[str | Exception | None]: ...


async def parallel_chat_text(
    chat: Chat,
    prompts: Sequence[Prompt],
    *,
    max_active: int = 10,
    rpm: int | None = 500,
    on_error: OnError = "return",
    kwargs: dict[str, Any] | None = None,
    echo: EchoOption = "output",
) -> list[Any]:
    """Like :func:`parallel_chat`, returning the text of each conversation's last answer.

    Parameters are those of :func:`parallel_chat`. Each entry is the text, the exception
    that ended the conversation, or None if it was never started.
    """
    return await _converse_all(
        chat,
        prompts,
        max_active=max_active,
        rpm=rpm,
        on_error=on_error,
        kwargs=kwargs,
        echo=echo,
        finish=_last_text,
    )


@overload
async def parallel_chat_structured(
    chat: ChatT,
    prompts: Sequence[Prompt],
    data_model: type[BaseModelT],
    *,
    max_active: int = 10,
    rpm: int | None = 500,
    on_error: Literal["stop"],
    kwargs: dict[str, Any] | None = None,
    echo: EchoOption = "output",
) -> list[StructuredChatResult[BaseModelT, ChatT]]: ...
@overload
async def parallel_chat_structured(
    chat: ChatT,
    prompts: Sequence[Prompt],
    data_model: type[BaseModelT],
    *,
    max_active: int = 10,
    rpm: int | None = 500,
    on_error: Literal["continue"],
    kwargs: dict[str, Any] | None = None,
    echo: EchoOption = "output",
) -> list[StructuredChatResult[BaseModelT, ChatT] | Exception]: ...
@overload
async def parallel_chat_structured(
    chat: ChatT,
    prompts: Sequence[Prompt],
    data_model: type[BaseModelT],
    *,
    max_active: int = 10,
    rpm: int | None = 500,
    on_error: Literal["return"] = "return",
    kwargs: dict[str, Any] | None = None,
    echo: EchoOption = "output",
) -> list[StructuredChatResult[BaseModelT, ChatT] | Exception | None]: ...


async def parallel_chat_structured(
    chat: Chat,
    prompts: Sequence[Prompt],
    data_model: type[BaseModelT],
    *,
    max_active: int = 10,
    rpm: int | None = 500,
    on_error: OnError = "return",
    kwargs: dict[str, Any] | None = None,
    echo: EchoOption = "output",
) -> list[Any]:
    """Like :func:`parallel_chat`, extracting data of ``data_model`` from each prompt.

    Parameters
    ----------
    data_model
        A pydantic model class: the shape of the data to extract.
    chat, prompts, max_active, rpm, on_error, kwargs, echo
        As for :func:`parallel_chat`.

    Returns
    -------
    list
        One entry per prompt, in input order: a :class:`StructuredChatResult` (``.data``
        and ``.chat``), the exception that ended the conversation (data that does not
        validate is one), or None if it was never started.
    """

    def finish(conversation: Chat, data: Any) -> StructuredChatResult[BaseModelT, Chat]:
        return StructuredChatResult(data, conversation)

    return await _converse_all(
        chat,
        prompts,
        max_active=max_active,
        rpm=rpm,
        on_error=on_error,
        kwargs=kwargs,
        echo=echo,
        finish=finish,
        data_model=data_model,
    )


def _same_chat(conversation: ChatT, data: Any) -> ChatT:
    return conversation


def _last_text(conversation: Chat, data: Any) -> str:
    turn = conversation.get_last_turn()
    return turn.text if turn is not None else ""


@traced_batch
async def _converse_all(
    chat: ChatT,
    prompts: Sequence[Prompt],
    *,
    max_active: int,
    rpm: int | None,
    on_error: OnError,
    kwargs: dict[str, Any] | None,
    echo: EchoOption,
    finish: Callable[[ChatT, Any], R],
    data_model: type[BaseModel] | None = None,
) -> list[R | Exception | None]:
    if on_error not in _ON_ERROR:
        raise ValueError(f"on_error must be 'return', 'continue' or 'stop', got {on_error!r}")
    if max_active < 1:
        raise ValueError("max_active must be at least 1")
    turns = [prompt_turn_contents(p) for p in prompts]  # bad prompts fail before any send
    results: list[R | Exception | None] = [None] * len(turns)
    if not turns:
        return results
    progress = progress_reporter(
        f"Answering {_count(len(turns), 'prompt')}", len(turns), OUTCOMES, echo=echo
    )
    limiter = BatchLimiter(rpm, chat.limiter)
    queue = iter(range(len(turns)))
    stopped = False

    async def converse(index: int) -> R:
        conversation = cast(ChatT, chat.copy())
        conversation.limiter = RetryCounter(limiter, conversation, progress)
        try:
            if data_model is None:
                await conversation.chat_async(*turns[index], echo="none", kwargs=kwargs)
                return finish(conversation, None)
            data = await conversation.chat_structured_async(
                *turns[index], data_model=data_model, echo="none", kwargs=kwargs
            )
            return finish(conversation, data)
        finally:
            conversation.limiter = limiter  # a later chat() on it counts for no progress

    async def worker() -> None:
        nonlocal stopped
        for index in queue:  # shared: each index is taken by one worker, in input order
            if stopped:
                return
            try:
                results[index] = await converse(index)
            except Exception as error:
                results[index] = error
                progress.advance("failed")
                if on_error == "stop":
                    raise
                stopped = stopped or on_error == "return"
            else:
                progress.advance("done")

    with progress:
        workers = [asyncio.create_task(worker()) for _ in range(min(max_active, len(turns)))]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
        progress.tally("not started", len(turns) - progress.snapshot().completed)
    return results


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def prompt_turn_contents(prompt: Prompt) -> list[str | Content]:
    """One prompt as the contents of its user turn (a list is several pieces)."""
    if isinstance(prompt, (str, Content)):
        return [prompt]
    if isinstance(prompt, Sequence):  # pyright: ignore[reportUnnecessaryIsInstance]
        pieces = list(prompt)
        if pieces and all(isinstance(p, (str, Content)) for p in pieces):
            return pieces
    raise TypeError(
        f"a prompt is a string, a content object, or a non-empty list of them; got {prompt!r}"
    )


# A wait shorter than this is the ordinary spacing of requests, not worth a word.
NOTED_WAIT = 1.0


def _waiting_note(wait: float, paused: float, rpm: float | None) -> str:
    """What the progress line says of a send held ``wait`` seconds: the provider's pause
    (a 429) or the batch's own rate, which the caller can change."""
    if wait < NOTED_WAIT:
        return ""
    if paused >= wait - NOTED_WAIT:
        return f"paused {wait:.0f}s: the provider asked to slow down"
    return f"waiting on the rate limit (rpm={rpm:g}; pass rpm= to change it)"


class BatchLimiter(Limiter):
    """A batch's own request spacing, joined to the chat's limiter.

    A send waits for both gates; a pause (a 429's retry-after) holds both, so the whole
    batch and the chat it came from slow down together.
    """

    def __init__(
        self, rpm: float | None, parent: Limiter, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(rpm, clock)
        self.parent = parent

    def reserve(self) -> float:
        own = super().reserve()
        return max(own, self.parent.reserve())

    def paused_for(self) -> float:
        return max(super().paused_for(), self.parent.paused_for())

    def pause(self, seconds: float) -> None:
        super().pause(seconds)
        self.parent.pause(seconds)


class RetryCounter(Limiter):
    """One conversation's gate into the batch's limiter, counting the retries it sees.

    The drivers reserve a slot once per attempt at a model request, and a conversation's
    history grows between two requests (an answer, tool results); so a reservation made
    with the history as long as at the previous one is a retry of the same request,
    whatever made it (a 429, a 5xx, a dropped connection).
    """

    def __init__(self, batch: Limiter, conversation: Chat, progress: ProgressReporter) -> None:
        super().__init__()
        self.batch = batch
        self._conversation = conversation
        self._progress = progress
        self._length: int | None = None

    def reserve(self) -> float:
        length = len(self._conversation.history.turns)
        if length == self._length:
            self._progress.tally("retried")
        self._length = length
        paused = self.batch.paused_for()
        wait = self.batch.reserve()
        self._progress.note(_waiting_note(wait, paused, self.batch.rpm))
        return wait

    def paused_for(self) -> float:
        return self.batch.paused_for()

    def pause(self, seconds: float) -> None:
        self.batch.pause(seconds)
