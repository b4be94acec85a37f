"""Every option of a chat, in one table.

========================  ===========  ====================================================
option                    default      meaning
========================  ===========  ====================================================
``max_tool_rounds``       25           model calls that may follow tool results in one
                                       ``chat()``; None for no limit
``max_tokens_per_chat``   None         input + output tokens one ``chat()`` may use
``max_concurrency``       8            tool calls of one turn that run at once
``tool_timeout``          None         seconds one tool call may take (per tool: ``timeout``),
                                       and then again the formatting of its value
``max_result_bytes``      100_000      UTF-8 bytes of one result the model receives
                                       (per tool: ``max_result_bytes``); also the most
                                       items formatting reads from a collection
``store_max_bytes``       10_000_000   UTF-8 bytes of one result kept in the result store
``max_retries``           3            retries of a model call on 429, 5xx, 529 and
                                       connection errors, with backoff and jitter
``echo_thinking``         True         echo the model's extended thinking (dimmed); False
                                       hides it (it is kept in the history either way)
``resume_paused``         False        when a server tool pauses the model's turn
                                       (a reason in the provider's
                                       ``paused_finish_reasons``), send it back at once
                                       so the model carries on (each resume counts as a
                                       round); False hands the paused turn back, as
                                       chatlas does
``context_budget``        None         input tokens a request may reach before old tool
                                       results are sent as short references the model can
                                       read back (``read_tool_result``); None sends the
                                       whole history, as chatlas does (the model's context
                                       window still elides, rather than fail)
========================  ===========  ====================================================

Set them on the chat (``ChatAnthropic(..., max_tool_rounds=10)`` or
``chat.set_options(...)``), or for one call (``chat.chat("...", max_tool_rounds=3)``).
Per tool, ``Tool.from_func(f, sequential=True, timeout=5, max_result_bytes=10_000)``:
``sequential`` tools run alone, in call order, for code that is not thread-safe.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from ..providers._base import Provider

__all__ = ["CallOptions", "ChatOptions", "with_model_params"]


class CallOptions(TypedDict, total=False):
    """Per-call overrides of :class:`ChatOptions` (keyword arguments of the chat verbs)."""

    max_tool_rounds: int | None
    max_tokens_per_chat: int | None
    max_concurrency: int
    tool_timeout: float | None
    max_result_bytes: int
    store_max_bytes: int
    max_retries: int
    echo_thinking: bool
    resume_paused: bool
    context_budget: int | None


@dataclass(frozen=True, slots=True)
class ChatOptions:
    """The options of a chat; see the module docstring for the table."""

    max_tool_rounds: int | None = 25
    max_tokens_per_chat: int | None = None
    max_concurrency: int = 8
    tool_timeout: float | None = None
    max_result_bytes: int = 100_000
    store_max_bytes: int = 10_000_000
    max_retries: int = 3
    echo_thinking: bool = True
    resume_paused: bool = False
    context_budget: int | None = None

    def __post_init__(self) -> None:
        _positive_or_none("max_tool_rounds", self.max_tool_rounds, allow_zero=True)
        _positive_or_none("max_tokens_per_chat", self.max_tokens_per_chat)
        _positive_or_none("tool_timeout", self.tool_timeout)
        _positive_or_none("context_budget", self.context_budget)
        for name in ("max_concurrency", "max_result_bytes", "store_max_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.max_retries < 0:
            raise ValueError("max_retries must be 0 or more")

    def merged(self, overrides: CallOptions | dict[str, Any] | None) -> ChatOptions:
        """These options with ``overrides`` applied; unknown names are an error."""
        if not overrides:
            return self
        known = {f.name for f in fields(self)}
        unknown = set(overrides) - known
        if unknown:
            raise TypeError(
                f"unknown option(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}"
            )
        return replace(self, **overrides)


def _positive_or_none(name: str, value: float | None, *, allow_zero: bool = False) -> None:
    if value is None:
        return
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'0 or more' if allow_zero else 'positive'} or None")


def with_model_params(
    current: Mapping[str, Any], given: Mapping[str, Any], provider: Provider
) -> dict[str, Any]:
    """``current`` sampling parameters with ``given`` set (None resets one to the provider's
    default); those ``provider`` has not got are dropped with chatlas's warning."""
    unsupported = sorted(set(given) - provider.supported_model_params())
    if unsupported:
        warnings.warn(  # worded as chatlas words it, for filters written against it
            f"The following parameters are not supported by the provider "
            f"({provider.label}): {', '.join(unsupported)}. They are ignored.",
            UserWarning,
            stacklevel=3,
        )
    params = dict(current)
    for key, value in given.items():
        if key in unsupported:
            continue
        if value is None:
            params.pop(key, None)
        else:
            params[key] = value
    return params
