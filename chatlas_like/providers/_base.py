"""The provider protocol: pure translation, plus a thin send.

A provider turns turns into a request body (``build_request``) and provider events into
an assistant turn (``accumulator``), with no I/O, so both are tested on fixtures. Its
send side is small: ``open`` / ``open_async`` post a body and return the response as
an iterator of event dicts; a non-streamed response is replayed as the same events, so
streaming and non-streaming answers go through one processing path. Provider errors
are translated into :mod:`chatlas_like._core.errors` in one place per provider.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import (
    IO,
    TYPE_CHECKING,
    Any,
    ClassVar,
    NamedTuple,
    Protocol,
    Required,
    TypedDict,
    runtime_checkable,
)

from .._core.content import Content
from .._core.turn import AssistantTurn, Turn

if TYPE_CHECKING:
    from .._core.content import ContentUploaded
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
    "Provider",
    "ProviderBase",
    "RequestSpec",
    "TokenPrice",
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
    """What a provider can do besides answering, declared once (``provider.capabilities``).

    Each flag promises the :class:`ProviderBase` methods named beside it; a chat asks
    these flags, never the provider's name or type.
    """

    list_models: bool = False  # list_models()
    count_tokens: bool = False  # count_tokens()
    files: bool = False  # file_upload(), file_list(), file_get(), file_delete(), file_download()
    batches: bool = (
        False  # batch_submit(), batch_retrieve(), batch_status(), batch_results(), batch_answer()
    )
    thinking: bool = False  # extended thinking (its settings are in saved_settings())
    paused_finish_reasons: frozenset[str] = frozenset()
    """Finish reasons that mean "paused: send the conversation again to continue"."""
    server_tools: frozenset[str] = frozenset()
    """Names of the built-in tools the provider runs itself (``web_search``...)."""


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


@runtime_checkable
class Provider(Protocol):
    """What a chat needs from a model provider."""

    name: str  # chatlas's name of the provider, as people read it ("Anthropic")
    label: str  # the same name (an earlier attribute of ours)
    model: str

    @property
    def key(self) -> str:
        """The lowercase key of prices, token usage, saved chats, uploaded files and
        telemetry (``"anthropic"``)."""
        ...

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

    capabilities: Capabilities

    def list_models(self) -> list[ModelInfo]:
        """The models the provider offers, newest first."""
        ...

    def count_tokens(self, body: dict[str, Any]) -> int:
        """Input tokens of a request body."""
        ...

    def supports_prefill(self) -> bool:
        """Whether the model accepts a conversation ending with an assistant message."""
        ...

    def context_window(self) -> int | None:
        """Input tokens the model takes at most (the chat elides old results before a
        request would exceed it); None when unknown."""
        ...

    def supported_model_params(self) -> set[str]:
        """The names ``Chat.set_model_params()`` may set (chatlas's names)."""
        ...

    def saved_settings(self) -> dict[str, Any]:
        """What a saved chat keeps of this provider (never a key, endpoint or client)."""
        ...

    def file_upload(self, source: FileSource) -> ContentUploaded: ...
    def file_list(self) -> list[FileMetadata]: ...
    def file_get(self, file_id: str) -> FileMetadata: ...
    def file_delete(self, file_id: str) -> None: ...
    def file_download(self, file_id: str) -> bytes: ...
    def batch_submit(self, bodies: Mapping[str, dict[str, Any]]) -> dict[str, Any]: ...
    def batch_retrieve(self, batch_id: str) -> dict[str, Any]: ...
    def batch_status(self, batch: Mapping[str, Any]) -> BatchStatus: ...
    def batch_results(self, batch_id: str) -> list[dict[str, Any]]: ...
    def batch_answer(self, line: Mapping[str, Any], spec: RequestSpec) -> BatchAnswer: ...

    def warm_up(self) -> None:
        """Load the SDK and make the client now (the console does, before its first prompt,
        so a Ctrl-C never lands inside an import)."""
        ...

    def close(self) -> None:
        """Release pooled connections."""
        ...

    async def close_async(self) -> None:
        """Release pooled connections, the running event loop's included."""
        ...


class ProviderBase(ABC):
    """A provider's base: each capability (:class:`Capabilities`) defaults to "not supported".

    Subclasses set ``name`` (and ``label``, the same), ``model`` and ``capabilities``,
    implement :class:`Provider`'s four required methods (``build_request``,
    ``accumulator``, ``open``, ``open_async``) and override the methods of the
    capabilities they declare. Register a provider that chat files may name in
    :mod:`chatlas_like.providers._registry`, and its prices in
    :mod:`chatlas_like.providers._prices`.
    """

    name: str = "Provider"
    label: str = "Provider"
    model: str = ""
    capabilities: Capabilities = Capabilities()
    # What a chat file may say of this provider: {setting: the annotation its value must
    # match}; anything else in the file is ignored, with a warning.
    saved_fields: ClassVar[Mapping[str, str]] = {"model": "str"}

    @abstractmethod
    def build_request(self, turns: Sequence[Turn], spec: RequestSpec) -> dict[str, Any]: ...
    @abstractmethod
    def accumulator(self, spec: RequestSpec | None = None) -> Accumulator: ...
    @abstractmethod
    def open(self, body: dict[str, Any]) -> EventStream: ...
    @abstractmethod
    async def open_async(self, body: dict[str, Any]) -> AsyncEventStream: ...

    @property
    def key(self) -> str:
        """The provider's key (its name in lower case): what prices, token usage, saved
        chats, uploaded files and telemetry are keyed on, the one place it is made."""
        return self.name.lower()

    def _unsupported(self, what: str) -> NotImplementedError:
        return NotImplementedError(f"the {self.label} provider cannot {what}")

    def list_models(self) -> list[ModelInfo]:
        raise self._unsupported("list its models")

    def count_tokens(self, body: dict[str, Any]) -> int:
        raise self._unsupported("count tokens")

    def supports_prefill(self) -> bool:
        return True

    def context_window(self) -> int | None:
        """Input tokens the model takes at most; None when unknown."""
        return None

    def supported_model_params(self) -> set[str]:
        return set()

    def saved_settings(self) -> dict[str, Any]:
        return {"model": self.model}

    @classmethod
    def from_saved(
        cls, settings: Mapping[str, Any], *, api_key: str | None, base_url: str | None
    ) -> ProviderBase:
        """The provider a chat file describes (``settings`` already checked against
        :attr:`saved_fields`); ``TypeError`` or ``ValueError`` for settings it refuses."""
        raise NotImplementedError(f"the {cls.label} provider cannot be rebuilt from a chat file")

    def file_upload(self, source: FileSource) -> ContentUploaded:
        raise self._unsupported("host files (it has no files API)")

    def file_list(self) -> list[FileMetadata]:
        raise self._unsupported("host files (it has no files API)")

    def file_get(self, file_id: str) -> FileMetadata:
        raise self._unsupported("host files (it has no files API)")

    def file_delete(self, file_id: str) -> None:
        raise self._unsupported("host files (it has no files API)")

    def file_download(self, file_id: str) -> bytes:
        raise self._unsupported("host files (it has no files API)")

    def batch_submit(self, bodies: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        raise self._unsupported("answer in batches")

    def batch_retrieve(self, batch_id: str) -> dict[str, Any]:
        raise self._unsupported("answer in batches")

    def batch_status(self, batch: Mapping[str, Any]) -> BatchStatus:
        raise self._unsupported("answer in batches")

    def batch_results(self, batch_id: str) -> list[dict[str, Any]]:
        raise self._unsupported("answer in batches")

    def batch_answer(self, line: Mapping[str, Any], spec: RequestSpec) -> BatchAnswer:
        raise self._unsupported("answer in batches")

    def warm_up(self) -> None:
        return None

    def close(self) -> None:
        return None

    async def close_async(self) -> None:
        self.close()
