"""chatlas's OpenAI constructors: ``ChatOpenAI`` (the Responses API),
``ChatOpenAICompletions`` (Chat Completions) and their Azure twins."""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from .._chat import Chat
from ..providers._openai.provider import (
    DEFAULT_MODEL,
    OpenAICompletionsProvider,
    OpenAIResponsesProvider,
)
from ..providers._openai.responses import is_reasoning_model

if TYPE_CHECKING:
    from .._store import ToolResultStore

__all__ = [
    "ChatAzureOpenAI",
    "ChatAzureOpenAICompletions",
    "ChatOpenAI",
    "ChatOpenAICompletions",
]

OPENAI_URL = "https://api.openai.com/v1"
ServiceTier = Literal["auto", "default", "flex", "scale", "priority"]
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def ChatOpenAI(
    *,
    system_prompt: str | None = None,
    model: str | None = None,
    base_url: str = OPENAI_URL,
    reasoning: ReasoningEffort | dict[str, Any] | None = None,
    service_tier: ServiceTier | None = None,
    api_key: str | None = None,
    kwargs: dict[str, Any] | None = None,
    store: ToolResultStore | str | os.PathLike[str] | None = None,
    tenant_id: str | None = None,
    paging: bool = False,
    **options: Any,
) -> Chat:
    """Chat with an OpenAI model through the Responses API (chatlas's ``ChatOpenAI``).

    Parameters
    ----------
    system_prompt
        The system prompt.
    model
        The model; ``"gpt-5.6-terra"`` by default, as in chatlas.
    base_url
        The API's address; another one should speak the Responses API (most
        OpenAI-compatible servers speak Chat Completions: use
        :func:`ChatOpenAICompletions` for them).
    reasoning
        A reasoning effort (``"low"``...), sent with ``summary: "auto"`` so the model's
        reasoning summaries stream as thinking; or the API's ``reasoning`` object.
    service_tier
        ``"auto"``, ``"default"``, ``"flex"``, ``"scale"`` or ``"priority"``; the cost
        follows the tier the response was served at.
    api_key
        The API key; ``OPENAI_API_KEY`` when None. Never saved with a chat.
    kwargs
        Extra arguments for the SDK client (``timeout``, ``default_headers``...).
    store, tenant_id, paging, **options
        As for :func:`~chatlas_like.ChatAnthropic`.

    Returns
    -------
    Chat
        A chat talking to the model.
    """
    _check_base_url(base_url)
    model = model or DEFAULT_MODEL
    provider = OpenAIResponsesProvider(
        model=model, api_key=api_key, base_url=base_url, client_kwargs=kwargs
    )
    if reasoning is not None and not is_reasoning_model(model):
        warnings.warn(f"Model {model} is not reasoning-capable", UserWarning, stacklevel=2)
    kwargs_chat = _responses_kwargs(reasoning, service_tier)
    return Chat(
        provider,
        system_prompt=system_prompt,
        store=store,
        tenant_id=tenant_id,
        paging=paging,
        kwargs_chat=kwargs_chat,
        **options,
    )


def ChatOpenAICompletions(
    *,
    base_url: str = OPENAI_URL,
    system_prompt: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    seed: int | None = None,
    preserve_thinking: bool = False,
    kwargs: dict[str, Any] | None = None,
    store: ToolResultStore | str | os.PathLike[str] | None = None,
    tenant_id: str | None = None,
    paging: bool = False,
    **options: Any,
) -> Chat:
    """Chat through OpenAI's Chat Completions API, or any server speaking it
    (chatlas's ``ChatOpenAICompletions``).

    Parameters
    ----------
    base_url
        The server's address (vLLM, LiteLLM, a gateway...).
    system_prompt, model, api_key, kwargs
        As for :func:`ChatOpenAI`.
    seed
        Sent with every request, for reproducible answers where the server honours it.
    preserve_thinking
        Send the model's reasoning back as ``reasoning_content``.
    store, tenant_id, paging, **options
        As for :func:`~chatlas_like.ChatAnthropic`.

    Returns
    -------
    Chat
        A chat talking to the model.
    """
    provider = OpenAICompletionsProvider(
        model=model or DEFAULT_MODEL,
        api_key=api_key,
        base_url=base_url,
        client_kwargs=kwargs,
        preserve_thinking=preserve_thinking,
    )
    return Chat(
        provider,
        system_prompt=system_prompt,
        store=store,
        tenant_id=tenant_id,
        paging=paging,
        kwargs_chat={"seed": seed} if seed is not None else {},
        **options,
    )


def ChatAzureOpenAI(
    *,
    endpoint: str,
    deployment_id: str,
    api_version: str,
    api_key: str | None = None,
    system_prompt: str | None = None,
    reasoning: ReasoningEffort | dict[str, Any] | None = None,
    service_tier: ServiceTier | None = None,
    kwargs: dict[str, Any] | None = None,
    **options: Any,
) -> Chat:
    """Chat with a model deployed on Azure OpenAI, through the Responses API.

    Parameters
    ----------
    endpoint
        The resource's endpoint, ``https://<resource>.openai.azure.com``.
    deployment_id
        The deployment (it is the model: ``chat.provider.model``).
    api_version
        The API version, e.g. ``"2025-03-01-preview"``.
    api_key
        The key; ``AZURE_OPENAI_API_KEY`` when None.
    system_prompt, reasoning, service_tier, kwargs, **options
        As for :func:`ChatOpenAI`.

    Returns
    -------
    Chat
        A chat talking to the deployment.
    """
    provider = OpenAIResponsesProvider(
        model=deployment_id,
        api_key=api_key,
        client_kwargs=kwargs,
        name="Azure/OpenAI",
        api_key_env="AZURE_OPENAI_API_KEY",
        azure=_azure(endpoint, deployment_id, api_version),
    )
    kwargs_chat = _responses_kwargs(reasoning, service_tier)
    return Chat(provider, system_prompt=system_prompt, kwargs_chat=kwargs_chat, **options)


def ChatAzureOpenAICompletions(
    *,
    endpoint: str,
    deployment_id: str,
    api_version: str,
    api_key: str | None = None,
    system_prompt: str | None = None,
    seed: int | None = None,
    kwargs: dict[str, Any] | None = None,
    **options: Any,
) -> Chat:
    """Chat with a model deployed on Azure OpenAI, through Chat Completions.

    Parameters
    ----------
    endpoint, deployment_id, api_version, api_key, system_prompt, kwargs, **options
        As for :func:`ChatAzureOpenAI`.
    seed
        As for :func:`ChatOpenAICompletions`.

    Returns
    -------
    Chat
        A chat talking to the deployment.
    """
    provider = OpenAICompletionsProvider(
        model=deployment_id,
        api_key=api_key,
        client_kwargs=kwargs,
        name="Azure/OpenAI",
        api_key_env="AZURE_OPENAI_API_KEY",
        azure=_azure(endpoint, deployment_id, api_version),
    )
    kwargs_chat = {"seed": seed} if seed is not None else {}
    return Chat(provider, system_prompt=system_prompt, kwargs_chat=kwargs_chat, **options)


def _azure(endpoint: str, deployment_id: str, api_version: str) -> dict[str, str]:
    return {
        "azure_endpoint": endpoint,
        "azure_deployment": deployment_id,
        "api_version": api_version,
    }


def _responses_kwargs(
    reasoning: str | dict[str, Any] | None, service_tier: str | None
) -> dict[str, Any]:
    """The Responses settings as chatlas keeps them, in ``kwargs_chat``: an effort with
    ``summary: "auto"`` (so summaries stream as thinking), or the API's own object."""
    kwargs_chat: dict[str, Any] = {}
    if isinstance(reasoning, str):
        kwargs_chat["reasoning"] = {"effort": reasoning, "summary": "auto"}
    elif reasoning is not None:
        kwargs_chat["reasoning"] = dict(reasoning)
    if service_tier is not None:
        kwargs_chat["service_tier"] = service_tier
    return kwargs_chat


def _check_base_url(base_url: str) -> None:
    """Warn, as chatlas does, when a third-party server is asked for the Responses API
    (a loopback server is taken to be a test double that speaks it)."""
    host = urlsplit(base_url).hostname or ""
    if host != "api.openai.com" and host not in _LOOPBACK:
        warnings.warn(
            "ChatOpenAI() uses OpenAI's Responses API, which is not supported by most "
            "third-party backends. Use ChatOpenAICompletions() instead for "
            "OpenAI-compatible backends (e.g., vLLM, Ollama, LiteLLM, etc.).",
            UserWarning,
            stacklevel=3,
        )
