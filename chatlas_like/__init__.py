"""chatlas_like: a tool-calling chat client for Anthropic's Messages API, OpenAI's
Responses and Chat Completions APIs, and the servers that speak the latter.

Importing the package loads neither the anthropic nor the openai SDK, pandas, numpy, pydantic, rich
nor htmltools; each loads when first needed. Names used less often (batch and parallel
chats, the result store, content helpers, server tools, files, templates) load on first
access too.
"""

from typing import TYPE_CHECKING, Any

from . import _display as _display  # fills the table content types render through
from ._chat import Chat, ChatResponse, ChatResponseAsync, ChatStream
from ._chat_anthropic import ChatAnthropic
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
)
from ._core.errors import (
    AuthenticationError,
    BadRequestError,
    ChatlasLikeError,
    ExpansionError,
    HistoryError,
    McpServerError,
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
from ._core.expansion import ExpansionWarning, MessageExpansion, expand
from ._core.tool_result import ContentToolResult, ContentToolResultProgress
from ._core.turn import AssistantTurn, SystemTurn, Turn, Usage, UserTurn
from ._observe.tokens import ModelUsage, TokenUsage, token_usage
from ._persist.serialize import from_json, to_json
from ._run.echo import EchoSink
from ._run.options import CallOptions, ChatOptions
from ._run.stream_controller import StreamController
from ._tools.callbacks import Allow, Deny
from ._tools.tool import Tool, ToolBuiltIn
from .providers import Provider

__version__ = "0.1.0"

__all__ = [
    "Allow",
    "AssistantTurn",
    "AuthenticationError",
    "BadRequestError",
    "CallOptions",
    "Chat",
    "ChatAnthropic",
    "ChatAzureOpenAI",
    "ChatAzureOpenAICompletions",
    "ChatBedrockAnthropic",
    "ChatCloudflare",
    "ChatDatabricks",
    "ChatDeepSeek",
    "ChatGroq",
    "ChatHuggingFace",
    "ChatLMStudio",
    "ChatMistral",
    "ChatOllama",
    "ChatOpenAI",
    "ChatOpenAICompletions",
    "ChatOpenRouter",
    "ChatOptions",
    "ChatPerplexity",
    "ChatPortkey",
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
    "ContentToolResultProgress",
    "ContentUnknown",
    "ContentUploaded",
    "Deny",
    "EchoSink",
    "ExpansionError",
    "ExpansionWarning",
    "FileManager",
    "HistoryError",
    "McpServerError",
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
    "StoreBusyError",
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
    "Usage",
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
    "set_token_price",
    "to_json",
    "token_usage",
    "tool_web_fetch",
    "tool_web_search",
    "types",
]

if TYPE_CHECKING:
    from . import types
    from ._batch import batch_chat, batch_chat_completed, batch_chat_structured, batch_chat_text
    from ._constructors.bedrock import ChatBedrockAnthropic
    from ._constructors.compatible import (
        ChatCloudflare,
        ChatDatabricks,
        ChatDeepSeek,
        ChatGroq,
        ChatHuggingFace,
        ChatLMStudio,
        ChatMistral,
        ChatOllama,
        ChatOpenRouter,
        ChatPerplexity,
        ChatPortkey,
    )
    from ._constructors.openai import (
        ChatAzureOpenAI,
        ChatAzureOpenAICompletions,
        ChatOpenAI,
        ChatOpenAICompletions,
    )
    from ._core.content_files import (
        content_document_file,
        content_document_url,
        content_image_file,
        content_image_plot,
        content_image_url,
        content_pdf_file,
        content_pdf_url,
    )
    from ._interpolate import interpolate, interpolate_file
    from ._parallel import (
        StructuredChatResult,
        parallel_chat,
        parallel_chat_structured,
        parallel_chat_text,
    )
    from ._store import (
        PostgresStore,
        SqliteStore,
        StoreBusyError,
        StoreError,
        StoreWarning,
        ToolResultRecord,
        ToolResultStore,
        open_store,
    )
    from .providers._anthropic.server_tools import tool_web_fetch, tool_web_search
    from .providers._files import FileManager
    from .providers._prices import set_token_price

# Loaded on first access: {public name: module} ("" for a submodule of that name).
_LAZY: dict[str, str] = {
    "types": "",
    "ChatBedrockAnthropic": "_constructors.bedrock",
    "ChatAzureOpenAI": "_constructors.openai",
    "ChatAzureOpenAICompletions": "_constructors.openai",
    "ChatOpenAI": "_constructors.openai",
    "ChatOpenAICompletions": "_constructors.openai",
    "ChatCloudflare": "_constructors.compatible",
    "ChatDatabricks": "_constructors.compatible",
    "ChatDeepSeek": "_constructors.compatible",
    "ChatGroq": "_constructors.compatible",
    "ChatHuggingFace": "_constructors.compatible",
    "ChatLMStudio": "_constructors.compatible",
    "ChatMistral": "_constructors.compatible",
    "ChatOllama": "_constructors.compatible",
    "ChatOpenRouter": "_constructors.compatible",
    "ChatPerplexity": "_constructors.compatible",
    "ChatPortkey": "_constructors.compatible",
    "batch_chat": "_batch",
    "batch_chat_completed": "_batch",
    "batch_chat_structured": "_batch",
    "batch_chat_text": "_batch",
    "content_document_file": "_core.content_files",
    "content_document_url": "_core.content_files",
    "content_image_file": "_core.content_files",
    "content_image_plot": "_core.content_files",
    "content_image_url": "_core.content_files",
    "content_pdf_file": "_core.content_files",
    "content_pdf_url": "_core.content_files",
    "FileManager": "providers._files",
    "interpolate": "_interpolate",
    "interpolate_file": "_interpolate",
    "StructuredChatResult": "_parallel",
    "parallel_chat": "_parallel",
    "parallel_chat_structured": "_parallel",
    "parallel_chat_text": "_parallel",
    "set_token_price": "providers._prices",
    "tool_web_fetch": "providers._anthropic.server_tools",
    "tool_web_search": "providers._anthropic.server_tools",
    "PostgresStore": "_store",
    "SqliteStore": "_store",
    "StoreBusyError": "_store",
    "StoreError": "_store",
    "StoreWarning": "_store",
    "ToolResultRecord": "_store",
    "ToolResultStore": "_store",
    "open_store": "_store",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        from ._not_here import not_here

        missing = not_here(name)  # chatlas's other providers: say what to use instead
        if missing is not None:
            raise missing
        raise AttributeError(f"module 'chatlas_like' has no attribute {name!r}")
    import importlib

    loaded = importlib.import_module(f"{__name__}.{module or name}")
    value = loaded if not module else getattr(loaded, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
