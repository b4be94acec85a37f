"""The two drivers of the turn loop: the only sync/async pair in the library.

Each performs the loop's steps (see :mod:`chatlas_like._run.loop`) with blocking I/O or
with ``await``, passes emitted items to its caller, and throws any failure back into
the loop, which repairs the history before the exception propagates. A tool round is
a :class:`~chatlas_like._tools.runner.ToolRound`: ``drive_async()`` awaits its
deliveries on the caller's loop; ``drive()`` asks for each on the private background
loop and waits in short polls, so Ctrl-C reaches the main thread between them. Either
way the loop gets each delivery as soon as it exists, and stops the round itself when
it ends early.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import AsyncIterator, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .._core.content_files import fetch_documents
from .._core.errors import RateLimitError
from .._core.turn import Turn
from .._tools.inline import InlineRound, runs_inline
from .._tools.observer import QUIET, Observer
from .._tools.runner import Delivery, Finished, ToolContext, ToolRound
from .._tools.workers import background_loop, submit_to_background
from ..providers._base import Provider
from ..providers._types import AsyncEventStream, EventStream, RequestSpec
from .limiter import Limiter
from .loop import END, Download, ModelCall, NextEvent, NextResult, Run, RunTools
from .retry import retry_delay

__all__ = [
    "PreparedCall",
    "Sender",
    "drive",
    "drive_async",
    "open_response",
    "open_response_async",
    "with_downloads",
]

_POLL_SECONDS = 0.1


@dataclass(frozen=True, slots=True)
class Sender:
    """What the drivers need besides the loop: the provider, tools, retry policy, gate."""

    provider: Provider
    tools: ToolContext
    max_retries: int = 3
    limiter: Limiter = field(default_factory=Limiter)
    # The loop finalises each delivery's results when it gets them (the store write);
    # with a store attached, the async driver hands it that step in a worker thread.
    blocking_results: bool = False
    observer: Observer = QUIET


@dataclass(frozen=True, slots=True)
class PreparedCall:
    """One call of a chat verb, ready for a driver (``Chat.prepare_call()``)."""

    run: Run
    sender: Sender
    prompt: Turn | None
    steps: Generator[Any, Any, None]  # the turn loop, to drive


def drive(loop: Generator[Any, Any, None], sender: Sender) -> Iterator[Any]:
    """Run ``loop`` with blocking I/O, yielding what it emits."""
    reply: Any = None
    error: BaseException | None = None
    events: EventStream | None = None
    tools: ToolRound | InlineRound | None = None
    try:
        while True:
            try:
                step = loop.send(reply) if error is None else loop.throw(error)
            except StopIteration:
                return
            reply = error = None
            try:
                if type(step) is NextEvent:
                    assert events is not None
                    reply = next(events, END)
                elif type(step) is NextResult:
                    assert tools is not None
                    reply = _next_blocking(tools)
                elif type(step) is ModelCall:
                    if events is not None:
                        events.close()
                    events = None
                    events = open_response(sender, step.body)
                elif type(step) is Download:
                    reply = fetch_documents(step.urls)
                elif type(step) is RunTools:
                    ctx = sender.tools
                    inline = runs_inline(step.requests, ctx)
                    reply = tools = (InlineRound if inline else ToolRound)(step.requests, ctx)
                else:
                    yield step
            except BaseException as e:
                error = e
    finally:
        loop.close()
        if events is not None:
            events.close()


async def drive_async(loop: Generator[Any, Any, None], sender: Sender) -> AsyncIterator[Any]:
    """Run ``loop`` with ``await``, yielding what it emits."""
    reply: Any = None
    error: BaseException | None = None
    events: AsyncEventStream | None = None
    tools: ToolRound | None = None
    try:
        while True:
            try:
                if error is not None:
                    step = loop.throw(error)
                elif sender.blocking_results and _finishes_calls(reply):
                    step = await _send_off_loop(loop, reply)
                    if step is _FINISHED:
                        return
                else:
                    step = loop.send(reply)
            except StopIteration:
                return
            reply = error = None
            try:
                if type(step) is NextEvent:
                    assert events is not None
                    reply = await anext(events, END)
                elif type(step) is NextResult:
                    assert tools is not None
                    reply = await tools.next()
                elif type(step) is ModelCall:
                    if events is not None:
                        await events.aclose()
                    events = None
                    events = await open_response_async(sender, step.body)
                elif type(step) is Download:
                    # A download takes the network's time: never on the event loop.
                    reply = await asyncio.to_thread(fetch_documents, step.urls)
                elif type(step) is RunTools:
                    reply = tools = ToolRound(step.requests, sender.tools)
                else:
                    yield step
            except BaseException as e:
                error = e
    finally:
        loop.close()
        if events is not None:
            await events.aclose()


async def _send_off_loop(loop: Generator[Any, Any, None], reply: Any) -> Any:
    """``loop.send(reply)`` in a worker thread (``_FINISHED`` when the loop ended).

    A cancellation waits for that step to end: the generator must not be resumed again
    while the thread still runs it.
    """
    future = asyncio.get_running_loop().run_in_executor(None, _send_or_finished, loop, reply)
    try:
        step = await asyncio.shield(future)
    except asyncio.CancelledError:
        await asyncio.wait([future])
        raise
    return step


class _Finished:
    __slots__ = ()


_FINISHED = _Finished()


def _send_or_finished(loop: Generator[Any, Any, None], reply: Any) -> Any:
    try:
        return loop.send(reply)
    except StopIteration:  # cannot cross a future: said as a value instead
        return _FINISHED


def open_response(sender: Sender, body: dict[str, Any]) -> EventStream:
    """Send ``body`` (through the limiter, with retries); the response's events."""
    sender.observer.request(body)
    attempt = 0
    while True:
        wait = sender.limiter.reserve()
        while wait > 0:  # a pause may begin while this request waits for its slot
            time.sleep(wait)
            wait = sender.limiter.paused_for()
        try:
            return sender.observer.send(sender.provider.open, body)
        except Exception as e:
            delay = _retry(sender, attempt, e)
        if delay > 0:
            time.sleep(delay)
        attempt += 1


async def open_response_async(sender: Sender, body: dict[str, Any]) -> AsyncEventStream:
    """:func:`open_response` with ``await``."""
    sender.observer.request(body)
    attempt = 0
    while True:
        wait = sender.limiter.reserve()
        while wait > 0:  # a pause may begin while this request waits for its slot
            await asyncio.sleep(wait)
            wait = sender.limiter.paused_for()
        try:
            return await sender.observer.send_async(sender.provider.open_async, body)
        except Exception as e:
            delay = _retry(sender, attempt, e)
        if delay > 0:
            await asyncio.sleep(delay)
        attempt += 1


def with_downloads(provider: Provider, turns: Sequence[Turn], spec: RequestSpec) -> RequestSpec:
    """``spec`` with the bytes ``provider`` needs to build a request for ``turns``,
    fetched now (for requests built outside the turn loop: token counts, batches)."""
    urls = provider.downloads(turns)
    return replace(spec, downloads=fetch_documents(urls)) if urls else spec


def _retry(sender: Sender, attempt: int, error: Exception) -> float:
    """Seconds this request waits before its retry, or re-raise ``error``.

    A rate limit pauses every request through the limiter (the whole batch slows
    down); other failures back off this request alone.
    """
    delay = retry_delay(attempt, error, sender.max_retries)
    if delay is None:
        raise error
    sender.observer.retrying(attempt + 1, delay, error)
    if isinstance(error, RateLimitError) or getattr(error, "retry_after", None) is not None:
        sender.limiter.pause(delay)
        return 0.0
    return delay


def _finishes_calls(reply: Any) -> bool:
    """Whether ``reply`` makes the loop finalise results (the store write)."""
    return type(reply) is Delivery and any(type(e) is Finished for e in reply.events)


def _next_blocking(tools: ToolRound | InlineRound) -> Delivery:
    if isinstance(tools, InlineRound):
        return tools.take()
    if tools.ctx.on_result:  # the callbacks run on the round's loop, before delivery
        future, cancel = submit_to_background(tools.next)
        try:
            return _wait(future)
        except BaseException:  # Ctrl-C while waiting: the loop stops the round
            cancel()
            raise
    if not tools.begun:
        tools.begin_in(background_loop())
    while True:  # short waits: Ctrl-C is handled between them (the loop stops the round)
        delivery = tools.take(_POLL_SECONDS)
        if delivery is not None:
            return delivery


def _wait(future: concurrent.futures.Future[Delivery]) -> Delivery:
    # Short waits keep the main thread returning to Python, where signals are handled.
    while True:
        try:
            return future.result(timeout=_POLL_SECONDS)
        except concurrent.futures.TimeoutError:
            continue
