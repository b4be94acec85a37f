"""chatlas's constructors of servers that speak OpenAI's Chat Completions API: local
ones (Ollama, LM Studio) and hosted ones (OpenRouter, DeepSeek, Groq, Mistral,
Perplexity, Hugging Face, Cloudflare, Databricks, Portkey). Each is a
:class:`~chatlas_like.providers._openai.provider.OpenAICompletionsProvider` with the
server's address, key variable and name, as chatlas sets them."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from functools import partial
from typing import Any, cast
from urllib.parse import urlsplit

from .._chat import Chat
from ..providers._openai.provider import OpenAICompletionsProvider, local_models
from ..providers._openai.servers import (
    SERVERS,
    DeepSeekProvider,
    GroqProvider,
    HuggingFaceProvider,
    LMStudioProvider,
    MistralProvider,
    OllamaProvider,
    OpenRouterProvider,
    PerplexityProvider,
)

__all__ = [
    "ChatCloudflare",
    "ChatDatabricks",
    "ChatDeepSeek",
    "ChatGroq",
    "ChatHuggingFace",
    "ChatLMStudio",
    "ChatMistral",
    "ChatOllama",
    "ChatOpenRouter",
    "ChatPerplexity",
    "ChatPortkey",
]

_LOCAL = ("localhost", "127.0.0.1", "::1")


def _chat(
    make: Callable[..., OpenAICompletionsProvider],
    *,
    model: str,
    base_url: str,
    api_key: str | None,
    system_prompt: str | None,
    kwargs: dict[str, Any] | None,
    seed: int | None = None,
    kwargs_chat: dict[str, Any] | None = None,
    options: dict[str, Any],
    **provider: Any,
) -> Chat:
    made = make(model=model, api_key=api_key, base_url=base_url, client_kwargs=kwargs, **provider)
    extra = dict(kwargs_chat or {})
    if seed is not None:
        extra["seed"] = seed
    return Chat(made, system_prompt=system_prompt, kwargs_chat=extra, **options)


def _named(name: str, api_key_env: str) -> Callable[..., OpenAICompletionsProvider]:
    """A server whose address or authentication is the account's: a chat file of it is
    rebuilt only by ``Chat.load(path, provider=...)``."""
    return partial(OpenAICompletionsProvider, name=name, api_key_env=api_key_env)


def ChatOllama(
    model: str | None = None,
    *,
    system_prompt: str | None = None,
    base_url: str = SERVERS["ollama"].base_url,
    reasoning_effort: str | None = None,
    seed: int | None = None,
    kwargs: dict[str, Any] | None = None,
    **options: Any,
) -> Chat:
    """Chat with a model an Ollama server runs (locally by default; no key).

    Parameters
    ----------
    model
        The model, e.g. ``"llama3.2"``; without one, the error lists the models the
        server has.
    system_prompt
        The system prompt.
    base_url
        The Ollama server (``http://localhost:11434``).
    reasoning_effort
        Sent as ``reasoning_effort`` for models that reason.
    seed
        Sent with every request.
    kwargs
        Extra arguments for the SDK client.
    **options
        Chat options (see :class:`~chatlas_like.ChatOptions`).

    Returns
    -------
    Chat
        A chat talking to the model.
    """
    base_url = re.sub(r"/+$", "", base_url)
    local = (urlsplit(base_url).hostname or "") in _LOCAL
    try:
        ids = [str(m["id"]) for m in local_models(base_url, "/api/tags")]
    except (OSError, ValueError):
        raise RuntimeError(
            "Can't find locally running ollama."
            if local
            else f"Can't connect to ollama at {base_url}."
        ) from None
    if model is None:
        raise ValueError(f"Must specify model. Available models: {', '.join(ids)}")
    if re.sub(r":latest$", "", model) not in ids:
        if local:
            raise ValueError(
                f"Model {model!r} is not installed locally. Run `ollama pull {model}` to "
                f"install it. Available models: {', '.join(ids)}"
            )
        raise ValueError(
            f"Model {model!r} is not available on {base_url}. Available models: {', '.join(ids)}"
        )
    provider = OllamaProvider(root_url=base_url, model=model, client_kwargs=kwargs)
    extra: dict[str, Any] = {}
    if reasoning_effort is not None:
        extra["reasoning_effort"] = reasoning_effort
    if seed is not None:
        extra["seed"] = seed
    return Chat(provider, system_prompt=system_prompt, kwargs_chat=extra, **options)


def ChatLMStudio(
    model: str | None = None,
    *,
    system_prompt: str | None = None,
    base_url: str = SERVERS["lm studio"].base_url,
    api_key: str | None = None,
    seed: int | None = None,
    kwargs: dict[str, Any] | None = None,
    **options: Any,
) -> Chat:
    """Chat with a model LM Studio has loaded (``LMSTUDIO_BASE_URL`` and
    ``LMSTUDIO_API_KEY`` are read as chatlas reads them).

    Parameters
    ----------
    model
        The model; without one, the error lists the loaded models.
    system_prompt, base_url, api_key, seed, kwargs, **options
        As for :func:`ChatOllama` (``api_key`` only if the server asks for one).

    Returns
    -------
    Chat
        A chat talking to the model.
    """
    base_url = re.sub(r"/+$", "", os.environ.get("LMSTUDIO_BASE_URL", base_url))
    key = api_key if api_key is not None else os.environ.get("LMSTUDIO_API_KEY", "")
    try:
        ids = [str(m["id"]) for m in local_models(base_url, "/v1/models", key)]
    except (OSError, ValueError):
        raise RuntimeError("Can't find locally running LM Studio.") from None
    if model is None:
        raise ValueError(f"Must specify model. Locally loaded models: {', '.join(ids)}")
    if model not in ids:
        raise ValueError(
            f"Model '{model}' is not available in LM Studio. Load the model using the LM "
            f"Studio GUI. Locally loaded models: {', '.join(ids)}"
        )
    provider = LMStudioProvider(
        root_url=base_url, model=model, api_key=key or None, client_kwargs=kwargs
    )
    extra = {"seed": seed} if seed is not None else {}
    return Chat(provider, system_prompt=system_prompt, kwargs_chat=extra, **options)


def ChatOpenRouter(
    *,
    system_prompt: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    base_url: str = SERVERS["openrouter"].base_url,
    seed: int | None = None,
    kwargs: dict[str, Any] | None = None,
    **options: Any,
) -> Chat:
    """Chat through OpenRouter (``OPENROUTER_API_KEY``); see :func:`ChatOllama` for the
    parameters. Reasoning is sent back, as OpenRouter wants it.

    Parameters
    ----------
    system_prompt, model, api_key, base_url, seed, kwargs, **options
        As for :func:`~chatlas_like.ChatOpenAICompletions` (``**options``: chat
        options, see :class:`~chatlas_like.ChatOptions`).

    Returns
    -------
    Chat
        A chat talking to the model.
    """
    return _chat(
        OpenRouterProvider,
        model=model or "gpt-5.6-terra",
        base_url=base_url,
        api_key=api_key,
        system_prompt=system_prompt,
        kwargs=kwargs,
        seed=seed,
        options=options,
    )


def ChatDeepSeek(
    *,
    system_prompt: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    base_url: str = SERVERS["deepseek"].base_url,
    seed: int | None = None,
    kwargs: dict[str, Any] | None = None,
    **options: Any,
) -> Chat:
    """Chat with DeepSeek (``DEEPSEEK_API_KEY``); reasoning is sent back, as DeepSeek
    wants it.

    Parameters
    ----------
    system_prompt, model, api_key, base_url, seed, kwargs, **options
        As for :func:`~chatlas_like.ChatOpenAICompletions` (``**options``: chat
        options, see :class:`~chatlas_like.ChatOptions`).

    Returns
    -------
    Chat
        A chat talking to the model.
    """
    return _chat(
        DeepSeekProvider,
        model=model or "deepseek-v4-flash",
        base_url=base_url,
        api_key=api_key,
        system_prompt=system_prompt,
        kwargs=kwargs,
        seed=seed,
        options=options,
    )


def ChatGroq(
    *,
    system_prompt: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    base_url: str = SERVERS["groq"].base_url,
    seed: int | None = None,
    kwargs: dict[str, Any] | None = None,
    **options: Any,
) -> Chat:
    """Chat through Groq (``GROQ_API_KEY``).

    Parameters
    ----------
    system_prompt, model, api_key, base_url, seed, kwargs, **options
        As for :func:`~chatlas_like.ChatOpenAICompletions` (``**options``: chat
        options, see :class:`~chatlas_like.ChatOptions`).

    Returns
    -------
    Chat
        A chat talking to the model.
    """
    return _chat(
        GroqProvider,
        model=model or "openai/gpt-oss-20b",
        base_url=base_url,
        api_key=api_key,
        system_prompt=system_prompt,
        kwargs=kwargs,
        seed=seed,
        options=options,
    )


def ChatMistral(
    *,
    system_prompt: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    base_url: str = SERVERS["mistral"].base_url,
    seed: int | None = None,
    kwargs: dict[str, Any] | None = None,
    **options: Any,
) -> Chat:
    """Chat with Mistral (``MISTRAL_API_KEY``); a seed is sent as Mistral names it
    (``random_seed``), and no ``stream_options``, which Mistral refuses.

    Parameters
    ----------
    system_prompt, model, api_key, base_url, seed, kwargs, **options
        As for :func:`~chatlas_like.ChatOpenAICompletions` (``**options``: chat
        options, see :class:`~chatlas_like.ChatOptions`).

    Returns
    -------
    Chat
        A chat talking to the model.
    """
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ValueError("MistralProvider only accepts an integer seed, or None.")
    return _chat(
        MistralProvider,
        model=model or "mistral-large-latest",
        base_url=base_url,
        api_key=api_key,
        system_prompt=system_prompt,
        kwargs=kwargs,
        kwargs_chat={"random_seed": seed} if seed is not None else None,
        options=options,
    )


def ChatPerplexity(
    *,
    system_prompt: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    base_url: str = SERVERS["perplexity"].base_url,
    seed: int | None = None,
    kwargs: dict[str, Any] | None = None,
    **options: Any,
) -> Chat:
    """Chat with Perplexity (``PERPLEXITY_API_KEY``).

    Parameters
    ----------
    system_prompt, model, api_key, base_url, seed, kwargs, **options
        As for :func:`~chatlas_like.ChatOpenAICompletions` (``**options``: chat
        options, see :class:`~chatlas_like.ChatOptions`).

    Returns
    -------
    Chat
        A chat talking to the model.
    """
    return _chat(
        PerplexityProvider,
        model=model or "sonar",
        base_url=base_url,
        api_key=api_key,
        system_prompt=system_prompt,
        kwargs=kwargs,
        seed=seed,
        options=options,
    )


def ChatHuggingFace(
    *,
    system_prompt: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    kwargs: dict[str, Any] | None = None,
    **options: Any,
) -> Chat:
    """Chat through Hugging Face's inference router (``HUGGINGFACE_API_KEY``).

    Parameters
    ----------
    system_prompt, model, api_key, kwargs, **options
        As for :func:`~chatlas_like.ChatOpenAICompletions` (``**options``: chat
        options, see :class:`~chatlas_like.ChatOptions`).

    Returns
    -------
    Chat
        A chat talking to the model.
    """
    return _chat(
        HuggingFaceProvider,
        model=model or "Qwen/Qwen3-235B-A22B-Instruct-2507",
        base_url=SERVERS["huggingface"].base_url,
        api_key=api_key,
        system_prompt=system_prompt,
        kwargs=kwargs,
        options=options,
    )


def ChatCloudflare(
    *,
    account: str | None = None,
    system_prompt: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    seed: int | None = None,
    kwargs: dict[str, Any] | None = None,
    **options: Any,
) -> Chat:
    """Chat with Cloudflare Workers AI (``CLOUDFLARE_API_KEY``; the account from
    ``account`` or ``CLOUDFLARE_ACCOUNT_ID``).

    Parameters
    ----------
    account
        The Cloudflare account id.
    system_prompt, model, api_key, seed, kwargs, **options
        As for :func:`~chatlas_like.ChatOpenAICompletions` (``**options``: chat
        options, see :class:`~chatlas_like.ChatOptions`).

    Returns
    -------
    Chat
        A chat talking to the model.
    """
    account = account or os.environ.get("CLOUDFLARE_ACCOUNT_ID")
    if not account:
        raise ValueError(
            "Cloudflare account ID is required. Set the CLOUDFLARE_ACCOUNT_ID environment "
            "variable or pass the `account` parameter."
        )
    return _chat(
        _named("Cloudflare", "CLOUDFLARE_API_KEY"),
        model=model or "@cf/meta/llama-3.3-70b-instruct-fp8-fast",
        base_url=f"https://api.cloudflare.com/client/v4/accounts/{account}/ai/v1/",
        api_key=api_key,
        system_prompt=system_prompt,
        kwargs=kwargs,
        seed=seed,
        options=options,
    )


def ChatDatabricks(
    *,
    system_prompt: str | None = None,
    model: str | None = None,
    workspace_client: Any = None,
    **options: Any,
) -> Chat:
    """Chat with a Databricks model serving endpoint; authentication is the
    ``databricks-sdk``'s (``DATABRICKS_HOST`` and ``DATABRICKS_TOKEN``, or its unified
    auth), which must be installed.

    Parameters
    ----------
    workspace_client
        A ``databricks.sdk.WorkspaceClient``; made from the environment when None.
    system_prompt, model, **options
        As for :func:`~chatlas_like.ChatOpenAICompletions` (``**options``: chat
        options, see :class:`~chatlas_like.ChatOptions`).

    Returns
    -------
    Chat
        A chat talking to the model.
    """
    if workspace_client is None:
        try:
            from databricks.sdk import WorkspaceClient  # pyright: ignore[reportMissingImports, reportUnknownVariableType]
        except ImportError:
            raise ImportError(
                "`ChatDatabricks()` requires the `databricks-sdk` package. Install it "
                "with `pip install databricks-sdk`."
            ) from None
        workspace_client = cast(Any, WorkspaceClient())
    config: Any = workspace_client.config
    headers: dict[str, str] = dict(config.authenticate())
    return _chat(
        _named("Databricks", "DATABRICKS_TOKEN"),
        model=model or "databricks-claude-sonnet-4-6",
        base_url=f"{str(config.host).rstrip('/')}/serving-endpoints",
        api_key="no-token",  # the workspace's own headers authenticate
        system_prompt=system_prompt,
        kwargs={"default_headers": headers},
        options=options,
        stream_options=False,
    )


def ChatPortkey(
    *,
    system_prompt: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    virtual_key: str | None = None,
    base_url: str = "https://api.portkey.ai/v1",
    kwargs: dict[str, Any] | None = None,
    **options: Any,
) -> Chat:
    """Chat through the Portkey AI gateway (``PORTKEY_API_KEY``; ``virtual_key`` or
    ``PORTKEY_VIRTUAL_KEY``, which chatlas documents but does not read).

    Parameters
    ----------
    virtual_key
        A Portkey virtual key (``x-portkey-virtual-key``).
    system_prompt, model, api_key, base_url, kwargs, **options
        As for :func:`~chatlas_like.ChatOpenAICompletions` (``**options``: chat
        options, see :class:`~chatlas_like.ChatOptions`).

    Returns
    -------
    Chat
        A chat talking to the model.
    """
    api_key = api_key or os.environ.get("PORTKEY_API_KEY")
    virtual_key = virtual_key or os.environ.get("PORTKEY_VIRTUAL_KEY")
    client = dict(kwargs or {})
    headers = {"x-portkey-api-key": api_key, "x-portkey-virtual-key": virtual_key}
    client["default_headers"] = {
        **{k: v for k, v in headers.items() if v is not None},
        **(client.get("default_headers") or {}),
    }
    return _chat(
        _named("Portkey", "PORTKEY_API_KEY"),
        model=model or "gpt-5.4",
        base_url=base_url,
        api_key=api_key,
        system_prompt=system_prompt,
        kwargs=client,
        options=options,
    )
