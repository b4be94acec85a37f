"""The provider protocol: pure translation, plus a thin send.

A provider turns turns into a request body (``build_request``) and provider events into
an assistant turn (``accumulator``), with no I/O, so both are tested on fixtures. Its
send side is small: ``open`` / ``open_async`` post a body and return the response as
an iterator of event dicts; a non-streamed response is replayed as the same events, so
streaming and non-streaming answers go through one processing path. Provider errors
are translated into :mod:`chatlas_like._core.errors` in one place per provider.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Protocol, Required, TypedDict, runtime_checkable

from .._core.content import Content
from .._core.turn import AssistantTurn, Turn
from .._tools.tool import Tool, ToolBuiltIn

__all__ = [
    "Accumulator",
    "AsyncEventStream",
    "EventStream",
    "ModelInfo",
    "Provider",
    "RequestSpec",
]


@dataclass(slots=True)
class RequestSpec:
    """Everything a request needs besides the turns.

    ``data_model`` (a pydantic model class) asks for the answer as structured data
    in that model's shape.
    """

    system_prompt: str | None = None
    tools: Sequence[Tool | ToolBuiltIn] = ()
    stream: bool = True
    params: dict[str, Any] = field(default_factory=lambda: {})
    kwargs: dict[str, Any] = field(default_factory=lambda: {})
    data_model: type[Any] | None = None


class ModelInfo(TypedDict, total=False):
    """A model the provider offers (a dict, as in chatlas: ``info["id"]``)."""

    id: Required[str]
    name: str
    created_at: date
    provider: str


class Accumulator(Protocol):
    """Builds one assistant turn from provider events."""

    complete: bool

    def feed(self, event: dict[str, Any]) -> str | Content | tuple[Content, ...] | None:
        """Take one event; return a text delta, a finished content block (or several, e.g.
        the citations of a finished text), or None."""
        ...

    def turn(self) -> AssistantTurn:
        """The finished turn (after the last event)."""
        ...

    def partial_turn(self, reason: str = "interrupted") -> AssistantTurn | None:
        """What arrived so far as an ``"incomplete"`` turn with ``partial_reason=reason``,
        or None if nothing did."""
        ...


class EventStream(Protocol):
    """A response as provider events; ``close()`` releases the connection."""

    def __iter__(self) -> Iterator[dict[str, Any]]: ...
    def __next__(self) -> dict[str, Any]: ...
    def close(self) -> None: ...


class AsyncEventStream(Protocol):
    """The async twin of :class:`EventStream`."""

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]: ...
    async def __anext__(self) -> dict[str, Any]: ...
    async def aclose(self) -> None: ...


@runtime_checkable
class Provider(Protocol):
    """What a chat needs from a model provider."""

    name: str  # the key of prices, token usage and saved chats ("anthropic")
    label: str  # the name people read, as chatlas prints it ("Anthropic")
    model: str

    def build_request(self, turns: Sequence[Turn], spec: RequestSpec) -> dict[str, Any]:
        """The request body for ``turns`` (pure)."""
        ...

    def accumulator(self, spec: RequestSpec | None = None) -> Accumulator:
        """A fresh accumulator for one response to a request built from ``spec`` (pure)."""
        ...

    def open(self, body: dict[str, Any]) -> EventStream:
        """Send ``body``; the response as events. Raises ``ProviderError``."""
        ...

    async def open_async(self, body: dict[str, Any]) -> AsyncEventStream:
        """Send ``body`` without blocking; the response as events."""
        ...
