"""Chat conveniences, models and tokens, templates, and chatlas's public names."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import chatlas_like
from chatlas_like import (
    ChatAnthropic,
    SystemTurn,
    UserTurn,
    interpolate,
    interpolate_file,
    token_usage,
)
from chatlas_like._observe.tokens import reset_token_usage
from chatlas_like.testing import Reply

from ..conftest import TEST_KEY, TEST_MODEL, make_chat


def test_get_last_turn_finds_each_role(serve: Any) -> None:
    server = serve([Reply.text("Hello")])
    chat = make_chat(server, system_prompt="Be brief.")
    chat.chat("Hi", echo="none")
    assert chat.get_last_turn().text == "Hello"  # pyright: ignore[reportOptionalMemberAccess]
    assert chat.get_last_turn(role="user") == UserTurn("Hi")
    assert chat.get_last_turn(role="system") == SystemTurn("Be brief.")


def test_setting_the_system_prompt_changes_the_next_request(serve: Any) -> None:
    server = serve([Reply.text("a"), Reply.text("b")])
    chat = make_chat(server, system_prompt="One.", cache="none")
    chat.chat("Hi", echo="none")
    chat.system_prompt = "Two."
    chat.chat("Hi", echo="none")
    systems = [body["system"] for body in server.message_requests()]
    assert systems == [[{"type": "text", "text": "One."}], [{"type": "text", "text": "Two."}]]
    chat.system_prompt = None
    assert chat.get_turns(include_system_prompt=True)[0].role == "user"


def test_set_model_params_reach_the_request_body(serve: Any) -> None:
    server = serve([Reply.text("a"), Reply.text("b")])
    chat = make_chat(server)
    chat.set_model_params(temperature=0.2, top_p=0.9, top_k=5, max_tokens=100, stop="END")
    chat.chat("Hi", echo="none")
    body = server.message_requests()[0]
    assert (body["temperature"], body["top_p"], body["top_k"]) == (0.2, 0.9, 5)
    assert (body["max_tokens"], body["stop_sequences"]) == (100, ["END"])
    chat.set_model_params(temperature=None, max_tokens=None)
    chat.chat("Again", echo="none")
    again = server.message_requests()[1]
    assert "temperature" not in again and again["max_tokens"] == 4096
    assert again["top_p"] == 0.9  # a parameter left out keeps its value


def test_parameters_anthropic_has_not_are_dropped_with_a_warning(serve: Any) -> None:
    server = serve([Reply.text("a")])
    chat = make_chat(server)
    with pytest.warns(UserWarning, match="not supported by the provider .*presence_penalty, seed"):
        chat.set_model_params(seed=1, presence_penalty=0.5, temperature=0.1)
    chat.chat("Hi", echo="none")
    body = server.message_requests()[0]
    assert "seed" not in body and body["temperature"] == 0.1


def test_the_provider_says_which_parameters_it_supports_as_chatlas_does() -> None:
    chat = ChatAnthropic(model=TEST_MODEL, api_key=TEST_KEY, base_url="http://127.0.0.1:9")
    supported = chat.provider.supported_model_params()
    assert supported == {"temperature", "top_p", "top_k", "max_tokens", "stop_sequences"}


def test_copy_deep_copies_the_history_and_shares_the_provider(serve: Any) -> None:
    server = serve([Reply.text("first"), Reply.text("second")])
    chat = make_chat(server)
    chat.chat("Hi", echo="none")
    twin = chat.copy()
    assert twin.provider is chat.provider
    assert twin.get_turns() == chat.get_turns()
    assert twin.get_turns()[0] is not chat.get_turns()[0]
    twin.set_model_params(temperature=0.5)
    twin.chat("More", echo="none")
    assert len(chat.get_turns()) == 2 and len(twin.get_turns()) == 4
    assert "temperature" in server.message_requests()[1]
    assert chat._params == {}  # the original's parameters are its own


def test_repr_shows_model_turns_and_tokens(serve: Any) -> None:
    server = serve([Reply.text("Hello").with_usage(input_tokens=12, output_tokens=3)])
    chat = make_chat(server)
    chat.chat("Hi", echo="none")
    assert repr(chat) == f"<Chat Anthropic/{TEST_MODEL} turns=2 tokens=12/3>"


def test_the_model_property_switches_models(serve: Any) -> None:
    server = serve([Reply.text("a")])
    chat = make_chat(server)
    chat.model = "claude-opus-4-7"
    chat.chat("Hi", echo="none")
    assert server.message_requests()[0]["model"] == "claude-opus-4-7"


def test_list_models_returns_dicts_newest_first(serve: Any) -> None:
    server = serve([])
    models = make_chat(server).list_models()
    assert [m["id"] for m in models] == ["claude-haiku-4-5-20251001", "claude-sonnet-4-5-20250929"]
    assert set(models[0]) == {
        "id",
        "name",
        "created_at",
        "input",
        "output",
        "cached_input",
        "provider",
    }


def test_list_models_prices_each_model_per_million_tokens_as_chatlas_does(serve: Any) -> None:
    models = make_chat(serve([])).list_models()
    haiku = models[0]
    assert (haiku["input"], haiku["output"], haiku["cached_input"]) == (1.0, 5.0, 0.1)


def test_token_usage_is_kept_per_model(serve: Any) -> None:
    reset_token_usage()
    server = serve([Reply.text("a").with_usage(input_tokens=10, output_tokens=2)] * 2)
    make_chat(server).chat("Hi", echo="none")
    make_chat(server, model="claude-opus-4-7").chat("Hi", echo="none")
    usage = {(u["name"], u["model"]): (u["input"], u["output"]) for u in token_usage() or []}
    assert usage == {
        ("Anthropic", TEST_MODEL): (10, 2),
        ("Anthropic", "claude-opus-4-7"): (10, 2),
    }


def test_token_count_new_counts_the_message_and_tools(serve: Any) -> None:
    server = serve([Reply.text("a")])
    chat = make_chat(server, system_prompt="A long system prompt.")
    chat.register_tool(lambda city: city, name="weather")
    chat.chat("Earlier question", echo="none")
    count = chat.token_count("What's the weather in Paris?")
    body = server.requests[-1].body
    assert server.requests[-1].path == "/v1/messages/count_tokens"
    assert count > 0
    assert len(body["messages"]) == 1 and "system" not in body
    assert body["tools"][0]["name"] == "weather"
    assert "max_tokens" not in body and "stream" not in body


def test_token_count_complete_counts_the_whole_next_request(serve: Any) -> None:
    server = serve([Reply.text("a")])
    chat = make_chat(server, system_prompt="Be brief.")
    chat.chat("Earlier question", echo="none")
    new = chat.token_count("Next")
    complete = chat.token_count("Next", include="complete")
    body = server.requests[-1].body
    assert complete > new
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["system"][0]["text"] == "Be brief."


def test_token_count_with_a_data_model_counts_its_schema(serve: Any) -> None:
    class Person(BaseModel):
        name: str
        age: int

    server = serve([])
    chat = make_chat(server)
    assert chat.token_count("Ada, 36", data_model=Person) > chat.token_count("Ada, 36")
    assert "format" in server.requests[-2].body["output_config"]


def test_token_count_async_gives_the_same_count(serve: Any) -> None:
    server = serve([])
    chat = make_chat(server)
    assert asyncio.run(chat.token_count_async("Hello")) == chat.token_count("Hello")


def test_interpolate_reads_the_callers_variables() -> None:
    city = "Paris"  # noqa: F841 - read from this frame by interpolate
    assert interpolate("Weather in {{ city }}?") == "Weather in Paris?"


def test_interpolate_takes_variables_jinja_blocks_and_delimiters() -> None:
    template = "{% for x in xs %}<<x>>,{% endfor %} {not a variable}"
    result = interpolate(template, variables={"xs": [1, 2]}, variable_start="<<", variable_end=">>")
    assert result == "1,2, {not a variable}"


def test_interpolate_file_fills_a_template_file(tmp_path: Path) -> None:
    path = tmp_path / "prompt.md"
    path.write_text("Summarise {{ topic }} in {{ n }} words.")
    topic = "apples"  # noqa: F841 - read from this frame by interpolate_file
    assert interpolate_file(path, variables={"topic": "pears", "n": 5}) == (
        "Summarise pears in 5 words."
    )
    n = 3  # noqa: F841
    assert interpolate_file(path) == "Summarise apples in 3 words."


# Every name of chatlas 0.23.0's `chatlas.__all__`, and where it is here.
CHATLAS_NAMES = [
    "Chat", "content_document_file", "content_document_url", "content_image_file",
    "content_image_plot", "content_image_url", "content_pdf_file", "content_pdf_url",
    "ContentToolRequest", "ContentToolResult", "FileManager", "interpolate", "interpolate_file",
    "Provider", "StreamController", "token_usage", "Tool", "ToolBuiltIn", "ToolRejectError",
    "tool_web_fetch", "tool_web_search", "Turn", "UserTurn", "SystemTurn", "AssistantTurn",
    "types", "ChatAnthropic",
]  # fmt: skip
# Not here: the other providers (ChatOpenAI, ChatGoogle, ChatAuto...: this library talks to
# Anthropic only) and batch_chat*/parallel_chat* (the concurrency work, on another branch).
CHATLAS_TYPES = [
    "Content", "ContentCitation", "ContentDocument", "ContentImage", "ContentImageInline",
    "ContentImageRemote", "ContentJson", "ContentPDF", "ContentText", "ContentThinking",
    "ContentThinkingDelta", "ContentToolRequest", "ContentToolResult", "ContentToolRequestFetch",
    "ContentToolResponseFetch", "ContentToolRequestSearch", "ContentToolResponseSearch",
    "ContentUploaded", "FileMetadata", "FinishReason", "ChatResponse", "ChatResponseAsync",
    "ImageContentTypes", "Source", "WebSource", "SubmitInputArgsT", "TokenUsage",
    "ToolAnnotations", "MISSING_TYPE", "MISSING", "ModelInfo",
]  # fmt: skip


def test_every_non_provider_chatlas_name_imports_from_chatlas_like() -> None:
    missing = [name for name in CHATLAS_NAMES if not hasattr(chatlas_like, name)]
    assert missing == []


def test_every_chatlas_types_name_is_in_the_types_module() -> None:
    from chatlas_like import types

    assert [name for name in CHATLAS_TYPES if not hasattr(types, name)] == []
