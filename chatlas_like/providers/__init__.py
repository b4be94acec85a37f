"""Model providers: the interface every provider implements, and Anthropic's behind it."""

from ._base import Provider, RequestSpec

__all__ = ["Provider", "RequestSpec"]
