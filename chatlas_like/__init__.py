"""chatlas_like: a tool-calling chat client for Anthropic's Messages API.

Importing the package loads neither the anthropic SDK, pandas, numpy, pydantic, rich
nor htmltools; each loads when first needed.
"""

from ._callbacks import Allow, Deny
from ._chat import Chat, ChatResponse, ChatResponseAsync, ChatStream
from ._content import (
    Content,
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
    ContentToolRequest,
    ContentUnknown,
)
from ._errors import (
    AuthenticationError,
    BadRequestError,
    ChatlasLikeError,
    ExpansionError,
    HistoryError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    PersistenceError,
    ProviderConnectionError,
    ProviderError,
    RateLimitError,
    RequestTooLargeError,
    RestoredToolError,
    ServerError,
    StreamInterruptedError,
    ToolLoopLimitError,
    ToolRejectError,
)
from ._expansion import MessageExpansion, expand
from ._options import CallOptions, ChatOptions
from ._serialize import from_json, to_json
from ._tokens import ModelUsage, token_usage
from ._tool_result import ContentToolResult
from ._tools import Tool, ToolBuiltIn
from ._turn import AssistantTurn, SystemTurn, TokenUsage, Turn, UserTurn
from .providers import Provider
from .providers._anthropic import ChatAnthropic

__version__ = "0.1.0"

__all__ = [
    "Allow",
    "AssistantTurn",
    "AuthenticationError",
    "BadRequestError",
    "CallOptions",
    "Chat",
    "ChatAnthropic",
    "ChatOptions",
    "ChatResponse",
    "ChatResponseAsync",
    "ChatStream",
    "ChatlasLikeError",
    "Content",
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
    "ContentToolRequest",
    "ContentToolResult",
    "ContentUnknown",
    "Deny",
    "ExpansionError",
    "HistoryError",
    "MessageExpansion",
    "ModelUsage",
    "NotFoundError",
    "OverloadedError",
    "PermissionDeniedError",
    "PersistenceError",
    "Provider",
    "ProviderConnectionError",
    "ProviderError",
    "RateLimitError",
    "RequestTooLargeError",
    "RestoredToolError",
    "ServerError",
    "StreamInterruptedError",
    "SystemTurn",
    "TokenUsage",
    "Tool",
    "ToolBuiltIn",
    "ToolLoopLimitError",
    "ToolRejectError",
    "Turn",
    "UserTurn",
    "expand",
    "from_json",
    "to_json",
    "token_usage",
]
