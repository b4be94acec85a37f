"""ChatAnthropic(): a :class:`Chat` talking to an Anthropic model.

The factory lives above both the chat and the provider, so that the provider translates
and sends without ever importing :class:`Chat` (dependencies run one way).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ._chat import Chat
from .providers._anthropic.provider import (
    DEFAULT_MODEL,
    AnthropicProvider,
    CacheTTL,
    ReasoningEffort,
)
from .providers._anthropic.schema import StructuredMode

if TYPE_CHECKING:
    from ._store import ToolResultStore

__all__ = ["ChatAnthropic", "reasoning_kwargs"]


def ChatAnthropic(
    *,
    system_prompt: str | None = None,
    model: str | None = None,
    max_tokens: int = 4096,
    cache: CacheTTL = "5m",
    api_key: str | None = None,
    base_url: str | None = None,
    reasoning: int | ReasoningEffort | dict[str, Any] | None = None,
    structured_output_mode: StructuredMode = "auto",
    kwargs: dict[str, Any] | None = None,
    store: ToolResultStore | str | os.PathLike[str] | None = None,
    tenant_id: str | None = None,
    paging: bool = False,
    **options: Any,
) -> Chat:
    """Chat with an Anthropic Claude model.

    Parameters
    ----------
    system_prompt
        The system prompt.
    model
        The model, e.g. ``"claude-haiku-4-5"``; ``"claude-sonnet-5"`` by default (as chatlas).
    max_tokens
        The most tokens one answer may use.
    cache
        Prompt caching: ``"5m"`` (default), ``"1h"`` or ``"none"``.
    api_key
        The API key; ``ANTHROPIC_API_KEY`` when None. Never saved with a chat.
    base_url
        Another endpoint, e.g. the loopback server of :mod:`chatlas_like.testing`.
    reasoning
        Extended thinking. An int is a fixed thinking budget in tokens (below
        ``max_tokens``); ``"low"``, ``"medium"``, ``"high"``, ``"xhigh"`` or ``"max"``
        turns on adaptive thinking at that effort; a dict is sent as the API's
        ``thinking`` object. Thinking blocks are kept with their signatures and sent
        back unchanged.
    structured_output_mode
        How :meth:`~chatlas_like.Chat.chat_structured` asks for data: ``"auto"`` uses
        Anthropic's structured outputs where the model has them (Claude 4.5 and later)
        and a forced tool otherwise; ``"native"`` or ``"tool"`` force one way.
    kwargs
        Extra arguments for the SDK client (``timeout``, ``default_headers``...).
    store
        A tool-result store, or its URL or file path: every tool result is kept there
        as it is made (see :class:`~chatlas_like.ToolResultStore`).
    tenant_id
        Whose results they are in the store.
    paging
        Let the model read past the cut of a long result from the store.
    **options
        Chat options (see :class:`~chatlas_like.ChatOptions`), e.g. ``max_tool_rounds``.

    Returns
    -------
    Chat
        A chat talking to the model.
    """
    provider = AnthropicProvider(
        model=model or DEFAULT_MODEL,
        max_tokens=max_tokens,
        api_key=api_key,
        base_url=base_url,
        cache=cache,
        client_kwargs=kwargs,
        reasoning=reasoning,
        structured_output_mode=structured_output_mode,
    )
    return Chat(
        provider,
        system_prompt=system_prompt,
        store=store,
        tenant_id=tenant_id,
        paging=paging,
        kwargs_chat=reasoning_kwargs(provider),
        **options,
    )


def reasoning_kwargs(provider: AnthropicProvider) -> dict[str, Any]:
    """The thinking settings as chatlas keeps them: in the chat's ``kwargs_chat`` (the
    provider sends the same; a chat file keeps them as ``reasoning``)."""
    if provider.thinking is None:
        return {}
    kwargs: dict[str, Any] = {"thinking": dict(provider.thinking)}
    if provider.effort is not None:
        kwargs["output_config"] = {"effort": provider.effort}
    return kwargs
