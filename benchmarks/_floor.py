"""The floor: the raw ``anthropic`` SDK doing each exchange by hand.

What a careful hand-written client does: ``messages.create(stream=True)``, text and
tool-input deltas collected in lists and joined once, tool results JSON-encoded with
the standard library, the history kept as plain dicts.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any

from ._harness import API_KEY

__all__ = [
    "async_client",
    "client",
    "json_message",
    "run_tools_by_hand",
    "stream_message",
    "tool_loop",
]

MAX_TOKENS = 4096
Tools = Mapping[str, Callable[..., Any]]


def client(url: str) -> Any:
    import anthropic

    return anthropic.Anthropic(api_key=API_KEY, base_url=url, max_retries=0)


def async_client(url: str) -> Any:
    import anthropic

    return anthropic.AsyncAnthropic(api_key=API_KEY, base_url=url, max_retries=0)


def _start_block(blocks: list[dict[str, Any]], block: Any) -> None:
    if block.type == "text":
        blocks.append({"type": "text", "parts": []})
    elif block.type == "tool_use":
        blocks.append({"type": "tool_use", "id": block.id, "name": block.name, "parts": []})
    else:
        blocks.append(block.model_dump())


def _delta(blocks: list[dict[str, Any]], delta: Any) -> None:
    if delta.type == "text_delta":
        blocks[-1]["parts"].append(delta.text)
    elif delta.type == "input_json_delta":
        blocks[-1]["parts"].append(delta.partial_json)


def _finish(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in blocks:
        parts = block.pop("parts", None)
        if block["type"] == "text":
            block["text"] = "".join(parts or [])
        elif block["type"] == "tool_use":
            block["input"] = json.loads("".join(parts or []) or "{}")
        out.append(block)
    return out


def stream_message(
    sdk: Any, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """One streamed model call; the assistant's content blocks as plain dicts."""
    blocks: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"tools": tools} if tools else {}
    stream = sdk.messages.create(
        model=model, max_tokens=MAX_TOKENS, messages=messages, stream=True, **kwargs
    )
    for event in stream:
        kind = event.type
        if kind == "content_block_delta":
            _delta(blocks, event.delta)
        elif kind == "content_block_start":
            _start_block(blocks, event.content_block)
    return _finish(blocks)


async def stream_message_async(
    sdk: Any, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"tools": tools} if tools else {}
    stream = await sdk.messages.create(
        model=model, max_tokens=MAX_TOKENS, messages=messages, stream=True, **kwargs
    )
    async for event in stream:
        kind = event.type
        if kind == "content_block_delta":
            _delta(blocks, event.delta)
        elif kind == "content_block_start":
            _start_block(blocks, event.content_block)
    return _finish(blocks)


def _result_block(use: dict[str, Any], value: Any) -> dict[str, Any]:
    content = value if isinstance(value, str) else json.dumps(value)
    return {"type": "tool_result", "tool_use_id": use["id"], "content": content}


def run_tools_by_hand(
    uses: list[dict[str, Any]], tools: Tools, pool: Any = None
) -> list[dict[str, Any]]:
    """Tool results in call order; concurrently when given a thread pool."""
    if pool is None:
        return [_result_block(u, tools[u["name"]](**u["input"])) for u in uses]
    futures = [pool.submit(tools[u["name"]], **u["input"]) for u in uses]
    return [_result_block(u, f.result()) for u, f in zip(uses, futures, strict=True)]


def json_message(
    sdk: Any, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """One model call answered as one JSON body; the assistant's blocks as plain dicts."""
    kwargs: dict[str, Any] = {"tools": tools} if tools else {}
    message = sdk.messages.create(model=model, max_tokens=MAX_TOKENS, messages=messages, **kwargs)
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if block.type == "text":
            blocks.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            blocks.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
            )
        else:
            blocks.append(block.model_dump())
    return blocks


def tool_loop(
    sdk: Any,
    model: str,
    prompt: str,
    tools: Tools,
    schemas: list[dict[str, Any]],
    pool: Any = None,
    *,
    stream: bool = True,
) -> list[dict[str, Any]]:
    """User prompt, then model calls and tool rounds until the model stops asking."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    call = stream_message if stream else json_message
    while True:
        content = call(sdk, model, messages, schemas)
        messages.append({"role": "assistant", "content": content})
        uses = [b for b in content if b["type"] == "tool_use"]
        if not uses:
            return messages
        messages.append({"role": "user", "content": run_tools_by_hand(uses, tools, pool)})


async def tool_loop_async(
    sdk: Any, model: str, prompt: str, tools: Tools, schemas: list[dict[str, Any]], pool: Any
) -> list[dict[str, Any]]:
    """The async hand loop: async tools gathered, sync tools in ``pool``'s threads."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    while True:
        content = await stream_message_async(sdk, model, messages, schemas)
        messages.append({"role": "assistant", "content": content})
        uses = [b for b in content if b["type"] == "tool_use"]
        if not uses:
            return messages
        values = await asyncio.gather(
            *(_call_async(tools[u["name"]], u["input"], pool) for u in uses)
        )
        results = [_result_block(u, v) for u, v in zip(uses, values, strict=True)]
        messages.append({"role": "user", "content": results})


async def _call_async(fn: Callable[..., Any], arguments: dict[str, Any], pool: Any) -> Any:
    if inspect.iscoroutinefunction(fn):
        return await fn(**arguments)
    return await asyncio.get_running_loop().run_in_executor(
        pool, functools.partial(fn, **arguments)
    )


def schema(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    """A tool definition written by hand."""
    return {
        "name": name,
        "description": description,
        "input_schema": {"type": "object", "properties": properties, "required": list(properties)},
    }
