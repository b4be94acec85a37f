"""The provider contract: pure translation, plus a thin send.

A provider turns turns into a request body (``build_request``) and provider events into
an assistant turn (``accumulator``), with no I/O, so both are tested on fixtures. Its
send side is small: ``open`` / ``open_async`` post a body and return the response as
an iterator of event dicts; a non-streamed response is replayed as the same events, so
streaming and non-streaming answers go through one processing path. Provider errors
are translated into :mod:`chatlas_like._core.errors` in one place per provider.

The four required methods come first; every other method has its default here, once:
"not supported" (``NotImplementedError`` naming the provider) or the neutral answer.
The values they exchange are in :mod:`chatlas_like.providers._types`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from .._core.turn import Turn
from ._types import (
    Accumulator,
    AsyncEventStream,
    BatchAnswer,
    BatchStatus,
    Capabilities,
    EventStream,
    FileMetadata,
    FileSource,
    ModelInfo,
    RequestSpec,
    TokenPrice,
)

if TYPE_CHECKING:
    from .._core.content import ContentUploaded

__all__ = ["Provider", "ProviderBase"]


class Provider(ABC):
    """What a chat needs from a model provider (chatlas's ``Provider`` base class).

    A provider sets ``name`` (and ``label``, the same), ``model`` and, when it can do
    more than answer, ``capabilities``; it implements the four abstract methods and
    overrides the optional ones it supports. To let chat files name it, it adds one line
    to :mod:`chatlas_like.providers._registry`; its prices, SDK loggers and saved
    settings are class attributes here, read from the class.
    """

    name: str = "Provider"  # chatlas's name of the provider, as people read it
    label: str = "Provider"  # the same name (an earlier attribute of ours)
    model: str = ""
    capabilities: Capabilities = Capabilities()
    # What a chat file may say of this provider: {setting: the annotation its value must
    # match}; anything else in the file is ignored, with a warning.
    saved_fields: ClassVar[Mapping[str, str]] = {"model": "str"}
    # USD per million tokens, by model id (a dated id costs what its undated one does).
    prices: ClassVar[Mapping[str, TokenPrice]] = {}
    # The top loggers of the SDK and its HTTP client: CHATLAS_LOG turns them on, and
    # they are redacted as ours are.
    sdk_loggers: ClassVar[tuple[str, ...]] = ()

    # -- required ----------------------------------------------------------------------

    @abstractmethod
    def build_request(self, turns: Sequence[Turn], spec: RequestSpec) -> dict[str, Any]:
        """The request body for ``turns`` (pure: no I/O; what must be fetched first is
        named by :meth:`downloads` and arrives in ``spec.downloads``)."""

    @abstractmethod
    def accumulator(self, spec: RequestSpec | None = None) -> Accumulator:
        """A fresh accumulator for one response to a request built from ``spec`` (pure)."""

    @abstractmethod
    def open(self, body: dict[str, Any]) -> EventStream:
        """Send ``body``; the response as events. Raises ``ProviderError``."""

    @abstractmethod
    async def open_async(self, body: dict[str, Any]) -> AsyncEventStream:
        """Send ``body`` without blocking; the response as events."""

    # -- optional, with their defaults -------------------------------------------------

    @property
    def key(self) -> str:
        """The provider's key (its name in lower case): what prices, token usage, saved
        chats, uploaded files and telemetry are keyed on, the one place it is made."""
        return self.name.lower()

    def downloads(self, turns: Sequence[Turn]) -> list[str]:
        """URLs whose bytes :meth:`build_request` needs for ``turns`` (none by default).

        The chat's driver fetches them before building the request (off the event
        loop, recorded by a durable run) and passes them in ``RequestSpec.downloads``.
        """
        return []

    def supports_prefill(self) -> bool:
        """Whether the model accepts a conversation ending with an assistant message."""
        return True

    def context_window(self) -> int | None:
        """Input tokens the model takes at most (the chat elides old results before a
        request would exceed it); None when unknown."""
        return None

    def supported_model_params(self) -> set[str]:
        """The names ``Chat.set_model_params()`` may set (chatlas's names)."""
        return set()

    def saved_settings(self) -> dict[str, Any]:
        """What a saved chat keeps of this provider (never a key, endpoint or client)."""
        return {"model": self.model}

    @classmethod
    def from_saved(
        cls, settings: Mapping[str, Any], *, api_key: str | None, base_url: str | None
    ) -> Provider:
        """The provider a chat file describes (``settings`` already checked against
        :attr:`saved_fields`); ``TypeError`` or ``ValueError`` for settings it refuses."""
        raise NotImplementedError(f"the {cls.label} provider cannot be rebuilt from a chat file")

    def warm_up(self) -> None:
        """Load the SDK and make the client now (the console does, before its first prompt,
        so a Ctrl-C never lands inside an import)."""
        return None

    def close(self) -> None:
        """Release pooled connections."""
        return None

    async def close_async(self) -> None:
        """Release pooled connections, the running event loop's included."""
        self.close()

    def list_models(self) -> list[ModelInfo]:
        """The models the provider offers, newest first."""
        raise self._unsupported("list its models")

    def count_tokens(self, body: dict[str, Any]) -> int:
        """Input tokens of a request body."""
        raise self._unsupported("count tokens")

    def file_upload(self, source: FileSource) -> ContentUploaded:
        """Upload a file; content that refers to it."""
        raise self._unsupported("host files (it has no files API)")

    def file_list(self) -> list[FileMetadata]:
        """Every file uploaded with these credentials."""
        raise self._unsupported("host files (it has no files API)")

    def file_get(self, file_id: str) -> FileMetadata:
        """One uploaded file's metadata."""
        raise self._unsupported("host files (it has no files API)")

    def file_delete(self, file_id: str) -> None:
        """Delete an uploaded file."""
        raise self._unsupported("host files (it has no files API)")

    def file_download(self, file_id: str) -> bytes:
        """An uploaded file's bytes."""
        raise self._unsupported("host files (it has no files API)")

    def batch_submit(self, bodies: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        """Submit request bodies, by request id, as one batch; the provider's record."""
        raise self._unsupported("answer in batches")

    def batch_retrieve(self, batch_id: str) -> dict[str, Any]:
        """The provider's record of a batch."""
        raise self._unsupported("answer in batches")

    def batch_status(self, batch: Mapping[str, Any]) -> BatchStatus:
        """Where a batch stands, from its record."""
        raise self._unsupported("answer in batches")

    def batch_results(self, batch_id: str) -> list[dict[str, Any]]:
        """A finished batch's result lines."""
        raise self._unsupported("answer in batches")

    def batch_answer(self, line: Mapping[str, Any], spec: RequestSpec) -> BatchAnswer:
        """One result line as its request's answer (or why there is none)."""
        raise self._unsupported("answer in batches")

    def _unsupported(self, what: str) -> NotImplementedError:
        return NotImplementedError(f"the {self.label} provider cannot {what}")


# The name of the base class before it was the one contract: subclasses of it are providers.
ProviderBase = Provider
