"""What a generator tool yields: each yield as progress, and the one result they make.

A generator tool (sync or async) answers its request with one result, as the API
requires, but people watch it work: each yield is delivered while the tool runs as a
:class:`ContentToolResultProgress` (see :mod:`chatlas_like._tools.runner`), to
``stream(content="all")``, the echo and ``on_tool_result``, and nothing more, as in
chatlas. When the generator ends, :func:`combine` folds everything it yielded into the
result the model reads and the history keeps.

The combination follows chatlas 0.23.0 (``combine_tool_results``): one yield is the
result as it came; of several, each part becomes the text it would have sent on its
own (its own ``model_format``) and ``value`` is the parts joined with newlines, or,
when a part is an image or a document (or a list of content blocks), the list of the
parts' blocks in order, sent as they are; the first failed part decides the outcome
and the message, with no value. The parts themselves are on
:attr:`~chatlas_like.ContentToolResult.parts` (ours); their ``options`` are merged,
later parts winning, so a yielded ``cache_control`` still reaches the block (chatlas
drops them, as it drops ``extra``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

from .._core.content import ContentToolRequest
from .._core.tool_result import ContentToolResult, ContentToolResultProgress, failed

__all__ = ["combine", "progress"]


def progress(request: ContentToolRequest, item: Any) -> ContentToolResultProgress:
    """One yield, as the progress result delivered while the tool still runs."""
    if not isinstance(item, ContentToolResult):
        return ContentToolResultProgress(value=item, request=request)
    return ContentToolResultProgress(  # never sent, so no expansion to carry
        value=item.value,
        model_format=item.model_format,
        error=item.error,
        extra=item.extra,
        request=request,
        options=item.options,
        outcome=item.outcome,
        exception=item.exception,
    )


def combine(request: ContentToolRequest, items: list[Any]) -> ContentToolResult:
    """The one result for everything a generator tool yielded (see the module docstring).

    A generator that yielded nothing answers with an empty text (chatlas would answer
    nothing, and the next request would fail for the missing result).
    """
    if not items:
        return ContentToolResult(value="", request=request)
    parts = tuple(progress(request, item) for item in items)
    if len(items) == 1:  # one yield is the result, as it came (chatlas keeps it whole)
        item = items[0]
        if isinstance(item, ContentToolResult):
            return replace(item, request=request, parts=parts)
        return ContentToolResult(value=item, request=request, parts=parts)
    options: dict[str, Any] = {}
    for part in parts:
        options.update(part.options or {})
    failure = next((part for part in parts if part.outcome != "success"), None)
    if failure is not None:
        return ContentToolResult(
            error=failure.error,
            request=request,
            options=options or None,
            outcome=failure.outcome,
            exception=failure.exception,
            parts=parts,
        )
    try:
        texts = [part.get_model_value() for part in parts]
    except Exception as e:  # the Finalizer words it the same way for a plain result
        return replace(failed(request, f"a yielded value has no model form: {e}"), parts=parts)
    if all(isinstance(text, str) for text in texts):
        joined = "\n".join(texts)  # a string is sent as it is
        return ContentToolResult(
            value=joined, request=request, options=options or None, parts=parts
        )
    blocks: list[Any] = []
    for text in texts:
        blocks.extend(cast(list[Any], text) if isinstance(text, list) else [text])
    return ContentToolResult(
        value=blocks, model_format="as_is", request=request, options=options or None, parts=parts
    ).with_model_value(blocks)
