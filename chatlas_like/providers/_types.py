"""The values a provider and the chat exchange: what a request needs, what a response
becomes, and the provider's files, batches, models and prices.

Plain data and protocols of plain objects, with no behaviour of a provider: the contract
itself is :class:`~chatlas_like.providers.Provider` (``_base.py``).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import IO, Any, NamedTuple, Protocol, Required, TypedDict

from .._core.content import Content
from .._core.turn import AssistantTurn
from .._tools.tool import Tool, ToolBuiltIn

__all__ = [
    "Accumulator",
    "AsyncEventStream",
    "BatchAnswer",
    "BatchStatus",
    "Capabilities",
    "EventStream",
    "FileMetadata",
    "FileSource",
    "ModelInfo",
    "RequestSpec",
    "TokenPrice",
]


@dataclass(slots=True)
class RequestSpec:
    """Everything a request needs besides the turns.

    ``data_model`` (a pydantic model class) asks for the answer as structured data
    in that model's shape. ``downloads`` holds the bytes of the URLs the provider's
    ``downloads()`` named, so that building the request does no I/O.
    """

    system_prompt: str | None = None
    tools: Sequence[Tool | ToolBuiltIn] = ()
    stream: bool = True
    params: dict[str, Any] = field(default_factory=lambda: {})
    kwargs: dict[str, Any] = field(default_factory=lambda: {})
    data_model: type[Any] | None = None
    # The bytes of what ``Provider.downloads()`` named, by URL, fetched by the driver.
    downloads: Mapping[str, bytes] = field(default_factory=lambda: {})
    # Tool call ids whose results this request sends whole for the last time (the next
    # sends references): a provider placing cache breakpoints ends the cache before them.
    transient: frozenset[str] = frozenset()


class ModelInfo(TypedDict, total=False):
    """A model the provider offers (a dict, as in chatlas: ``info["id"]``)."""

    id: Required[str]
    name: str
    created_at: date
    provider: str
    input: float | None
    output: float | None
    cached_input: float | None


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
        """What arrived so far as a partial turn with ``partial_reason=reason`` (its
        ``finish_reason`` None, as chatlas's), or None if nothing did."""
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


@dataclass(frozen=True, slots=True)
class FileMetadata:
    """What the provider knows about an uploaded file.

    Parameters
    ----------
    id
        The provider's file id (``ContentUploaded.id``).
    filename, mime_type, size_bytes, created_at, expires_at
        As the provider reports them.
    provider
        The provider's name.
    extra
        The provider's full record, as plain data.
    """

    id: str
    filename: str | None = None
    mime_type: str | None = None
    size_bytes: int | None = None
    created_at: datetime | None = None
    expires_at: datetime | None = None
    provider: str = ""
    extra: dict[str, Any] = field(default_factory=lambda: {})


@dataclass(frozen=True, slots=True)
class FileSource:
    """A file's bytes, name and media type, ready to upload."""

    filename: str
    data: bytes
    mime_type: str

    @classmethod
    def read(
        cls, file: str | os.PathLike[str] | IO[bytes], mime_type: str | None = None
    ) -> FileSource:
        """Read a path or a binary file object (left open: the caller owns it)."""
        if isinstance(file, (str, os.PathLike)):
            path = Path(file)
            if not path.is_file():
                raise FileNotFoundError(f"no file at {path}")
            name, data = path.name, path.read_bytes()
        else:
            name = Path(str(getattr(file, "name", "") or "upload")).name
            data = file.read()
        import mimetypes  # only an upload needs it

        guessed = mimetypes.guess_type(name)[0]
        return cls(name, data, mime_type or guessed or "application/octet-stream")


class TokenPrice(NamedTuple):
    """A model's prices in USD per million tokens."""

    input: float
    output: float
    cached_input: float


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What the chat asks of a provider beyond its methods, declared once
    (``provider.capabilities``); a chat reads these, never the provider's name or type.

    Each field is read outside ``providers/`` (the architecture test checks it): a
    capability that only a provider method needs is that method, raising
    ``NotImplementedError`` by default (see :class:`~chatlas_like.providers.Provider`).
    """

    batches: bool = False
    """Whether ``batch_chat`` may send this provider's requests as one batch (the
    provider implements the ``batch_*`` methods)."""
    paused_finish_reasons: frozenset[str] = frozenset()
    """Finish reasons that mean "paused: send the conversation again to continue"."""


@dataclass(frozen=True, slots=True)
class BatchStatus:
    """Where a submitted batch stands, in counts of requests."""

    id: str
    ended: bool
    processing: int = 0
    succeeded: int = 0
    failed: int = 0


@dataclass(frozen=True, slots=True)
class BatchAnswer:
    """One request's outcome in a batch's results: its answer, or why there is none."""

    request_id: str
    turn: AssistantTurn | None
    error: str | None = None
