"""chatlas's names that chatlas_like does not have say what to use instead."""

from __future__ import annotations

import importlib

import pytest

import chatlas_like
from chatlas_like._not_here import NOT_HERE

# The public names of chatlas 0.23.0 (its API reference), for the check that each one is
# either here or explained.
CHATLAS_NAMES = [
    "AssistantTurn",
    "Chat",
    "ChatAnthropic",
    "ChatAuto",
    "ChatAzureOpenAI",
    "ChatAzureOpenAICompletions",
    "ChatBedrock",
    "ChatBedrockAnthropic",
    "ChatCloudflare",
    "ChatDatabricks",
    "ChatDeepSeek",
    "ChatGithub",
    "ChatGoogle",
    "ChatGroq",
    "ChatHuggingFace",
    "ChatLMStudio",
    "ChatMistral",
    "ChatOllama",
    "ChatOpenAI",
    "ChatOpenAICompletions",
    "ChatOpenRouter",
    "ChatPerplexity",
    "ChatPortkey",
    "ChatPosit",
    "ChatSnowflake",
    "ChatVertex",
    "ContentToolRequest",
    "ContentToolResult",
    "FileManager",
    "Provider",
    "StreamController",
    "SystemTurn",
    "Tool",
    "ToolBuiltIn",
    "ToolRejectError",
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
    "interpolate",
    "interpolate_file",
    "parallel_chat",
    "parallel_chat_structured",
    "parallel_chat_text",
    "token_usage",
    "tool_web_fetch",
    "tool_web_search",
    "types",
]


def test_importing_another_provider_names_the_providers_that_are_here() -> None:
    with pytest.raises(
        ImportError, match=r"ChatGoogle is chatlas's Google Gemini provider.*ChatOpenAI"
    ):
        from chatlas_like import ChatGoogle  # noqa: F401  # pyright: ignore[reportAttributeAccessIssue, reportUnusedImport]


def test_reading_another_provider_names_the_providers_that_are_here() -> None:
    with pytest.raises(ImportError, match=r"Google Gemini provider.*ChatAnthropic"):
        chatlas_like.ChatGoogle  # noqa: B018  # pyright: ignore[reportAttributeAccessIssue]


def test_an_unknown_name_is_a_plain_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        chatlas_like.Nope  # noqa: B018  # pyright: ignore[reportAttributeAccessIssue]


@pytest.mark.parametrize("name", CHATLAS_NAMES)
def test_every_chatlas_name_is_here_or_explained(name: str) -> None:
    if name in NOT_HERE:
        with pytest.raises(ImportError, match="ChatAnthropic"):
            getattr(chatlas_like, name)
    else:
        assert getattr(chatlas_like, name) is not None
        assert name in chatlas_like.__all__


def test_the_missing_names_are_not_advertised() -> None:
    assert not set(NOT_HERE) & set(chatlas_like.__all__)
    assert not set(NOT_HERE) & set(dir(chatlas_like))


def test_structured_chat_result_is_in_types_as_in_chatlas() -> None:
    types = importlib.import_module("chatlas_like.types")
    assert types.StructuredChatResult is chatlas_like.StructuredChatResult
