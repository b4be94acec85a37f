"""OpenAI's Chat Completions API (``POST /v1/chat/completions``), the wire Ollama, LM
Studio, OpenRouter, Groq, Mistral and most OpenAI-compatible servers speak; translated
both ways with no SDK and no I/O.

``build_request``: turns to messages as chatlas builds them (a ``system`` message, the
user's content as parts, the assistant's tool calls, one ``tool`` message per result).
The API takes only text in a ``tool`` message: an image or file a tool returned goes in
a user message after the tool messages (chatlas put it before them, which breaks the
rule that tool messages follow the assistant message that asked for them).

``CompletionsAccumulator``: stream chunks to an assistant turn (tool-call deltas joined
by index, usage from the last chunk). A non-streamed completion is replayed as one
chunk (``completion_events``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import orjson

from ..._core.content import (
    Content,
    ContentDocument,
    ContentImageInline,
    ContentImageRemote,
    ContentJson,
    ContentPDF,
    ContentText,
    ContentThinking,
    ContentThinkingDelta,
    ContentToolRequest,
    ContentUploaded,
)
from ..._core.errors import ProviderError, ServerError
from ..._core.tool_result import ContentToolResult
from ..._core.turn import AssistantTurn, Turn, Usage
from ..._tools.tool import Tool, ToolBuiltIn
from .._prices import token_cost
from .._translated import PrefixCache, cached, translated
from .._types import RequestSpec
from .content import (
    arguments_json,
    as_list,
    as_map,
    file_data_url,
    image_data_url,
    read_arguments,
    uploaded_here,
)
from .schema import strict_schema

__all__ = ["CompletionsAccumulator", "build_request", "completion_events"]

_FINISH: dict[str, str] = {
    "stop": "success",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
}
_API = "the Chat Completions API"
# This wire's translations of a turn (see providers._translated): a user turn's messages,
# an assistant turn's without or with its reasoning sent back.
_USER, _ASSISTANT, _ASSISTANT_THINKING = "completions", "completions-a", "completions-a+r"


# -- request ---------------------------------------------------------------------------------


def build_request(
    turns: Sequence[Turn],
    spec: RequestSpec,
    *,
    model: str,
    preserve_thinking: bool = False,
    stream_options: bool = True,
    prefix: PrefixCache | None = None,
) -> dict[str, Any]:
    """The body of a ``POST /v1/chat/completions`` for ``turns`` (``prefix``: the
    provider's last request, to translate only the turns added since)."""
    messages: list[dict[str, Any]] = []
    if spec.system_prompt:
        messages.append({"content": spec.system_prompt, "role": "system"})
    downloads = spec.downloads

    def translate(turn: Turn) -> list[dict[str, Any]]:
        if turn.role == "assistant":
            variant = _ASSISTANT_THINKING if preserve_thinking else _ASSISTANT
            return translated(turn, variant, lambda: [_assistant_message(turn, preserve_thinking)])
        if turn.role == "user":
            return translated(turn, _USER, lambda: _user_messages(turn, downloads))
        return []

    if prefix is not None:
        messages.extend(prefix.items(turns, translate))
    else:
        for turn in turns:
            messages.extend(translate(turn))
    body: dict[str, Any] = {"stream": spec.stream, "messages": messages, "model": model}
    tools = [tool_definition(t) for t in spec.tools]
    if spec.data_model is not None:
        schema = strict_schema(spec.data_model)
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": "structured_data",
                "description": str(schema.get("description") or ""),
                "schema": schema,
                "strict": True,
            },
        }
    elif tools:  # chatlas sends no tools beside a response format: models mix them up
        body["tools"] = tools
    if spec.stream and stream_options:
        body["stream_options"] = {"include_usage": True}
    body.update(_params(spec.params))
    body.update(spec.kwargs)
    return body


def _params(params: Mapping[str, Any]) -> dict[str, Any]:
    names = {"stop_sequences": "stop", "log_probs": "logprobs"}
    return {names.get(k, k): v for k, v in params.items()}


def tool_definition(tool: Tool | ToolBuiltIn) -> dict[str, Any]:
    """A tool as the Chat Completions API declares it."""
    if isinstance(tool, ToolBuiltIn):
        if str(tool.definition.get("type", "")).startswith(("web_search_", "web_fetch_")):
            raise ValueError(
                f"The `{tool.name}` built-in tool is not supported by the Chat Completions "
                "API, which has no concept of provider-run tools. Consider registering a "
                "custom tool, or an MCP server, with equivalent functionality instead."
            )
        return tool.definition
    function: dict[str, Any] = {"name": tool.name, "parameters": tool.parameters}
    if tool.description:
        function["description"] = tool.description
    return {"type": "function", "function": function}


def _assistant_message(turn: Turn, preserve_thinking: bool) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    thinking: list[str] = []
    for content in turn.contents:
        if type(content) is ContentText:
            assert isinstance(content, ContentText)
            if content.text:
                parts.append({"type": "text", "text": content.text})
        elif isinstance(content, ContentJson):
            parts.append({"type": "text", "text": orjson.dumps(content.value).decode()})
        elif isinstance(content, ContentToolRequest):
            function = {"name": content.name, "arguments": arguments_json(content.arguments)}
            calls.append({"id": content.id, "function": function, "type": "function"})
        elif isinstance(content, ContentThinking) and preserve_thinking and content.thinking:
            thinking.append(content.thinking)
    message: dict[str, Any] = {"role": "assistant"}
    if parts:
        message["content"] = parts
    if calls:
        message["tool_calls"] = calls
    if thinking:
        message["reasoning_content"] = "".join(thinking)
    if "content" not in message and not calls:
        message["content"] = ""  # an empty answer is still a message the API takes
    return message


def _user_messages(turn: Turn, downloads: Mapping[str, bytes]) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for content in turn.contents:
        if isinstance(content, ContentToolResult):
            text, media = _tool_text(content, downloads)
            tools.append({"content": text, "tool_call_id": _call_id(content), "role": "tool"})
            parts.extend(media)
        else:
            part = content_part(content, downloads)
            if part is not None:
                parts.append(part)
    return [*tools, {"role": "user", "content": parts}] if parts else tools


def _call_id(result: ContentToolResult) -> str:
    assert result.request is not None, "a result in the history answers a request"
    return result.request.id


def _tool_text(
    result: ContentToolResult, downloads: Mapping[str, bytes]
) -> tuple[str, list[dict[str, Any]]]:
    """A result's text for its ``tool`` message, and the images or files it holds (sent
    in the user message after the tool messages, each between tags naming the call)."""
    value = result.get_model_value()
    if isinstance(value, str):
        return value, []
    items: list[Any] = value if isinstance(value, list) else [value]  # pyright: ignore[reportUnknownVariableType]
    texts: list[str] = []
    media: list[dict[str, Any]] = []
    call = _call_id(result)
    try:
        for item in items:
            if isinstance(item, str):
                texts.append(item)
            elif isinstance(item, ContentText):
                texts.append(item.text)
            elif isinstance(item, ContentJson):
                texts.append(orjson.dumps(item.value).decode())
            elif not isinstance(item, Content):
                texts.append(orjson.dumps(item, default=str).decode())
            else:
                part = content_part(item, downloads)
                if part is not None:
                    media.append({"type": "text", "text": f'<tool-content call-id="{call}">'})
                    media.append(part)
                    media.append({"type": "text", "text": "</tool-content>"})
    except ValueError as e:  # e.g. an image type the API does not take
        return f"The tool's result could not be sent to the model: {e}", []
    if media:
        texts.append(f'See <tool-content call-id="{call}"> below.')
    return "\n".join(texts), media


def content_part(content: Content, downloads: Mapping[str, bytes]) -> dict[str, Any] | None:
    """A piece of user content as a message part."""
    if isinstance(content, ContentText):
        return {"type": "text", "text": content.text} if content.text else None
    if isinstance(content, ContentJson):
        return {"type": "text", "text": orjson.dumps(content.value).decode()}
    if isinstance(content, ContentImageInline):
        return {"type": "image_url", "image_url": {"url": image_data_url(content, _API)}}
    if isinstance(content, ContentImageRemote):
        return {"type": "image_url", "image_url": {"url": content.url, "detail": content.detail}}
    if isinstance(content, (ContentPDF, ContentDocument)):
        data = content.data
        if data is None:  # this API takes no file URL: the driver fetched it
            data = downloads.get(str(content.url))
            if data is None:
                raise ValueError(
                    f"the file {content.url} was not downloaded before the request was built"
                )
        file = {"filename": content.filename, "file_data": file_data_url(content, data)}
        return {"type": "file", "file": file}
    if isinstance(content, ContentUploaded):
        uploaded_here(content)
        if content.mime_type.startswith("image/"):
            raise ValueError(
                "Referencing an uploaded image by id isn't supported by the Chat Completions "
                "API. Use ChatOpenAI (Responses API), or pass the image inline via "
                "content_image_file()."
            )
        return {"type": "file", "file": {"file_id": content.id}}
    if isinstance(content, (ContentThinking, ContentThinkingDelta)):
        return None
    text = str(content)
    return {"type": "text", "text": text} if text.strip() else None


def file_urls(turns: Sequence[Turn]) -> list[str]:
    """The URLs of files that must be fetched to send ``turns`` (this API takes none)."""
    urls: list[str] = []
    for turn in turns:
        if turn.role != "user" or cached(turn, _USER) is not None:
            continue  # translated already, with its files' bytes
        for content in turn.contents:
            items: list[Any] = [content]
            if isinstance(content, ContentToolResult):
                value = content.get_model_value()
                items = value if isinstance(value, list) else [value]  # pyright: ignore[reportUnknownVariableType]
            urls.extend(
                str(i.url)
                for i in items
                if isinstance(i, (ContentPDF, ContentDocument)) and i.data is None and i.url
            )
    return urls


# -- response --------------------------------------------------------------------------------


class _Call:
    __slots__ = ("arguments", "id", "name")

    def __init__(self) -> None:
        self.id = ""
        self.name = ""
        self.arguments: list[str] = []


class CompletionsAccumulator:
    """Builds an assistant turn from Chat Completions stream chunks.

    ``feed`` returns text deltas (also the JSON of a structured answer) and reasoning
    as :class:`ContentThinkingDelta`; tool calls are complete only with the answer.
    """

    __slots__ = (
        "_calls",
        "_finish",
        "_head",
        "_key",
        "_structured",
        "_text",
        "_thinking",
        "_usage",
        "complete",
    )

    def __init__(self, structured: bool = False, *, provider_key: str = "openai") -> None:
        self._structured = structured
        self._key = provider_key
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._calls: dict[int, _Call] = {}
        self._finish: str | None = None
        self._usage: Mapping[str, Any] = {}
        self._head: dict[str, Any] = {}
        self.complete = False

    def feed(self, event: dict[str, Any]) -> str | Content | tuple[Content, ...] | None:
        if "error" in event and not event.get("choices"):
            raise stream_error(event)
        if not self._head:
            self._head = {k: v for k, v in event.items() if k not in ("choices", "usage")}
        usage = event.get("usage")
        if isinstance(usage, Mapping):
            self._usage = usage  # pyright: ignore[reportUnknownMemberType]
        shown: str | Content | None = None
        for choice in map(as_map, as_list(event.get("choices"))):
            if int(choice.get("index") or 0) != 0:
                continue
            delta = as_map(choice.get("delta"))
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                self._thinking.append(reasoning)
                shown = ContentThinkingDelta(reasoning)
            text = delta.get("content")
            if isinstance(text, str) and text:
                self._text.append(text)
                shown = text
            for call in map(as_map, as_list(delta.get("tool_calls"))):
                self._call_delta(call)
            if choice.get("finish_reason"):
                self._finish = str(choice["finish_reason"])
                self.complete = True
        return shown

    def _call_delta(self, delta: Mapping[str, Any]) -> None:
        call = self._calls.setdefault(int(delta.get("index") or 0), _Call())
        call.id = str(delta.get("id") or call.id)
        function: Mapping[str, Any] = delta.get("function") or {}
        call.name = str(function.get("name") or call.name)
        if function.get("arguments"):
            call.arguments.append(str(function["arguments"]))

    def turn(self) -> AssistantTurn:
        finish = _FINISH.get(self._finish or "stop", self._finish)
        return self._build(finish, None, done=True)

    def partial_turn(self, reason: str = "interrupted") -> AssistantTurn | None:
        if not (self._text or self._calls or self._thinking):
            return None
        return self._build(None, reason, done=False)

    def _build(
        self, finish: str | None, partial_reason: str | None, *, done: bool
    ) -> AssistantTurn:
        contents: list[Content] = []
        if self._thinking:
            contents.append(ContentThinking("".join(self._thinking)))
        text = "".join(self._text)
        if text:
            parsed: Content | None = None
            if self._structured and done:
                try:
                    parsed = ContentJson(orjson.loads(text))
                except orjson.JSONDecodeError:
                    parsed = None  # not the answer asked for: extraction says so
            contents.append(parsed or ContentText(text))
        for index in sorted(self._calls):
            call = self._calls[index]
            arguments, error = read_arguments("".join(call.arguments), call.name, complete=done)
            if finish == "max_tokens" and error is not None:
                error = (
                    f"The arguments of `{call.name}` were cut off by the max_tokens limit; "
                    "send the call again with shorter arguments."
                )
            contents.append(
                ContentToolRequest(
                    id=call.id, name=call.name, arguments=arguments, parse_error=error
                )
            )
        raw = self._usage
        details: Mapping[str, Any] = raw.get("prompt_tokens_details") or {}
        cached = int(details.get("cached_tokens") or 0)
        usage = Usage(
            input=int(raw.get("prompt_tokens") or 0) - cached,
            output=int(raw.get("completion_tokens") or 0),
            cache_read=cached,
        )
        tokens = usage.tokens()
        model = str(self._head.get("model") or "")
        turn = AssistantTurn(
            contents,
            tokens=tokens,
            usage=usage,
            finish_reason=finish,
            stop_reason=self._finish,
            cost=token_cost(self._key, model, tokens) if model else None,
            partial_reason=partial_reason,
        )
        if self._head:
            data = {**self._head, "finish_reason": self._finish, "usage": dict(raw)}
            turn.attach_completion(data, _no_completion)
        return turn


def _no_completion(turn: Turn) -> None:
    return None


def stream_error(event: Mapping[str, Any]) -> ProviderError:
    """An error sent inside the stream (as some compatible servers do)."""
    error: Any = event.get("error")
    details: Mapping[str, Any] = error if isinstance(error, Mapping) else {"message": str(error)}  # pyright: ignore[reportUnknownVariableType]
    code = str(details.get("code") or details.get("type") or "server_error")
    message = str(details.get("message") or "the provider reported an error mid-stream")
    return ServerError(f"{code}: {message}", error_type=code)


def completion_events(completion: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """A non-streamed completion replayed as the chunks a stream would have sent."""
    head = {k: v for k, v in completion.items() if k not in ("choices", "usage")}
    for choice in map(as_map, as_list(completion.get("choices"))):
        message = as_map(choice.get("message"))
        delta: dict[str, Any] = {k: v for k, v in message.items() if k != "tool_calls"}
        content = delta.get("content")
        if isinstance(content, (dict, list)):  # a structured answer some servers send parsed
            delta["content"] = orjson.dumps(content).decode()
        calls = [
            {"index": i, **as_map(c)} for i, c in enumerate(as_list(message.get("tool_calls")))
        ]
        if calls:
            delta["tool_calls"] = calls
        yield {
            **head,
            "choices": [{"index": choice.get("index", 0), "delta": delta, "finish_reason": None}],
        }
        yield {
            **head,
            "choices": [
                {
                    "index": choice.get("index", 0),
                    "delta": {},
                    "finish_reason": choice.get("finish_reason"),
                }
            ],
        }
    yield {**head, "choices": [], "usage": completion.get("usage") or {}}
