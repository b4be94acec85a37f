"""The hooks one chat call offers to whoever watches it, and :data:`QUIET`, which watches nothing.

The loop, the drivers, the tool runner and the finaliser call these hooks; the
implementation that logs and traces (:mod:`chatlas_like._observe.telemetry`) sits above
them, so the layers that do the work never import the ones that watch it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .._core.content import ContentToolRequest
    from .._core.tool_result import ContentToolResult, WholeResult
    from .._core.turn import AssistantTurn

__all__ = ["QUIET", "Observer"]

A = TypeVar("A")
T = TypeVar("T")


class Observer:
    """The hooks of one call; this base, :data:`QUIET`, does nothing."""

    __slots__ = ()

    def begin(self) -> None:
        """The call's first step."""

    def failed(self, error: BaseException) -> None:
        """The call ends by raising ``error`` (:meth:`end` follows)."""

    def end(self) -> None:
        """The call is over."""

    def request(self, body: Mapping[str, Any]) -> None:
        """A model request is about to be sent (before its first attempt)."""

    def send(self, fn: Callable[[A], T], body: A) -> T:
        """``fn(body)``: one attempt to send the request."""
        return fn(body)

    def send_async(self, fn: Callable[[A], Awaitable[T]], body: A) -> Awaitable[T]:
        """``fn(body)``, awaitable: one attempt to send the request."""
        return fn(body)

    def retrying(self, retry: int, delay: float, error: BaseException) -> None:
        """Attempt ``retry + 1`` follows in ``delay`` seconds, after ``error``."""

    def response(self, turn: AssistantTurn) -> None:
        """The request's answer is complete."""

    def running(self, request: ContentToolRequest, work: Awaitable[T]) -> Awaitable[T]:
        """``work``, the execution of ``request``'s tool."""
        return work

    def keeping(self, keep: Callable[[A], T], batch: A) -> T:
        """``keep(batch)``: the store write of a batch of results."""
        return keep(batch)

    def finalized(
        self, run_id: str, batch: Sequence[WholeResult], results: Sequence[ContentToolResult]
    ) -> None:
        """``results`` are final (cut, numbered, stored); ``batch`` has their sequences."""

    def expanded(self, result: ContentToolResult, inserted: int) -> None:
        """An expansion inserted ``inserted`` messages (0: not applied)."""


QUIET = Observer()
