"""The Messages API's rules for a request, as a list, applied as the real API applies them.

Consecutive messages of one role are merged first (the API does so); then each rule
may reject the request with Anthropic's error shape. Add a rule by appending a function
``(body, messages) -> str | None`` to ``RULES``.

Besides the conversation's shape (tool-use ids unique across the request, each
answered once, results first), the rules cover extended thinking (signed thinking
blocks, sent back in a tool loop; no forced tool; a budget below ``max_tokens``),
structured outputs (every object in the schema closed, no numeric or length
constraints) and server tool options. The token-count endpoint applies the same rules,
except those about ``max_tokens``, which it does not take.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

__all__ = ["MAX_BODY_BYTES", "RULES", "Rejection", "merged_messages", "validate_request"]

MAX_BODY_BYTES = 32 * 1024 * 1024

Rule = Callable[[dict[str, Any], list[dict[str, Any]]], str | None]


class Rejection(Exception):
    """A request the API would refuse: status, error type and message."""

    def __init__(self, status: int, error_type: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.message = message


def merged_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive same-role messages as one, with string content as a text block."""
    merged: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        blocks: list[Any] = (
            [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        )
        if merged and merged[-1]["role"] == message.get("role"):
            merged[-1]["content"].extend(blocks)
        else:
            merged.append({"role": message.get("role"), "content": blocks})
    return merged


def _required_fields(body: dict[str, Any], _: list[dict[str, Any]]) -> str | None:
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            return f"{name}: Field required"
    if not isinstance(body["messages"], list) or not body["messages"]:
        return "messages: at least one message is required"
    return None


def _roles(_: dict[str, Any], messages: list[dict[str, Any]]) -> str | None:
    for i, message in enumerate(messages):
        if message["role"] not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
    return None


def _non_empty(_: dict[str, Any], messages: list[dict[str, Any]]) -> str | None:
    for i, message in enumerate(messages):
        final_assistant = i == len(messages) - 1 and message["role"] == "assistant"
        if not message["content"] and not final_assistant:
            return f"messages.{i}: all messages must have non-empty content except for the optional final assistant message"
    return None


def _no_empty_text(_: dict[str, Any], messages: list[dict[str, Any]]) -> str | None:
    for i, message in enumerate(messages):
        for j, block in enumerate(message["content"]):
            if block.get("type") == "text" and not str(block.get("text", "")).strip():
                return f"messages.{i}.content.{j}: text content blocks must contain non-whitespace text"
    return None


def _tool_use_ids_unique(_: dict[str, Any], messages: list[dict[str, Any]]) -> str | None:
    seen: set[Any] = set()
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        for j, block in enumerate(message["content"]):
            if block.get("type") not in ("tool_use", "server_tool_use"):
                continue
            if block.get("id") in seen:
                return f"messages.{i}.content.{j}: `tool_use` ids must be unique"
            seen.add(block.get("id"))
    return None


def _tool_results_answer_tool_uses(_: dict[str, Any], messages: list[dict[str, Any]]) -> str | None:
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        uses = [b["id"] for b in message["content"] if b.get("type") == "tool_use"]
        if not uses:
            continue
        if i + 1 >= len(messages):
            return f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {', '.join(uses)}. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
        following = messages[i + 1]["content"]
        results = [b.get("tool_use_id") for b in following if b.get("type") == "tool_result"]
        missing = [u for u in uses if u not in results]
        if missing:
            return f"messages.{i + 1}: `tool_use` ids were found without `tool_result` blocks immediately after: {', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
        duplicated = sorted({r for r in results if results.count(r) > 1})
        if duplicated:
            return f"messages.{i + 1}: each `tool_use` must have a single result. Found multiple `tool_result` blocks with id: {', '.join(str(d) for d in duplicated)}"
        leading = 0
        while leading < len(following) and following[leading].get("type") == "tool_result":
            leading += 1
        if leading != len(results):
            return f"messages.{i + 1}: `tool_result` blocks must come first in the user message, before any other content"
    return None


def _tool_results_follow_tool_uses(_: dict[str, Any], messages: list[dict[str, Any]]) -> str | None:
    for i, message in enumerate(messages):
        results = [
            b.get("tool_use_id") for b in message["content"] if b.get("type") == "tool_result"
        ]
        if not results:
            continue
        previous: list[dict[str, Any]] = (
            messages[i - 1]["content"] if i > 0 and messages[i - 1]["role"] == "assistant" else []
        )
        uses = {b.get("id") for b in previous if b.get("type") == "tool_use"}
        unknown = [r for r in results if r not in uses]
        if unknown:
            return f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: {', '.join(str(u) for u in unknown)}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    return None


def _server_tool_pending(_: dict[str, Any], messages: list[dict[str, Any]]) -> str | None:
    for i, message in enumerate(messages[:-1]):
        if message["role"] != "assistant":
            continue
        calls = {b.get("id") for b in message["content"] if b.get("type") == "server_tool_use"}
        answered = {b.get("tool_use_id") for b in message["content"] if "tool_use_id" in b}
        if calls - answered:
            others = [
                b.get("type") for b in messages[i + 1]["content"] if b.get("type") != "tool_result"
            ]
            if others:
                return f"messages.{i + 1}: after a `server_tool_use` without its result, the user message may only contain `tool_result` blocks (found {', '.join(str(o) for o in others)})"
    return None


def _thinking_enabled(body: dict[str, Any]) -> bool:
    thinking: Any = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")  # pyright: ignore[reportUnknownMemberType]


def _thinking_signed(_: dict[str, Any], messages: list[dict[str, Any]]) -> str | None:
    for i, message in enumerate(messages):
        for j, block in enumerate(message["content"]):
            kind = block.get("type")
            if kind == "thinking" and not block.get("signature"):
                return f"messages.{i}.content.{j}.thinking.signature: Field required"
            if kind == "redacted_thinking" and not block.get("data"):
                return f"messages.{i}.content.{j}.redacted_thinking.data: Field required"
    return None


def _thinking_kept_in_tool_loop(body: dict[str, Any], messages: list[dict[str, Any]]) -> str | None:
    if not _thinking_enabled(body) or len(messages) < 2:
        return None
    last, previous = messages[-1], messages[-2]
    in_loop = last["role"] == "user" and any(
        b.get("type") == "tool_result" for b in last["content"]
    )
    if not in_loop or previous["role"] != "assistant" or not previous["content"]:
        return None
    first = previous["content"][0].get("type")
    if first not in ("thinking", "redacted_thinking"):
        return (
            f"messages.{len(messages) - 2}.content.0.type: Expected `thinking` or "
            f"`redacted_thinking`, but found `{first}`. When `thinking` is enabled, a final "
            "`assistant` message must start with a thinking block (preceeding the lastmost set "
            "of `tool_use` and `tool_result` blocks)."
        )
    return None


def _thinking_without_forced_tool(body: dict[str, Any], _: list[dict[str, Any]]) -> str | None:
    choice: Any = body.get("tool_choice")
    forced = isinstance(choice, dict) and choice.get("type") in ("any", "tool")  # pyright: ignore[reportUnknownMemberType]
    if forced and _thinking_enabled(body):
        return "Thinking may not be enabled when tool_choice forces tool use."
    return None


def _thinking_budget(body: dict[str, Any], _: list[dict[str, Any]]) -> str | None:
    thinking: Any = body.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":  # pyright: ignore[reportUnknownMemberType]
        return None
    budget: Any = thinking.get("budget_tokens")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(budget, int) or budget < 1024:
        return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and budget >= max_tokens:
        return "`max_tokens` must be greater than `thinking.budget_tokens`."
    return None


_UNENFORCED = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
)


def _schema_problem(schema: Any, path: str) -> str | None:
    if isinstance(schema, list):
        items: list[Any] = schema  # pyright: ignore[reportUnknownVariableType]
        for i, item in enumerate(items):
            problem = _schema_problem(item, f"{path}.{i}")
            if problem is not None:
                return problem
        return None
    if not isinstance(schema, dict):
        return None
    node: dict[str, Any] = schema  # pyright: ignore[reportUnknownVariableType]
    if node.get("type") == "object" and node.get("additionalProperties") is not False:
        return f"{path}: For 'object' type, 'additionalProperties' must be explicitly set to false"
    for key in _UNENFORCED:
        if key in node and not (key == "minItems" and node[key] in (0, 1)):
            return f"{path}: '{key}' is not supported in structured output schemas"
    for key, value in node.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            children: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
            for name, child in children.items():
                problem = _schema_problem(child, f"{path}.{key}.{name}")
                if problem is not None:
                    return problem
        elif key in ("items", "anyOf", "allOf"):
            problem = _schema_problem(value, f"{path}.{key}")
            if problem is not None:
                return problem
    return None


def _output_schema_closed(body: dict[str, Any], _: list[dict[str, Any]]) -> str | None:
    config: Any = body.get("output_config")
    fmt: Any = config.get("format") if isinstance(config, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":  # pyright: ignore[reportUnknownMemberType]
        return None
    return _schema_problem(fmt.get("schema"), "output_config.format.schema")  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]


def _server_tool_domains(body: dict[str, Any], _: list[dict[str, Any]]) -> str | None:
    tools: Any = body.get("tools")
    for i, tool in enumerate(tools if isinstance(tools, list) else []):  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
        if isinstance(tool, dict) and tool.get("allowed_domains") and tool.get("blocked_domains"):  # pyright: ignore[reportUnknownMemberType]
            return f"tools.{i}: cannot specify both allowed_domains and blocked_domains"
    return None


RULES: list[Rule] = [
    _required_fields,
    _roles,
    _non_empty,
    _no_empty_text,
    _tool_use_ids_unique,
    _tool_results_answer_tool_uses,
    _tool_results_follow_tool_uses,
    _server_tool_pending,
    _thinking_signed,
    _thinking_kept_in_tool_loop,
    _thinking_without_forced_tool,
    _thinking_budget,
    _output_schema_closed,
    _server_tool_domains,
]


def validate_request(
    body: dict[str, Any],
    raw_size: int,
    *,
    no_prefill_models: Collection[str] = (),
    endpoint: str = "messages",
) -> None:
    """Raise :class:`Rejection` where the API would refuse ``body``.

    ``endpoint="count_tokens"`` checks a token-count request, which has no ``max_tokens``.
    """
    if raw_size > MAX_BODY_BYTES:
        raise Rejection(
            413, "request_too_large", "Request exceeds the maximum allowed number of bytes."
        )
    if endpoint == "count_tokens":
        if "max_tokens" in body:
            raise Rejection(
                400, "invalid_request_error", "max_tokens: Extra inputs are not permitted"
            )
        body = {**body, "max_tokens": None}  # the count endpoint takes no limit to check
    raw_messages = body.get("messages")
    messages = merged_messages(raw_messages) if isinstance(raw_messages, list) else []  # pyright: ignore[reportUnknownArgumentType]
    for rule in RULES:
        problem = rule(body, messages)
        if problem is not None:
            raise Rejection(400, "invalid_request_error", problem)
    model = str(body.get("model", ""))
    if endpoint == "count_tokens":
        return
    if messages and messages[-1]["role"] == "assistant" and _matches(model, no_prefill_models):
        raise Rejection(
            400,
            "invalid_request_error",
            f"This model ({model}) does not support assistant message prefill. "
            "The conversation must end with a user message.",
        )


def _matches(model: str, prefixes: Collection[str]) -> bool:
    return any(model.startswith(p) for p in prefixes)
