"""Model providers: the interface every provider implements, and Anthropic's behind it.

A provider subclasses :class:`ProviderBase` (or implements :class:`Provider`), declares
what it can do in :class:`Capabilities`, and is used as ``Chat(provider)``. See
:class:`chatlas_like.testing.ScriptedProvider` for one written against this interface
alone.
"""

from ._base import (
    Accumulator,
    AsyncEventStream,
    BatchAnswer,
    BatchStatus,
    Capabilities,
    EventStream,
    FileMetadata,
    FileSource,
    ModelInfo,
    Provider,
    ProviderBase,
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
