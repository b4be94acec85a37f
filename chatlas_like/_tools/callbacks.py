"""Callbacks around tool calls: observers, and the one review hook that decides.

``on_tool_request`` and ``on_tool_result`` observe (and may raise
:class:`~chatlas_like.ToolRejectError` to turn a request down); ``on_tool_review``
decides, returning :class:`Allow` or :class:`Deny`. All may be sync or async.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .workers import WorkerPool

__all__ = ["Allow", "CallbackList", "Deny", "ReviewDecision", "call_callback", "callback_name"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Allow:
    """Let the call run, optionally with changed arguments.

    Parameters
    ----------
    arguments
        Arguments to use instead of the model's (validated like the model's).
    """

    arguments: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Deny:
    """Do not run the call. A decision, not a fault: the result's ``is_error`` is false.

    Parameters
    ----------
    reason
        What the model reads.
    """

    reason: str = "The call was denied by the user."


ReviewDecision = Allow | Deny


class CallbackList(Generic[T]):
    """Callbacks in registration order; ``add`` returns a function that removes one."""

    def __init__(self) -> None:
        self._callbacks: list[Callable[[T], Any]] = []

    def add(self, callback: Callable[[T], Any]) -> Callable[[], None]:
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    def __iter__(self) -> Any:
        return iter(tuple(self._callbacks))

    def __bool__(self) -> bool:
        return bool(self._callbacks)

    def copy(self) -> CallbackList[T]:
        new: CallbackList[T] = CallbackList()
        new._callbacks = list(self._callbacks)
        return new


async def call_callback(fn: Callable[..., Any], arg: Any, pool: WorkerPool) -> Any:
    """Await an async callback; run a sync one in a worker thread, then await what it returns.

    A sync callback may block (an approval prompt, an HTTP call): in a worker thread it
    holds up neither the caller's event loop nor the tools of other chats.
    """
    if inspect.iscoroutinefunction(fn):
        return await fn(arg)
    result = await asyncio.wrap_future(pool.submit(lambda: fn(arg)))
    if inspect.isawaitable(result):
        awaitable: Awaitable[Any] = result
        return await awaitable
    return result


def callback_name(fn: Callable[..., Any]) -> str:
    """A readable name for a callback, for messages."""
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn))
