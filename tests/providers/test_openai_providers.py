"""chatlas's OpenAI constructors, and bad input on OpenAI's two APIs: each a clear error
or a result the model can act on, the history valid for the next turn, no key anywhere.

Everything goes through the real ``openai`` SDK to the loopback server over a socket.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

import chatlas_like
from chatlas_like import (
    AuthenticationError,
    BadRequestError,
    Chat,
    ChatGroq,
    ChatOllama,
    ChatOpenAI,
    ChatOpenAICompletions,
    ChatOpenRouter,
    NotFoundError,
    RateLimitError,
    StreamInterruptedError,
)
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import TEST_KEY

APIS: dict[str, Callable[..., Chat]] = {
    "responses": ChatOpenAI,
    "completions": ChatOpenAICompletions,
}
KEY = "sk-proj-" + "Z" * 40  # a key-shaped secret that must show up nowhere


def chat_on(api: str, server: LoopbackServer, **kwargs: Any) -> Chat:
    kwargs.setdefault("model", "gpt-4.1")
    kwargs.setdefault("api_key", TEST_KEY)
    return APIS[api](base_url=server.openai_url, max_retries=0, **kwargs)


def get_date() -> str:
    """Gets the current date."""
    return "2024-01-01"


# -- constructors ------------------------------------------------------------------------------


def test_importing_the_package_loads_no_openai_sdk() -> None:
    code = "import sys, chatlas_like; chatlas_like.ChatOpenAI; print('openai' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("name", "arguments", "provider_name", "model"),
    [
        ("ChatOpenAI", {}, "OpenAI", "gpt-5.6-terra"),
        ("ChatOpenAICompletions", {}, "OpenAI", "gpt-5.6-terra"),
        (
            "ChatAzureOpenAI",
            {"endpoint": "https://x.openai.azure.com", "deployment_id": "d1", "api_version": "v"},
            "Azure/OpenAI",
            "d1",
        ),
        (
            "ChatAzureOpenAICompletions",
            {"endpoint": "https://x.openai.azure.com", "deployment_id": "d2", "api_version": "v"},
            "Azure/OpenAI",
            "d2",
        ),
        ("ChatOpenRouter", {}, "OpenRouter", "gpt-5.6-terra"),
        ("ChatDeepSeek", {}, "DeepSeek", "deepseek-v4-flash"),
        ("ChatGroq", {}, "Groq", "openai/gpt-oss-20b"),
        ("ChatMistral", {}, "Mistral", "mistral-large-latest"),
        ("ChatPerplexity", {}, "Perplexity", "sonar"),
        ("ChatHuggingFace", {}, "HuggingFace", "Qwen/Qwen3-235B-A22B-Instruct-2507"),
        (
            "ChatCloudflare",
            {"account": "acct"},
            "Cloudflare",
            "@cf/meta/llama-3.3-70b-instruct-fp8-fast",
        ),
        ("ChatPortkey", {}, "Portkey", "gpt-5.4"),
    ],
)
def test_a_constructor_makes_a_chat_offline_with_chatlas_defaults(
    name: str, arguments: dict[str, Any], provider_name: str, model: str
) -> None:
    chat = getattr(chatlas_like, name)(api_key="k", **arguments)
    assert isinstance(chat, Chat)
    assert (chat.provider.name, chat.provider.model) == (provider_name, model)


def test_chat_bedrock_anthropic_makes_a_chat_offline_with_chatlas_defaults() -> None:
    chat = chatlas_like.ChatBedrockAnthropic(aws_region="us-east-1", reasoning=2048)
    assert (chat.provider.name, chat.provider.model) == (
        "AWS/Bedrock",
        "us.anthropic.claude-sonnet-5",
    )
    assert chat.kwargs_chat == {"thinking": {"type": "enabled", "budget_tokens": 2048}}
    assert not chat.provider.supports_prefill()  # claude-sonnet-5, behind Bedrock's prefix


def test_chat_bedrock_anthropic_without_botocore_says_how_to_install_it() -> None:
    pytest.importorskip("anthropic")
    try:
        import botocore  # noqa: F401  # pyright: ignore[reportMissingImports, reportUnusedImport]
    except ImportError:
        pass
    else:
        pytest.skip("botocore is installed here: the request would be signed and sent")
    chat = chatlas_like.ChatBedrockAnthropic(aws_region="us-east-1")
    with pytest.raises(ImportError, match=r"pip install anthropic\[bedrock\]"):
        chat.chat("hi", echo="none")
    assert chat.get_turns() == []


def test_chat_databricks_without_its_sdk_says_how_to_install_it() -> None:
    with pytest.raises(ImportError, match="pip install databricks-sdk"):
        chatlas_like.ChatDatabricks()


def test_chat_cloudflare_without_an_account_says_where_to_give_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CLOUDFLARE_ACCOUNT_ID", raising=False)
    with pytest.raises(ValueError, match="CLOUDFLARE_ACCOUNT_ID"):
        chatlas_like.ChatCloudflare(api_key="k")


def test_chat_ollama_without_a_model_lists_the_installed_ones() -> None:
    with (
        LoopbackServer([]) as server,
        pytest.raises(
            ValueError, match=r"Must specify model. Available models: llama3.2, qwen3:8b"
        ),
    ):
        chatlas_like.ChatOllama(base_url=server.url)


def test_chat_ollama_refuses_a_model_that_is_not_installed() -> None:
    missing = r"is not installed locally\. Run `ollama pull mistral`"
    with LoopbackServer([]) as server, pytest.raises(ValueError, match=missing):
        chatlas_like.ChatOllama("mistral", base_url=server.url)


def test_chat_ollama_without_a_server_says_so() -> None:
    with pytest.raises(RuntimeError, match="Can't find locally running ollama"):
        chatlas_like.ChatOllama("llama3.2", base_url="http://127.0.0.1:9")


def test_chat_ollama_talks_chat_completions_with_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with LoopbackServer(
        [Reply.tool_call("get_date", {}), Reply.text("It is 2024-01-01.")]
    ) as server:
        chat = chatlas_like.ChatOllama("llama3.2", base_url=server.url)
        chat.register_tool(get_date)
        assert str(chat.chat("Date?", echo="none")) == "It is 2024-01-01."
        assert [m["id"] for m in chat.provider.list_models()] == ["llama3.2", "qwen3:8b"]
        assert server.requests[-2].path == "/v1/chat/completions"
        assert server.requests[-2].headers["authorization"] == "Bearer ollama"


def test_chat_openai_on_a_third_party_server_warns_to_use_completions() -> None:
    with pytest.warns(UserWarning, match="Use ChatOpenAICompletions"):
        ChatOpenAI(base_url="https://example.invalid/v1", api_key="k")


def test_reasoning_is_kept_in_kwargs_chat_with_its_summary_as_chatlas_keeps_it() -> None:
    chat = ChatOpenAI(model="gpt-5.4", reasoning="low", service_tier="priority", api_key="k")
    assert chat.kwargs_chat == {
        "reasoning": {"effort": "low", "summary": "auto"},
        "service_tier": "priority",
    }


def test_without_a_key_the_error_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    chat = ChatOpenAI()
    with pytest.raises(AuthenticationError, match="OPENAI_API_KEY"):
        chat.chat("hi", echo="none")
    assert chat.get_turns() == []


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
def test_a_401_is_an_authentication_error_that_quotes_no_key(
    api: str, caplog: pytest.LogCaptureFixture
) -> None:
    import openai

    script = [Reply.error(401, "invalid_api_key", f"Incorrect API key provided: {KEY}")]
    with LoopbackServer(script) as server, caplog.at_level(logging.DEBUG):
        chat = chat_on(api, server, api_key=KEY)
        with pytest.raises(AuthenticationError) as raised:
            chat.chat("hi", echo="none")
    assert isinstance(raised.value, openai.AuthenticationError)  # chatlas code catching it
    assert raised.value.status_code == 401
    assert KEY not in str(raised.value)
    assert KEY not in caplog.text
    assert chat.get_turns() == []


@pytest.mark.parametrize("api", APIS)
def test_a_429_carries_its_retry_after(api: str) -> None:
    script = [Reply.error(429, "rate_limit_exceeded", "slow down", headers={"retry-after": "7"})]
    with LoopbackServer(script) as server, pytest.raises(RateLimitError) as raised:
        chat_on(api, server).chat("hi", echo="none")
    assert raised.value.retry_after == 7.0


@pytest.mark.parametrize("api", APIS)
def test_a_429_is_retried_and_the_answer_arrives(api: str) -> None:
    script = [
        Reply.error(429, "rate_limit_exceeded", "slow down", headers={"retry-after": "0"}),
        Reply.text("There."),
    ]
    with LoopbackServer(script) as server:
        chat = APIS[api](base_url=server.openai_url, api_key=TEST_KEY, model="gpt-4.1")
        assert str(chat.chat("hi", echo="none")) == "There."


@pytest.mark.parametrize("api", APIS)
def test_an_unknown_model_is_a_not_found_error(api: str) -> None:
    script = [Reply.error(404, "model_not_found", "The model `gpt-nope` does not exist")]
    with LoopbackServer(script) as server, pytest.raises(NotFoundError, match="gpt-nope"):
        chat_on(api, server, model="gpt-nope").chat("hi", echo="none")


@pytest.mark.parametrize("api", APIS)
def test_a_stream_cut_inside_a_calls_arguments_keeps_the_history_valid(api: str) -> None:
    script = [
        Reply.tool_call("get_date", {"timezone": "Europe/Oslo"}).cut(after=6),
        Reply.text("Fine."),
    ]
    with LoopbackServer(script) as server:
        chat = chat_on(api, server)
        chat.register_tool(get_date)
        with pytest.raises(StreamInterruptedError):
            chat.chat("Date?", echo="none")
        (partial,) = [t for t in chat.get_turns() if t.role == "assistant"]
        assert partial.partial_reason is not None
        assert str(chat.chat("Try again", echo="none")) == "Fine."  # the server's rules held
        assert [r.response_status for r in server.requests] == [200, 200]


@pytest.mark.parametrize("api", APIS)
def test_arguments_that_are_not_json_are_refused_so_the_model_can_resend(api: str) -> None:
    script = [Reply.tool_call("get_date", '{"tz": '), Reply.text("Sent again.")]
    with LoopbackServer(script) as server:
        chat = chat_on(api, server)
        chat.register_tool(get_date)
        with pytest.warns(Warning, match="not valid JSON"):
            chat.chat("Date?", echo="none")
        (result,) = chat.get_turns()[2].tool_results
    assert result.outcome == "refused"
    assert "not valid JSON" in str(result.get_model_value())


@pytest.mark.parametrize("api", APIS)
def test_a_result_for_a_call_the_model_never_made_is_refused_by_the_server(api: str) -> None:
    from chatlas_like import AssistantTurn, ContentToolRequest, ContentToolResult, UserTurn

    with LoopbackServer([Reply.text("never")]) as server:
        chat = chat_on(api, server)
        made = ContentToolRequest(id="call_real", name="get_date", arguments={})
        stray = ContentToolRequest(id="call_never_made", name="get_date", arguments={})
        chat.set_turns(
            [
                UserTurn("Date?"),
                AssistantTurn([made]),
                UserTurn([ContentToolResult(value="x", request=stray)]),
            ]
        )
        with pytest.raises(BadRequestError, match=r"call_never_made|role 'tool' must be"):
            chat.chat("and?", echo="none")


@pytest.mark.parametrize("api", APIS)
def test_a_saved_chat_loads_back_on_the_same_api_without_its_key(api: str, tmp_path: Any) -> None:
    with LoopbackServer([Reply.text("Hi there."), Reply.text("Again.")]) as server:
        chat = chat_on(api, server, api_key=KEY)
        chat.chat("Hello", echo="none")
        path = tmp_path / "chat.json"
        chat.save(path)
        assert KEY not in path.read_text()
        loaded = Chat.load(path, api_key=TEST_KEY, base_url=server.openai_url)
        assert type(loaded.provider) is type(chat.provider)
        assert str(loaded.chat("More?", echo="none")) == "Again."
        assert [t.text for t in loaded.get_turns()] == ["Hello", "Hi there.", "More?", "Again."]


def test_token_count_on_the_responses_api_asks_its_count_endpoint_and_counts_tools() -> None:
    with LoopbackServer([]) as server:
        chat = chat_on("responses", server)
        without = chat.token_count("What's the weather in Paris?")
        chat.register_tool(get_date)
        with_tool = chat.token_count("What's the weather in Paris?")
        assert 0 < without < with_tool
        assert [r.path for r in server.requests] == ["/v1/responses/input_tokens"] * 2
        assert "tools" in server.requests[-1].body


def test_token_count_on_chat_completions_says_the_api_has_no_count() -> None:
    with LoopbackServer([]) as server, pytest.raises(NotImplementedError, match="count tokens"):
        chat_on("completions", server).token_count("hi")


def test_the_cost_follows_the_service_tier_the_response_was_served_at() -> None:
    from chatlas_like.providers._openai.prices import OPENAI_PRICES

    usage = {"input_tokens": 1_000, "output_tokens": 100, "cache_read_input_tokens": 200}
    script = [Reply.text("Fast.").with_usage(**usage), Reply.text("Standard.").with_usage(**usage)]
    with LoopbackServer(script) as server:
        fast = chat_on("responses", server, model="gpt-5.4", service_tier="priority")
        fast.chat("Hi", echo="none")
        standard = chat_on("responses", server, model="gpt-5.4")
        standard.chat("Hi", echo="none")
    priority, plain = OPENAI_PRICES["gpt-5.4@priority"], OPENAI_PRICES["gpt-5.4"]
    for chat, price in ((fast, priority), (standard, plain)):
        turn = chat.get_last_turn()
        assert turn is not None and turn.tokens == (1_000, 100, 200)  # cached apart, as chatlas
        expected = (1_000 * price.input + 100 * price.output + 200 * price.cached_input) / 1e6
        assert turn.cost == pytest.approx(expected)


def test_a_reasoning_summary_is_thinking_and_goes_back_with_its_encrypted_content() -> None:
    from chatlas_like import ContentThinking

    reasoning = {
        "type": "reasoning",
        "id": "rs_1",
        "status": "completed",
        "summary": [{"type": "summary_text", "text": "Two plus two."}],
        "encrypted_content": "opaque",
    }
    script = [Reply.blocks_of(reasoning, {"type": "text", "text": "4"}), Reply.text("Yes.")]
    with LoopbackServer(script) as server:
        chat = chat_on("responses", server, model="gpt-5.4", reasoning="low")
        assert str(chat.chat("2+2?", echo="none")) == "4"
        (thinking,) = [c for c in chat.get_turns()[1].contents if isinstance(c, ContentThinking)]
        assert thinking.thinking == "Two plus two."
        chat.chat("Sure?", echo="none")
        first, second = server.message_requests()
    assert first["reasoning"] == {"effort": "low", "summary": "auto"}
    assert "reasoning.encrypted_content" in first["include"]
    sent = [i for i in second["input"] if i.get("type") == "reasoning"]
    assert sent == [{k: v for k, v in reasoning.items() if k != "status"}]


def test_a_saved_ollama_chat_loads_back_as_an_ollama_chat(tmp_path: Any) -> None:
    with LoopbackServer([Reply.text("Hi there."), Reply.text("Again.")]) as server:
        chat = ChatOllama(model="llama3.2", base_url=server.url)
        chat.chat("Hello", echo="none")
        path = tmp_path / "chat.json"
        chat.save(path)
        loaded = Chat.load(path, base_url=server.url)
        assert type(loaded.provider) is type(chat.provider)
        assert (loaded.provider.name, loaded.provider.model) == ("Ollama", "llama3.2")
        assert str(loaded.chat("More?", echo="none")) == "Again."
        assert [m["id"] for m in loaded.list_models()] == ["llama3.2", "qwen3:8b"]


def test_a_loaded_ollama_chat_without_an_address_talks_to_the_local_ollama(
    tmp_path: Any,
) -> None:
    with LoopbackServer([Reply.text("Hi there.")]) as server:
        path = tmp_path / "chat.json"
        ChatOllama(model="llama3.2", base_url=server.url).save(path)
    loaded = Chat.load(path)
    assert loaded.provider.base_url == "http://localhost:11434/v1"


def test_a_saved_groq_chat_loads_back_with_the_key_from_groqs_variable(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LoopbackServer([Reply.text("Hi there."), Reply.text("Again.")]) as server:
        chat = ChatGroq(api_key=KEY, base_url=server.openai_url)
        chat.chat("Hello", echo="none")
        path = tmp_path / "chat.json"
        chat.save(path)
        assert KEY not in path.read_text()
        monkeypatch.setenv("GROQ_API_KEY", TEST_KEY)
        loaded = Chat.load(path, base_url=server.openai_url)
        assert type(loaded.provider) is type(chat.provider)
        assert str(loaded.chat("More?", echo="none")) == "Again."
        assert server.requests[-1].headers["authorization"] == f"Bearer {TEST_KEY}"


def test_a_chat_file_cannot_point_a_loaded_groq_chat_at_another_host(tmp_path: Any) -> None:
    path = tmp_path / "chat.json"
    ChatGroq(api_key=KEY).save(path)
    document = json.loads(path.read_text())
    document["provider"]["base_url"] = "https://attacker.example/v1"
    path.write_text(json.dumps(document))
    with pytest.warns(UserWarning, match=r"provider\.base_url"):
        loaded = Chat.load(path)
    assert loaded.provider.base_url == "https://api.groq.com/openai/v1"


def test_a_loaded_ollama_chat_never_sends_the_openai_key_from_the_environment(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LoopbackServer([Reply.text("Hi there.")]) as server:
        path = tmp_path / "chat.json"
        ChatOllama(model="llama3.2", base_url=server.url).save(path)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        Chat.load(path, base_url=server.url).chat("Hello", echo="none")
        assert KEY not in server.requests[-1].headers.get("authorization", "")


def test_openrouter_chats_carry_chatlass_attribution_headers_also_when_loaded(
    tmp_path: Any,
) -> None:
    with LoopbackServer([Reply.text("Hi."), Reply.text("Again.")]) as server:
        chat = ChatOpenRouter(api_key=KEY, base_url=server.openai_url)
        chat.chat("Hello", echo="none")
        path = tmp_path / "chat.json"
        chat.save(path)
        Chat.load(path, api_key=TEST_KEY, base_url=server.openai_url).chat("More?", echo="none")
        for request in server.requests[-2:]:
            assert request.headers["x-title"] == "chatlas"
