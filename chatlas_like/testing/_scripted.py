"""A scripted model: replies declared in advance, rendered as the Messages API would.

``ScriptedModel([Reply.tool_call("get_date", {}), Reply.text("It is 2024-01-01.")])``
answers the first request with a tool call and the second with text. A reply renders
as one JSON message or as server-sent events, depending on the request's ``stream``
flag, with deterministic ids (``msg_0001``, ``toolu_0001``...) counted per server, so
the same script gives the same history every time; a tool call's id numbers on past the
ids in the request's conversation, so a conversation carried on by a new server (a
durable chat resumed in a new process) never sees an id twice.

Faults: ``Reply.error(529, ...)`` answers with an error status; ``.cut(after=n)``
drops the connection after n events; ``.garbled(at=n)`` sends malformed data as event
n; ``.without_stop()`` ends the stream cleanly but without ``message_stop``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

__all__ = [
    "Counters",
    "Reply",
    "Response",
    "ScriptedModel",
    "render_reply",
    "split_parts",
    "split_text",
]


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer (or failure) of the model."""

    blocks: tuple[dict[str, Any], ...] = ()
    stop_reason: str = "end_turn"
    status: int = 200
    error_type: str | None = None
    error_message: str | None = None
    headers: Mapping[str, str] = field(default_factory=lambda: {})
    text_chunks: int | None = None
    json_chunks: int = 3
    cut_after: int | None = None
    garble_at: int | None = None
    drop_stop: bool = False
    usage: Mapping[str, int] | None = None
    delay: float = 0.0
    event_delay: float = 0.0
    error_event_at: int | None = None
    dropped: bool = False

    @classmethod
    def text(cls, text: str, *, chunks: int | None = None, stop_reason: str = "end_turn") -> Reply:
        """Answer with ``text``, streamed in ``chunks`` deltas (one per word by default)."""
        return cls(({"type": "text", "text": text},), stop_reason=stop_reason, text_chunks=chunks)

    @classmethod
    def tool_call(
        cls, name: str, arguments: Mapping[str, Any] | str, *, text: str | None = None
    ) -> Reply:
        """Ask for one tool call (``arguments`` may be raw, possibly broken, JSON text)."""
        return cls.tool_calls([(name, arguments)], text=text)

    @classmethod
    def tool_calls(
        cls, calls: Iterable[tuple[str, Mapping[str, Any] | str]], *, text: str | None = None
    ) -> Reply:
        """Ask for several tool calls in one turn."""
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        for name, arguments in calls:
            blocks.append({"type": "tool_use", "name": name, "input": arguments})
        return cls(tuple(blocks), stop_reason="tool_use")

    @classmethod
    def blocks_of(cls, *blocks: dict[str, Any], stop_reason: str = "end_turn") -> Reply:
        """Answer with these content blocks as given (thinking, server tools, new types)."""
        return cls(tuple(blocks), stop_reason=stop_reason)

    @classmethod
    def error(
        cls,
        status: int,
        error_type: str = "api_error",
        message: str = "scripted failure",
        *,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """Fail with an HTTP status in Anthropic's error shape."""
        return cls(
            status=status, error_type=error_type, error_message=message, headers=dict(headers or {})
        )

    def cut(self, after: int) -> Reply:
        """Drop the connection after ``after`` stream events."""
        return replace(self, cut_after=after)

    def garbled(self, at: int) -> Reply:
        """Send malformed data as stream event number ``at`` (0-based)."""
        return replace(self, garble_at=at)

    def failing_mid_stream(self, at: int, error_type: str = "overloaded_error") -> Reply:
        """Send an ``error`` event (as the API does when overloaded) as event ``at``."""
        return replace(self, error_event_at=at, error_type=error_type)

    @classmethod
    def drop(cls) -> Reply:
        """Close the connection without answering (a connection reset)."""
        return cls(dropped=True)

    def without_stop(self) -> Reply:
        """End the stream cleanly but without its ``message_stop`` event."""
        return replace(self, drop_stop=True)

    def with_usage(self, **usage: int) -> Reply:
        """Report these usage figures (``input_tokens``, ``output_tokens``...)."""
        return replace(self, usage=usage)

    def slowly(self, delay: float) -> Reply:
        """Wait ``delay`` seconds before answering."""
        return replace(self, delay=delay)

    def drip(self, seconds: float) -> Reply:
        """Send each stream event on its own, ``seconds`` apart (a slow stream)."""
        return replace(self, event_delay=seconds)


@dataclass(slots=True)
class Response:
    """What the server writes: a JSON body, stream events, or raw bytes."""

    status: int = 200
    json: Any = None
    events: list[dict[str, Any]] | None = None
    raw: bytes | None = None
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=lambda: {})
    cut_after: int | None = None
    garble_at: int | None = None
    delay: float = 0.0
    event_delay: float = 0.0
    dropped: bool = False
    done_marker: bool = False  # end the stream with ``data: [DONE]`` (Chat Completions)


class Counters:
    """Deterministic ids for one server."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def next(self, prefix: str) -> str:
        with self._lock:
            n = self._counts.get(prefix, 0) + 1
            self._counts[prefix] = n
        return f"{prefix}_{n:04d}"

    def past(self, prefix: str, ids: Iterable[object]) -> None:
        """Number on after the highest of ``ids`` made with ``prefix`` (``toolu_0007``):
        a conversation carried to a new server (a durable chat resumed in a new
        process) never gets an id its history already holds."""
        head = prefix + "_"
        numbers = [
            int(i[len(head) :])
            for i in ids
            if isinstance(i, str) and i.startswith(head) and i[len(head) :].isdigit()
        ]
        if numbers:
            with self._lock:
                self._counts[prefix] = max(self._counts.get(prefix, 0), *numbers)


def render_reply(reply: Reply, body: Mapping[str, Any], counters: Counters) -> Response:
    """``reply`` as the response to ``body`` (JSON or stream, as the request asked)."""
    if reply.dropped:
        return Response(dropped=True)
    if reply.status >= 400:
        return Response(
            status=reply.status,
            json={
                "type": "error",
                "error": {"type": reply.error_type, "message": reply.error_message},
                "request_id": counters.next("req"),
            },
            headers=dict(reply.headers),
            delay=reply.delay,
        )
    if any(b.get("type") == "tool_use" and "id" not in b for b in reply.blocks):
        counters.past("toolu", _tool_use_ids(body))
    blocks = [_with_id(b, counters) for b in reply.blocks]
    usage = _usage(body, blocks, reply)
    message: dict[str, Any] = {
        "id": counters.next("msg"),
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "scripted"),
        "content": [_final_block(b) for b in blocks],
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "stop_details": None,
        "usage": usage,
    }
    if not body.get("stream"):
        return Response(json=message, delay=reply.delay)
    events = _events(message, blocks, reply)
    if reply.error_event_at is not None:
        error = {
            "type": reply.error_type or "overloaded_error",
            "message": "scripted mid-stream error",
        }
        events = [*events[: reply.error_event_at], {"type": "error", "error": error}]
    return Response(
        events=events,
        content_type="text/event-stream",
        cut_after=reply.cut_after,
        garble_at=reply.garble_at,
        delay=reply.delay,
        event_delay=reply.event_delay,
    )


def _tool_use_ids(body: Mapping[str, Any]) -> Iterator[object]:
    """The ids of the tool calls in a request's conversation."""
    messages: Any = body.get("messages") or ()
    for message in messages:
        content: Any = message.get("content") if isinstance(message, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if isinstance(content, list):
            for block in content:  # pyright: ignore[reportUnknownVariableType]
                if isinstance(block, dict) and block.get("type") == "tool_use":  # pyright: ignore[reportUnknownMemberType]
                    yield block.get("id")  # pyright: ignore[reportUnknownMemberType]


def _with_id(block: dict[str, Any], counters: Counters) -> dict[str, Any]:
    if block.get("type") == "tool_use" and "id" not in block:
        return {**block, "id": counters.next("toolu")}
    if block.get("type") == "server_tool_use" and "id" not in block:
        return {**block, "id": counters.next("srvtoolu")}
    return block


def _final_block(block: dict[str, Any]) -> dict[str, Any]:
    if block.get("type") in ("tool_use", "server_tool_use") and isinstance(block.get("input"), str):
        try:
            return {**block, "input": orjson.loads(block["input"])}
        except orjson.JSONDecodeError:
            return {**block, "input": {}}
    return block


def _usage(body: Mapping[str, Any], blocks: list[dict[str, Any]], reply: Reply) -> dict[str, Any]:
    """The usage object as the API sends it, the reply's figures taking precedence."""
    figures: dict[str, Any] = {
        "input_tokens": _estimate_tokens(body),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": max(1, sum(len(orjson.dumps(b)) for b in blocks) // 4),
        **(reply.usage or {}),
    }
    written = int(figures["cache_creation_input_tokens"])
    one_hour = b'"ttl":"1h"' in orjson.dumps(body)
    usage: dict[str, Any] = {
        "input_tokens": figures.pop("input_tokens"),
        "cache_creation_input_tokens": figures.pop("cache_creation_input_tokens"),
        "cache_read_input_tokens": figures.pop("cache_read_input_tokens"),
        # The API splits cache writes by the lifetime the request asked for.
        "cache_creation": {
            "ephemeral_5m_input_tokens": 0 if one_hour else written,
            "ephemeral_1h_input_tokens": written if one_hour else 0,
        },
        "output_tokens": figures.pop("output_tokens"),
        "service_tier": "standard",
        "inference_geo": "not_available",
    }
    usage.update(figures)  # anything else the reply names (server_tool_use...)
    return usage


def _estimate_tokens(body: Mapping[str, Any]) -> int:
    return max(1, len(orjson.dumps(body.get("messages", []))) // 4)


_START_ONLY = frozenset({"cache_creation", "service_tier", "inference_geo"})


def _events(
    message: dict[str, Any], blocks: list[dict[str, Any]], reply: Reply
) -> list[dict[str, Any]]:
    usage: dict[str, Any] = message["usage"]
    start: dict[str, Any] = {
        **message,
        "content": [],
        "stop_reason": None,
        "usage": {**usage, "output_tokens": 1},
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(blocks):
        events.extend(_block_events(index, block, reply))
        if index == 0:
            events.append({"type": "ping"})  # the API pings once the first block has started
    # The final usage repeats the counts, without the breakdown and the serving details.
    final_usage = {k: v for k, v in usage.items() if k not in _START_ONLY}
    events.append(
        {
            "type": "message_delta",
            "delta": {
                "stop_reason": reply.stop_reason,
                "stop_sequence": None,
                "stop_details": None,
            },
            "usage": final_usage,
        }
    )
    if not reply.drop_stop:
        events.append({"type": "message_stop"})
    return events


def _block_events(index: int, block: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
    kind = block.get("type")
    if kind == "text":
        start: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [
            {"type": "text_delta", "text": part}
            for part in split_text(block["text"], reply.text_chunks)
        ]
        if "citations" in block:  # as the API streams cited text: citations first
            start = {"citations": [], "type": "text", "text": ""}
            cited = [{"type": "citations_delta", "citation": c} for c in block["citations"]]
            deltas = cited + deltas
    elif kind in ("tool_use", "server_tool_use"):
        start = {**block, "input": {}}
        arguments = block["input"]
        raw = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
        if arguments == {}:
            raw = ""  # the API streams no JSON at all for a call without arguments
        # The API's first argument delta is always empty.
        deltas = [
            {"type": "input_json_delta", "partial_json": p}
            for p in ["", *split_parts(raw, reply.json_chunks)]
        ]
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": block.get("thinking", "")}]
        if "signature" in block:
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
    else:
        start, deltas = block, []
    events: list[dict[str, Any]] = [
        {"type": "content_block_start", "index": index, "content_block": start}
    ]
    events.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)
    events.append({"type": "content_block_stop", "index": index})
    return events


def split_text(text: str, chunks: int | None) -> list[str]:
    """A text in ``chunks`` pieces, or one piece per word."""
    if chunks is None:
        words = text.split(" ")
        return [w + " " for w in words[:-1]] + [words[-1]] if text else []
    return split_parts(text, chunks)


def split_parts(text: str, chunks: int) -> list[str]:
    """A text in ``chunks`` pieces of about equal length."""
    if not text:
        return []
    chunks = max(1, min(chunks, len(text)))
    size, extra = divmod(len(text), chunks)
    parts: list[str] = []
    position = 0
    for i in range(chunks):
        length = size + (1 if i < extra else 0)
        parts.append(text[position : position + length])
        position += length
    return parts


Responder = Callable[[Mapping[str, Any]], Reply]


class ScriptedModel:
    """Answers requests from a script: a list of replies in order, or a function.

    Parameters
    ----------
    script
        Replies served in order, or ``fn(body) -> Reply`` called for every request.
    """

    def __init__(self, script: Sequence[Reply] | Responder) -> None:
        self._lock = threading.Lock()
        self._replies = list(script) if not callable(script) else None
        self._fn = script if callable(script) else None
        self.served = 0

    def add(self, *replies: Reply) -> None:
        """Append replies to the script."""
        with self._lock:
            if self._replies is None:
                raise TypeError("this scripted model answers with a function")
            self._replies.extend(replies)

    @property
    def remaining(self) -> int:
        """Replies not served yet."""
        return len(self._replies or [])

    def reply_for(self, body: Mapping[str, Any]) -> Reply:
        with self._lock:
            self.served += 1
        if self._fn is not None:
            return self._fn(body)  # outside the lock: a script may block on purpose
        with self._lock:
            assert self._replies is not None
            if not self._replies:
                return Reply.error(
                    500, "api_error", "the scripted model has no reply left for this request"
                )
            return self._replies.pop(0)
