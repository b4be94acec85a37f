"""Types for annotations and ``isinstance`` checks (chatlas's ``chatlas.types``).

Light to import: nothing here loads the SDK, pydantic or rich.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from ._chat import ChatResponse, ChatResponseAsync, ChatStream
from ._core.content import (
    Content,
    ContentCitation,
    ContentDocument,
    ContentImage,
    ContentImageInline,
    ContentImageRemote,
    ContentJson,
    ContentPDF,
    ContentServerToolRequest,
    ContentServerToolResult,
    ContentText,
    ContentThinking,
    ContentThinkingDelta,
    ContentToolRequest,
    ContentToolRequestFetch,
    ContentToolRequestSearch,
    ContentToolResponseFetch,
    ContentToolResponseSearch,
    ContentUnknown,
    ContentUploaded,
    ImageContentType,
    Source,
    WebSource,
)
from ._core.errors import ToolFailureWarning
from ._core.missing import MISSING, MISSING_TYPE
from ._core.tool_info import ToolInfo
from ._core.tool_result import ContentToolResult, ContentToolResultProgress
from ._core.turn import FinishReason, Tokens, Usage
from ._observe.tokens import TokensDict, TokenUsage
from ._tools.tool import Rerun
from .providers._anthropic.server_tools import ToolWebFetch, ToolWebSearch, UserLocation
from .providers._prices import TokenPrice
from .providers._types import FileMetadata, ModelInfo

if TYPE_CHECKING:
    from ._parallel import StructuredChatResult

ImageContentTypes = ImageContentType
"""chatlas's name for the image media types."""
SubmitInputArgsT = dict[str, Any]
"""Extra request parameters (the ``kwargs=`` of the chat verbs)."""


class ToolAnnotations(TypedDict, total=False):
    """Hints about a tool (``Tool(..., annotations=...)``), as in the MCP specification."""

    title: str
    readOnlyHint: bool
    destructiveHint: bool
    idempotentHint: bool
    openWorldHint: bool
    extra: dict[str, Any]


__all__ = [
    "MISSING",
    "MISSING_TYPE",
    "ChatResponse",
    "ChatResponseAsync",
    "ChatStream",
    "Content",
    "ContentCitation",
    "ContentDocument",
    "ContentImage",
    "ContentImageInline",
    "ContentImageRemote",
    "ContentJson",
    "ContentPDF",
    "ContentServerToolRequest",
    "ContentServerToolResult",
    "ContentText",
    "ContentThinking",
    "ContentThinkingDelta",
    "ContentToolRequest",
    "ContentToolRequestFetch",
    "ContentToolRequestSearch",
    "ContentToolResponseFetch",
    "ContentToolResponseSearch",
    "ContentToolResult",
    "ContentToolResultProgress",
    "ContentUnknown",
    "ContentUploaded",
    "FileMetadata",
    "FinishReason",
    "ImageContentType",
    "ImageContentTypes",
    "ModelInfo",
    "Rerun",
    "Source",
    "StructuredChatResult",
    "SubmitInputArgsT",
    "TokenPrice",
    "TokenUsage",
    "Tokens",
    "TokensDict",
    "ToolAnnotations",
    "ToolFailureWarning",
    "ToolInfo",
    "ToolWebFetch",
    "ToolWebSearch",
    "Usage",
    "UserLocation",
    "WebSource",
]


def __getattr__(name: str) -> Any:
    # chatlas keeps StructuredChatResult here; it loads pydantic's side, so only on use.
    if name == "StructuredChatResult":
        from ._parallel import StructuredChatResult

        return StructuredChatResult
    raise AttributeError(f"module 'chatlas_like.types' has no attribute {name!r}")
