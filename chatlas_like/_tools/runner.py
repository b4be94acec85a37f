"""The tool runner: one turn's tool requests in, each result out the moment it exists.

It is async inside. A :class:`ToolRound` runs one turn's requests on the event loop
that first asks it for a delivery: ``drive_async()`` awaits it on the caller's loop,
``drive()`` asks on the private background loop. In both, async tools run as tasks
and sync tools in the chat's :class:`~chatlas_like._tools.workers.WorkerPool`, never on the
caller's loop.

A request goes through, in call order and before any tool of the turn starts:
lookup (unknown tool: refused), argument validation (refused), the review hook
(``Deny``: denied) and ``on_tool_request`` (``ToolRejectError``: refused; any other
exception: error naming the callback). Then the accepted calls run at once, up to
``max_concurrency``; a ``sequential`` tool waits for the running ones and runs alone.

Two orders, kept apart. :meth:`ToolRound.next` hands over what happened since the
last delivery, in the order it happened (completion order): a call that got its slot
and started (:class:`Started`; handed over with the call's result when that comes
within :data:`STARTED_WAKE_DELAY`, so a quick call wakes the caller once), a
generator tool's yield (a :class:`~chatlas_like.ContentToolResultProgress`), a call's
final result
(:class:`Finished`, with the index of its request). ``on_tool_result`` sees progress
and results there, as they are delivered, so a result nobody takes is never seen
(a generator tool's final result is not: its yields were, as in chatlas).
The caller (the turn loop) puts the final results back in call order for the history
and the wire.

A generator tool (sync or async) is delivered yield by yield; a sync generator runs
in a worker thread and hands each yield to the loop thread-safely. Its one final
result combines what it yielded (:func:`chatlas_like._tools.yields.combine`, chatlas's
way, with the differences its docstring names).

A call that led to an error (unknown tool, arguments refused, a rejection, a raise,
a timeout, a failing callback) warns chatlas's ``ToolFailureWarning`` when its result
is delivered, so on the thread that takes the delivery (the caller's, as a rule), not
on a worker's; an interrupted call does not warn.

Stopping. :meth:`ToolRound.stop` (thread-safe; the loop calls it when it is closed,
cancelled, interrupted or stopped mid-round) starts nothing more, cancels the running
calls and drops whatever they deliver later, and says which calls had started and
hands over the results that were ready but not yet delivered: the loop keeps those,
answers the other started calls ``error`` (:data:`INTERRUPTED_RUNNING`) and the rest
``refused`` (:data:`INTERRUPTED_PENDING`). A tool that raises ``KeyboardInterrupt`` or
``SystemExit`` stops the round from inside: the running calls are cancelled and
answered the same way, and the exception comes back in :attr:`Delivery.interrupt` for
the loop to raise once the history is repaired.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .._core.content import ContentToolRequest
from .._core.errors import ToolRejectError
from .._core.redact import safe_description, warn_tool_failure
from .._core.tool_result import (
    ContentToolResult,
    ContentToolResultProgress,
    failed,
    refused,
    rejected,
)
from .callbacks import Allow, CallbackList, Deny, call_callback, callback_name
from .observer import QUIET, Observer
from .tool import ArgumentError, Tool, ToolBuiltIn
from .workers import WorkerPool
from .yields import combine, progress

__all__ = [
    "INTERRUPTED_PENDING",
    "INTERRUPTED_RUNNING",
    "Delivery",
    "Finished",
    "Started",
    "Stopped",
    "ToolContext",
    "ToolRound",
    "warn_failure",
]

INTERRUPTED_RUNNING = "The call was interrupted while running; it may have partly run."
INTERRUPTED_PENDING = "The call was not started: the chat was interrupted."
STARTED_WAKE_DELAY = 0.05  # seconds a call's start may wait to ride along with its result
STOP_POLL = 0.1  # seconds between looks at ToolContext.stop_requested while waiting
ALONE_POLL_MIN, ALONE_POLL_MAX = 0.001, 0.02  # seconds between tries of a sequential lock

# One lock per function of a sequential tool, for the whole process; the function is
# kept with its lock so that its id cannot be reused by another while the entry lives.
_ALONE: dict[int, tuple[Callable[..., Any], threading.Lock]] = {}
_ALONE_GUARD = threading.Lock()


def _alone_lock(func: Callable[..., Any]) -> threading.Lock:
    with _ALONE_GUARD:
        held = _ALONE.get(id(func))
        if held is None or held[0] is not func:
            held = _ALONE[id(func)] = (func, threading.Lock())
        return held[1]


@dataclass(frozen=True, slots=True)
class Started:
    """The call of ``requests[index]`` got its slot and runs now."""

    index: int
    request: ContentToolRequest


@dataclass(frozen=True, slots=True)
class Finished:
    """The final result of ``requests[index]``."""

    index: int
    result: ContentToolResult


Event = Started | ContentToolResultProgress | Finished


@dataclass(frozen=True, slots=True)
class Stopped:
    """What :meth:`ToolRound.stop` leaves: the indices of the calls that had started,
    and the results that had finished but were not delivered (kept: the call ran to
    its end; ``on_tool_result`` does not see them)."""

    started: frozenset[int]
    ready: tuple[Finished, ...] = ()


@dataclass(slots=True)
class Delivery:
    """What happened since the last delivery, in order; ``done`` once every request
    has its final result (and ``interrupt``, an exception a tool raised, to re-raise)."""

    events: list[Event]
    done: bool = False
    interrupt: BaseException | None = None


@dataclass(slots=True)
class ToolContext:
    """What the runner needs from the chat for one batch."""

    tools: Mapping[str, Tool | ToolBuiltIn]
    pool: WorkerPool
    on_request: CallbackList[ContentToolRequest] = field(default_factory=lambda: CallbackList())
    on_result: CallbackList[ContentToolResult] = field(default_factory=lambda: CallbackList())
    review: Callable[[ContentToolRequest], Any] | None = None
    max_concurrency: int = 8
    timeout: float | None = None
    observer: Observer = QUIET
    # A stop asked for from elsewhere (a StreamController): a wait for the next delivery
    # looks at it every STOP_POLL seconds and returns empty, so the loop sees the stop.
    stop_requested: Callable[[], bool] | None = None


@dataclass(slots=True, eq=False)
class _Slot:
    index: int
    request: ContentToolRequest
    tool: Tool | None = None
    kwargs: dict[str, Any] | None = None
    result: ContentToolResult | None = None
    task: asyncio.Task[None] | None = None
    closed: bool = False  # finished, timed out or cancelled: later yields are dropped
    answered: bool = False  # its Finished is out: a call is answered once


@dataclass(slots=True)
class _Raised:
    error: BaseException


@dataclass(slots=True)
class _Yielded:
    """What a generator tool yielded, in order: combined into one result."""

    items: list[Any]


# -- before anything runs ----------------------------------------------------------------


async def _prepare(slot: _Slot, ctx: ToolContext) -> None:
    request = slot.request
    tool = ctx.tools.get(request.name)
    if request.parse_error is not None:
        slot.result = refused(request, request.parse_error)
    elif tool is None:
        slot.result = refused(request, _unknown_tool(request.name, ctx.tools))
    elif isinstance(tool, ToolBuiltIn):
        slot.result = refused(
            request, f"`{request.name}` is run by the provider and cannot be called here."
        )
    else:
        slot.tool = tool
        slot.result = _validate(slot, tool, request.arguments)
        if slot.result is None:
            slot.result = await _review(slot, tool, ctx)
        if slot.result is None:
            slot.result = await _announce(request, ctx)


def _unknown_tool(name: str, tools: Mapping[str, Tool | ToolBuiltIn]) -> str:
    available = ", ".join(sorted(n for n, t in tools.items() if isinstance(t, Tool)))
    return f"Unknown tool `{name}`. Available tools: {available or 'none'}."


def _validate(slot: _Slot, tool: Tool, arguments: Any) -> ContentToolResult | None:
    try:
        slot.kwargs = tool.validate_arguments(arguments)
    except ArgumentError as e:
        return refused(slot.request, f"Invalid arguments for `{tool.name}`: {e}")
    return None


async def _review(slot: _Slot, tool: Tool, ctx: ToolContext) -> ContentToolResult | None:
    if ctx.review is None:
        return None
    try:
        decision = await call_callback(ctx.review, slot.request, ctx.pool)
    except ToolRejectError as e:
        return rejected(slot.request, e)
    except Exception as e:
        return _callback_failed(slot.request, "on_tool_review", ctx.review, e)
    if isinstance(decision, Deny):
        return ContentToolResult(value=decision.reason, outcome="denied", request=slot.request)
    if isinstance(decision, Allow):
        if decision.arguments is not None:
            return _validate(slot, tool, dict(decision.arguments))
        return None
    return failed(
        slot.request,
        f"on_tool_review callback `{callback_name(ctx.review)}` returned "
        f"{type(decision).__name__}, not Allow or Deny.",
    )


async def _announce(request: ContentToolRequest, ctx: ToolContext) -> ContentToolResult | None:
    for callback in ctx.on_request:
        try:
            await call_callback(callback, request, ctx.pool)
        except ToolRejectError as e:
            return rejected(request, e)
        except Exception as e:
            return _callback_failed(request, "on_tool_request", callback, e)
    return None


def _callback_failed(
    request: ContentToolRequest, kind: str, callback: Callable[..., Any], error: Exception
) -> ContentToolResult:
    return failed(
        request, f"{kind} callback `{callback_name(callback)}` failed: {safe_description(error)}"
    )


# -- running -------------------------------------------------------------------------------


class ToolRound:
    """One turn's tool calls, delivered as they happen (see the module docstring).

    It runs on the event loop of the first :meth:`next`, or the one given to
    :meth:`begin_in`; :meth:`stop`, :meth:`begin_in` and :meth:`take` may be called
    from any thread.
    """

    def __init__(self, requests: list[ContentToolRequest], ctx: ToolContext) -> None:
        self.ctx = ctx
        self._slots = [_Slot(i, request) for i, request in enumerate(requests)]
        self._lock = threading.Lock()  # the loop's thread and the round's may differ
        self._stopping = False  # nothing starts now (under the lock)
        self._abandoned = False  # stopped from outside: nothing more is delivered
        self._started: set[int] = set()  # (under the lock)
        self._events: list[Event] = []  # (under the lock)
        self._warn: set[int] = set()  # calls whose failure is warned about on delivery
        self._unanswered = len(requests)  # (under the lock)
        self._done = not requests  # (under the lock)
        self._fatal: BaseException | None = None
        self._ready: asyncio.Event | None = None  # wakes next() on the round's loop
        self._signal = threading.Event()  # wakes take() in another thread
        self._loop: asyncio.AbstractEventLoop | None = None
        self._main: asyncio.Task[None] | None = None
        self._semaphore: asyncio.Semaphore | None = None

    async def next(self) -> Delivery:
        """Wait for something to happen; what happened since the last call, in order,
        each result and progress item seen by ``on_tool_result`` first (an empty
        delivery as soon as ``stop_requested`` says so, for the caller to stop)."""
        ready = self._ready
        if ready is None:
            ready = self._begin()
        while True:
            delivery = self._take_ready()
            if delivery is not None:
                break
            if self._stop_asked():
                return Delivery([])  # nothing happened, but the caller must look
            ready.clear()
            if self.ctx.stop_requested is None:
                await ready.wait()
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(ready.wait(), STOP_POLL)
        if self.ctx.on_result:
            observed: list[Event] = []
            try:
                for event in delivery.events:
                    observed.append(await self._observed(event))
            except BaseException:  # a callback's SystemExit, or a cancel while one runs
                with self._lock:  # undelivered again: a stop keeps the results that came
                    self._events[:0] = observed + delivery.events[len(observed) :]
                raise
            delivery.events = observed
        return delivery

    @property
    def begun(self) -> bool:
        """Whether the round was started on a loop."""
        return self._loop is not None

    def begin_in(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the round on ``loop`` (running in another thread), for :meth:`take`."""
        self._loop = loop
        loop.call_soon_threadsafe(self._begin)

    def take(self, wait: float) -> Delivery | None:
        """From another thread: what happened since the last delivery, waiting up to
        ``wait`` seconds for something; None if nothing did (an empty delivery if a
        stop was asked for meanwhile). No callbacks run here: with ``on_tool_result``
        callbacks, ask :meth:`next` on the round's loop."""
        if not self._stop_asked() and self._signal.wait(wait):
            self._signal.clear()
        delivery = self._take_ready()
        if delivery is None and self._stop_asked():
            return Delivery([])  # nothing happened, but the caller must look
        return delivery

    def _stop_asked(self) -> bool:
        stop_requested = self.ctx.stop_requested
        return stop_requested is not None and stop_requested()

    def stop(self) -> Stopped:
        """Start nothing more, cancel what runs, deliver nothing more (thread-safe);
        which calls had started, and the results that were ready but not delivered."""
        with self._lock:
            self._stopping = self._abandoned = True
            started = frozenset(self._started)
            ready = tuple(event for event in self._events if type(event) is Finished)
            self._events = []
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # a closed loop runs nothing any more
                loop.call_soon_threadsafe(self._cancel_all)
        return Stopped(started, ready)

    def _take_ready(self) -> Delivery | None:
        with self._lock:
            if not self._events and not self._done:
                return None
            events, self._events = self._events, []
            done = self._done
            warn = [e for e in events if type(e) is Finished and e.index in self._warn]
            self._warn.difference_update(e.index for e in warn)
        for event in warn:  # where the delivery is taken: the caller's thread, as a rule
            warn_failure(event.result)
        return Delivery(events, done, self._fatal if done else None)

    # -- on the round's loop ---------------------------------------------------------------

    def _begin(self) -> asyncio.Event:
        self._loop = asyncio.get_running_loop()
        self._ready = asyncio.Event()
        self._semaphore = asyncio.Semaphore(self.ctx.max_concurrency)
        self._main = asyncio.create_task(self._run())
        return self._ready

    async def _observed(self, event: Event) -> Event:
        if isinstance(event, Finished):
            if event.result.parts is not None:  # a generator's: its yields were seen
                return event
            return Finished(event.index, await _observe(event.result, self.ctx))
        if isinstance(event, ContentToolResultProgress):
            await _observe(event, self.ctx, progress=True)
        return event

    def _emit(self, event: Event, answers: int = 0, *, wake: bool = True) -> None:
        with self._lock:
            if self._abandoned:  # late: the loop has answered this call already
                return
            self._events.append(event)
            self._unanswered -= answers
            if not self._unanswered:
                self._done = True  # in the same delivery as the last result
        if wake:
            self._wake()

    def _wake(self) -> None:
        assert self._ready is not None
        self._ready.set()
        self._signal.set()

    def _finish(self, slot: _Slot, result: ContentToolResult, *, warn: bool = False) -> None:
        """``result`` answers ``slot``'s call; ``warn``: the call led to an error, which
        is warned about when the result is delivered (:meth:`_take_ready`)."""
        slot.closed = True
        if slot.answered:  # answered when the round ended early; this one came late
            return
        slot.answered = True
        slot.result = result
        if warn:
            with self._lock:
                self._warn.add(slot.index)
        self._emit(Finished(slot.index, result), answers=1)

    async def _run(self) -> None:
        try:
            await self._run_all()
        except asyncio.CancelledError:  # stopped from outside: the loop answers
            pass
        except BaseException as e:  # a callback's Ctrl-C or SystemExit, or a bug of ours
            # Raised in this task, it would end the event loop (and, on the background
            # loop, every later sync chat): the round ends here, every call answered,
            # and the exception goes back to the caller in the last delivery.
            self._stop_inside(e)
            self._answer_the_rest()
        finally:
            with self._lock:
                self._done = True
            self._wake()

    async def _run_all(self) -> None:
        for slot in self._slots:
            if self._abandoned:
                return
            try:
                await _prepare(slot, self.ctx)
            except Exception as e:  # e.g. a pydantic validator raising TypeError
                why = f"`{slot.request.name}` could not be checked: {safe_description(e)}"
                slot.result = failed(slot.request, why)
            if slot.result is not None:
                self._finish(slot, slot.result, warn=slot.result.is_error)
        await self._start_all()
        tasks = [slot.task for slot in self._slots if slot.task is not None]
        if tasks:
            await asyncio.wait(tasks)
        self._answer_the_rest()  # a tool's Ctrl-C or SystemExit stopped the round

    def _answer_the_rest(self) -> None:
        for slot in self._slots:
            if not slot.answered:
                self._finish(slot, self._unfinished(slot))

    async def _start_all(self) -> None:
        batch: list[asyncio.Task[None]] = []
        for slot in self._slots:
            if slot.result is not None or slot.tool is None:
                continue
            if self._stopping:
                return
            if slot.tool.sequential:  # alone: after the running calls, before the next ones
                if batch:
                    await asyncio.wait(batch)
                    batch = []
                await self._run_alone(slot)
            else:
                slot.task = asyncio.create_task(self._run_one(slot))
                batch.append(slot.task)

    async def _run_alone(self, slot: _Slot) -> None:
        """Run a sequential tool's call while no other call of its function runs, in
        this round or in any other chat (parallel_chat's copies share their tools)."""
        assert slot.tool is not None
        lock = _alone_lock(slot.tool.func)
        delay = ALONE_POLL_MIN
        while not lock.acquire(blocking=False):  # polled: a blocked thread could not be
            await asyncio.sleep(delay)  # cancelled, and would hold an executor thread
            delay = min(delay * 2, ALONE_POLL_MAX)
        try:
            slot.task = asyncio.create_task(self._run_one(slot))
            await asyncio.wait([slot.task])
        finally:
            lock.release()

    def _take_slot(self, slot: _Slot) -> bool:
        with self._lock:
            if self._stopping:
                return False
            self._started.add(slot.index)
        # A start alone wakes the caller only if the call is still running a moment
        # later: most calls finish sooner, and their start then rides along with their
        # result (one wake-up of the caller's thread per call, not two).
        self._emit(Started(slot.index, slot.request), wake=False)
        assert self._loop is not None
        self._loop.call_later(STARTED_WAKE_DELAY, self._wake_if_waiting)
        return True

    def _wake_if_waiting(self) -> None:
        with self._lock:
            waiting = bool(self._events)
        if waiting:
            self._wake()

    async def _run_one(self, slot: _Slot) -> None:
        try:
            await self._call(slot)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a bug of ours around the call (the tool's raise is data)
            why = f"`{slot.request.name}` could not be run: {safe_description(e)}"
            self._finish(slot, failed(slot.request, why), warn=True)
        except BaseException as e:  # Ctrl-C or SystemExit outside the tool
            self._stop_inside(e)
            self._finish(slot, self._unfinished(slot))

    async def _call(self, slot: _Slot) -> None:
        tool, kwargs, semaphore = slot.tool, slot.kwargs, self._semaphore
        assert tool is not None and kwargs is not None and semaphore is not None
        async with semaphore:
            if not self._take_slot(slot):
                return
            timeout = tool.timeout if tool.timeout is not None else self.ctx.timeout
            try:
                work = _invoke(tool, kwargs, self.ctx.pool, self._yield_handler(slot), slot)
                outcome = await asyncio.wait_for(
                    self.ctx.observer.running(slot.request, work), timeout
                )
            except TimeoutError:
                why = f"`{tool.name}` timed out after {timeout:g} s; it was stopped waiting for."
                self._finish(slot, failed(slot.request, why), warn=True)
                return
            except asyncio.CancelledError:
                slot.closed = True
                with self._lock:  # before the semaphore is released: nothing starts now
                    self._stopping = True
                raise
        raised = isinstance(outcome, _Raised)
        if raised and not isinstance(outcome.error, Exception):
            self._stop_inside(outcome.error)  # Ctrl-C or SystemExit from the tool
        warn = raised and isinstance(outcome.error, Exception)
        self._finish(slot, _to_result(slot.request, outcome), warn=warn)

    def _yield_handler(self, slot: _Slot) -> Callable[[Any], None]:
        def handle(item: Any) -> None:
            if not slot.closed:
                self._emit(progress(slot.request, item))

        return handle

    def _stop_inside(self, fatal: BaseException) -> None:
        """Start nothing more and cancel the running calls; ``fatal`` is re-raised later."""
        self._fatal = self._fatal or fatal
        with self._lock:
            self._stopping = True
        current = asyncio.current_task()
        for slot in self._slots:
            if slot.task is not None and slot.task is not current and not slot.task.done():
                slot.task.cancel()

    def _cancel_all(self) -> None:
        for slot in self._slots:
            slot.closed = True  # a sync generator stops at its next yield
            if slot.task is not None and not slot.task.done():
                slot.task.cancel()
        if self._main is not None and not self._main.done():
            self._main.cancel()

    def _unfinished(self, slot: _Slot) -> ContentToolResult:
        if slot.index in self._started:
            return failed(slot.request, INTERRUPTED_RUNNING)
        return refused(slot.request, INTERRUPTED_PENDING)


async def _invoke(
    tool: Tool, kwargs: dict[str, Any], pool: WorkerPool, hand: Callable[[Any], None], slot: _Slot
) -> Any:
    if tool.is_async:
        try:
            return await _call_async(tool.func, kwargs, hand)
        except asyncio.CancelledError:
            raise
        except BaseException as e:  # a tool's raise, Ctrl-C included, is data here
            return _Raised(e)
    loop = asyncio.get_running_loop()

    def hand_over(item: Any) -> None:  # from the worker thread, in order, before the result
        loop.call_soon_threadsafe(hand, item)

    def halted() -> bool:
        return slot.closed

    return await asyncio.wrap_future(
        pool.submit(lambda: _call_sync(tool.func, kwargs, hand_over, halted))
    )


async def _call_async(
    func: Callable[..., Any], kwargs: dict[str, Any], hand: Callable[[Any], None]
) -> Any:
    if inspect.isasyncgenfunction(func):
        items: list[Any] = []
        async for item in func(**kwargs):
            items.append(item)
            hand(item)
        return _Yielded(items)
    return await func(**kwargs)


def _call_sync(
    func: Callable[..., Any],
    kwargs: dict[str, Any],
    hand: Callable[[Any], None],
    halted: Callable[[], bool],
) -> Any:
    try:
        value = func(**kwargs)
        if inspect.isgenerator(value):
            return _Yielded(_drain(value, hand, halted))  # pyright: ignore[reportUnknownArgumentType]
        if inspect.isawaitable(value):
            return _Raised(TypeError("a sync tool returned an awaitable; declare it `async def`"))
        return value
    except BaseException as e:  # runs in a worker thread: hand everything back as data
        return _Raised(e)


def _drain(generator: Any, hand: Callable[[Any], None], halted: Callable[[], bool]) -> list[Any]:
    items: list[Any] = []
    try:
        for item in generator:
            if halted():  # abandoned or timed out: nobody takes its yields any more
                break
            items.append(item)
            hand(item)
    finally:
        generator.close()
    return items


def _to_result(request: ContentToolRequest, outcome: Any) -> ContentToolResult:
    if isinstance(outcome, _Raised):
        error = outcome.error
        if isinstance(error, ToolRejectError):
            return rejected(request, error)
        if not isinstance(error, Exception):
            return failed(
                request, f"The call was interrupted: the tool raised {type(error).__name__}."
            )
        return ContentToolResult(error=error, outcome="exception", exception=error, request=request)
    if isinstance(outcome, _Yielded):
        return combine(request, outcome.items)
    if isinstance(outcome, ContentToolResult):
        return outcome if outcome.request is request else replace(outcome, request=request)
    return ContentToolResult(value=outcome, request=request)


async def _observe(
    result: ContentToolResult, ctx: ToolContext, progress: bool = False
) -> ContentToolResult:
    for callback in ctx.on_result:
        try:
            await call_callback(callback, result, ctx.pool)
        except Exception as e:
            why = (
                f"on_tool_result callback `{callback_name(callback)}` failed: {safe_description(e)}"
            )
            if progress or result.outcome != "success":  # nothing a retry could repeat
                what = "progress" if progress else f"result stays {result.outcome}"
                warnings.warn(f"{why} (the {what})", UserWarning, stacklevel=2)
                return result
            name = result.request.name if result.request is not None else "the tool"
            return warn_failure(
                replace(
                    result,
                    error=f"`{name}` ran, but its {why}. Do not call it again for this request.",
                    outcome="error",
                    message_expansion=None,
                )
            )
    return result


def warn_failure(result: ContentToolResult) -> ContentToolResult:
    """chatlas's ``ToolFailureWarning`` for a result that answers a call
    (:func:`~chatlas_like._core.redact.warn_tool_failure`); ``result`` unchanged."""
    name = result.request.name if result.request is not None else "?"
    warn_tool_failure(name, result.error)
    return result
