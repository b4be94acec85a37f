"""The loopback server's OpenAI side: scripted replies rendered as the Responses API and
the Chat Completions API send them, and those APIs' request rules.

The same :class:`~chatlas_like.testing.Reply` script answers every API: ``Reply.text``
becomes a ``message`` output item (Responses) or the choice's ``content`` (Chat
Completions); ``Reply.tool_call`` a ``function_call`` item or a ``tool_calls`` entry.
Ids are deterministic per server (``resp_0001``, ``call_0001``...) and, as for
Anthropic, number on past those in the request's conversation. Faults (``.cut()``,
``.garbled()``, ``.failing_mid_stream()``, errors, delays) behave as on Anthropic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ._scripted import Counters, Reply, Response, split_parts, split_text

__all__ = ["openai_error", "render_completion", "render_response", "validate_openai"]

_CREATED = 1_767_225_600  # 2026-01-01: a fixed clock, so the same script gives the same bytes


def openai_error(status: int, message: str, error_type: str = "invalid_request_error") -> Response:
    """An error response in OpenAI's shape."""
    code = None if error_type == "invalid_request_error" else error_type
    body = {"error": {"message": message, "type": error_type, "param": None, "code": code}}
    return Response(status=status, json=body)


def _failed(reply: Reply) -> Response | None:
    if reply.dropped:
        return Response(dropped=True)
    if reply.status >= 400:
        response = openai_error(
            reply.status, reply.error_message or "scripted failure", reply.error_type or "api_error"
        )
        response.headers = dict(reply.headers)
        response.delay = reply.delay
        return response
    return None


def _arguments(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return orjson.dumps(arguments).decode() if arguments else "{}"


def _estimate(payload: Any) -> int:
    return max(1, len(orjson.dumps(payload)) // 4)


def _figures(reply: Reply, body: Mapping[str, Any], key: str, output: Any) -> tuple[int, int, int]:
    """(input, cached, output) tokens: the reply's figures, else estimates."""
    usage = dict(reply.usage or {})
    cached = int(usage.get("cache_read_input_tokens", 0))
    fresh = int(usage.get("input_tokens", _estimate(body.get(key, []))))
    produced = int(usage.get("output_tokens", _estimate(output)))
    return fresh + cached, cached, produced


def _call_ids(items: Any, kind: str) -> list[object]:
    found: list[object] = []
    for item in items if isinstance(items, list) else []:  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(item, dict):
            continue
        entry: dict[str, Any] = item  # pyright: ignore[reportUnknownVariableType]
        if kind == "responses" and entry.get("type") == "function_call":
            found.append(entry.get("call_id"))
        if kind == "completions":
            calls: Any = entry.get("tool_calls") or []
            found.extend(_ids(calls))
    return found


def _ids(calls: Any) -> list[object]:
    """The ``id`` of each call of a ``tool_calls`` list."""
    found: list[object] = []
    for call in calls if isinstance(calls, list) else []:  # pyright: ignore[reportUnknownVariableType]
        if isinstance(call, dict):
            entry: dict[str, Any] = call  # pyright: ignore[reportUnknownVariableType]
            found.append(entry.get("id"))
    return found


# -- the Responses API -----------------------------------------------------------------------


def render_response(reply: Reply, body: Mapping[str, Any], counters: Counters) -> Response:
    """``reply`` as the answer to a ``POST /v1/responses``."""
    failed = _failed(reply)
    if failed is not None:
        return failed
    if any(b.get("type") == "tool_use" for b in reply.blocks):
        counters.past("call", _call_ids(body.get("input"), "responses"))
    items: list[dict[str, Any]] = []
    for block in reply.blocks:
        if block.get("type") == "text":
            part: dict[str, Any] = {
                "type": "output_text",
                "text": block["text"],
                "annotations": [],
                "logprobs": [],
            }
            items.append(
                {
                    "id": counters.next("msg"),
                    "type": "message",
                    "status": "completed",
                    "content": [part],
                    "role": "assistant",
                }
            )
        elif block.get("type") == "tool_use":
            items.append(
                {
                    "id": counters.next("fc"),
                    "type": "function_call",
                    "status": "completed",
                    "arguments": _arguments(block.get("input")),
                    "call_id": block.get("id") or counters.next("call"),
                    "name": block["name"],
                }
            )
        else:
            items.append(dict(block))
    total, cached, produced = _figures(reply, body, "input", items)
    incomplete = reply.stop_reason == "max_tokens"
    response: dict[str, Any] = {
        "id": counters.next("resp"),
        "object": "response",
        "created_at": _CREATED,
        "status": "incomplete" if incomplete else "completed",
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "model": body.get("model", "scripted"),
        "output": items,
        "parallel_tool_calls": True,
        "service_tier": str(body.get("service_tier") or "default"),
        "store": bool(body.get("store", True)),
        "usage": {
            "input_tokens": total,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": produced,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": total + produced,
        },
    }
    if not body.get("stream"):
        return Response(json=response, delay=reply.delay)
    events = _response_events(response, reply)
    return _streamed(events, reply)


def _response_events(response: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
    head: dict[str, Any] = {**response, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": head},
        {"type": "response.in_progress", "response": head},
    ]
    for index, item in enumerate(response["output"]):
        kind = item.get("type")
        if kind == "message":
            text = item["content"][0]["text"]
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "content": []},
                }
            )
            empty: dict[str, Any] = {
                "type": "output_text",
                "text": "",
                "annotations": [],
                "logprobs": [],
            }
            where = {"item_id": item["id"], "output_index": index, "content_index": 0}
            events.append({"type": "response.content_part.added", **where, "part": empty})
            for piece in split_text(text, reply.text_chunks):
                events.append(
                    {"type": "response.output_text.delta", **where, "delta": piece, "logprobs": []}
                )
            events.append({"type": "response.output_text.done", **where, "text": text})
            events.append(
                {"type": "response.content_part.done", **where, "part": item["content"][0]}
            )
        elif kind == "function_call":
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "arguments": ""},
                }
            )
            where = {"item_id": item["id"], "output_index": index}
            for piece in split_parts(item["arguments"], reply.json_chunks):
                events.append(
                    {"type": "response.function_call_arguments.delta", **where, "delta": piece}
                )
            events.append(
                {
                    "type": "response.function_call_arguments.done",
                    **where,
                    "arguments": item["arguments"],
                }
            )
        else:
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": item}
            )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    if not reply.drop_stop:
        kind = "response.incomplete" if response["status"] == "incomplete" else "response.completed"
        events.append({"type": kind, "response": response})
    if reply.error_event_at is not None:
        error = {
            "type": "error",
            "code": reply.error_type or "server_error",
            "message": "scripted mid-stream error",
            "param": None,
        }
        events = [*events[: reply.error_event_at], error]
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return events


def _streamed(events: list[dict[str, Any]], reply: Reply, *, done: bool = False) -> Response:
    return Response(
        events=events,
        content_type="text/event-stream",
        cut_after=reply.cut_after,
        garble_at=reply.garble_at,
        delay=reply.delay,
        event_delay=reply.event_delay,
        done_marker=done,
    )


# -- the Chat Completions API ----------------------------------------------------------------


def render_completion(reply: Reply, body: Mapping[str, Any], counters: Counters) -> Response:
    """``reply`` as the answer to a ``POST /v1/chat/completions``."""
    failed = _failed(reply)
    if failed is not None:
        return failed
    if any(b.get("type") == "tool_use" for b in reply.blocks):
        counters.past("call", _call_ids(body.get("messages"), "completions"))
    text = "".join(str(b.get("text", "")) for b in reply.blocks if b.get("type") == "text")
    calls: list[dict[str, Any]] = [
        {
            "id": b.get("id") or counters.next("call"),
            "type": "function",
            "function": {"name": b["name"], "arguments": _arguments(b.get("input"))},
        }
        for b in reply.blocks
        if b.get("type") == "tool_use"
    ]
    finish = "tool_calls" if calls else "length" if reply.stop_reason == "max_tokens" else "stop"
    total, cached, produced = _figures(reply, body, "messages", [text, calls])
    usage = {
        "prompt_tokens": total,
        "completion_tokens": produced,
        "total_tokens": total + produced,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    head = {
        "id": counters.next("chatcmpl"),
        "created": _CREATED,
        "model": body.get("model", "scripted"),
        "service_tier": "default",
        "system_fingerprint": None,
    }
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": None}
        if calls:
            message["tool_calls"] = calls
        completion = {
            **head,
            "object": "chat.completion",
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            ],
            "usage": usage,
        }
        return Response(json=completion, delay=reply.delay)
    chunk = {**head, "object": "chat.completion.chunk"}

    def choice(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        made = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
        return {**chunk, "choices": [made], "usage": None}

    events = [choice({"role": "assistant", "content": "", "refusal": None})]
    events += [choice({"content": piece}) for piece in split_text(text, reply.text_chunks)]
    for index, call in enumerate(calls):
        function = call["function"]
        first = {"index": index, "id": call["id"], "type": "function"}
        events.append(
            choice(
                {"tool_calls": [{**first, "function": {"name": function["name"], "arguments": ""}}]}
            )
        )
        for piece in split_parts(function["arguments"], reply.json_chunks):
            events.append(
                choice({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
    if not reply.drop_stop:
        events.append(choice({}, finish))
        options: Any = body.get("stream_options") or {}
        if isinstance(options, dict) and options.get("include_usage"):  # pyright: ignore[reportUnknownMemberType]
            events.append({**chunk, "choices": [], "usage": usage})
    if reply.error_event_at is not None:
        error = {
            "error": {
                "message": "scripted mid-stream error",
                "type": reply.error_type or "server_error",
            }
        }
        events = [*events[: reply.error_event_at], error]
    return _streamed(events, reply, done=not reply.drop_stop)


# -- request rules ---------------------------------------------------------------------------


def validate_openai(path: str, body: Mapping[str, Any]) -> str | None:
    """What the API would refuse in ``body`` (its 400 message), or None."""
    if not body.get("model"):
        return "you must provide a model parameter"
    if path == "/v1/responses":
        return _responses_rules(body.get("input"))
    return _completions_rules(body.get("messages"))


def _responses_rules(items: Any) -> str | None:
    if not isinstance(items, list) or not items:
        return "'input' must be a non-empty array"
    asked: dict[str, int] = {}
    answered: set[str] = set()
    for entry in items:  # pyright: ignore[reportUnknownVariableType]
        item: dict[str, Any] = entry if isinstance(entry, dict) else {}  # pyright: ignore[reportUnknownVariableType]
        if item.get("type") == "function_call":
            call = str(item.get("call_id"))
            if call in asked:
                return f"Duplicate item found with id {call}."
            asked[call] = 1
        elif item.get("type") == "function_call_output":
            call = str(item.get("call_id"))
            if call not in asked:
                return f"No tool call found for function call output with call_id {call}."
            if call in answered:
                return f"Duplicate function call output for call_id {call}."
            answered.add(call)
    missing = [c for c in asked if c not in answered]
    if missing:
        return f"No tool output found for function call {missing[0]}."
    return None


def _completions_rules(messages: Any) -> str | None:
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    waiting: list[str] = []  # the calls of the last assistant message still unanswered
    for i, entry in enumerate(messages):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        message: dict[str, Any] = entry if isinstance(entry, dict) else {}  # pyright: ignore[reportUnknownVariableType]
        role = message.get("role")
        if role == "tool":
            call = str(message.get("tool_call_id"))
            if call not in waiting:
                return (
                    f"Invalid parameter: messages with role 'tool' must be a response to a "
                    f"preceeding message with 'tool_calls' (messages.[{i}])."
                )
            waiting.remove(call)
            continue
        if waiting:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                f"responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(waiting)}"
            )
        if role == "assistant":
            waiting = [str(i) for i in _ids(message.get("tool_calls") or [])]
    if waiting:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages "
            f"responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {', '.join(waiting)}"
        )
    return None
