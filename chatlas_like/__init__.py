"""chatlas_like: a tool-calling chat client for Anthropic's Messages API.

Importing the package loads neither the anthropic SDK, pandas, numpy, pydantic, rich
nor htmltools; each loads when first needed.
"""

from . import types
from ._batch import batch_chat, batch_chat_completed, batch_chat_structured, batch_chat_text
from ._callbacks import Allow, Deny
from ._chat import Chat, ChatResponse, ChatResponseAsync, ChatStream
from ._content import (
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
)
from ._content_files import (
    content_document_file,
    content_document_url,
    content_image_file,
    content_image_plot,
    content_image_url,
    content_pdf_file,
    content_pdf_url,
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
from ._expansion import ExpansionWarning, MessageExpansion, expand
from ._files import FileManager
from ._interpolate import interpolate, interpolate_file
from ._options import CallOptions, ChatOptions
from ._parallel import (
    StructuredChatResult,
    parallel_chat,
    parallel_chat_structured,
    parallel_chat_text,
)
from ._serialize import from_json, to_json
from ._server_tools import tool_web_fetch, tool_web_search
from ._store import (
    PostgresStore,
    SqliteStore,
    StoreError,
    StoreWarning,
    ToolResultRecord,
    ToolResultStore,
    open_store,
)
from ._stream_controller import StreamController
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
    "ContentUnknown",
    "ContentUploaded",
    "Deny",
    "ExpansionError",
    "ExpansionWarning",
    "FileManager",
    "HistoryError",
    "MessageExpansion",
    "ModelUsage",
    "NotFoundError",
    "OverloadedError",
    "PermissionDeniedError",
    "PersistenceError",
    "PostgresStore",
    "Provider",
    "ProviderConnectionError",
    "ProviderError",
    "RateLimitError",
    "RequestTooLargeError",
    "RestoredToolError",
    "ServerError",
    "SqliteStore",
    "StoreError",
    "StoreWarning",
    "StreamController",
    "StreamInterruptedError",
    "StructuredChatResult",
    "SystemTurn",
    "TokenUsage",
    "Tool",
    "ToolBuiltIn",
    "ToolLoopLimitError",
    "ToolRejectError",
    "ToolResultRecord",
    "ToolResultStore",
    "Turn",
    "UserTurn",
    "batch_chat",
    "batch_chat_completed",
    "batch_chat_structured",
    "batch_chat_text",
    "content_document_file",
    "content_document_url",
    "content_image_file",
    "content_image_plot",
    "content_image_url",
    "content_pdf_file",
    "content_pdf_url",
    "expand",
    "from_json",
    "interpolate",
    "interpolate_file",
    "open_store",
    "parallel_chat",
    "parallel_chat_structured",
    "parallel_chat_text",
    "to_json",
    "token_usage",
    "tool_web_fetch",
    "tool_web_search",
    "types",
]
