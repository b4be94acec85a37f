"""DurableChat: a configured Chat whose conversations are DBOS workflows, one per turn."""

from __future__ import annotations

import json
import queue
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

from .._chat import Chat, ChatResponse, ChatResponseAsync, ChatStream, _shows
from .._core.content import Content
from .._core.turn import SystemTurn, Turn
from ._codec import decode_error, encode_prompt
from ._driver import PUBLISH_AFTER, STREAM_KEY, unread
from ._engine import (
    DurableError,
    dbos_instance,
    dbos_launched,
    ensure_launched,
    in_thread,
    iterate_in_thread,
)
from ._handle import DurableHandle
from ._history import TurnOutput, conversation_workflows, load_history, off_loop
from ._ids import (
    check_conversation_id,
    check_name,
    run_id,
    turn_index,
    turn_workflow_id,
    workflow_name,
)
from ._recent import LEFT, RECENT
from ._turn import CALLERS, Caller, run_turn

if TYPE_CHECKING:
    from .._run.echo import EchoSink

__all__ = ["DurableChat", "queue_name"]

EchoOption = Literal["none", "text", "output", "all"]
_NAMES: dict[str, DurableChat] = {}
_NAMES_LOCK = threading.Lock()
_END = object()


class DurableChat:
    """A :class:`~chatlas_like.Chat` whose conversations survive the process.

    Each turn of a conversation is a DBOS workflow: every model request and every tool
    call is a step recorded in DBOS's database, so a process that dies mid-turn leaves
    a turn that ``DBOS.launch()`` (in a new process with the same executor id) picks up
    where it stopped: finished steps are replayed, an interrupted model request is sent
    again, and an interrupted tool call runs again only if its tool says so
    (``register_tool(f, durable="rerun")``, or without ``durable=`` annotations marking
    it idempotent or read-only: ``{"idempotentHint": True}`` or ``{"readOnlyHint":
    True}``); any other is answered with an ``error`` result telling
    the model the call was interrupted and may or may not have taken effect.

    Create every ``DurableChat`` before ``DBOS.launch()``: recovery finds a turn's code by
    the chat's ``name``. With several processes, give each its own stable
    ``executor_id`` and all the same ``application_version`` in DBOS's config (DBOS's
    default version depends on the workflows a process registered, so processes with
    different durable chats would not share work). See ``docs/durable.md``.

    Parameters
    ----------
    chat
        The configured chat (kept as :attr:`wrapped`): provider, model, system prompt, tools, callbacks, store.
        Each turn runs on a copy of it holding the conversation's history; its own
        history must be empty.
    name
        A name unique in the application (letters, digits, ``_``, ``.``, ``-``): the
        workflows of its conversations are recorded under it.
    max_concurrency
        How many queued turns (:meth:`enqueue`) each process runs at once. The limit is
        kept with the queue in the database, set by the process that enqueues.
    publish
        Write what each turn produces (text, tool requests and results) to the turn's
        DBOS stream, for readers that reconnect (:meth:`follow`).
    publish_after
        Seconds a step must run before what came before it is written to the stream
        (one insert inside the step). What quicker steps follow goes with a later write
        or, at the end, the turn's output, which :meth:`follow` reads too: a reader
        waits at most this long behind a slow step. ``0`` writes before every step.
    poll_interval
        Seconds between looks at the database for a queued turn or a followed stream.
    """

    def __init__(
        self,
        chat: Chat,
        *,
        name: str,
        max_concurrency: int = 8,
        publish: bool = True,
        publish_after: float = PUBLISH_AFTER,
        poll_interval: float = 0.2,
    ) -> None:
        from dbos import DBOS, WorkflowSerializationFormat

        self.name = check_name(name)
        if not isinstance(chat, Chat):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"chat must be a Chat, not {type(chat).__name__}")
        if chat.get_turns():
            raise ValueError(
                "the chat given to DurableChat must have no turns: each conversation's "
                "history is recorded in DBOS, turn by turn"
            )
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if dbos_launched():
            raise DurableError(
                f"DurableChat {name!r} was created after DBOS.launch(): a turn of it left "
                "unfinished by a crash would not be recovered at launch. Create every "
                "DurableChat before DBOS.launch()"
            )
        self.wrapped = chat
        self.max_concurrency = max_concurrency
        self.publish = publish
        if publish_after < 0:
            raise ValueError("publish_after must be 0 or more seconds")
        self.publish_after = publish_after
        self.poll_interval = poll_interval
        self._queue_of: Any = None  # (DBOS instance, queue), registered on first enqueue

        def turn(conversation_id: str, index: int, prompt: list[Any], call: dict[str, Any]) -> Any:
            return run_turn(
                self.wrapped,
                self.name,
                self.publish_after if self.publish else None,
                conversation_id,
                index,
                prompt,
                call,
            )

        with _NAMES_LOCK:
            if name in _NAMES:
                raise ValueError(
                    f"a DurableChat named {name!r} exists already in this process: each "
                    "needs a name of its own (recovery finds a conversation's code by it)"
                )
            # Its inputs and output as JSON, not pickles: a row read back runs no code.
            self._workflow = DBOS.workflow(
                name=workflow_name(name), serialization_type=WorkflowSerializationFormat.PORTABLE
            )(turn)
            _NAMES[name] = self

    def __repr__(self) -> str:
        return f"<DurableChat {self.name!r} {self.wrapped!r}>"

    # -- the verbs ---------------------------------------------------------------------------

    def chat(
        self,
        *args: Content | str,
        conversation_id: str,
        echo: EchoOption | EchoSink = "output",
        stream: bool = True,
        kwargs: dict[str, Any] | None = None,
        **options: Any,
    ) -> ChatResponse:
        """Send a message on ``conversation_id`` and wait for the whole answer.

        As :meth:`Chat.chat`, plus ``conversation_id``: the conversation to continue
        (a new id starts one). The turn is recorded as it runs; if this process dies,
        the next ``DBOS.launch()`` with the same executor id completes it.

        Returns
        -------
        chatlas_like.ChatResponse
            The answer's text.

        Raises
        ------
        TypeError
            ``conversation_id`` is not a string.
        DurableError
            DBOS is not launched.
        """
        caller = Caller(echo)
        answer = off_loop(
            lambda: self._turn(args, conversation_id, caller, stream, kwargs, options)
        )
        response = ChatResponse(iter([answer]), echoed=_shows(echo))
        response.get_content()
        return response

    async def chat_async(
        self,
        *args: Content | str,
        conversation_id: str,
        echo: EchoOption | EchoSink = "output",
        stream: bool = True,
        kwargs: dict[str, Any] | None = None,
        **options: Any,
    ) -> ChatResponseAsync:
        """The async :meth:`chat` (the turn runs in a thread of its own; cancelling the
        wait leaves the turn running to its end)."""
        caller = Caller(echo)
        answer = await in_thread(
            lambda: self._turn(args, conversation_id, caller, stream, kwargs, options)
        )

        async def chunks() -> AsyncIterator[str]:
            yield answer

        response = ChatResponseAsync(chunks(), echoed=_shows(echo))
        await response.get_content()
        return response

    def stream(
        self,
        *args: Content | str,
        conversation_id: str,
        content: Literal["text", "all"] = "text",
        echo: EchoOption | EchoSink = "none",
        kwargs: dict[str, Any] | None = None,
        **options: Any,
    ) -> ChatStream[Any]:
        """Send a message on ``conversation_id`` and iterate over the answer as it arrives.

        As :meth:`Chat.stream`. The turn starts with the iteration and, once started,
        runs to its end even if the iteration stops early (it is durable).
        """
        check_conversation_id(conversation_id)
        _check_content(content)

        def produce(sink: Callable[[Any], None]) -> str:
            caller = Caller(echo, sink)
            return self._turn(args, conversation_id, caller, True, kwargs, options)

        return ChatStream(_streamed(produce, content))

    async def stream_async(
        self,
        *args: Content | str,
        conversation_id: str,
        content: Literal["text", "all"] = "text",
        echo: EchoOption | EchoSink = "none",
        kwargs: dict[str, Any] | None = None,
        **options: Any,
    ) -> AsyncIterator[Any]:
        """The async :meth:`stream`: ``async for chunk in await durable.stream_async(...)``."""
        check_conversation_id(conversation_id)
        _check_content(content)

        def produce(sink: Callable[[Any], None]) -> str:
            caller = Caller(echo, sink)
            return self._turn(args, conversation_id, caller, True, kwargs, options)

        return iterate_in_thread(lambda: _streamed(produce, content))

    def enqueue(
        self,
        *args: Content | str,
        conversation_id: str,
        stream: bool = True,
        kwargs: dict[str, Any] | None = None,
        **options: Any,
    ) -> DurableHandle:
        """Put a turn on this chat's DBOS queue, for any process running this chat.

        At most ``max_concurrency`` queued turns run at once in each process. Turns of
        one conversation run in the order they were queued.

        Returns
        -------
        DurableHandle
            Its :meth:`~DurableHandle.result` is the answer's text.
        """
        return off_loop(lambda: self._enqueue(args, conversation_id, stream, kwargs, options))

    # -- reading a conversation -----------------------------------------------------------------

    def get_turns(self, conversation_id: str, *, include_system_prompt: bool = False) -> list[Turn]:
        """The conversation's turns, as its finished turns recorded them (a turn still
        running is not included: see :meth:`follow`)."""
        check_conversation_id(conversation_id)
        ensure_launched()
        turns = off_loop(lambda: load_history(self.name, conversation_id).turns)
        if include_system_prompt and self.wrapped.system_prompt:
            turns.insert(0, SystemTurn(self.wrapped.system_prompt))
        return turns

    def run_id(self, conversation_id: str) -> str:
        """The run the conversation's tool results are kept under in the chat's store
        (the same in every process)."""
        return run_id(self.name, check_conversation_id(conversation_id))

    def follow(self, conversation_id: str) -> Iterator[Any]:
        """What the conversation's running turn has produced so far, then the rest as it
        comes, until the turn ends: text chunks, tool requests and tool results (read
        from the turn's DBOS stream, so from any process, e.g. a reloaded page). Nothing
        when no turn is running. Call it outside a running event loop; see
        :meth:`follow_async`.
        """
        check_conversation_id(conversation_id)
        ensure_launched()
        from dbos import DBOS

        running = load_history(self.name, conversation_id).running
        if not running:
            return
        turn = running[0]  # the earliest: later ones wait for it, queued
        read = 0
        for entry in DBOS.read_stream(turn, STREAM_KEY, polling_interval_sec=self.poll_interval):
            items, read = unread(entry, read)
            yield from items
        # The turn has ended: what it emitted after its last step is in its output.
        [status] = DBOS.list_workflows(workflow_ids=[turn], load_input=False, load_output=True)
        output = TurnOutput.from_data(status.output) if status.status == "SUCCESS" else None
        if output is not None and output.tail is not None:
            yield from unread(output.tail, read)[0]

    def follow_async(self, conversation_id: str) -> AsyncIterator[Any]:
        """The async :meth:`follow`: ``async for item in durable.follow_async(id)``."""
        return iterate_in_thread(lambda: self.follow(conversation_id))

    # -- internals ---------------------------------------------------------------------------

    def _turn(
        self,
        args: Sequence[Content | str],
        conversation_id: str,
        caller: Caller,
        stream: bool,
        kwargs: dict[str, Any] | None,
        options: dict[str, Any],
    ) -> str:
        """Run one turn in this thread (no event loop may run here); the answer's text."""
        from dbos import SetWorkflowID
        from dbos import error as dbos_errors

        check_conversation_id(conversation_id)
        ensure_launched()
        prompt, call = self._inputs(args, stream, kwargs, options)
        # By the call's token, not the turn's id: a racing call may try the same turn
        # number, and only the call that takes it may see its output.
        token = call["token"]
        CALLERS[token] = caller
        known = RECENT.get(self.name, conversation_id)
        # Unknown here, the conversation is guessed new: its first turn costs no read.
        # A turn number already taken is refused by DBOS before anything runs.
        index = known.next_index if known is not None else 0
        try:
            while True:
                workflow_id = turn_workflow_id(self.name, conversation_id, index)
                try:
                    with SetWorkflowID(workflow_id, workflow_id_reuse_policy="reject"):
                        data = self._workflow(conversation_id, index, prompt, call)
                except dbos_errors.DBOSWorkflowIDInUseError:
                    data = None
                output = TurnOutput.from_data(data)
                if output is not None and output.token == token:
                    break
                # Another call took this turn's number first: this one goes after it.
                RECENT.drop(self.name, conversation_id)
                index = self._next_index(conversation_id)
            left = LEFT.pop(token, None)
            if left is not None:
                RECENT.put(self.name, conversation_id, left)
        finally:
            CALLERS.pop(token, None)
            LEFT.pop(token, None)
        if output.error is not None:
            raise decode_error(output.error)
        return output.answer

    def _enqueue(
        self,
        args: Sequence[Content | str],
        conversation_id: str,
        stream: bool,
        kwargs: dict[str, Any] | None,
        options: dict[str, Any],
    ) -> DurableHandle:
        from dbos import SetWorkflowID
        from dbos import error as dbos_errors

        check_conversation_id(conversation_id)
        ensure_launched()
        prompt, call = self._inputs(args, stream, kwargs, options)
        queue_ = self._queue()
        known = RECENT.get(self.name, conversation_id)
        index = known.next_index if known is not None else 0  # guessed new, as in _turn
        while True:
            workflow_id = turn_workflow_id(self.name, conversation_id, index)
            try:
                with SetWorkflowID(workflow_id, workflow_id_reuse_policy="reject"):
                    handle = queue_.enqueue(self._workflow, conversation_id, index, prompt, call)
                break
            except dbos_errors.DBOSWorkflowIDInUseError:
                # Another call took this turn's number first: this one goes after it.
                RECENT.drop(self.name, conversation_id)
                index = self._next_index(conversation_id)
        return DurableHandle(
            handle.get_workflow_id(), conversation_id, self.poll_interval, recorded=True
        )

    def _inputs(
        self,
        args: Sequence[Content | str],
        stream: bool,
        kwargs: dict[str, Any] | None,
        options: dict[str, Any],
    ) -> tuple[list[Any], dict[str, Any]]:
        self.wrapped.options.merged(options)  # an unknown option fails here, not in the turn
        call = {
            "stream": stream,
            "kwargs": dict(kwargs or {}),
            "options": dict(options),
            "token": uuid.uuid4().hex,  # tells this call's turn from a racing one's
        }
        try:
            json.dumps(call["kwargs"])
        except (TypeError, ValueError) as e:
            raise TypeError(
                f"the kwargs of a durable turn are recorded as JSON, and these are not: {e}"
            ) from None
        return encode_prompt(args), call

    def _next_index(self, conversation_id: str) -> int:

        statuses = conversation_workflows(self.name, conversation_id, load_output=False)
        return max((turn_index(s.workflow_id) for s in statuses), default=-1) + 1

    def _queue(self) -> Any:
        from dbos import DBOS

        instance = dbos_instance()
        if self._queue_of is None or self._queue_of[0] is not instance:
            registered = DBOS.register_queue(
                queue_name(self.name),
                worker_concurrency=self.max_concurrency,
                polling_interval_sec=self.poll_interval,
            )
            self._queue_of = (instance, registered)
        return self._queue_of[1]


def queue_name(name: str) -> str:
    """The DBOS queue of a durable chat's queued turns."""
    return f"chatlas_like.{name}"


def _check_content(content: str) -> None:
    if content not in ("text", "all"):
        raise ValueError(f"content must be 'text' or 'all', got {content!r}")


def _streamed(produce: Callable[[Callable[[Any], None]], str], content: str) -> Iterator[Any]:
    """The items a turn emits, read while ``produce(sink)`` runs it in a thread."""
    items: queue.SimpleQueue[Any] = queue.SimpleQueue()
    wanted: Callable[[Any], bool] = (lambda _: True) if content == "all" else _is_text
    outcome: list[BaseException | None] = []

    def sink(item: Any) -> None:
        if wanted(item):
            items.put(item)

    def run() -> None:
        try:
            produce(sink)
        except BaseException as e:
            outcome.append(e)
        else:
            outcome.append(None)
        items.put(_END)

    threading.Thread(target=run, name="chatlas-like-durable", daemon=True).start()
    while (item := items.get()) is not _END:
        yield item
    if outcome[0] is not None:
        raise outcome[0]


def _is_text(item: Any) -> bool:
    return isinstance(item, str)
