"""Model providers: the interface every provider implements, and Anthropic's behind it.

A provider subclasses :class:`Provider` (``ProviderBase`` is the same class), declares
what the chat must know of it in :class:`Capabilities`, and is used as ``Chat(provider)``. See
:class:`chatlas_like.testing.ScriptedProvider` for one written against this interface
alone.
"""

from ._base import Provider, ProviderBase
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
