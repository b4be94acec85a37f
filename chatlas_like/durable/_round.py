"""A tool round as durable steps: one step per call result, in the order they came.

A call runs only once its start is recorded (:class:`StartGate` holds it until then):
written to the turn's stream from inside the step running at the time, one insert,
and named again in that step's record. After a crash the records and the stream tell
for sure which calls may have run, the stream also for the step the crash cut short.
A call whose tool is safe to run again records no start: after a crash it runs again
whether it had started or not.

Replayed after a crash, the recorded steps come back in their order without running
anything. At the first step that was not recorded the round goes live, with what is
left: a call never started runs; a call that started and did not finish runs again
only if its tool declares that safe (``durable="rerun"``, or annotations
``idempotentHint`` or ``readOnlyHint``), and is otherwise answered with an ``error`` result saying it was
interrupted and may or may not have taken effect (:data:`INTERRUPTED_BY_CRASH`).
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from .._core.content import ContentToolRequest
from .._core.tool_result import failed
from .._tools.observer import Observer
from .._tools.runner import (
    Delivery,
    Event,
    Finished,
    Started,
    Stopped,
    ToolContext,
    ToolRound,
)
from .._tools.tool import Tool, ToolBuiltIn
from .._tools.workers import submit_to_background
from ._codec import decode_result, encode_result

__all__ = ["INTERRUPTED_BY_CRASH", "DurableRound", "DurableWarning", "StartGate", "safe_to_rerun"]

T = TypeVar("T")
INTERRUPTED_BY_CRASH = (
    "The call was interrupted by a crash while it ran: it may or may not have taken "
    "effect. Check its effect before calling it again."
)
_POLL = 0.1  # seconds between looks for Ctrl-C while waiting


class DurableWarning(UserWarning):
    """A durable conversation goes on, but something recorded does not fit this process
    (a tool its run used is not registered here)."""


def safe_to_rerun(tool: Tool | ToolBuiltIn | None) -> bool:
    """Whether ``tool`` declares that running a call again does no harm: its
    ``durable=`` setting when given, else its annotations."""
    if isinstance(tool, Tool) and tool.durable is not None:
        return tool.durable == "rerun"
    annotations: Mapping[str, Any] = (tool.annotations if tool is not None else None) or {}
    return bool(annotations.get("idempotentHint") or annotations.get("readOnlyHint"))


@dataclass(frozen=True, slots=True)
class _StartAsked:
    """A call waits for its start to be recorded; ``go()`` lets it run."""

    index: int
    go: Callable[[], None]


@dataclass(frozen=True, slots=True)
class _RoundOver:
    interrupt: BaseException | None


class StartGate(Observer):
    """The runner's observer in a durable round: a gated call's tool runs only after
    the round has recorded its start (``index``: the gated calls' ids, and their places
    in the round); every other hook is the chat's own observer's."""

    __slots__ = ("_inbox", "_index", "_inner")

    def __init__(
        self, inner: Observer, inbox: queue.SimpleQueue[Any], index: Mapping[str, int]
    ) -> None:
        self._inner = inner
        self._inbox = inbox
        self._index = index

    def running(self, request: ContentToolRequest, work: Awaitable[T]) -> Awaitable[T]:
        if request.id not in self._index:
            return self._inner.running(request, work)
        return self._gated(request, work)

    async def _gated(self, request: ContentToolRequest, work: Awaitable[T]) -> T:
        loop = asyncio.get_running_loop()
        recorded: asyncio.Future[None] = loop.create_future()

        def go() -> None:
            loop.call_soon_threadsafe(_settle, recorded)

        self._inbox.put(_StartAsked(self._index[request.id], go))
        try:
            await recorded
        except BaseException:
            close = getattr(work, "close", None)
            if close is not None:
                close()  # never started: no "coroutine was never awaited"
            raise
        return await self._inner.running(request, work)

    # The other hooks are the chat's.
    def begin(self) -> None:
        self._inner.begin()

    def failed(self, error: BaseException) -> None:
        self._inner.failed(error)

    def end(self) -> None:
        self._inner.end()


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


Step = Callable[[Callable[[], Any]], Any]
"""``step(fn)``: the round's next durable step: its recorded value, or ``fn()``'s, recorded."""


class DurableRound:
    """One round of tool calls, replayed from its record and then run live (see the
    module docstring). The turn loop holds it as its round handle."""

    def __init__(
        self,
        requests: Sequence[ContentToolRequest],
        context: ToolContext,
        step: Step,
        *,
        recovered: bool,
        where: str,
        deliver: Callable[[Delivery], None],
        record_start: Callable[[int], None],
        written_starts: Callable[[], set[int]],
    ) -> None:
        self.requests = list(requests)
        self._deliver = deliver  # what comes while a step waits: to the loop, as it comes
        self._record_start = record_start  # from inside the running step, before the call runs
        self._written_starts = written_starts  # every start recorded, read in a step
        self._context = context
        self._step = step
        self._recovered = recovered  # the model step that asked for these calls was replayed
        self._where = where
        self._started: set[int] = set()
        self._answered: set[int] = set()
        self._inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._fresh = False  # the step just taken ran live (its starts were delivered)
        self._live: ToolRound | None = None
        self._global: list[int] = []  # the live round's index -> this round's
        self._cancel_pump: Callable[[], None] | None = None
        self._ungated: set[int] = set()  # live calls that run with no start recorded
        self._interrupt: BaseException | None = None
        self._over = False
        # How long a wait for the live round blocks (the thread that drives the round
        # waits): in short polls on the main thread, where Ctrl-C must get in; elsewhere
        # (a worker's turn) until something comes, as each wake-up costs a turn at the GIL.
        self._patience = _POLL if threading.current_thread() is threading.main_thread() else None

    # -- what the loop calls ---------------------------------------------------------------

    def next(self) -> Delivery:
        """The next thing that happened in the round (replayed, or live and recorded)."""
        if len(self._answered) == len(self.requests):
            return Delivery([], done=True)
        self._fresh = False
        events = self._replay(self._step(self._record_live))
        done = len(self._answered) == len(self.requests)
        if done and self._live is not None:
            self._finish_live()
        return Delivery(events, done, self._interrupt if done else None)

    def stop(self) -> Stopped:
        """Start nothing more and stop what runs (the loop answers the rest)."""
        started = set(self._started)
        ready: tuple[Finished, ...] = ()
        if self._live is not None:
            stopped = self._live.stop()
            started |= {self._global[i] for i in stopped.started}
            ready = tuple(Finished(self._global[f.index], f.result) for f in stopped.ready)
            if self._cancel_pump is not None:
                self._cancel_pump()
        return Stopped(frozenset(started), ready)

    # -- replaying a record ----------------------------------------------------------------

    def _replay(self, record: dict[str, Any]) -> list[Event]:
        """A step's record as the events it stands for (those the loop has not had)."""
        index: int = record["index"]
        request = self.requests[index]
        if record["kind"] == "start":  # recorded by a version that gave a start its own step
            self._started.add(index)
            return [Started(index, request)]
        events: list[Event] = []
        if not self._fresh:  # live, the starts were delivered as they were written
            started: int
            for started in record.get("started", ()):
                self._started.add(started)
                events.append(Started(started, self.requests[started]))
        self._answered.add(index)
        result = decode_result(record["result"])
        # The loop's own request object (it carries the tool's description).
        result = result.with_model_value(result.get_model_value(), request=request)
        events.append(Finished(index, result))
        return events

    # -- going live ------------------------------------------------------------------------

    def _record_live(self) -> dict[str, Any]:
        """What the step records when nothing was recorded at its place: the next
        result, waited for inside the step, so that the step's timer writes what came
        before it once the wait outlasts ``publish_after``, and a quick call writes
        nothing (see :class:`~chatlas_like.durable._driver.Recorder`). A gated call
        that asks to start meanwhile has its start written from inside the step
        (one insert, where a step of its own costs two transactions), then runs; the
        record names the calls started in it."""
        self._fresh = True
        if self._live is None:
            self._go_live()
        started: list[int] = []
        while True:
            item = self._take_recordable()
            if isinstance(item, Finished):
                break
            self._record_start(item.index)
            self._started.add(item.index)
            started.append(item.index)
            item.go()  # the start is recorded: the call may run now
            self._deliver(Delivery([Started(item.index, self.requests[item.index])]))
        return {
            "kind": "result",
            "index": item.index,
            "result": encode_result(item.result),
            "started": started,
        }

    def _go_live(self) -> None:
        tools = self._context.tools
        if self._recovered:  # a crashed execution may have started calls in its last step
            self._started |= self._written_starts() - self._answered
        remaining: list[int] = []
        for index, request in enumerate(self.requests):
            if index in self._answered:
                continue
            tool = tools.get(request.name)
            if self._recovered and tool is None:
                self._warn_missing(request, index in self._started)
            if index in self._started and not (tool is not None and safe_to_rerun(tool)):
                self._inbox.put(Finished(index, failed(request, INTERRUPTED_BY_CRASH)))
            else:
                remaining.append(index)
        self._global = remaining
        self._ungated = {i for i in remaining if safe_to_rerun(tools.get(self.requests[i].name))}
        gated = {self.requests[i].id: i for i in remaining if i not in self._ungated}
        live = ToolRound(
            [self.requests[i] for i in remaining],
            replace(
                self._context,
                observer=StartGate(self._context.observer, self._inbox, gated),
            ),
        )
        self._live = live
        if not remaining:
            self._over = True
            return
        future, self._cancel_pump = submit_to_background(lambda: self._pump(live))
        future.add_done_callback(self._pump_ended)

    async def _pump(self, live: ToolRound) -> None:
        """Hand the live round's deliveries to the driver's thread, in order."""
        while True:
            delivery = await live.next()
            for event in delivery.events:
                if isinstance(event, Finished):
                    self._inbox.put(Finished(self._global[event.index], event.result))
                elif not isinstance(event, Started):
                    self._inbox.put(event)
                elif self._global[event.index] in self._ungated:  # a gated one's: where written
                    self._inbox.put(Started(self._global[event.index], event.request))
            if delivery.done:
                self._inbox.put(_RoundOver(delivery.interrupt))
                return

    def _pump_ended(self, future: Any) -> None:
        if future.cancelled() or future.exception() is None:
            return
        self._inbox.put(_RoundOver(future.exception()))  # a bug of ours: end the round

    def _take(self) -> Any:
        """The next item from the live round (see ``_patience``)."""
        while True:
            try:
                item = self._inbox.get(timeout=_POLL if self._over else self._patience)
            except queue.Empty:
                if self._over:
                    raise RuntimeError(
                        "the tool round ended without answering every call"
                    ) from None
                continue
            if isinstance(item, _RoundOver):
                self._round_over(item)
                continue
            return item

    def _take_recordable(self) -> _StartAsked | Finished:
        while True:
            item = self._take()
            if isinstance(item, (_StartAsked, Finished)):
                return item
            self._deliver(Delivery([item]))  # progress, a start: never recorded

    def _round_over(self, over: _RoundOver) -> None:
        self._over = True
        if over.interrupt is not None and not isinstance(over.interrupt, Exception):
            self._interrupt = over.interrupt  # a tool's Ctrl-C or SystemExit: the loop raises it
        elif over.interrupt is not None:
            raise over.interrupt

    def _finish_live(self) -> None:
        """The round's last result is in: wait for the live round's end (it says whether
        a tool raised Ctrl-C or SystemExit)."""
        while not self._over:
            with contextlib.suppress(queue.Empty):
                item = self._inbox.get(timeout=self._patience)
                if isinstance(item, _RoundOver):
                    self._round_over(item)

    def _warn_missing(self, request: ContentToolRequest, started: bool) -> None:
        fate = (
            "it had started, so it is answered as interrupted"
            if started
            else "it is answered as an unknown tool"
        )
        message = (
            f"{self._where}: the recorded run called tool `{request.name}` (call "
            f"{request.id}), which is not registered in this process; {fate}. "
            "Register the same tools in every process that runs this durable chat."
        )
        with contextlib.suppress(Warning):  # warnings as errors must not fail the recovery
            warnings.warn(message, DurableWarning, stacklevel=2)
