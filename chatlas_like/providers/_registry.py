"""The providers of this package, by ``provider.key``: one line each.

A chat file names its provider by key, and is rebuilt with the class found here; prices
(``get_cost()``) and the SDK loggers (``CHATLAS_LOG``) are read from the same classes.
Each module is imported only when something asks for it (a provider's module loads no
SDK until its first request).
"""

from __future__ import annotations

import importlib

from ._base import Provider

__all__ = ["provider_class", "saved_provider", "sdk_loggers"]

_PROVIDERS: dict[str, str] = {
    "anthropic": "chatlas_like.providers._anthropic.provider:AnthropicProvider",
    "aws/bedrock": "chatlas_like.providers._anthropic.provider:AnthropicBedrockProvider",
    "openai": "chatlas_like.providers._openai.provider:OpenAIResponsesProvider",
    "openai-completions": "chatlas_like.providers._openai.provider:OpenAICompletionsProvider",
    "ollama": "chatlas_like.providers._openai.servers:OllamaProvider",
    "lm studio": "chatlas_like.providers._openai.servers:LMStudioProvider",
    "openrouter": "chatlas_like.providers._openai.servers:OpenRouterProvider",
    "deepseek": "chatlas_like.providers._openai.servers:DeepSeekProvider",
    "groq": "chatlas_like.providers._openai.servers:GroqProvider",
    "mistral": "chatlas_like.providers._openai.servers:MistralProvider",
    "perplexity": "chatlas_like.providers._openai.servers:PerplexityProvider",
    "huggingface": "chatlas_like.providers._openai.servers:HuggingFaceProvider",
}


def provider_class(key: str) -> type[Provider] | None:
    """The provider class registered under ``key`` (lower case), or None."""
    where = _PROVIDERS.get(key)
    if where is None:
        return None
    module, attribute = where.split(":")
    found: type[Provider] = getattr(importlib.import_module(module), attribute)
    return found


def sdk_loggers() -> tuple[str, ...]:
    """The names of the registered providers' SDK loggers (``anthropic``, ``httpx2``)."""
    names: dict[str, None] = {}
    for key in _PROVIDERS:
        cls = provider_class(key)
        names.update(dict.fromkeys(cls.sdk_loggers if cls is not None else ()))
    return tuple(names)


def saved_provider(name: object) -> type[Provider] | None:
    """The provider class saved under ``name`` (its key, ``"anthropic"``, or its name,
    ``"Anthropic"``: compared in lower case), or None for a name none has."""
    if not isinstance(name, str):
        return None
    return provider_class(name.lower())
