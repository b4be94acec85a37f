"""The common case without hand-offs: one plain sync call, run in the caller's own thread.

``chat()`` with a single sync tool call, and nothing that needs an event loop (no
timeout, review hook, request or result callbacks, stop controller or tracing), runs
the call where the raw SDK would: in the thread that called ``chat()``, with no
background loop and no worker thread between them. Not where a loop already runs in
that thread (a notebook cell): there a tool that starts its own (``asyncio.run``)
would fail, so the call goes to a worker thread as any other. The turn loop cannot
tell: it gets the same deliveries (the call's start, then its result) as from a
:class:`~chatlas_like._tools.runner.ToolRound`, and Ctrl-C during the call answers it as
interrupted while running, as there, and a call that led to an error warns
``ToolFailureWarning`` as there.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Sequence
from typing import Any

from .._core.content import ContentToolRequest
from .._core.redact import safe_description
from .._core.tool_result import ContentToolResult, ContentToolResultProgress, failed, refused
from .observer import QUIET
from .runner import (
    INTERRUPTED_RUNNING,
    Delivery,
    Finished,
    Started,
    Stopped,
    ToolContext,
    _call_sync,
    _Raised,
    _Slot,
    _to_result,
    _validate,
    warn_failure,
)
from .tool import Tool
from .yields import progress

__all__ = ["InlineRound", "runs_inline"]


def runs_inline(requests: Sequence[ContentToolRequest], ctx: ToolContext) -> bool:
    """Whether a round is one plain sync call that may run in the caller's thread."""
    if len(requests) != 1 or ctx.review is not None or ctx.on_request or ctx.on_result:
        return False
    if ctx.timeout is not None or ctx.stop_requested is not None or ctx.observer is not QUIET:
        return False
    if _loop_running_here():  # a notebook cell: the tool could not start a loop of its own
        return False
    tool = ctx.tools.get(requests[0].name)
    return (
        isinstance(tool, Tool)
        and not tool.is_async
        and not tool.sequential  # its lock is the runner's, across chats
        and tool.timeout is None
        and not inspect.isgeneratorfunction(tool.func)
    )


def _loop_running_here() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class InlineRound:
    """One call run in the caller's thread: :meth:`take` delivers its start, then runs it."""

    def __init__(self, requests: Sequence[ContentToolRequest], ctx: ToolContext) -> None:
        self.ctx = ctx
        self._slot = _Slot(0, requests[0])
        self._running = False
        self._done = False

    def take(self) -> Delivery:
        """The next delivery: the call's start (or its refusal), then its result."""
        slot = self._slot
        if not self._running:
            result = _checked(slot, self.ctx)
            if result is not None:
                self._done = True
                return Delivery([Finished(0, warn_failure(result))], done=True)
            self._running = True
            return Delivery([Started(0, slot.request)])
        tool, kwargs = slot.tool, slot.kwargs
        assert tool is not None and kwargs is not None
        yielded: list[Any] = []  # a plain function that returned a generator
        outcome = _call_sync(tool.func, kwargs, yielded.append, lambda: False)
        self._done = True
        events: list[Finished | ContentToolResultProgress] = [
            progress(slot.request, item) for item in yielded
        ]
        if isinstance(outcome, _Raised) and not isinstance(outcome.error, Exception):
            # Ctrl-C or SystemExit landed in the call: answered as a stopped call is.
            events.append(Finished(0, failed(slot.request, INTERRUPTED_RUNNING)))
            return Delivery([*events], done=True, interrupt=outcome.error)
        result = _to_result(slot.request, outcome)
        if isinstance(outcome, _Raised):  # the tool raised: chatlas's ToolFailureWarning
            warn_failure(result)
        events.append(Finished(0, result))
        return Delivery([*events], done=True)

    def stop(self) -> Stopped:
        """Which call had started (none is running unless the caller's thread is in it)."""
        started = frozenset({0}) if self._running and not self._done else frozenset[int]()
        return Stopped(started, ())


def _checked(slot: _Slot, ctx: ToolContext) -> ContentToolResult | None:
    """The answer to a call that cannot run (unparsable or invalid arguments), as the
    runner gives it, or None with ``slot.tool`` and ``slot.kwargs`` set."""
    request = slot.request
    if request.parse_error is not None:
        return refused(request, request.parse_error)
    tool = ctx.tools[request.name]
    assert isinstance(tool, Tool)  # runs_inline() said so
    slot.tool = tool
    try:
        return _validate(slot, tool, request.arguments)
    except Exception as e:  # e.g. a pydantic validator raising TypeError
        return failed(request, f"`{request.name}` could not be checked: {safe_description(e)}")
