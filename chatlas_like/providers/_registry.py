"""The providers a chat file may name, by ``provider.name``: rebuilt when a chat is loaded.

Each is imported only when a file names it (the Anthropic provider's module loads no SDK
until its first request). A new provider that chats may be saved with adds a line here.
"""

from __future__ import annotations

import importlib

from ._base import ProviderBase

__all__ = ["saved_provider"]

_SAVED: dict[str, tuple[str, str]] = {
    "anthropic": ("chatlas_like.providers._anthropic.provider", "AnthropicProvider"),
}


def saved_provider(name: object) -> type[ProviderBase] | None:
    """The provider class saved under ``name``, or None for a name none has."""
    if not isinstance(name, str) or name not in _SAVED:
        return None
    module, attribute = _SAVED[name]
    found: type[ProviderBase] = getattr(importlib.import_module(module), attribute)
    return found
