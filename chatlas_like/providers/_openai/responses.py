"""OpenAI's Responses API (``POST /v1/responses``), translated both ways with no SDK and
no I/O.

``build_request``: turns to a request body, as chatlas builds it: every piece of
content its own input item, the system prompt a ``system`` message, ``store: false``,
tool calls as ``function_call`` items answered by ``function_call_output`` items with
the same ``call_id``. A tool result holding images or files sends them in its output,
which the Responses API accepts (chatlas sends them as a user message after it).

``ResponsesAccumulator``: stream events to an assistant turn. The final
``response.completed`` (or ``.incomplete``) event carries the whole response, which
the turn is made from, as chatlas makes it; deltas before it are what a stream shows.
A non-streamed response is replayed as the same events (``response_events``).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import orjson

from ..._core.callers import caller_stacklevel
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
    WebSource,
    server_tool_request,
)
from ..._core.errors import ProviderError, RateLimitError, ServerError
from ..._core.tool_result import ContentToolResult
from ..._core.turn import AssistantTurn, Turn, Usage
from ..._tools.tool import Tool, ToolBuiltIn
from .._translated import PrefixCache, translated
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
from .prices import tier_cost
from .schema import is_strict, strict_schema

__all__ = [
    "ResponsesAccumulator",
    "build_request",
    "is_reasoning_model",
    "response_events",
]

_REASONING = re.compile(r"^(o\d|gpt-5)")
_INCOMPLETE: dict[str, str] = {
    "max_output_tokens": "max_tokens",
    "content_filter": "content_filter",
}
_API = "the Responses API"
_VARIANT = "responses"  # this wire's translations of a turn (see providers._translated)


def is_reasoning_model(model: str) -> bool:
    """Whether ``model`` reasons (o-series, GPT-5), as chatlas decides it."""
    return bool(_REASONING.match(model))


# -- request ---------------------------------------------------------------------------------


def build_request(
    turns: Sequence[Turn], spec: RequestSpec, *, model: str, prefix: PrefixCache | None = None
) -> dict[str, Any]:
    """The body of a ``POST /v1/responses`` for ``turns`` (``prefix``: the provider's
    last request, to translate only the turns added since)."""
    inputs: list[dict[str, Any]] = []
    if spec.system_prompt:
        inputs.append(_message("system", [{"type": "input_text", "text": spec.system_prompt}]))
    downloads = spec.downloads

    def translate(turn: Turn) -> list[dict[str, Any]]:
        if turn.role == "system":
            return []
        return translated(turn, _VARIANT, lambda: _turn_items(turn, downloads))

    if prefix is not None:
        inputs.extend(prefix.items(turns, translate))
    else:
        for turn in turns:
            inputs.extend(translate(turn))
    body: dict[str, Any] = {"stream": spec.stream, "input": inputs, "model": model, "store": False}
    tools = [tool_definition(t) for t in spec.tools]
    if tools:
        body["tools"] = tools
    if spec.data_model is not None:
        body["text"] = {
            "format": {
                "type": "json_schema",
                "name": "structured_data",
                "schema": strict_schema(spec.data_model),
                "strict": True,
            }
        }
    body.update(_params(spec.params))
    body.update(spec.kwargs)
    if "reasoning" in body or is_reasoning_model(model):
        # Reasoning goes back as sent (store is off): its encrypted content is needed.
        include = list(body.get("include") or [])
        if "reasoning.encrypted_content" not in include:
            include.append("reasoning.encrypted_content")
        body["include"] = include
    return body


def _params(params: Mapping[str, Any]) -> dict[str, Any]:
    """chatlas's model parameters as the Responses API names them."""
    names = {"max_tokens": "max_output_tokens", "top_k": "top_logprobs"}
    return {names.get(k, k): v for k, v in params.items()}


def tool_definition(tool: Tool | ToolBuiltIn) -> dict[str, Any]:
    """A tool as the Responses API declares it (strict when its schema allows it)."""
    if isinstance(tool, ToolBuiltIn):
        return _built_in(tool.definition)
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description or None,
        "parameters": tool.parameters,
        "strict": is_strict(tool.parameters),
    }


def _built_in(definition: Mapping[str, Any]) -> dict[str, Any]:
    """A provider-run tool as OpenAI runs it: ``tool_web_search()`` (its settings made
    OpenAI's: allowed domains without their scheme, the user's location); any other
    definition is sent as given."""
    kind = str(definition.get("type", ""))
    if kind.startswith("web_fetch_"):
        raise ValueError(
            "OpenAI's Responses API has no web fetch tool: register a function that "
            "fetches the page instead, or use tool_web_search()"
        )
    if not kind.startswith("web_search_"):
        return dict(definition)
    made: dict[str, Any] = {"type": "web_search"}
    allowed = definition.get("allowed_domains")
    if allowed:
        made["filters"] = {"allowed_domains": [re.sub(r"^https?://", "", d) for d in allowed]}
    if definition.get("user_location"):
        made["user_location"] = dict(definition["user_location"])
    for setting in ("blocked_domains", "max_uses"):
        if definition.get(setting):
            warnings.warn(
                f"OpenAI's web search has no {setting}: the setting is not sent",
                UserWarning,
                stacklevel=caller_stacklevel(),
            )
    return made


def _turn_items(turn: Turn, downloads: Mapping[str, bytes]) -> list[dict[str, Any]]:
    return [item for content in _ordered(turn) for item in _items(content, turn.role, downloads)]


def _ordered(turn: Turn) -> list[Content]:
    """A turn's contents with its tool results first, as the API wants them answered."""
    results = [c for c in turn.contents if isinstance(c, ContentToolResult)]
    if not results:
        return list(turn.contents)
    return [*results, *(c for c in turn.contents if not isinstance(c, ContentToolResult))]


def _message(role: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": role, "content": parts}


def _items(content: Content, role: str, downloads: Mapping[str, bytes]) -> list[dict[str, Any]]:
    if isinstance(content, ContentToolResult):
        return [_output_item(content, downloads)]
    if type(content) is ContentText:
        assert isinstance(content, ContentText)
        if not content.text:
            return []
        if role == "assistant":
            part: dict[str, Any] = {"type": "output_text", "text": content.text, "annotations": []}
            return [
                {"role": "assistant", "content": [part], "status": "completed", "type": "message"}
            ]
        return [_message(role, [{"type": "input_text", "text": content.text}])]
    if isinstance(content, ContentJson):
        text = orjson.dumps(content.value).decode()
        return _items(ContentText(text), role, downloads)
    if isinstance(content, ContentToolRequest):
        return [
            {
                "type": "function_call",
                "call_id": content.id,
                "name": content.name,
                "arguments": arguments_json(content.arguments),
            }
        ]
    if isinstance(content, ContentThinking):
        extra = dict(content.extra or {})
        if extra.get("type") != "reasoning":
            return []  # thinking of another provider's: nothing this API can take back
        extra.pop("status", None)
        return [extra]
    if isinstance(content, (ContentServerToolRequest, ContentServerToolResult, ContentUnknown)):
        block = content.block
        return [dict(block)] if block.get("type") == "web_search_call" else []
    if isinstance(content, (ContentThinkingDelta, ContentCitation)):
        return []
    media = input_part(content, downloads)
    return [_message(role, [media])] if media is not None else []


def input_part(content: Content, downloads: Mapping[str, bytes]) -> dict[str, Any] | None:
    """An image, file or text as an input content part."""
    if isinstance(content, ContentImageInline):
        url = image_data_url(content, _API)
        return {"type": "input_image", "image_url": url, "detail": "auto"}
    if isinstance(content, ContentImageRemote):
        return {"type": "input_image", "image_url": content.url, "detail": content.detail}
    if isinstance(content, (ContentPDF, ContentDocument)):
        if content.data is None and content.url:
            return {"type": "input_file", "file_url": content.url}
        data = content.data if content.data is not None else b""
        url = file_data_url(content, data)
        return {"type": "input_file", "filename": content.filename, "file_data": url}
    if isinstance(content, ContentUploaded):
        uploaded_here(content)
        if content.mime_type.startswith("image/"):
            return {"type": "input_image", "file_id": content.id, "detail": "auto"}
        return {"type": "input_file", "file_id": content.id}
    if isinstance(content, ContentText):
        return {"type": "input_text", "text": content.text} if content.text else None
    text = str(content)
    return {"type": "input_text", "text": text} if text.strip() else None


def _output_item(result: ContentToolResult, downloads: Mapping[str, bytes]) -> dict[str, Any]:
    assert result.request is not None, "a result in the history answers a request"
    value = result.get_model_value()
    output: Any
    if isinstance(value, str):
        output = value
    else:
        items: list[Any] = value if isinstance(value, list) else [value]  # pyright: ignore[reportUnknownVariableType]
        try:
            output = [p for p in (_output_part(i, downloads) for i in items) if p is not None]
        except ValueError as e:  # e.g. an image type the API does not take
            output = f"The tool's result could not be sent to the model: {e}"
    return {"type": "function_call_output", "call_id": result.request.id, "output": output}


def _output_part(item: Any, downloads: Mapping[str, bytes]) -> dict[str, Any] | None:
    if isinstance(item, str):
        return {"type": "input_text", "text": item} if item else None
    if isinstance(item, Content):
        return input_part(item, downloads)
    return {"type": "input_text", "text": orjson.dumps(item, default=str).decode()}


# -- response --------------------------------------------------------------------------------


class ResponsesAccumulator:
    """Builds an assistant turn from Responses API stream events.

    ``feed`` returns text deltas (also the JSON of a structured answer), reasoning
    summaries as :class:`ContentThinkingDelta` pieces, and each function call and web
    search once its item is done.

    Parameters
    ----------
    structured
        Whether the request asked for structured data: the answer's text becomes a
        :class:`ContentJson`.
    provider_key
        Whose prices cost the turn.
    """

    __slots__ = ("_final", "_items", "_key", "_structured", "_texts", "complete")

    def __init__(self, structured: bool = False, *, provider_key: str = "openai") -> None:
        self._structured = structured
        self._key = provider_key
        self._items: dict[int, dict[str, Any]] = {}
        self._texts: dict[int, list[str]] = {}
        self._final: dict[str, Any] | None = None
        self.complete = False

    def feed(self, event: dict[str, Any]) -> str | Content | tuple[Content, ...] | None:
        kind = event.get("type")
        if kind == "response.output_text.delta":
            delta = str(event.get("delta") or "")
            self._texts.setdefault(int(event.get("output_index") or 0), []).append(delta)
            return delta or None
        if kind == "response.output_text.annotation.added":
            return _citation(as_map(event.get("annotation")))
        if kind == "response.reasoning_summary_text.delta":
            thinking = str(event.get("delta") or "")
            return ContentThinkingDelta(thinking) if thinking else None
        if kind == "response.function_call_arguments.delta":
            index = int(event.get("output_index") or 0)
            self._texts.setdefault(index, []).append(str(event.get("delta") or ""))
            return None
        if kind == "response.output_item.added":
            item: dict[str, Any] = dict(event.get("item") or {})
            self._items[int(event.get("output_index") or 0)] = item
            if item.get("type") == "reasoning":
                return ContentThinkingDelta("", "start")
            return None
        if kind == "response.output_item.done":
            index = int(event.get("output_index") or 0)
            item = dict(event.get("item") or {})
            item["_done"] = True
            self._items[index] = item
            self._texts.pop(index, None)
            if item.get("type") == "reasoning":
                return ContentThinkingDelta("", "end")
            if item.get("type") in ("function_call", "web_search_call"):
                return _contents(item, self._structured)[0]
            return None
        if kind in ("response.completed", "response.incomplete"):
            self._final = dict(event.get("response") or {})
            self.complete = True
        elif kind == "response.failed":
            raise failed_error(event.get("response") or {})
        elif kind == "error":
            raise stream_error(event)
        return None

    def turn(self) -> AssistantTurn:
        final = self._final or {}
        output = [as_map(i) for i in as_list(final.get("output"))] or self._known_items()
        contents = [c for item in output for c in _contents(item, self._structured)]
        status = str(final.get("status") or "completed")
        reason = as_map(final.get("incomplete_details")).get("reason")
        finish = finish_reason(status, reason)
        if finish == "success" and any(isinstance(c, ContentToolRequest) for c in contents):
            finish = "tool_use"
        return self._build(contents, finish, None, final)

    def partial_turn(self, reason: str = "interrupted") -> AssistantTurn | None:
        items = self._known_items()
        contents = [c for item in items for c in _contents(item, self._structured)]
        if not contents or all(type(c) is ContentText and not c.text for c in contents):
            return None
        return self._build(contents, None, reason, self._final or {})

    def _known_items(self) -> list[dict[str, Any]]:
        """The output items so far, a text or arguments still arriving as they stand."""
        items: list[dict[str, Any]] = []
        for index in sorted(self._items.keys() | self._texts.keys()):
            item: dict[str, Any] = dict(self._items.get(index) or {"type": "message"})
            item.setdefault("_done", False)  # still arriving: its arguments may be cut
            parts = self._texts.get(index)
            if parts is not None and item.get("type") == "function_call":
                item["arguments"] = "".join(parts)
            elif parts is not None:
                item["content"] = [{"type": "output_text", "text": "".join(parts)}]
            items.append(item)
        return items

    def _build(
        self,
        contents: list[Content],
        finish: str | None,
        partial_reason: str | None,
        final: Mapping[str, Any],
    ) -> AssistantTurn:
        raw: Mapping[str, Any] = final.get("usage") or {}
        details: Mapping[str, Any] = raw.get("input_tokens_details") or {}
        cached = int(details.get("cached_tokens") or 0)
        usage = Usage(
            input=int(raw.get("input_tokens") or 0) - cached,
            output=int(raw.get("output_tokens") or 0),
            cache_read=cached,
        )
        tokens = usage.tokens()
        model = str(final.get("model") or "")
        tier = str(final.get("service_tier") or "")
        turn = AssistantTurn(
            contents,
            tokens=tokens,
            usage=usage,
            finish_reason=finish,
            stop_reason=str(final.get("status")) if final.get("status") else None,
            cost=tier_cost(self._key, model, tier, tokens) if model else None,
            partial_reason=partial_reason,
        )
        if final:
            data = {k: v for k, v in final.items() if k != "output"}
            turn.attach_completion(data, _no_completion)
        return turn


def _no_completion(turn: Turn) -> None:
    return None


def finish_reason(status: str, reason: str | None) -> str:
    """A response's status (and why it is incomplete) as chatlas's finish reason."""
    if status == "completed":
        return "success"
    if status == "incomplete":
        return _INCOMPLETE.get(reason or "", reason or "incomplete")
    return status


def _contents(item: Mapping[str, Any], structured: bool) -> list[Content]:
    kind = item.get("type")
    if kind == "message":
        found: list[Content] = []
        for part in map(as_map, as_list(item.get("content"))):
            if part.get("type") != "output_text":
                continue  # a refusal says nothing the turn can hold as an answer
            text = str(part.get("text") or "")
            if structured and item.get("_done", True):
                try:
                    found.append(ContentJson(orjson.loads(text)))
                    continue
                except orjson.JSONDecodeError:
                    pass  # not the answer asked for: kept as text, extraction says so
            found.append(ContentText(text))
            # chatlas's citation items, after the text they are in (their extra says where)
            cited = (_citation(as_map(a)) for a in as_list(part.get("annotations")))
            found.extend(c for c in cited if c is not None)
        return found
    if kind == "function_call":
        name = str(item.get("name") or "")
        done = bool(item.get("_done", True))
        arguments, error = read_arguments(str(item.get("arguments") or ""), name, complete=done)
        return [
            ContentToolRequest(
                id=str(item.get("call_id") or item.get("id") or ""),
                name=name,
                arguments=arguments,
                parse_error=error,
            )
        ]
    if kind == "reasoning":
        summary = "".join(str(as_map(s).get("text") or "") for s in as_list(item.get("summary")))
        extra = {k: v for k, v in item.items() if k != "_done"}
        return [ContentThinking(summary, extra)]
    if kind == "web_search_call":
        action: Mapping[str, Any] = item.get("action") or {}
        block = {k: v for k, v in item.items() if k != "_done"}
        name = "web_fetch" if action.get("type") == "open_page" else "web_search"
        arguments = (
            {"url": action.get("url")}
            if name == "web_fetch"
            else {"query": action.get("query") or (action.get("queries") or ["web search"])[0]}
        )
        return [server_tool_request(str(item.get("id") or ""), name, arguments, block)]
    return [ContentUnknown({k: v for k, v in item.items() if k != "_done"})]


def _citation(annotation: Mapping[str, Any]) -> ContentCitation | None:
    """A ``url_citation`` annotation as a citation of its page (None for other kinds)."""
    if annotation.get("type") != "url_citation":
        return None
    title = annotation.get("title")
    source = WebSource(url=str(annotation.get("url") or ""), title=str(title) if title else None)
    return ContentCitation(source=source, extra=dict(annotation))


def failed_error(response: Mapping[str, Any]) -> ProviderError:
    """A ``response.failed`` event as a provider error."""
    error: Mapping[str, Any] = response.get("error") or {}
    code = str(error.get("code") or "server_error")
    message = str(error.get("message") or "the response failed")
    cls = RateLimitError if code == "rate_limit_exceeded" else ServerError
    return cls(f"{code}: {message}", error_type=code)


def stream_error(event: Mapping[str, Any]) -> ProviderError:
    """An ``error`` event mid-stream as a provider error."""
    code = str(event.get("code") or "server_error")
    message = str(event.get("message") or "the provider reported an error mid-stream")
    cls = RateLimitError if code == "rate_limit_exceeded" else ServerError
    return cls(f"{code}: {message}", error_type=code)


def response_events(response: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """A non-streamed response replayed as the events a stream would have sent, so
    both kinds of response show the same things in order."""
    head = {k: v for k, v in response.items() if k != "output"}
    yield {"type": "response.created", "response": {**head, "output": []}}
    for index, item in enumerate(map(as_map, as_list(response.get("output")))):
        yield {"type": "response.output_item.added", "output_index": index, "item": item}
        if item.get("type") == "message":
            for part in map(as_map, as_list(item.get("content"))):
                if part.get("type") == "output_text" and part.get("text"):
                    yield {
                        "type": "response.output_text.delta",
                        "output_index": index,
                        "delta": part["text"],
                    }
        elif item.get("type") == "reasoning":
            for summary in map(as_map, as_list(item.get("summary"))):
                if summary.get("text"):
                    yield {
                        "type": "response.reasoning_summary_text.delta",
                        "output_index": index,
                        "delta": summary["text"],
                    }
        yield {"type": "response.output_item.done", "output_index": index, "item": item}
    kind = "response.incomplete" if response.get("status") == "incomplete" else "response.completed"
    yield {"type": kind, "response": dict(response)}
