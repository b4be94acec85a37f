"""The two drivers of the turn loop: the only sync/async pair in the library.

Each performs the loop's steps (see :mod:`chatlas_like._loop`) with blocking I/O or
with ``await``, passes emitted items to its caller, and throws any failure back into
the loop, which repairs the history before the exception propagates. ``drive()`` runs
the async tool runner on the private background loop; ``drive_async()`` awaits it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Generator, Iterator
from typing import Any

from ._loop import END, ModelCall, RunTools, _NextEvent
from ._retry import retry_delay
from ._tool_runner import ToolContext, ToolsDone, run_tools
from ._workers import submit_to_background
from .providers._base import AsyncEventStream, EventStream, Provider

__all__ = ["drive", "drive_async"]


def drive(
    loop: Generator[Any, Any, None], provider: Provider, tools: ToolContext, max_retries: int
) -> Iterator[Any]:
    """Run ``loop`` with blocking I/O, yielding what it emits."""
    reply: Any = None
    error: BaseException | None = None
    events: EventStream | None = None
    try:
        while True:
            try:
                step = loop.send(reply) if error is None else loop.throw(error)
            except StopIteration:
                return
            reply = error = None
            try:
                if type(step) is _NextEvent:
                    assert events is not None
                    reply = next(events, END)
                elif type(step) is ModelCall:
                    if events is not None:
                        events.close()
                    events = None
                    events = _open(provider, step.body, max_retries)
                elif type(step) is RunTools:
                    reply = _run_tools_blocking(step.requests, tools)
                else:
                    yield step
            except BaseException as e:
                error = e
    finally:
        loop.close()
        if events is not None:
            events.close()


async def drive_async(
    loop: Generator[Any, Any, None], provider: Provider, tools: ToolContext, max_retries: int
) -> AsyncIterator[Any]:
    """Run ``loop`` with ``await``, yielding what it emits."""
    reply: Any = None
    error: BaseException | None = None
    events: AsyncEventStream | None = None
    try:
        while True:
            try:
                step = loop.send(reply) if error is None else loop.throw(error)
            except StopIteration:
                return
            reply = error = None
            try:
                if type(step) is _NextEvent:
                    assert events is not None
                    reply = await anext(events, END)
                elif type(step) is ModelCall:
                    if events is not None:
                        await events.aclose()
                    events = None
                    events = await _open_async(provider, step.body, max_retries)
                elif type(step) is RunTools:
                    done = await run_tools(step.requests, tools)
                    reply = done
                else:
                    yield step
            except BaseException as e:
                error = e
    finally:
        loop.close()
        if events is not None:
            await events.aclose()


def _open(provider: Provider, body: dict[str, Any], max_retries: int) -> EventStream:
    attempt = 0
    while True:
        try:
            return provider.open(body)
        except Exception as e:
            delay = retry_delay(attempt, e, max_retries)
            if delay is None:
                raise
        time.sleep(delay)
        attempt += 1


async def _open_async(
    provider: Provider, body: dict[str, Any], max_retries: int
) -> AsyncEventStream:
    attempt = 0
    while True:
        try:
            return await provider.open_async(body)
        except Exception as e:
            delay = retry_delay(attempt, e, max_retries)
            if delay is None:
                raise
        await asyncio.sleep(delay)
        attempt += 1


def _run_tools_blocking(requests: list[Any], tools: ToolContext) -> ToolsDone:
    future, cancel = submit_to_background(lambda: run_tools(requests, tools))
    try:
        return future.result()
    except BaseException as interrupt:  # Ctrl-C while tools run: collect what there is
        cancel()
        done = future.result()
        done.interrupt = interrupt
        return done
