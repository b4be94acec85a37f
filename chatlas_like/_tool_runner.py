"""The tool runner: one turn's tool requests in, one result per request out, in call order.

It is async inside. ``drive_async()`` awaits it on the caller's loop; ``drive()`` runs
it on the private background loop. In both, async tools run as tasks and sync tools in
the chat's :class:`~chatlas_like._workers.WorkerPool`, never on the caller's loop.

A request goes through, in call order and before any tool of the turn starts:
lookup (unknown tool: refused), argument validation (refused), the review hook
(``Deny``: denied) and ``on_tool_request`` (``ToolRejectError``: refused; any other
exception: error naming the callback). Then the accepted calls run at once, up to
``max_concurrency``; a ``sequential`` tool waits for the running ones and runs alone.
``on_tool_result`` sees every result, in call order. A generator tool (sync or async)
answers its one request with one result that merges everything it yielded.

Cancellation (task cancelled, Ctrl-C in ``chat()``) returns what there is: finished
results kept, running calls answered ``error`` (interrupted while running), calls not
started answered ``refused``; the exception comes back in ``ToolsDone.interrupt`` for
the loop to raise once the history is repaired.
"""

from __future__ import annotations

import asyncio
import inspect
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ._callbacks import Allow, CallbackList, Deny, call_callback, callback_name
from ._content import ContentToolRequest
from ._errors import ToolRejectError
from ._redact import describe_error
from ._telemetry import QUIET, Observer
from ._tool_result import ContentToolResult, failed, refused, rejected
from ._tools import ArgumentError, Tool, ToolBuiltIn
from ._workers import WorkerPool

__all__ = ["ToolContext", "ToolsDone", "run_tools"]

INTERRUPTED_RUNNING = "The call was interrupted while running; it may have partly run."
INTERRUPTED_PENDING = "The call was not started: the chat was interrupted."


@dataclass(slots=True)
class ToolsDone:
    """What the runner hands back: results in call order, and an exception to re-raise."""

    results: list[ContentToolResult]
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


@dataclass(slots=True)
class _Slot:
    request: ContentToolRequest
    tool: Tool | None = None
    kwargs: dict[str, Any] | None = None
    result: ContentToolResult | None = None
    started: bool = False
    task: asyncio.Task[ContentToolResult] | None = None


@dataclass(slots=True)
class _Raised:
    error: BaseException


@dataclass(slots=True)
class _Yielded:
    """What a generator tool yielded, in order: merged into one result."""

    items: list[Any]


async def run_tools(requests: list[ContentToolRequest], ctx: ToolContext) -> ToolsDone:
    """Run one turn's tool requests; see the module docstring."""
    batch = _Batch([_Slot(request) for request in requests], ctx)
    try:
        for slot in batch.slots:
            await _prepare(slot, ctx)
        await batch.start_all()
        await batch.collect()
    except asyncio.CancelledError as cancelled:
        return ToolsDone(batch.salvage(), interrupt=cancelled)
    return ToolsDone([_require(slot.result) for slot in batch.slots], batch.fatal)


def _require(result: ContentToolResult | None) -> ContentToolResult:
    assert result is not None, "every slot has a result by now"
    return result


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
        request, f"{kind} callback `{callback_name(callback)}` failed: {describe_error(error)}"
    )


# -- running -------------------------------------------------------------------------------


class _Batch:
    """The accepted calls of one turn, run under one semaphore, stopped together."""

    def __init__(self, slots: list[_Slot], ctx: ToolContext) -> None:
        self.slots = slots
        self.ctx = ctx
        self.semaphore = asyncio.Semaphore(ctx.max_concurrency)
        self.stopping = False
        self.fatal: BaseException | None = None

    async def start_all(self) -> None:
        started: list[asyncio.Task[ContentToolResult]] = []
        for slot in self.slots:
            if slot.result is not None or slot.tool is None or self.stopping:
                continue
            if slot.tool.sequential:  # alone: after the running calls, before the next ones
                if started:
                    await asyncio.wait(started)
                    started = []
                slot.task = asyncio.create_task(self.run_one(slot))
                await asyncio.wait([slot.task])
            else:
                slot.task = asyncio.create_task(self.run_one(slot))
                started.append(slot.task)

    async def run_one(self, slot: _Slot) -> ContentToolResult:
        tool, kwargs = slot.tool, slot.kwargs
        assert tool is not None and kwargs is not None
        async with self.semaphore:
            if self.stopping:
                return refused(slot.request, INTERRUPTED_PENDING)
            slot.started = True
            timeout = tool.timeout if tool.timeout is not None else self.ctx.timeout
            try:
                work = self.ctx.observer.running(slot.request, _invoke(tool, kwargs, self.ctx.pool))
                outcome = await asyncio.wait_for(work, timeout)
            except TimeoutError:
                return failed(
                    slot.request,
                    f"`{tool.name}` timed out after {timeout:g} s; it was stopped waiting for.",
                )
            except asyncio.CancelledError:
                self.stopping = True  # before the semaphore is released: nothing starts now
                raise
        if isinstance(outcome, _Raised) and not isinstance(outcome.error, Exception):
            self.stop(outcome.error)  # Ctrl-C or SystemExit from the tool ends the batch
        return _to_result(slot.request, outcome)

    def stop(self, fatal: BaseException) -> None:
        """Start nothing more and cancel the running calls; ``fatal`` is re-raised later."""
        self.fatal = self.fatal or fatal
        self.stopping = True
        current = asyncio.current_task()
        for slot in self.slots:
            if slot.task is not None and slot.task is not current and not slot.task.done():
                slot.task.cancel()

    async def collect(self) -> None:
        """Results in call order, each seen by ``on_tool_result`` as it is taken."""
        for slot in self.slots:
            if slot.task is not None:
                await asyncio.wait([slot.task])
                slot.result = _unfinished(slot) if slot.task.cancelled() else slot.task.result()
            elif slot.result is None:
                slot.result = refused(slot.request, INTERRUPTED_PENDING)
            slot.result = await _observe(slot.result, self.ctx)

    def salvage(self) -> list[ContentToolResult]:
        """After a cancellation: what finished, and an answer for everything else."""
        self.stopping = True
        results: list[ContentToolResult] = []
        for slot in self.slots:
            task = slot.task
            if task is not None and task.done() and not task.cancelled():
                results.append(task.result())
            elif task is None and slot.result is not None:
                results.append(slot.result)
            else:
                results.append(_unfinished(slot))
            if task is not None and not task.done():
                task.cancel()
        return results


def _unfinished(slot: _Slot) -> ContentToolResult:
    if slot.started:
        return failed(slot.request, INTERRUPTED_RUNNING)
    return refused(slot.request, INTERRUPTED_PENDING)


async def _invoke(tool: Tool, kwargs: dict[str, Any], pool: WorkerPool) -> Any:
    if tool.is_async:
        try:
            return await _call_async(tool.func, kwargs)
        except asyncio.CancelledError:
            raise
        except BaseException as e:  # a tool's raise, Ctrl-C included, is data here
            return _Raised(e)
    return await asyncio.wrap_future(pool.submit(lambda: _call_sync(tool.func, kwargs)))


async def _call_async(func: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    if inspect.isasyncgenfunction(func):
        return _Yielded([item async for item in func(**kwargs)])
    return await func(**kwargs)


def _call_sync(func: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    try:
        value = func(**kwargs)
        if inspect.isgenerator(value):
            return _Yielded(list(value))  # pyright: ignore[reportUnknownArgumentType]
        if inspect.isawaitable(value):
            return _Raised(TypeError("a sync tool returned an awaitable; declare it `async def`"))
        return value
    except BaseException as e:  # runs in a worker thread: hand everything back as data
        return _Raised(e)


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
        return _merge_yielded(request, outcome.items)
    if isinstance(outcome, ContentToolResult):
        return outcome if outcome.request is request else replace(outcome, request=request)
    return ContentToolResult(value=outcome, request=request)


def _merge_yielded(request: ContentToolRequest, items: list[Any]) -> ContentToolResult:
    """One result for everything a generator tool yielded (one request, one answer).

    Plain values become one list value, formatted as a whole. When results are among
    them, each keeps its own ``model_format`` and the model reads them in order, as
    the blocks of one tool_result; the first failed one decides the outcome; ``extra``
    is the list of their extras; ``options`` are merged, later ones winning.
    """
    if len(items) == 1:
        return _to_result(request, items[0])
    results = [item for item in items if isinstance(item, ContentToolResult)]
    if not results:
        return ContentToolResult(value=items, request=request)
    values = [item.value if isinstance(item, ContentToolResult) else item for item in items]
    extras = [item.extra for item in results if item.extra is not None]
    options: dict[str, Any] = {}
    for item in results:
        options.update(item.options or {})
    failure = next((item for item in results if item.outcome != "success"), None)
    merged = ContentToolResult(
        value=values,
        model_format="as_is",
        error=failure.error if failure is not None else None,
        extra=extras or None,
        request=request,
        options=options or None,
        outcome=failure.outcome if failure is not None else "success",
        exception=failure.exception if failure is not None else None,
    )
    if failure is not None:
        return merged
    blocks: list[Any] = []
    for item in items:
        part = item if isinstance(item, ContentToolResult) else ContentToolResult(value=item)
        try:
            model_value = part.get_model_value()
        except Exception as e:  # the Finalizer words it the same way for a plain result
            return replace(failed(request, f"a yielded value has no model form: {e}"), value=values)
        blocks.extend(model_value if isinstance(model_value, list) else [model_value])  # pyright: ignore[reportUnknownArgumentType]
    return merged.with_model_value(blocks)


async def _observe(result: ContentToolResult, ctx: ToolContext) -> ContentToolResult:
    for callback in ctx.on_result:
        try:
            await call_callback(callback, result, ctx.pool)
        except Exception as e:
            why = f"on_tool_result callback `{callback_name(callback)}` failed: {describe_error(e)}"
            if result.outcome != "success":  # nothing ran that a retry could repeat
                warnings.warn(
                    f"{why} (the result stays {result.outcome})", UserWarning, stacklevel=2
                )
                return result
            name = result.request.name if result.request is not None else "the tool"
            return replace(
                result,
                error=f"`{name}` ran, but its {why}. Do not call it again for this request.",
                outcome="error",
                message_expansion=None,
            )
    return result
