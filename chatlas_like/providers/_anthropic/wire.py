"""Anthropic's Messages API, translated both ways with no SDK and no I/O.

``build_request``: turns to a request body. Consecutive turns of one role become one
message (tool results first, as the API requires); blank text blocks are dropped (the
API rejects them); blocks kept as received (thinking, server tools, unknown types) go
back unchanged; each turn's message is cached on the turn, so a long conversation is
not re-translated on every call. A model's text block over ``MAX_SENT_TEXT_BYTES`` is
sent back cut, on a character boundary, with a notice (the history keeps it whole): an
enormous answer from a broken endpoint would otherwise make every later request too
large for the API.

``AnthropicAccumulator``: stream events to an assistant turn. A non-streamed response
is replayed as the same events (``message_events``), so both kinds of response take
one path.
"""

from __future__ import annotations

import base64
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import orjson

from ..._core.content import (
    Content,
    ContentCitation,
    ContentDocument,
    ContentImageInline,
    ContentImageRemote,
    ContentJson,
    ContentPDF,
    ContentServerToolRequest,
    ContentServerToolResult,
    ContentText,
    ContentThinking,
    ContentThinkingDelta,
    ContentToolRequest,
    ContentUnknown,
    ContentUploaded,
    server_tool_request,
    server_tool_result,
)
from ..._core.errors import (
    OverloadedError,
    ProviderError,
    RateLimitError,
    ServerError,
)
from ..._core.tool_result import ContentToolResult
from ..._core.turn import AssistantTurn, Turn, Usage
from ..._core.utf8 import cut_to_bytes, utf8_length
from ..._tools.tool import Tool, ToolBuiltIn
from .._prices import token_cost
from .._sse import SSEDecoder, parse_sse
from .._translated import cached, translated
from .._types import RequestSpec
from .schema import (
    STRUCTURED_TOOL,
    allows_extra_keys,
    closed_schema,
    supports_structured_outputs,
)

__all__ = [
    "MAX_SENT_TEXT_BYTES",
    "PROVIDER_KEY",
    "PROVIDER_NAME",
    "AnthropicAccumulator",
    "MessageCache",
    "SSEDecoder",
    "build_request",
    "content_block",
    "document_urls",
    "finish_reason",
    "message_data",
    "message_events",
    "parse_sse",
    "stream_error",
    "tool_definition",
]

PROVIDER_NAME = "Anthropic"  # chatlas's name of the provider
PROVIDER_KEY = PROVIDER_NAME.lower()  # its key (ProviderBase.key): prices, uploads, files
# The bytes of documents fetched by the driver, by URL (RequestSpec.downloads).
Downloads = Mapping[str, bytes]
NO_DOWNLOADS: Downloads = MappingProxyType({})
# A model's answer of up to 128k tokens is well under this; only a runaway one is cut.
MAX_SENT_TEXT_BYTES = 2_000_000
_CACHE_TTLS = ("5m", "1h")
_VARIANT = "anthropic"  # this wire's translations of a turn (see providers._translated)
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
_TEXT_APPLICATION_TYPES = frozenset(
    {"application/json", "application/xml", "application/x-yaml", "application/yaml"}
)
# Anthropic's stop reasons as chatlas names them; any other (pause_turn) is kept as sent.
_FINISH_REASONS: dict[str, str] = {
    "end_turn": "success",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "context_window",
    "stop_sequence": "stop_sequence",
    "refusal": "content_filter",
}


def finish_reason(stop_reason: str) -> str:
    """Anthropic's ``stop_reason`` as chatlas's normalised finish reason."""
    return _FINISH_REASONS.get(stop_reason, stop_reason)


# -- request ---------------------------------------------------------------------------------


def build_request(
    turns: Sequence[Turn],
    spec: RequestSpec,
    *,
    model: str,
    max_tokens: int,
    cache: str,
    thinking: dict[str, Any] | None = None,
    effort: str | None = None,
    structured: str = "auto",
    message_cache: MessageCache | None = None,
) -> dict[str, Any]:
    """The body of a ``POST /v1/messages`` for ``turns``.

    ``thinking`` and ``effort`` come from the chat's ``reasoning``; with
    ``spec.data_model``, the answer is constrained to its schema by structured outputs
    (``output_config.format``) or, for models without them or with
    ``structured="tool"``, by a forced tool.
    """
    downloads = spec.downloads
    messages = (
        message_cache.messages(turns, downloads)
        if message_cache is not None
        else _messages(turns, downloads)
    )
    cache_control = {"type": "ephemeral", "ttl": cache} if cache in _CACHE_TTLS else None
    if cache_control is not None:
        _place_breakpoints(messages, cache_control, spec.transient)
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": messages}
    system = spec.system_prompt
    if system:
        block: dict[str, Any] = {"type": "text", "text": system}
        if cache_control is not None:
            block["cache_control"] = cache_control
        body["system"] = [block]
    tools = [tool_definition(t) for t in spec.tools]
    output_config: dict[str, Any] = {"effort": effort} if effort else {}
    if spec.data_model is not None:
        if structured_mode(model, structured, spec.data_model) == "native":
            schema = closed_schema(spec.data_model)
            output_config["format"] = {"type": "json_schema", "schema": schema}
        else:
            schema = closed_schema(spec.data_model, open_allowed=True)
            tools.append(_structured_tool(schema, model, thinking))
            body["tool_choice"] = {"type": "tool", "name": STRUCTURED_TOOL}
    body["tools"] = tools  # [] without tools, as chatlas sends it
    if thinking is not None:
        body["thinking"] = thinking
    if output_config:
        body["output_config"] = output_config
    body["stream"] = spec.stream
    body.update(spec.params)
    kwargs = dict(spec.kwargs)
    if isinstance(body.get("output_config"), dict) and isinstance(
        kwargs.get("output_config"), dict
    ):
        # One output_config: the structured-output format and an effort given in kwargs.
        kwargs["output_config"] = {**body["output_config"], **kwargs["output_config"]}
    body.update(kwargs)
    return body


def _structured_tool(
    schema: dict[str, Any], model: str, thinking: dict[str, Any] | None
) -> dict[str, Any]:
    """The forced tool whose arguments are the structured answer."""
    if thinking is not None and thinking.get("type") != "disabled":
        raise ValueError(
            f"structured data on {model} needs a forced tool, which Anthropic does not allow "
            "with extended thinking: use a chat without reasoning, or a model with structured "
            "outputs (Claude 4.5 and later)"
        )
    return {
        "name": STRUCTURED_TOOL,
        "description": "Extract structured data",
        "input_schema": schema,
    }


def structured_mode(model: str, structured: str, data_model: type[Any] | None = None) -> str:
    """``"native"`` (``output_config.format``) or ``"tool"`` (a forced tool) for ``model``.

    ``"auto"`` takes the forced tool for a data model that allows extra keys, which
    structured outputs cannot express.
    """
    if structured == "auto":
        if data_model is not None and allows_extra_keys(data_model):
            return "tool"
        return "native" if supports_structured_outputs(model) else "tool"
    return structured


def tool_definition(tool: Tool | ToolBuiltIn) -> dict[str, Any]:
    """A tool as the API declares it."""
    if isinstance(tool, ToolBuiltIn):
        return tool.definition
    if not tool.description:  # the API takes no description better than an empty one
        return {"name": tool.name, "input_schema": tool.parameters}
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


class MessageCache:
    """The messages of the turns last translated, reused while those turns stay a prefix.

    Between two requests a history usually only grows (a prompt, an answer, results), so
    each request translates just the new turns and the client's cost per request stays
    flat but for encoding. Any other change (``set_turns``, an expansion inserting turns,
    a repair replacing one) breaks the prefix and the messages are rebuilt. The state is
    one tuple, swapped whole, so chats sharing a provider from several threads only cost
    each other a rebuild.
    """

    __slots__ = ("_state",)

    def __init__(self) -> None:
        self._state: tuple[list[Turn], list[dict[str, Any]]] = ([], [])

    def unseen(self, turns: Sequence[Turn]) -> Sequence[Turn]:
        """The turns past those the last request sent (all of them after any change)."""
        return turns[len(self._state[0]) :] if self._extends(turns) else turns

    def _extends(self, turns: Sequence[Turn]) -> bool:
        done = self._state[0]
        k = len(done)
        # Identity, not equality: a view's copy of a turn (results elided) compares
        # equal to the turn it replaces, and must be translated anew.
        return bool(k) and len(turns) >= k and all(map(operator.is_, turns[:k], done))

    def messages(
        self, turns: Sequence[Turn], downloads: Downloads = NO_DOWNLOADS
    ) -> list[dict[str, Any]]:
        done, known = self._state
        k = len(done)
        if self._extends(turns):
            messages = list(known)
            _add_messages(messages, turns[k:], downloads)
        else:
            messages = _messages(turns, downloads)
        self._state = (list(turns), list(messages))
        return messages


def _messages(turns: Sequence[Turn], downloads: Downloads) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    _add_messages(messages, turns, downloads)
    return messages


def _add_messages(
    messages: list[dict[str, Any]], turns: Sequence[Turn], downloads: Downloads
) -> None:
    for turn in turns:
        if turn.role == "system":
            continue
        message = _turn_message(turn, downloads)
        if not message["content"]:
            continue
        if messages and messages[-1]["role"] == message["role"]:
            merged = [*messages[-1]["content"], *message["content"]]
            if message["role"] == "user":
                merged = _tool_results_first(merged)
            messages[-1] = {"role": message["role"], "content": merged}
        else:
            messages.append(message)


def _turn_message(turn: Turn, downloads: Downloads) -> dict[str, Any]:
    return translated(turn, _VARIANT, lambda: _new_message(turn, downloads))


def _new_message(turn: Turn, downloads: Downloads) -> dict[str, Any]:
    blocks = [b for b in (content_block(c, downloads) for c in turn.contents) if b is not None]
    if turn.role == "user":
        blocks = _tool_results_first(blocks)
    else:
        blocks = [_sized_text(b) for b in blocks]
    return {"role": turn.role, "content": blocks}


def document_urls(turns: Sequence[Turn]) -> list[str]:
    """The URLs of the text documents in ``turns`` that must be fetched to send them
    (Anthropic fetches only PDFs itself); none for a turn already translated."""
    urls: list[str] = []
    for turn in turns:
        if turn.role == "system" or cached(turn, _VARIANT) is not None:
            continue
        for content in turn.contents:
            items: list[Any] = [content]
            if isinstance(content, ContentToolResult):
                value = content.get_model_value()
                items = value if isinstance(value, list) else [value]  # pyright: ignore[reportUnknownVariableType]
            urls.extend(
                str(item.url)
                for item in items
                if isinstance(item, ContentDocument)
                and item.data is None
                and item.url
                and is_text_document(item.mime_type)
            )
    return urls


def _sized_text(block: dict[str, Any]) -> dict[str, Any]:
    """A model's text block as sent back: over ``MAX_SENT_TEXT_BYTES``, cut with a notice."""
    text = block.get("text")
    if block.get("type") != "text" or not isinstance(text, str):
        return block
    if len(text) * 4 <= MAX_SENT_TEXT_BYTES:  # cannot be over, whatever its characters
        return block
    size = utf8_length(text)
    if size <= MAX_SENT_TEXT_BYTES:
        return block
    notice = (
        f"\n[cut: this answer was {size:,} bytes; only its first part is sent back, "
        "the rest is kept in the chat's history]"
    )
    kept = cut_to_bytes(text, MAX_SENT_TEXT_BYTES - utf8_length(notice))
    return {**block, "text": kept + notice}


def _tool_results_first(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    results = [b for b in blocks if b.get("type") == "tool_result"]
    if not results or len(results) == len(blocks):
        return blocks
    return results + [b for b in blocks if b.get("type") != "tool_result"]


def _place_breakpoints(
    messages: list[dict[str, Any]], cache_control: dict[str, Any], transient: frozenset[str]
) -> None:
    """Prompt-cache breakpoints on the conversation: at its end, where this request's
    prefix will be read back by the next one, and at the end of the previous request,
    so a round that adds many blocks (parallel calls) still finds it within the API's
    20-block lookback. With the system prompt's breakpoint: 3 of the API's 4.

    The end breakpoint goes before the first result this request sends for the last
    time (``transient``): the next request carries a reference in its place, so caching
    it would only cost the write."""
    if not messages or messages[-1]["role"] != "user":
        return  # a prefill ends the conversation: nothing after it to cache for
    last = len(messages) - 1
    # The previous user message, found from the end: a long chat is not walked.
    for i in range(last - 1, -1, -1):
        if messages[i]["role"] == "user":
            messages[i] = _with_cache_control(messages[i], cache_control)
            break
    blocks = messages[last]["content"]
    cut = next(
        (
            i
            for i, block in enumerate(blocks)
            if block.get("type") == "tool_result" and block.get("tool_use_id") in transient
        ),
        len(blocks),
    )
    if cut > 0:
        messages[last] = _with_cache_control(messages[last], cache_control, cut - 1)
    elif last > 0:
        messages[last - 1] = _with_cache_control(messages[last - 1], cache_control)


def _with_cache_control(
    message: dict[str, Any], cache_control: dict[str, Any], at: int = -1
) -> dict[str, Any]:
    blocks = list(message["content"])
    block = blocks[at]
    if "cache_control" in block or block.get("type") in ("thinking", "redacted_thinking"):
        return message
    blocks[at] = {**block, "cache_control": cache_control}
    return {"role": message["role"], "content": blocks}


def content_block(content: Content, downloads: Downloads = NO_DOWNLOADS) -> dict[str, Any] | None:
    """One content object as an API block; None for content the API cannot take.

    A text document given by URL is sent as its text, from ``downloads`` (fetched by
    the driver: see :func:`document_urls`)."""
    kind = type(content)
    if kind is ContentText:
        assert isinstance(content, ContentText)
        if not content.text.strip():
            return None
        block: dict[str, Any] = {"type": "text", "text": content.text}
        if content.extra:
            block.update(content.extra)
        return block
    if isinstance(content, ContentToolResult):  # subclasses too (custom displays)
        return _tool_result_block(content, downloads)
    if kind is ContentToolRequest:
        assert isinstance(content, ContentToolRequest)
        arguments: Any = content.arguments
        if not isinstance(arguments, dict):
            arguments = {}
        return {"type": "tool_use", "id": content.id, "name": content.name, "input": arguments}
    if isinstance(content, (ContentServerToolRequest, ContentServerToolResult, ContentUnknown)):
        return content.block
    if isinstance(content, ContentThinking):
        extra = content.extra or {}
        if extra.get("signature") or extra.get("data"):
            return extra
        return None  # thinking cut off before its signature cannot be sent back
    if isinstance(content, (ContentThinkingDelta, ContentCitation)):
        return None  # views of a stream, never content of a message
    return _media_block(content, downloads)


def _media_block(content: Content, downloads: Downloads) -> dict[str, Any] | None:
    if isinstance(content, ContentImageInline):
        if content.image_content_type not in _IMAGE_TYPES:
            raise ValueError(
                f"Anthropic takes images of type {', '.join(_IMAGE_TYPES)}, "
                f"not {content.image_content_type}"
            )
        return {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": content.image_content_type,
                "data": content.data,
            },
        }
    if isinstance(content, ContentImageRemote):
        return {"type": "image", "source": {"type": "url", "url": content.url}}
    if isinstance(content, ContentPDF):
        if content.data is not None:
            source = {
                "type": "base64",
                "media_type": "application/pdf",
                "data": base64.b64encode(content.data).decode(),
            }
        else:
            source = {"type": "url", "url": content.url}
        return {"type": "document", "source": source}
    if isinstance(content, ContentDocument):
        return _document_block(content, downloads)
    if isinstance(content, ContentUploaded):
        return _uploaded_block(content)
    if isinstance(content, ContentJson):
        return {"type": "text", "text": orjson.dumps(content.value).decode()}
    return {"type": "text", "text": str(content)} if str(content).strip() else None


def _document_block(content: ContentDocument, downloads: Downloads) -> dict[str, Any]:
    if not is_text_document(content.mime_type):
        raise ValueError(
            f"Anthropic takes documents as plain text or PDF, not {content.mime_type} "
            f"({content.filename}): convert it to text, or use content_pdf_file() for a PDF"
        )
    data = content.data
    if data is None:  # Anthropic fetches only PDFs by URL: the driver fetched this one
        data = downloads.get(str(content.url))
        if data is None:
            raise ValueError(
                f"the document {content.url} was not downloaded before the request was "
                "built (a request for it is built after Provider.downloads() names it)"
            )
    try:
        text = data.decode()
    except UnicodeDecodeError as e:
        raise ValueError(
            f"Anthropic takes documents as UTF-8 text; {content.filename} is not ({e})"
        ) from None
    # The API reads every text document as text/plain: the title names what it is.
    source = {"type": "text", "media_type": "text/plain", "data": text}
    return {"type": "document", "title": content.filename, "source": source}


def is_text_document(mime_type: str) -> bool:
    """Whether Anthropic can read a document of ``mime_type`` as plain text."""
    return mime_type.startswith("text/") or mime_type in _TEXT_APPLICATION_TYPES


def _uploaded_block(content: ContentUploaded) -> dict[str, Any]:
    if content.provider != PROVIDER_KEY:
        raise ValueError(
            f"{content.filename or content.id} was uploaded to {content.provider}, not "
            "Anthropic: upload it again with this chat's `files.upload()`"
        )
    source = {"type": "file", "file_id": content.id}
    kind = "image" if content.mime_type.startswith("image/") else "document"
    return {"type": kind, "source": source}


def _tool_result_block(result: ContentToolResult, downloads: Downloads) -> dict[str, Any]:
    assert result.request is not None, "a result in the history answers a request"
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.request.id}
    value = result.get_model_value()
    if isinstance(value, str):
        if value:
            block["content"] = value
    else:
        items: list[Any] = value if isinstance(value, list) else [value]  # pyright: ignore[reportUnknownVariableType]
        try:
            inner = [_result_item(item, downloads) for item in items]
        except ValueError as e:  # e.g. an image type the API does not take
            block["content"] = f"The tool's result could not be sent to the model: {e}"
            block["is_error"] = True
            return block
        block["content"] = [b for b in inner if b is not None]
    block["is_error"] = result.is_error  # always said, as chatlas says it
    if result.options:
        block.update(result.options)
    return block


def _result_item(item: Any, downloads: Downloads) -> dict[str, Any] | None:
    if isinstance(item, str):
        return {"type": "text", "text": item} if item else None
    if isinstance(item, Content):
        return content_block(item, downloads)
    if isinstance(item, dict):
        return item  # pyright: ignore[reportUnknownVariableType]
    text = orjson.dumps(item, default=str).decode()
    return {"type": "text", "text": text}


# -- response --------------------------------------------------------------------------------


class _Block:
    __slots__ = ("citations", "content", "parts", "start", "stopped")

    def __init__(self, start: dict[str, Any]) -> None:
        self.start = start
        self.parts: list[str] = []
        self.citations: list[Any] = []
        self.stopped = False
        self.content: Content | None = None  # built once, when the block stops


class AnthropicAccumulator:
    """Builds an assistant turn from Messages API stream events.

    ``feed`` returns what a stream shows as it happens: text deltas (also the JSON of a
    structured answer, however it arrives), thinking as :class:`ContentThinkingDelta`
    pieces, each citation as it arrives, and every other block once it is complete.

    Parameters
    ----------
    structured
        ``"native"`` or ``"tool"`` when the request asked for structured data (see
        :func:`build_request`): the answer becomes a :class:`ContentJson`.
    cache_write_multiplier
        What a prompt-cache write costs relative to input (1.25 for the 5-minute cache,
        2 for the 1-hour one): the turn's chatlas ``tokens`` count writes at it.
    completion_factory
        Builds the turn's ``completion`` (the SDK's message) on first access.
    """

    __slots__ = (
        "_blocks",
        "_completion_factory",
        "_message",
        "_multiplier",
        "_stop_reason",
        "_stop_sequence",
        "_structured",
        "_usage",
        "complete",
    )

    def __init__(
        self,
        structured: str | None = None,
        *,
        cache_write_multiplier: float = 1.25,
        completion_factory: Callable[[Turn], Any] | None = None,
    ) -> None:
        self._blocks: dict[int, _Block] = {}
        self._message: dict[str, Any] = {}
        self._usage: dict[str, Any] = {}
        self._stop_reason: str | None = None
        self._stop_sequence: str | None = None
        self._structured = structured
        self._multiplier = cache_write_multiplier
        self._completion_factory = completion_factory
        self.complete = False

    def feed(self, event: dict[str, Any]) -> str | Content | tuple[Content, ...] | None:
        kind = event.get("type")
        if kind == "content_block_delta":
            delta = event["delta"]
            block = self._blocks[event["index"]]
            delta_type = delta.get("type")
            if delta_type == "text_delta":
                text: str = delta["text"]
                block.parts.append(text)
                return text
            if delta_type == "input_json_delta":
                partial: str = delta.get("partial_json", "")
                block.parts.append(partial)
                if self._is_structured_tool(block) and partial:
                    return partial  # the structured answer streams like text
            elif delta_type == "thinking_delta":
                thinking: str = delta.get("thinking", "")
                block.parts.append(thinking)
                return ContentThinkingDelta(thinking) if thinking else None
            elif delta_type == "signature_delta":
                block.start = {**block.start, "signature": delta.get("signature", "")}
            elif delta_type == "citations_delta":
                # Shown with the text it grounds, when the block is complete.
                block.citations.append(delta.get("citation"))
            return None
        if kind == "content_block_start":
            block = self._blocks[event["index"]] = _Block(dict(event["content_block"]))
            if block.start.get("type") == "thinking":
                return ContentThinkingDelta("", "start")
            return None
        if kind == "content_block_stop":
            block = self._blocks[event["index"]]
            block.stopped = True
            block.content = content = _finish_block(block, self._structured)
            if type(content) is ContentText:
                return tuple(content.citations) if content.extra else None
            if type(content) is ContentThinking and not content.redacted:
                return ContentThinkingDelta("", "end")  # the whole block streamed already
            return content
        if kind == "message_start":
            self._message = dict(event.get("message") or {})
            self._usage = dict(self._message.get("usage") or {})
        elif kind == "message_delta":
            delta: dict[str, Any] = event.get("delta") or {}
            self._stop_reason = delta.get("stop_reason") or self._stop_reason
            self._stop_sequence = delta.get("stop_sequence") or self._stop_sequence
            usage: dict[str, Any] = event.get("usage") or {}
            self._usage.update({k: v for k, v in usage.items() if v is not None})
        elif kind == "message_stop":
            self.complete = True
        elif kind == "error":
            raise stream_error(event)
        return None

    def _is_structured_tool(self, block: _Block) -> bool:
        return (
            self._structured == "tool"
            and block.start.get("type") == "tool_use"
            and block.start.get("name") == STRUCTURED_TOOL
        )

    def turn(self) -> AssistantTurn:
        return self._build(finish_reason(self._stop_reason or "end_turn"), None)

    def partial_turn(self, reason: str = "interrupted") -> AssistantTurn | None:
        """What arrived so far, as a partial turn whose ``partial_reason`` is ``reason``
        and whose ``finish_reason`` is None, as chatlas's; None if nothing did (a text
        block started and then cut before its first character counts as nothing)."""
        if not self._blocks:
            return None
        turn = self._build(None, reason)
        if all(type(c) is ContentText and not c.text for c in turn.contents):
            return None
        return turn

    def _build(self, finish: str | None, partial_reason: str | None) -> AssistantTurn:
        contents: list[Content] = []
        for i in sorted(self._blocks):
            block = self._blocks[i]
            content = block.content
            if content is None:
                content = _finish_block(block, self._structured)
            contents.append(content)
            if type(content) is ContentText and content.extra:
                contents.extend(content.citations)  # chatlas's citation items, after the text
        if self._stop_reason == "max_tokens":
            contents = [_cut_by_max_tokens(c) for c in contents]
        raw = self._usage
        usage = Usage(
            input=int(raw.get("input_tokens") or 0),
            output=int(raw.get("output_tokens") or 0),
            cache_read=int(raw.get("cache_read_input_tokens") or 0),
            cache_creation=int(raw.get("cache_creation_input_tokens") or 0),
        )
        tokens = usage.tokens(self._multiplier)
        model = str(self._message.get("model", ""))
        turn = AssistantTurn(
            contents,
            tokens=tokens,
            usage=usage,
            finish_reason=finish,
            stop_reason=self._stop_reason,
            cost=token_cost(PROVIDER_KEY, model, tokens) if model else None,
            partial_reason=partial_reason,
        )
        # What the response said, less its blocks (the turn's contents are those): the
        # message_start's message (the accumulator's own copy) with the final figures.
        data = self._message
        data.pop("content", None)
        data["stop_reason"] = self._stop_reason
        data["stop_sequence"] = self._stop_sequence
        data["usage"] = raw
        turn.attach_completion(data, self._completion_factory or _no_completion)
        return turn


def _no_completion(turn: Turn) -> None:
    return None


def message_data(turn: Turn) -> dict[str, Any]:
    """The response a turn came from, as the Messages API's message object (JSON data).

    Its blocks are rebuilt from the turn's contents, as they would be sent back.
    """
    head = dict(turn.completion_data or {})
    blocks = [b for b in (content_block(c) for c in turn.contents) if b is not None]
    return {
        "id": head.pop("id", ""),
        "type": head.pop("type", "message"),
        "role": "assistant",
        "model": head.pop("model", ""),
        "content": blocks,
        **{k: v for k, v in head.items() if k != "role"},
    }


def _finish_block(block: _Block, structured: str | None = None) -> Content:
    start = block.start
    kind = start.get("type")
    if kind == "text":
        text = "".join(block.parts) if block.parts else start.get("text", "")
        if structured == "native" and block.stopped:
            try:
                return ContentJson(orjson.loads(text))
            except orjson.JSONDecodeError:
                pass  # not the answer asked for: kept as text, and extraction says so
        citations: list[Any] = [*(start.get("citations") or []), *block.citations]
        return ContentText(text, {"citations": citations} if citations else None)
    if kind == "tool_use":
        arguments, error = _arguments(block, str(start.get("name", "")))
        if structured == "tool" and start.get("name") == STRUCTURED_TOOL and error is None:
            return ContentJson(arguments)
        return ContentToolRequest(
            id=str(start.get("id", "")),
            name=str(start.get("name", "")),
            arguments=arguments,
            parse_error=error,
        )
    if kind == "server_tool_use":
        arguments, _ = _arguments(block, str(start.get("name", "")))
        return server_tool_request(
            id=str(start.get("id", "")),
            name=str(start.get("name", "")),
            arguments=arguments,
            block={**start, "input": arguments if isinstance(arguments, dict) else {}},
        )
    if kind == "thinking":
        thinking = "".join(block.parts) if block.parts else start.get("thinking", "")
        return ContentThinking(thinking, {**start, "thinking": thinking})
    if kind == "redacted_thinking":
        return ContentThinking("", dict(start))
    if isinstance(kind, str) and kind.endswith("_tool_result") and "tool_use_id" in start:
        return server_tool_result(str(start["tool_use_id"]), dict(start))
    return ContentUnknown(dict(start))


def _cut_by_max_tokens(content: Content) -> Content:
    if isinstance(content, ContentToolRequest) and content.parse_error is not None:
        return replace(
            content,
            parse_error=f"The arguments of `{content.name}` were cut off by the max_tokens limit; "
            "send the call again with shorter arguments.",
        )
    return content


def _arguments(block: _Block, name: str) -> tuple[Any, str | None]:
    if not block.parts:
        initial = block.start.get("input")
        if block.stopped or initial:
            return (initial if initial is not None else {}), None
        return {}, f"The arguments of `{name}` were cut off; send the call again."
    raw = "".join(block.parts)
    if not block.stopped:
        return {}, f"The arguments of `{name}` were cut off; send the call again."
    if not raw.strip():
        return {}, None
    try:
        return orjson.loads(raw), None
    except orjson.JSONDecodeError:
        shown = raw if len(raw) <= 200 else raw[:200] + "…"
        return {}, f"The arguments of `{name}` are not valid JSON: {shown}"


def stream_error(event: dict[str, Any]) -> ProviderError:

    error: dict[str, Any] = event.get("error") or {}
    error_type = str(error.get("type", "api_error"))
    message = str(error.get("message", "the provider reported an error mid-stream"))
    cls: type[ProviderError] = ServerError
    if error_type == "overloaded_error":
        cls = OverloadedError
    elif error_type == "rate_limit_error":
        cls = RateLimitError
    return cls(f"{error_type}: {message}", error_type=error_type)


def message_events(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A non-streamed response replayed as the events a stream would have sent.

    Each block starts empty and its text, citations, arguments or thinking arrive as
    deltas, as in a stream, so both kinds of response show the same things in order.
    """
    head = {k: v for k, v in message.items() if k != "content"}
    yield {"type": "message_start", "message": {**head, "content": []}}
    for index, block in enumerate(message.get("content") or []):
        start, deltas = _replayed_block(block)
        yield {"type": "content_block_start", "index": index, "content_block": start}
        for delta in deltas:
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": message.get("stop_reason")},
        "usage": message.get("usage") or {},
    }
    yield {"type": "message_stop"}


def _replayed_block(block: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    kind = block.get("type")
    deltas: list[dict[str, Any]] = []
    if kind == "text":
        citations: list[Any] = block.get("citations") or []
        start = {**block, "text": ""}
        if citations:
            start["citations"] = []
            deltas = [{"type": "citations_delta", "citation": c} for c in citations]
        if block.get("text"):
            deltas.append({"type": "text_delta", "text": block["text"]})
        return start, deltas
    if kind in ("tool_use", "server_tool_use") and isinstance(block.get("input"), dict):
        raw = orjson.dumps(block["input"]).decode()
        return {**block, "input": {}}, [{"type": "input_json_delta", "partial_json": raw}]
    if kind == "thinking" and block.get("thinking"):
        return {**block, "thinking": ""}, [
            {"type": "thinking_delta", "thinking": block["thinking"]}
        ]
    return block, deltas
