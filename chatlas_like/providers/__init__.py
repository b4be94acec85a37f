"""Model providers. Only ``_anthropic.py`` imports a provider SDK, and only when used."""

from ._base import Provider, RequestSpec

__all__ = ["Provider", "RequestSpec"]
