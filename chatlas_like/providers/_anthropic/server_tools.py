"""Tools Anthropic runs on its side: web search and web fetch.

Register them like any tool (``chat.register_tool(tool_web_search())``). The model's
calls and their results arrive in the answer itself as server-tool blocks
(:class:`~chatlas_like.types.ContentToolRequestSearch`,
:class:`~chatlas_like.types.ContentToolResponseSearch`, and the fetch pair), kept in
the turn exactly as received and sent back unchanged; the answer's citations stay
with its text. Nothing runs locally.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from ..._tools.tool import ToolBuiltIn

__all__ = ["ToolWebFetch", "ToolWebSearch", "UserLocation", "tool_web_fetch", "tool_web_search"]


class UserLocation(TypedDict, total=False):
    """Where the user is, to localise search results."""

    country: str
    """Two-letter ISO country code, e.g. ``"US"``."""
    city: str
    region: str
    timezone: str
    """IANA time zone, e.g. ``"America/New_York"``."""


def _domains(
    allowed_domains: Sequence[str] | None, blocked_domains: Sequence[str] | None
) -> dict[str, Any]:
    if allowed_domains and blocked_domains:
        raise ValueError(  # chatlas's words
            "Cannot specify both allowed_domains and blocked_domains. Use one or the other."
        )
    if allowed_domains:
        return {"allowed_domains": list(allowed_domains)}
    if blocked_domains:
        return {"blocked_domains": list(blocked_domains)}
    return {}


def _max_uses(max_uses: int | None) -> dict[str, Any]:
    if max_uses is None:
        return {}
    if max_uses < 1:
        raise ValueError("max_uses must be at least 1")
    return {"max_uses": max_uses}


class _AnthropicBuiltIn(ToolBuiltIn):
    """A tool Anthropic runs: its definition exists for Anthropic alone."""

    _label = "Web search"  # what chatlas's error for another provider calls it
    _definition_options: tuple[str, ...] = ()  # get_definition() keywords that set a key

    def get_definition(
        self,
        provider_name: str | None = "anthropic",
        *,
        cache_control: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """Anthropic's definition (chatlas's method); ``ValueError`` for another provider.

        Parameters
        ----------
        provider_name
            ``"anthropic"``: the only provider here.
        cache_control
            Prompt-caching settings to add to the definition.
        **options
            chatlas's other keywords: Anthropic's (``citations`` and
            ``max_content_tokens`` for web fetch) are added to the definition; those of
            other providers (``search_context_size``...) are ignored, as chatlas
            ignores them for Anthropic.
        """
        if provider_name is not None and provider_name.lower() != "anthropic":
            raise ValueError(  # chatlas's words, naming the one provider here
                f"{self._label} is not supported for provider '{provider_name}'. "
                "Supported providers: anthropic (chatlas_like talks only to Anthropic)."
            )
        definition = super().get_definition(provider_name, cache_control=cache_control)
        for key in self._definition_options:
            if options.get(key) is not None:
                definition[key] = options[key]
        return definition


class ToolWebSearch(_AnthropicBuiltIn):
    """Anthropic's web search tool (``web_search_20250305``); see :func:`tool_web_search`.

    The settings are attributes (``allowed_domains``, ``blocked_domains``,
    ``user_location``, ``max_uses``), as in chatlas; :attr:`definition` is built from
    them when the request is.
    """

    def __init__(
        self,
        *,
        allowed_domains: Sequence[str] | None = None,
        blocked_domains: Sequence[str] | None = None,
        user_location: UserLocation | None = None,
        max_uses: int | None = None,
    ) -> None:
        _domains(allowed_domains, blocked_domains)
        _max_uses(max_uses)
        super().__init__(
            "web_search",
            {},
            description="Search the web for up-to-date information.",
            annotations={"title": "Web search", "readOnlyHint": True, "openWorldHint": True},
        )
        self.allowed_domains = list(allowed_domains) if allowed_domains else None
        self.blocked_domains = list(blocked_domains) if blocked_domains else None
        self.user_location = user_location
        self.max_uses = max_uses

    @property
    def definition(self) -> dict[str, Any]:
        """The tool's definition for Anthropic, from the current settings."""
        definition: dict[str, Any] = {"name": "web_search", "type": "web_search_20250305"}
        definition.update(_max_uses(self.max_uses))
        definition.update(_domains(self.allowed_domains, self.blocked_domains))
        if self.user_location:
            definition["user_location"] = {"type": "approximate", **self.user_location}
        return definition


class ToolWebFetch(_AnthropicBuiltIn):
    """Anthropic's web fetch tool (``web_fetch_20250910``); see :func:`tool_web_fetch`.

    The settings are attributes (``allowed_domains``, ``blocked_domains``,
    ``max_uses``, ``citations``, ``max_content_tokens``); :attr:`definition` is built
    from them when the request is.
    """

    _label = "Web fetch"
    _definition_options = ("citations", "max_content_tokens")

    def __init__(
        self,
        *,
        allowed_domains: Sequence[str] | None = None,
        blocked_domains: Sequence[str] | None = None,
        max_uses: int | None = None,
        citations: bool = False,
        max_content_tokens: int | None = None,
    ) -> None:
        _domains(allowed_domains, blocked_domains)
        _max_uses(max_uses)
        super().__init__(
            "web_fetch",
            {},
            description="Fetch and analyze content from a web URL.",
            annotations={"title": "Web fetch", "readOnlyHint": True, "openWorldHint": True},
        )
        self.allowed_domains = list(allowed_domains) if allowed_domains else None
        self.blocked_domains = list(blocked_domains) if blocked_domains else None
        self.max_uses = max_uses
        self.citations = citations
        self.max_content_tokens = max_content_tokens

    @property
    def definition(self) -> dict[str, Any]:
        """The tool's definition for Anthropic, from the current settings."""
        definition: dict[str, Any] = {"name": "web_fetch", "type": "web_fetch_20250910"}
        definition.update(_max_uses(self.max_uses))
        definition.update(_domains(self.allowed_domains, self.blocked_domains))
        if self.citations:
            definition["citations"] = {"enabled": True}
        if self.max_content_tokens is not None:
            definition["max_content_tokens"] = self.max_content_tokens
        return definition


def tool_web_search(
    *,
    allowed_domains: Sequence[str] | None = None,
    blocked_domains: Sequence[str] | None = None,
    user_location: UserLocation | None = None,
    max_uses: int | None = None,
) -> ToolWebSearch:
    """Let the model search the web (Anthropic runs the searches).

    Your organisation must enable web search in the Anthropic Console; searches are
    billed per use.

    Parameters
    ----------
    allowed_domains
        Search only these domains (not with ``blocked_domains``).
    blocked_domains
        Never search these domains.
    user_location
        Localise results: ``country`` (ISO code), ``city``, ``region``, ``timezone``.
    max_uses
        The most searches in one request.

    Returns
    -------
    ToolWebSearch
        A tool for :meth:`~chatlas_like.Chat.register_tool`.

    Examples
    --------
    ```python
    chat = ChatAnthropic()
    chat.register_tool(tool_web_search(allowed_domains=["cran.r-project.org"]))
    chat.chat("When was ggplot2 1.0.0 released?")
    ```
    """
    return ToolWebSearch(
        allowed_domains=allowed_domains,
        blocked_domains=blocked_domains,
        user_location=user_location,
        max_uses=max_uses,
    )


def tool_web_fetch(
    *,
    allowed_domains: Sequence[str] | None = None,
    blocked_domains: Sequence[str] | None = None,
    max_uses: int | None = None,
    citations: bool = False,
    max_content_tokens: int | None = None,
) -> ToolWebFetch:
    """Let the model read web pages by URL (Anthropic fetches them).

    Parameters
    ----------
    allowed_domains
        Fetch only from these domains (not with ``blocked_domains``).
    blocked_domains
        Never fetch from these domains.
    max_uses
        The most fetches in one request.
    citations
        Ask the model to cite the fetched pages (off by default, as in the API).
    max_content_tokens
        Cut each fetched page to about this many tokens.

    Returns
    -------
    ToolWebFetch
        A tool for :meth:`~chatlas_like.Chat.register_tool`.
    """
    return ToolWebFetch(
        allowed_domains=allowed_domains,
        blocked_domains=blocked_domains,
        max_uses=max_uses,
        citations=citations,
        max_content_tokens=max_content_tokens,
    )
