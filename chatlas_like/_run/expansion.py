"""The expansion step: pending message expansions applied right before the next model call.

It runs in the turn loop's before-model-call pipeline: for each result of the last tool
round with a pending expansion (:class:`~chatlas_like.MessageExpansion`), in call order,
it replaces the result's content by ``result_content``, inserts the messages as turns
right after the tool-result turn, and clears the request, so applying twice inserts
once.

It does not expand, and sends the full (possibly truncated) content with one warning,
when the messages plus ``result_content`` exceed the result's ``max_result_bytes``,
when the messages end with an assistant message (a prefill) and the model does not
accept prefill, or when the model called a server tool in the same turn whose result
has not arrived (the answering user message may then hold only tool results).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from .._core.content import Content, ContentServerToolRequest, ContentServerToolResult
from .._core.expansion import ExpansionWarning
from .._core.model_format import format_value
from .._core.tool_result import ContentToolResult
from .._core.turn import Turn
from .._core.utf8 import utf8_length
from .._tools.finalize import block_size, blocks_size, result_limit

if TYPE_CHECKING:
    from .loop import Run

__all__ = ["apply_expansions"]


def apply_expansions(run: Run) -> list[Turn]:
    """Apply pending expansions of the last tool round; the turns it inserted."""
    run.history.check(run.token)
    turns = run.history.turns
    index = _last_results_turn(turns)
    if index is None:
        return []
    results_turn = turns[index]
    if not any(r.message_expansion is not None for r in results_turn.tool_results):
        return []
    blocked = _pending_server_tool(turns, index)
    contents: list[Content] = []
    inserted: list[Turn] = []
    for content in results_turn.contents:
        if isinstance(content, ContentToolResult) and content.message_expansion is not None:
            result, messages = _apply_one(run, content, blocked)
            run.observer.expanded(result, len(messages))
            contents.append(result)
            inserted.extend(messages)
        else:
            contents.append(content)
    turns[index] = results_turn.copy_with(contents)
    turns[index + 1 : index + 1] = inserted
    return inserted


def _last_results_turn(turns: list[Turn]) -> int | None:
    for i in range(len(turns) - 1, -1, -1):
        if turns[i].role == "assistant":
            return None
        if turns[i].tool_results:
            return i
    return None


def _pending_server_tool(turns: list[Turn], results_index: int) -> str | None:
    for i in range(results_index - 1, -1, -1):
        if turns[i].role != "assistant":
            continue
        contents = turns[i].contents
        answered = {c.tool_use_id for c in contents if isinstance(c, ContentServerToolResult)}
        for c in contents:
            if isinstance(c, ContentServerToolRequest) and c.id not in answered:
                return c.name
        return None
    return None


def _apply_one(
    run: Run, result: ContentToolResult, pending_server_tool: str | None
) -> tuple[ContentToolResult, Sequence[Turn]]:
    expansion = result.message_expansion
    assert expansion is not None
    plain = result.with_model_value(result.get_model_value(), message_expansion=None)
    name = result.request.name if result.request is not None else "tool"
    if pending_server_tool is not None:
        _warn(
            f"the expansion of `{name}` was not applied: the model also called the server "
            f"tool `{pending_server_tool}`, whose result has not arrived, and the answer to "
            "that turn may hold only tool results. The full result was sent instead."
        )
        return plain, ()
    if expansion.messages and expansion.messages[-1].role == "assistant" and not _prefill_ok(run):
        _warn(
            f"the expansion of `{name}` was not applied: it ends with an assistant message "
            f"(a prefill), which {run.provider.model} does not accept. End it with a short "
            "user message instead. The full result was sent."
        )
        return plain, ()
    kept = expansion.result_content if expansion.result_content is not None else result.value
    try:
        kept_value = format_value(kept, result.model_format)
    except Exception as e:  # a result_content with no form: keep the whole answer
        _warn(
            f"the expansion of `{name}` was not applied: its result_content has no form the "
            f"model can read ({type(e).__name__}: {e}). The full result was sent."
        )
        return plain, ()
    size = _size(kept_value) + sum(_size(c) for m in expansion.messages for c in m.contents)
    limit = result_limit(run.tools, name, run.options.max_result_bytes)
    if size > limit:
        _warn(
            f"the expansion of `{name}` was not applied: its messages and result content "
            f"are {size:,} bytes, over max_result_bytes={limit:,}. The full result was sent."
        )
        return plain, ()
    kept_size = _size(kept_value)
    final = result.with_model_value(
        kept_value,
        value=kept,
        message_expansion=None,
        original_length=kept_size,
        stored_length=kept_size,
        is_truncated=False,
    )
    return final, expansion.messages


def _prefill_ok(run: Run) -> bool:
    return run.provider.supports_prefill()


def _size(value: Any) -> int:
    """Bytes as the model receives them, measured as the finalizer measures results."""
    if isinstance(value, str):
        return utf8_length(value)
    if isinstance(value, list):
        return blocks_size(cast(list[Any], value))
    return block_size(value)


def _warn(message: str) -> None:
    warnings.warn(message, ExpansionWarning, stacklevel=2)
