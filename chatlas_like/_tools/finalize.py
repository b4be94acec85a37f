"""The one place a tool result becomes final: formatted, cut to size, numbered, stored.

Every result passes here once before it enters the history, whatever produced it (a
tool, a refusal, an interrupt repair):

1. its model-facing value is computed and cached, reading no collection past the
   result's ``max_result_bytes`` items and, when the tool has a timeout (its own or
   ``tool_timeout``), within that timeout (an overrun is an ``error`` result); a value
   with no form in its
   ``model_format`` becomes an ``error`` result that says what the value was; text
   UTF-8 cannot encode (a file name in another encoding) is sent with replacement
   characters and a note, and a value that still cannot be put into words becomes an
   ``error`` result saying the call ran (never ``refused``: it must not run twice);
2. a value over ``max_result_bytes`` UTF-8 bytes (the tool's limit, else the chat's)
   is cut on a character boundary and a one-line notice is appended; the result records
   ``original_length``, ``stored_length`` and ``is_truncated``; in a content list,
   text and text documents share ``max_result_bytes`` (a document is cut like text,
   keeping its title), and the images, PDFs and other media share a budget of their own,
   the larger of ``max_result_bytes`` and :data:`MEDIA_BYTES`: a medium past it is not
   sent, and a line in its place tells the model what it was and why (the history and
   the store keep the whole result);
3. it carries the next sequence number of the run.

The keeper (the tool-result store: the loop's result-finalised hook) sees each batch
between steps 1 and 2, with every result's sequence number and whole model-facing
text, so it can keep more than the model reads; when it says the model may page through
what it kept, the cut's notice tells the model how.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

import orjson

from .._core.content import (
    ContentDocument,
    ContentImageInline,
    ContentImageRemote,
    ContentPDF,
    ContentText,
)
from .._core.history import History
from .._core.model_format import ITEM_BUDGET, FormatError
from .._core.tool_result import ContentToolResult, WholeResult
from .._core.utf8 import clean_text, cut_to_bytes, replace_surrogates, replacement_note, utf8_length
from .observer import QUIET, Observer
from .tool import Tool, ToolBuiltIn

__all__ = [
    "MEDIA_BYTES",
    "READ_MORE_TOOL",
    "Finalizer",
    "Keeper",
    "block_size",
    "blocks_size",
    "result_limit",
]

READ_MORE_TOOL = "read_tool_result"
# Media one result may send (base64 as sent), unless max_result_bytes is larger: an
# image up to Anthropic's 5 MB fits, a 30 MB one would make every later request fail.
MEDIA_BYTES = 5_000_000


Keeper = Callable[[str, Sequence[WholeResult], int], Sequence[int | None]]
"""``keeper(run_id, batch, store_max_bytes)`` keeps a batch apart from the conversation;
returns per result the bytes the model can page through, or None (no paging)."""


def truncation_notice(original: int, kept: int, more: str = "") -> str:
    """The line appended to a cut value (``more``: how to read on, when paging is on)."""
    return (
        f"\n[truncated: showing the first {kept:,} of {original:,} bytes of this tool result{more}]"
    )


def read_more_hint(sequence: int, readable: int | None, kept: int) -> str:
    """The notice's paging part: empty unless more than ``kept`` bytes can be read."""
    if readable is None or readable <= kept:
        return ""
    return (
        f"; {readable:,} bytes are stored: call {READ_MORE_TOOL}(sequence={sequence}, "
        f"offset={kept}) to read on"
    )


@dataclass(slots=True)
class Finalizer:
    """Applies the steps of the module docstring to a batch of results (those that
    finished together, in the order they finished), numbering them in that order."""

    history: History
    tools: Mapping[str, Tool | ToolBuiltIn]
    max_result_bytes: int
    keeper: Keeper | None = None
    store_max_bytes: int = 10_000_000
    tool_timeout: float | None = None
    observer: Observer = QUIET

    def __call__(self, results: list[ContentToolResult]) -> list[ContentToolResult]:
        sequences = self.history.next_sequences(len(results))
        batch = [_whole(self._formatted(r), n) for r, n in zip(results, sequences, strict=True)]
        readable = self.observer.keeping(self._keep, batch)
        final = [
            self._limit(item, pageable) for item, pageable in zip(batch, readable, strict=True)
        ]
        self.observer.finalized(self.history.run_id, batch, final)
        return final

    def _keep(self, batch: list[WholeResult]) -> Sequence[int | None]:
        if self.keeper is None or not batch:
            return [None] * len(batch)
        return self.keeper(self.history.run_id, batch, self.store_max_bytes)

    def _limit(self, item: WholeResult, readable: int | None) -> ContentToolResult:
        limit = self._limit_for(item.result)
        value = item.result.get_model_value()
        if isinstance(value, list):
            return _limit_blocks(item.result, cast(list[Any], value), limit)
        if item.size <= limit:
            return replace_lengths(item.result, item.size, item.size)

        def more(kept: int) -> str:
            return read_more_hint(item.sequence, readable, kept)

        return truncate(item.result, item.text, item.size, limit, more)

    def _formatted(self, result: ContentToolResult) -> ContentToolResult:
        """``result`` formatted within its item budget and, when it has one, its timeout."""
        name = result.request.name if result.request is not None else ""
        tool = self.tools.get(name)
        own = tool.timeout if isinstance(tool, Tool) else None
        timeout = own if own is not None else self.tool_timeout
        budget = self._limit_for(result)
        if timeout is None or result.has_model_value():
            return _formatted(result, budget)
        return _formatted_in_time(result, budget, timeout, name)

    def _limit_for(self, result: ContentToolResult) -> int:
        name = result.request.name if result.request is not None else ""
        return result_limit(self.tools, name, self.max_result_bytes)


def result_limit(tools: Mapping[str, Tool | ToolBuiltIn], name: str, default: int) -> int:
    """The ``max_result_bytes`` for results of tool ``name``: its own, else ``default``."""
    tool = tools.get(name)
    if isinstance(tool, Tool) and tool.max_result_bytes is not None:
        return tool.max_result_bytes
    return default


def replace_lengths(result: ContentToolResult, original: int, stored: int) -> ContentToolResult:
    """The result with its byte lengths recorded (keeping its cached model value)."""
    if result.original_length == original and result.stored_length == stored:
        return result
    return result.with_model_value(
        result.get_model_value(), original_length=original, stored_length=stored
    )


def truncate(
    result: ContentToolResult,
    text: str,
    size: int,
    limit: int,
    more: Callable[[int], str] = lambda kept: "",
) -> ContentToolResult:
    """``result`` cut to ``limit`` bytes of model-facing text, with the notice."""
    notice = truncation_notice(size, limit, more(0))
    budget = max(0, limit - utf8_length(notice) - 32)  # room for the kept-size digits
    kept = cut_to_bytes(text, budget)
    kept_size = utf8_length(kept)
    cut = kept + truncation_notice(size, kept_size, more(kept_size))
    if utf8_length(cut) > limit:  # a limit smaller than the notice itself
        cut = cut_to_bytes(cut, limit)
    cut_size = utf8_length(cut)
    return result.with_model_value(
        cut, original_length=size, stored_length=cut_size, is_truncated=True
    )


def _whole(result: ContentToolResult, sequence: int) -> WholeResult:
    try:
        text = _text(result.get_model_value())
        return WholeResult(result, text, utf8_length(text), sequence)
    except (UnicodeEncodeError, orjson.JSONEncodeError):
        result = _sendable(result)  # rare: the common path pays nothing for it
        text = _text(result.get_model_value())
        return WholeResult(result, text, utf8_length(text), sequence)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value, default=str).decode()


def _sendable(result: ContentToolResult) -> ContentToolResult:
    """``result`` with text UTF-8 cannot encode replaced (and a note saying so), or, for
    a value that still cannot be put into words, an error saying the call ran."""
    value = result.get_model_value()
    if isinstance(value, str):
        return result.with_model_value(clean_text(value))
    items = cast(list[Any], value) if isinstance(value, list) else [value]
    cleaned: list[Any] = []
    replaced = 0
    for item in items:
        text = block_text(item)
        if text is None:
            cleaned.append(item)
            continue
        clean, count = replace_surrogates(text)
        replaced += count
        cleaned.append(ContentText(clean) if count else item)
    if replaced:
        cleaned.append(ContentText(replacement_note(replaced).lstrip("\n")))
    try:
        orjson.dumps(cleaned, default=str)
    except (orjson.JSONEncodeError, UnicodeEncodeError) as e:
        why = f"{type(e.__cause__ or e).__name__}: {e.__cause__ or e}"
        message = (
            f"The tool ran, but what it returned cannot be sent to the model ({why}). "
            "Do not call it again for this request."
        )
        return replace(result, error=message, outcome="error", message_expansion=None)
    return result.with_model_value(cleaned)


_TEXT_BLOCK = len(orjson.dumps({"type": "text", "text": ""}))  # a text block's JSON frame


def block_text(item: Any) -> str | None:
    """The text of a content-list item that is text (cuttable), else None."""
    if isinstance(item, str):
        return item
    if isinstance(item, ContentText):
        return item.text
    if isinstance(item, dict):
        block = cast(dict[str, Any], item)
        text = block.get("text")
        if block.get("type") == "text" and isinstance(text, str):
            return text
    return None


def block_size(item: Any) -> int:
    """The UTF-8 bytes of one content-list item as sent: a text block, or its JSON."""
    if isinstance(item, dict):
        return len(orjson.dumps(item, default=str))
    text = block_text(item)
    if text is not None:
        return utf8_length(text) + _TEXT_BLOCK
    if isinstance(item, _MEDIA):
        return _media_size(item)
    return len(orjson.dumps(item, default=str))


_MEDIA = (ContentImageInline, ContentImageRemote, ContentPDF, ContentDocument)
_MEDIA_FRAME = 96  # a media block's JSON around its payload (type, source, media type)


def _media_size(
    item: ContentImageInline | ContentImageRemote | ContentPDF | ContentDocument,
) -> int:
    """An image's or document's bytes as sent: its base64 or text, and the block's frame."""
    if isinstance(item, ContentImageInline):
        return len(item.data) + _MEDIA_FRAME
    if isinstance(item, ContentImageRemote):
        return len(item.url) + _MEDIA_FRAME
    frame = _MEDIA_FRAME + len(item.filename or "")
    if item.data is None:
        return len(item.url or "") + frame
    if isinstance(item, ContentPDF):
        return 4 * ((len(item.data) + 2) // 3) + frame
    return len(item.data) + frame


def blocks_size(blocks: Sequence[Any]) -> int:
    """The UTF-8 bytes of a content list as sent (its items, commas and brackets)."""
    return sum(block_size(b) for b in blocks) + max(0, len(blocks) - 1) + 2


def _document_text(item: Any) -> str | None:
    """The text of an inline text document (cut like text), else None."""
    if isinstance(item, ContentDocument) and item.data is not None:
        try:
            return item.data.decode()
        except UnicodeDecodeError:
            return None
    return None


def _limit_blocks(result: ContentToolResult, blocks: list[Any], limit: int) -> ContentToolResult:
    """A content list, sized as sent; over ``limit``, cut as the module docstring says.

    Half an image is no image: a medium is sent whole or not at all. Text blocks and
    text documents share ``limit`` (each with its JSON frame), in order; media share
    the larger of ``limit`` and :data:`MEDIA_BYTES`, in order, and one past it is
    replaced by a line saying so.
    """
    size = blocks_size(blocks)
    if size <= limit:
        return replace_lengths(result, size, size)
    staged, notes = _within_media_budget(blocks, max(limit, MEDIA_BYTES))
    # Media have a budget of their own: only the lines standing in for media left out
    # take room from the text.
    fixed = sum(block_size(b) + 1 for b in staged if _cuttable(b, notes) is None) + 2
    standing_in = sum(block_size(b) + 1 for b in staged if id(b) in notes)
    notice_room = utf8_length(truncation_notice(size, limit)) + _TEXT_BLOCK + 1
    budget = limit - standing_in - 2 - notice_room - 32  # room for the kept-size digits
    kept: list[Any] = []
    kept_size = fixed
    cut = False
    for item in staged:
        text = _cuttable(item, notes)
        if text is None:
            kept.append(item)
            continue
        frame = block_size(item) - utf8_length(text)
        room = budget - frame - 1
        piece = cut_to_bytes(text, room) if room > 0 else ""
        cut = cut or piece != text
        if not piece:
            continue
        used = utf8_length(piece) + frame + 1
        budget -= used
        kept_size += used
        if piece == text:
            kept.append(item)
        elif isinstance(item, ContentDocument):
            kept.append(replace(item, data=piece.encode()))
        else:
            kept.append(ContentText(piece))
    if not cut and not notes:  # over the text limit only by media within their budget
        return replace_lengths(result, size, size)
    if cut:
        kept.append(ContentText(truncation_notice(size, kept_size).lstrip("\n")))
    return result.with_model_value(
        kept,
        original_length=size,
        stored_length=blocks_size(kept),
        is_truncated=True,
    )


def _cuttable(item: Any, notes: set[int]) -> str | None:
    """The text of an item that may be cut (text, a text document), else None."""
    if id(item) in notes:
        return None  # a medium's stand-in is sent whole
    text = block_text(item)
    return text if text is not None else _document_text(item)


def _within_media_budget(blocks: list[Any], budget: int) -> tuple[list[Any], set[int]]:
    """``blocks`` with each medium past ``budget`` replaced by a line saying so, and the
    ids of those lines."""
    staged: list[Any] = []
    notes: set[int] = set()
    used = 0
    for item in blocks:
        if block_text(item) is not None or _document_text(item) is not None:
            staged.append(item)
            continue
        size = block_size(item)
        if used + size <= budget:
            used += size
            staged.append(item)
            continue
        note = ContentText(
            f"[{_media_name(item)} of {size:,} bytes returned by the tool: not sent, over "
            f"the {budget:,} bytes one tool result may send as images and documents. Ask "
            "for a smaller one if you need it.]"
        )
        notes.add(id(note))
        staged.append(note)
    return staged, notes


def _media_name(item: Any) -> str:
    if isinstance(item, ContentImageInline):
        return f"an image ({item.image_content_type})"
    if isinstance(item, ContentPDF):
        return f"a PDF ({item.filename})"
    if isinstance(item, ContentDocument):
        return f"a document ({item.filename}, {item.mime_type})"
    if isinstance(item, dict):
        return f"a {cast(dict[str, Any], item).get('type', 'content')} block"
    return f"a {type(item).__name__}"


def _formatted(result: ContentToolResult, budget: int) -> ContentToolResult:
    token = ITEM_BUDGET.set(budget)  # no collection is read past what could be sent
    try:
        result.get_model_value()
    except FormatError as e:
        return _format_failed(result, str(e))
    except Exception as e:  # a value whose conversion itself crashed
        return _format_failed(result, f"{type(e).__name__}: {e}")
    finally:
        ITEM_BUDGET.reset(token)
    return result


def _formatted_in_time(
    result: ContentToolResult, budget: int, timeout: float, name: str
) -> ContentToolResult:
    """:func:`_formatted` in a thread, waited for ``timeout`` seconds at most: the tool's
    timeout covers turning its value into text too. A formatting that overruns is left
    to finish on its own (within its item budget) and the call is an ``error``."""
    done: list[ContentToolResult] = []
    worker = threading.Thread(
        target=lambda: done.append(_formatted(result, budget)),
        name="chatlas-like-format",
        daemon=True,
    )
    worker.start()
    worker.join(timeout)
    if done:
        return done[0]
    message = (
        f"`{name or 'the tool'}` timed out after {timeout:g} s: it ran, but formatting its "
        "value for the model took longer; it was stopped waiting for. Do not call it again "
        "for this request."
    )
    return replace(result, error=message, outcome="error", message_expansion=None)


def _format_failed(result: ContentToolResult, why: str) -> ContentToolResult:
    message = (
        f"The tool returned a value that cannot be sent to the model: {why}. "
        "Return a str, a dict or list, a dataclass or pydantic model, or a data frame, "
        "or give the class to_dict() or __str__()."
    )
    return replace(result, error=message, outcome="error", message_expansion=None)
