"""The OpenAI-compatible servers chatlas has constructors for, each a provider class of its
own: its name, address, key variable and wire quirks live here, once, for the constructor
that makes it and for ``Chat.load``, which rebuilds it from a chat file.

A chat file keeps only the server's key and the model. The address and the key variable
come from this table (or the loader's ``base_url=``), never from the file, so a file
cannot send a key to a host of its choosing, as for every provider. Cloudflare,
Databricks and Portkey are not here: their address or their authentication belongs to
the account (``Chat.load(path, provider=...)`` rebuilds them).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from .provider import LocalServerProvider, OpenAICompletionsProvider

__all__ = [
    "SERVERS",
    "DeepSeekProvider",
    "GroqProvider",
    "HuggingFaceProvider",
    "KnownServer",
    "LMStudioProvider",
    "MistralProvider",
    "OllamaProvider",
    "OpenRouterProvider",
    "PerplexityProvider",
]


@dataclass(frozen=True, slots=True)
class KnownServer:
    """What chatlas sets for one server."""

    name: str
    base_url: str  # a local server's root; a hosted one's API base
    api_key_env: str  # "" for a server that takes no key (Ollama)
    preserve_thinking: bool = False
    stream_options: bool = True
    models_path: str | None = None  # a local server lists its models here

    @property
    def key(self) -> str:
        return self.name.lower()


SERVERS: dict[str, KnownServer] = {
    s.key: s
    for s in (
        KnownServer("Ollama", "http://localhost:11434", "", models_path="/api/tags"),
        KnownServer(
            "LM Studio", "http://localhost:1234", "LMSTUDIO_API_KEY", models_path="/v1/models"
        ),
        KnownServer(
            "OpenRouter",
            "https://openrouter.ai/api/v1",
            "OPENROUTER_API_KEY",
            preserve_thinking=True,
        ),
        KnownServer(
            "DeepSeek", "https://api.deepseek.com", "DEEPSEEK_API_KEY", preserve_thinking=True
        ),
        KnownServer("Groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
        KnownServer(
            "Mistral", "https://api.mistral.ai/v1/", "MISTRAL_API_KEY", stream_options=False
        ),
        KnownServer("Perplexity", "https://api.perplexity.ai/", "PERPLEXITY_API_KEY"),
        KnownServer("HuggingFace", "https://router.huggingface.co/v1", "HUGGINGFACE_API_KEY"),
    )
}


class _Hosted(OpenAICompletionsProvider):
    """A hosted server of the table."""

    server: ClassVar[KnownServer]

    def __init__(self, **kwargs: Any) -> None:
        server = self.server
        kwargs.setdefault("base_url", server.base_url)
        kwargs.setdefault("preserve_thinking", server.preserve_thinking)
        kwargs.setdefault("stream_options", server.stream_options)
        super().__init__(name=server.name, api_key_env=server.api_key_env, **kwargs)

    @classmethod
    def from_saved(
        cls, settings: Mapping[str, Any], *, api_key: str | None, base_url: str | None
    ) -> OpenAICompletionsProvider:
        return cls(api_key=api_key, base_url=base_url or cls.server.base_url, **settings)


class _Local(LocalServerProvider):
    """A local server of the table: it takes no key (any placeholder does)."""

    server: ClassVar[KnownServer]

    def __init__(self, *, root_url: str | None = None, **kwargs: Any) -> None:
        server = self.server
        root = re.sub(r"/+$", "", root_url or server.base_url)
        assert server.models_path is not None
        kwargs.setdefault("base_url", f"{root}/v1")
        env = server.api_key_env
        # Its own variable only (Ollama has none), never OPENAI_API_KEY.
        kwargs["api_key"] = kwargs.get("api_key") or (os.environ.get(env) if env else None)
        kwargs["api_key"] = kwargs["api_key"] or server.key.replace(" ", "")
        super().__init__(
            root_url=root,
            models_path=server.models_path,
            name=server.name,
            api_key_env=env,
            **kwargs,
        )

    @classmethod
    def from_saved(
        cls, settings: Mapping[str, Any], *, api_key: str | None, base_url: str | None
    ) -> OpenAICompletionsProvider:
        root = re.sub(r"/v1/?$", "", base_url.rstrip("/")) if base_url else None
        return cls(root_url=root, api_key=api_key, **settings)


class OllamaProvider(_Local):
    server = SERVERS["ollama"]


class LMStudioProvider(_Local):
    server = SERVERS["lm studio"]


class OpenRouterProvider(_Hosted):
    server = SERVERS["openrouter"]

    def __init__(self, *, client_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        client = dict(client_kwargs or {})
        client["default_headers"] = {  # the attribution chatlas sends
            "HTTP-Referer": "https://posit-dev.github.io/chatlas",
            "X-Title": "chatlas",
            **(client.get("default_headers") or {}),
        }
        super().__init__(client_kwargs=client, **kwargs)


class DeepSeekProvider(_Hosted):
    server = SERVERS["deepseek"]


class GroqProvider(_Hosted):
    server = SERVERS["groq"]


class MistralProvider(_Hosted):
    server = SERVERS["mistral"]


class PerplexityProvider(_Hosted):
    server = SERVERS["perplexity"]


class HuggingFaceProvider(_Hosted):
    server = SERVERS["huggingface"]
