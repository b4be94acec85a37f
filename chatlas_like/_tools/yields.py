"""What a generator tool yields: each yield as progress, and the one result they make.

A generator tool (sync or async) answers its request with one result, as the API
requires, but people watch it work: each yield is delivered while the tool runs as a
:class:`ContentToolResultProgress` (see :mod:`chatlas_like._tools.runner`), and when
the generator ends, :func:`combine` folds everything it yielded into the result the
model receives.

The combination follows chatlas 0.23.0 (``combine_tool_results``): each part becomes
the text it would have sent on its own (its own ``model_format``), and the parts are
joined with newlines; when a part is an image or a document (or a list of content
blocks), the parts stay separate blocks, in order; the first failed part decides the
outcome and the message. Where it differs, deliberately (docs/chatlas.md, "Not the
same"): ``value`` is the list of what was yielded (chatlas keeps the joined text),
``extra`` the list of the parts' extras (chatlas drops them), and ``options`` are
merged, later parts winning (chatlas drops them), so a yielded ``cache_control``
still reaches the block.
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
    """The one result for everything a generator tool yielded (see the module docstring)."""
    if len(items) == 1:
        return _single(request, items[0])
    if not items:
        return ContentToolResult(value=[], request=request)
    results = [item for item in items if isinstance(item, ContentToolResult)]
    values = [item.value if isinstance(item, ContentToolResult) else item for item in items]
    extras = [item.extra for item in results if item.extra is not None]
    options: dict[str, Any] = {}
    for item in results:
        options.update(item.options or {})
    failure = next((item for item in results if item.outcome != "success"), None)
    merged = ContentToolResult(
        value=values,
        model_format="as_is",
        error=failure.error if failure is not None else None,
        extra=extras or None,
        request=request,
        options=options or None,
        outcome=failure.outcome if failure is not None else "success",
        exception=failure.exception if failure is not None else None,
    )
    if failure is not None:
        return merged
    parts: list[Any] = []
    for item in items:
        part = item if isinstance(item, ContentToolResult) else ContentToolResult(value=item)
        try:
            parts.append(part.get_model_value())
        except Exception as e:  # the Finalizer words it the same way for a plain result
            return replace(failed(request, f"a yielded value has no model form: {e}"), value=values)
    if all(isinstance(part, str) for part in parts):
        return merged.with_model_value("\n".join(parts))
    blocks: list[Any] = []
    for part in parts:
        blocks.extend(cast(list[Any], part) if isinstance(part, list) else [part])
    return merged.with_model_value(blocks)


def _single(request: ContentToolRequest, item: Any) -> ContentToolResult:
    if isinstance(item, ContentToolResult):
        return item if item.request is request else replace(item, request=request)
    return ContentToolResult(value=item, request=request)
