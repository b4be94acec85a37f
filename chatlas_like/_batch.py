"""Batches (Anthropic's Message Batches API, OpenAI's Batch API): many prompts at half the
price, within a day.

``batch_chat(chat, prompts, path)`` builds one request per prompt (the chat's turns,
system prompt, tools and model parameters, then the prompt), submits them as one
batch, polls until the batch ends, and returns one chat per prompt, in input order.

The job lives in the JSON file at ``path``: the batch (id and status) once submitted,
then the results once downloaded. A later call with the same chat and prompts, from
this process or another, carries on from there (polls, never submits again); a file
written for another job is refused, by fingerprints of the model, the prompts and the
requests. The submission itself is not repeated on failure (a timed-out create may have
created a batch); status polls and the download are retried like model calls.

While it waits, the batch's counts show as chatlas shows them (requests pending, done,
failed; :mod:`chatlas_like._display.progress`), with a bar and the time since the
submission, also when another process submitted it; ``echo="none"`` hides them.

A batch runs no tools: an answer asking for tools is returned with its requests
unanswered (the next ``chat()`` answers them as not run), with a warning. A request
that errored, expired or was canceled gives None, with a warning.
"""

from __future__ import annotations

import hashlib
import os
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import orjson

from ._chat import DANGLING, Chat, EchoOption
from ._core.history import answer_dangling
from ._core.turn import AssistantTurn, Turn, UserTurn
from ._display.progress import ProgressReporter, progress_reporter
from ._parallel import Prompt, prompt_turn_contents
from ._persist.chat_file import write_atomic
from ._run.drive import with_downloads
from ._run.retry import retry_delay
from ._tools.structured import extract_value, model_schema
from .providers._base import Provider
from .providers._types import BatchAnswer, RequestSpec

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["batch_chat", "batch_chat_completed", "batch_chat_structured", "batch_chat_text"]

ChatT = TypeVar("ChatT", bound=Chat)
BaseModelT = TypeVar("BaseModelT", bound="BaseModel")
T = TypeVar("T")
PathLike = str | os.PathLike[str]

STATE_VERSION = 1
MAX_POLL_INTERVAL = 60.0
OUTCOMES = ("pending", "done", "failed")  # the counts the progress shows, as chatlas does


def batch_chat(
    chat: ChatT,
    prompts: Sequence[Prompt],
    path: PathLike,
    wait: bool = True,
    *,
    poll_interval: float = 5.0,
    echo: EchoOption = "output",
) -> list[ChatT | None] | None:
    """Answer many prompts through the provider's batch API, one conversation each.

    Parameters
    ----------
    chat
        The configured chat; each prompt continues a copy of it. ``chat`` is unchanged.
    prompts
        One prompt per request: a string or content object, or a list of them.
    path
        A JSON file holding the job's state. Call again with the same path (from any
        process) to pick the job up where it was: polling, not submitting again.
    wait
        Wait until the batch ends (default). With False, poll once and return None
        if it is still running.
    poll_interval
        Seconds before the second poll; the interval grows to at most a minute.
    echo
        ``"none"``: show nothing. Otherwise (default) show, while it waits, the
        batch's requests ``pending``, ``done`` and ``failed`` (errored, expired or
        canceled) and the time since it was submitted, on standard error or in place
        in a notebook.

    Returns
    -------
    list or None
        One chat per prompt, in input order (None where the request errored, expired
        or was canceled); None when ``wait=False`` and the batch is still running.

    Examples
    --------
    >>> chats = batch_chat(chat, ["Capital of France?", "Capital of Peru?"], "capitals.json")
    >>> [str(c.get_last_turn()) for c in chats if c is not None]
    """
    job = _BatchJob(chat, prompts, path)
    if not job.run(wait, poll_interval, echo):
        return None
    return [job.chat_for(i, turn) for i, turn in enumerate(job.answers())]


def batch_chat_text(
    chat: Chat,
    prompts: Sequence[Prompt],
    path: PathLike,
    wait: bool = True,
    *,
    poll_interval: float = 5.0,
    echo: EchoOption = "output",
) -> list[str | None] | None:
    """Like :func:`batch_chat`, returning the text of each answer (None where it failed)."""
    chats = batch_chat(chat, prompts, path, wait, poll_interval=poll_interval, echo=echo)
    if chats is None:
        return None
    return [_answer_text(c) for c in chats]


def batch_chat_structured(
    chat: Chat,
    prompts: Sequence[Prompt],
    path: PathLike,
    data_model: type[BaseModelT],
    wait: bool = True,
    *,
    poll_interval: float = 5.0,
    echo: EchoOption = "output",
) -> list[BaseModelT | None] | None:
    """Like :func:`batch_chat`, extracting data of ``data_model`` from each prompt.

    Parameters
    ----------
    data_model
        A pydantic model class: the shape of the data to extract.
    chat, prompts, path, wait, poll_interval, echo
        As for :func:`batch_chat`.

    Returns
    -------
    list or None
        One instance of ``data_model`` per prompt, in input order (None, with a
        warning, where the request failed or its data does not validate); None when
        ``wait=False`` and the batch is still running.
    """
    job = _BatchJob(chat, prompts, path, data_model)
    if not job.run(wait, poll_interval, echo):
        return None
    return [
        None if turn is None else _validated(i, turn, data_model)
        for i, turn in enumerate(job.answers())
    ]


def batch_chat_completed(chat: Chat, prompts: Sequence[Prompt], path: PathLike) -> bool:
    """Whether the batch job at ``path`` has ended (polling once if it is running).

    False when nothing was submitted yet. The chat and prompts must be those of the job
    (a structured job's data model is not checked).
    """
    job = _BatchJob(chat, prompts, path, check_data_model=False)
    if job.batch is None:
        return False
    return job.results is not None or job.poll()


# -- the job ---------------------------------------------------------------------------------


class _BatchJob:
    """One batch job: its requests, and its state in the file at ``path``."""

    def __init__(
        self,
        chat: Chat,
        prompts: Sequence[Prompt],
        path: PathLike,
        data_model: type[BaseModel] | None = None,
        *,
        check_data_model: bool = True,
    ) -> None:
        provider = chat.provider
        if not provider.capabilities.batches:
            raise TypeError(
                "batch_chat needs a provider with a batch API (ChatAnthropic, ChatOpenAI, "
                f"ChatOpenAICompletions...); "
                f"the {provider.label} provider has none"
            )
        self.chat = chat
        self.provider: Provider = provider
        self.path = Path(path)
        self.spec = RequestSpec(
            system_prompt=chat.system_prompt,
            tools=chat.get_tools(),
            stream=False,
            params=chat.model_params,
            data_model=data_model,
        )
        self.turns = _answered(chat.get_turns())
        self.user_turns = [UserTurn(prompt_turn_contents(p)) for p in prompts]
        if not self.user_turns:
            raise ValueError("batch_chat needs at least one prompt")
        self.requests = {
            _custom_id(i): self._params(provider, turn) for i, turn in enumerate(self.user_turns)
        }
        plain = replace(self.spec, data_model=None)
        self.fingerprint = {
            "provider": provider.key,
            "model": provider.model,
            "prompts": _digest([repr(t.contents) for t in self.user_turns]),
            # Without the data model, which has a fingerprint of its own: a structured
            # job's file is then found by batch_chat_completed(), which has no model.
            "requests": _digest([self._params(provider, t, plain) for t in self.user_turns]),
            "data_model": None if data_model is None else _digest(model_schema(data_model)),
        }
        self.batch: dict[str, Any] | None = None
        self.submitted_at: float | None = None  # time.time(): elapsed time across processes
        self.results: list[dict[str, Any]] | None = None
        self._load(check_data_model)

    def _params(
        self, provider: Provider, turn: UserTurn, spec: RequestSpec | None = None
    ) -> dict[str, Any]:
        turns = [*self.turns, turn]
        body = provider.build_request(turns, with_downloads(provider, turns, spec or self.spec))
        body.pop("stream", None)  # a batch request is never streamed
        return body

    # -- state file ------------------------------------------------------------------------

    def _load(self, check_data_model: bool) -> None:
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        try:
            loaded: Any = orjson.loads(self.path.read_bytes())
        except orjson.JSONDecodeError as e:
            raise ValueError(f"{self.path} is not a batch state file: {e}") from None
        state = cast(dict[str, Any], loaded) if isinstance(loaded, dict) else {}
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"{self.path} is not a batch state file (version {STATE_VERSION})")
        stored: dict[str, Any] = state.get("fingerprint") or {}
        keys = [k for k in self.fingerprint if check_data_model or k != "data_model"]
        differ = [k for k in keys if stored.get(k) != self.fingerprint[k]]
        if differ:
            raise ValueError(
                f"{self.path} holds another batch job (its {', '.join(differ)} differ from "
                "this call's): pass another path, or delete the file to submit this job"
            )
        self.batch = state.get("batch")
        self.submitted_at = state.get("submitted_at")  # absent from files of older versions
        self.results = state.get("results")

    def _save(self) -> None:
        state = {
            "version": STATE_VERSION,
            "fingerprint": self.fingerprint,
            "batch": self.batch,
            "submitted_at": self.submitted_at,
            "results": self.results,
        }
        # Atomic, fsynced and with a temporary file of its own: a crash or another
        # process never reads half a file, and two saves never share a temporary file.
        write_atomic(self.path, orjson.dumps(state, option=orjson.OPT_INDENT_2))

    # -- steps -----------------------------------------------------------------------------

    def run(self, wait: bool, poll_interval: float, echo: EchoOption = "none") -> bool:
        """Submit, poll, download as needed; whether the results are here.

        While it waits (``wait``), the batch's counts are shown unless ``echo="none"``.
        """
        if self.results is not None:
            return True
        if self.batch is None:
            self.submitted_at = time.time()
            self.batch = self.provider.batch_submit(self.requests)
            self._save()
        if not wait:
            return self.poll() and self._download()
        n = len(self.user_turns)
        progress = progress_reporter(
            f"Processing {n} prompt{'' if n == 1 else 's'}", n, OUTCOMES, echo=echo
        )
        progress.update(0, {"pending": n})  # until the first poll says otherwise
        with progress.start(since=self.submitted_at):
            interval = poll_interval
            while not self.poll(progress):
                time.sleep(interval)
                interval = min(interval * 1.5, MAX_POLL_INTERVAL)
        return self._download()

    def poll(self, progress: ProgressReporter | None = None) -> bool:
        """Refresh the batch's status (shown by ``progress``); whether it has ended."""
        self.batch = self._retried(self.provider.batch_retrieve, self._batch_id())
        self._save()
        status = self.provider.batch_status(self.batch)
        if progress is not None:
            progress.update(
                status.succeeded + status.failed,
                {"pending": status.processing, "done": status.succeeded, "failed": status.failed},
            )
        return status.ended

    def _download(self) -> bool:
        self.results = self._retried(self.provider.batch_results, self._batch_id())
        self._save()
        return True

    def _batch_id(self) -> str:
        assert self.batch is not None
        return self.provider.batch_status(self.batch).id

    def _retried(self, call: Callable[[str], T], batch_id: str) -> T:
        # Batch endpoints have their own rate limits: a 429 here backs off this job
        # alone and does not pause the chat's model calls.
        attempt = 0
        while True:
            try:
                return call(batch_id)
            except Exception as e:
                delay = retry_delay(attempt, e, self.chat.options.max_retries)
                if delay is None:
                    raise
            time.sleep(delay)
            attempt += 1

    # -- results ---------------------------------------------------------------------------

    def answers(self) -> list[AssistantTurn | None]:
        """The answer to each prompt, in input order; None (with a warning) where none."""
        assert self.results is not None
        answers = (self.provider.batch_answer(line, self.spec) for line in self.results)
        by_id = {answer.request_id: answer for answer in answers}
        return [self._answer(i, by_id.get(_custom_id(i))) for i in range(len(self.user_turns))]

    def _answer(self, index: int, answer: BatchAnswer | None) -> AssistantTurn | None:
        if answer is None:
            _warn(f"prompt {index}: the batch has no result for it")
            return None
        if answer.turn is None:
            _warn(f"prompt {index}: the batch request {answer.error}")
        return answer.turn

    def chat_for(self, index: int, answer: AssistantTurn | None) -> Any:
        """A copy of the chat holding the prompt and its answer (None without an answer)."""
        if answer is None:
            return None
        chat = self.chat.copy()
        earlier = _answered(chat.history.turns)
        chat.history.replace([*earlier, self.user_turns[index], answer])
        requests = answer.tool_requests
        if requests:
            names = ", ".join(sorted({r.name for r in requests}))
            _warn(
                f"prompt {index}: the model asked for tools ({names}), which a batch does not "
                "run; its chat ends with the requests unanswered (use parallel_chat to run tools)"
            )
        return chat


def _validated(index: int, turn: AssistantTurn, data_model: type[BaseModelT]) -> BaseModelT | None:
    try:
        return data_model.model_validate(extract_value(turn))
    except ValueError as e:  # pydantic's ValidationError is a ValueError
        _warn(f"prompt {index}: its data does not fit {data_model.__name__}: {e}")
        return None


def _answer_text(chat: Chat | None) -> str | None:
    if chat is None:
        return None
    turn = chat.get_last_turn()
    return None if turn is None else turn.text


def _answered(turns: Sequence[Turn]) -> list[Turn]:
    """``turns`` with tool requests left open answered as not run, as ``chat()`` answers
    them before its request: the API refuses a request that leaves one open."""
    answered = list(turns)
    answer_dangling(answered, DANGLING, everywhere=True)
    return answered


def _custom_id(index: int) -> str:
    return f"prompt-{index}"


def _digest(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _warn(message: str) -> None:
    warnings.warn(message, UserWarning, stacklevel=2)
