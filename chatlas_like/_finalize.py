"""The one place a tool result becomes final: formatted, cut to size, numbered, stored.

Every result passes here once before it enters the history, whatever produced it (a
tool, a refusal, an interrupt repair):

1. its model-facing value is computed and cached; a value with no form in its
   ``model_format`` becomes an ``error`` result that says what the value was;
2. a value over ``max_result_bytes`` UTF-8 bytes (the tool's limit, else the chat's)
   is cut on a character boundary and a one-line notice is appended; the result records
   ``original_length``, ``stored_length`` and ``is_truncated``; in a content list
   (images, documents and text) only the text counts and is cut, the media are kept;
3. it gets the next sequence number of the run, and the result hooks (the tool-result
   store) see it with that number.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

import orjson

from ._content import ContentText
from ._history import History
from ._model_format import FormatError, is_media
from ._tool_result import ContentToolResult
from ._tools import Tool, ToolBuiltIn

__all__ = ["Finalizer", "ResultHook", "cut_to_bytes", "utf8_length"]

ResultHook = Callable[[ContentToolResult, int], ContentToolResult | None]
_CHUNK = 1 << 20


def utf8_length(text: str) -> int:
    """UTF-8 bytes of ``text``, without encoding all of a huge string at once."""
    if text.isascii():
        return len(text)
    if len(text) <= _CHUNK:
        return len(text.encode())
    return sum(len(text[i : i + _CHUNK].encode()) for i in range(0, len(text), _CHUNK))


def cut_to_bytes(text: str, limit: int) -> str:
    """The longest prefix of ``text`` within ``limit`` UTF-8 bytes (whole characters)."""
    head = text[:limit]
    if head.isascii():
        return head
    return head.encode()[:limit].decode(errors="ignore")


def truncation_notice(original: int, kept: int) -> str:
    """The line appended to a cut value."""
    return f"\n[truncated: showing the first {kept:,} of {original:,} bytes of this tool result]"


@dataclass(slots=True)
class Finalizer:
    """Applies the steps of the module docstring to a batch of results, in call order."""

    history: History
    tools: Mapping[str, Tool | ToolBuiltIn]
    max_result_bytes: int
    hooks: Sequence[ResultHook] = field(default_factory=lambda: [])

    def __call__(self, results: list[ContentToolResult]) -> list[ContentToolResult]:
        sequences = self.history.next_sequences(len(results))
        final: list[ContentToolResult] = []
        for result, sequence in zip(results, sequences, strict=True):
            result = self._limit(_formatted(result))
            for hook in self.hooks:
                result = hook(result, sequence) or result
            final.append(result)
        return final

    def _limit(self, result: ContentToolResult) -> ContentToolResult:
        limit = self._limit_for(result)
        value = result.get_model_value()
        if isinstance(value, list):
            return _limit_blocks(result, cast(list[Any], value), limit)
        text = value if isinstance(value, str) else orjson.dumps(value, default=str).decode()
        size = utf8_length(text)
        if size <= limit:
            return replace_lengths(result, size, size)
        return truncate(result, text, size, limit)

    def _limit_for(self, result: ContentToolResult) -> int:
        if result.request is not None:
            tool = self.tools.get(result.request.name)
            if isinstance(tool, Tool) and tool.max_result_bytes is not None:
                return tool.max_result_bytes
        return self.max_result_bytes


def replace_lengths(result: ContentToolResult, original: int, stored: int) -> ContentToolResult:
    """The result with its byte lengths recorded (keeping its cached model value)."""
    if result.original_length == original and result.stored_length == stored:
        return result
    return result.with_model_value(
        result.get_model_value(), original_length=original, stored_length=stored
    )


def truncate(result: ContentToolResult, text: str, size: int, limit: int) -> ContentToolResult:
    """``result`` cut to ``limit`` bytes of model-facing text, with the notice."""
    notice = truncation_notice(size, limit)
    budget = max(0, limit - utf8_length(notice) - 32)  # room for the kept-size digits
    kept = cut_to_bytes(text, budget)
    kept_size = utf8_length(kept)
    cut = kept + truncation_notice(size, kept_size)
    if utf8_length(cut) > limit:  # a limit smaller than the notice itself
        cut = cut_to_bytes(cut, limit)
    cut_size = utf8_length(cut)
    return result.with_model_value(
        cut, original_length=size, stored_length=cut_size, is_truncated=True
    )


def _block_size(item: Any) -> tuple[str | None, int]:
    """An item of a content list: its text (None when it cannot be cut) and its size."""
    if isinstance(item, str):
        return item, utf8_length(item)
    if isinstance(item, ContentText):
        return item.text, utf8_length(item.text)
    if is_media(item):
        return None, 0  # images and documents are sized by the provider, not here
    return None, len(orjson.dumps(item, default=str))


def _limit_blocks(result: ContentToolResult, blocks: list[Any], limit: int) -> ContentToolResult:
    """A content list over ``limit``: its text cut in order, media and other blocks kept."""
    sized = [_block_size(item) for item in blocks]
    size = sum(n for _, n in sized)
    if size <= limit:
        return replace_lengths(result, size, size)
    fixed = sum(n for text, n in sized if text is None)
    budget = max(0, limit - fixed - utf8_length(truncation_notice(size, limit)) - 32)
    kept: list[Any] = []
    kept_size = fixed
    for item, (text, _) in zip(blocks, sized, strict=True):
        if text is None:
            kept.append(item)
            continue
        piece = cut_to_bytes(text, budget)
        budget -= utf8_length(piece)
        kept_size += utf8_length(piece)
        if piece:
            kept.append(ContentText(piece))
    notice = truncation_notice(size, kept_size).lstrip("\n")
    kept.append(ContentText(notice))
    return result.with_model_value(
        kept,
        original_length=size,
        stored_length=kept_size + utf8_length(notice),
        is_truncated=True,
    )


def _formatted(result: ContentToolResult) -> ContentToolResult:
    try:
        result.get_model_value()
    except FormatError as e:
        return _format_failed(result, str(e))
    except Exception as e:  # a value whose conversion itself crashed
        return _format_failed(result, f"{type(e).__name__}: {e}")
    return result


def _format_failed(result: ContentToolResult, why: str) -> ContentToolResult:
    message = (
        f"The tool returned a value that cannot be sent to the model: {why}. "
        "Return a str, a dict or list, a dataclass or pydantic model, or a data frame, "
        "or give the class to_dict() or __str__()."
    )
    return replace(result, error=message, outcome="error", message_expansion=None)
