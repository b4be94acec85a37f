"""The providers a chat file may name, by ``provider.key``: rebuilt when a chat is loaded.

Each is imported only when a file names it (the Anthropic provider's module loads no SDK
until its first request). A new provider that chats may be saved with adds a line here.
"""

from __future__ import annotations

import importlib

from ._base import ProviderBase

__all__ = ["saved_provider", "sdk_loggers"]

_SAVED: dict[str, tuple[str, str]] = {
    "anthropic": ("chatlas_like.providers._anthropic.provider", "AnthropicProvider"),
}


# The loggers of each provider's SDK and its HTTP client, which CHATLAS_LOG turns on (as
# chatlas does: the request's method and URL, the response's status) and which are
# redacted as ours are.
_SDK_LOGGERS: dict[str, tuple[str, ...]] = {"anthropic": ("anthropic", "httpx2")}


def sdk_loggers() -> tuple[str, ...]:
    """The names of the provider SDKs' top loggers (``anthropic``, ``httpx2``)."""
    return tuple(name for names in _SDK_LOGGERS.values() for name in names)


def saved_provider(name: object) -> type[ProviderBase] | None:
    """The provider class saved under ``name`` (its key, ``"anthropic"``, or its name,
    ``"Anthropic"``: compared in lower case), or None for a name none has."""
    if not isinstance(name, str) or name.lower() not in _SAVED:
        return None
    module, attribute = _SAVED[name.lower()]
    found: type[ProviderBase] = getattr(importlib.import_module(module), attribute)
    return found
