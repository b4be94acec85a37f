"""The loopback server's rules for thinking, structured outputs and token counts."""

from __future__ import annotations

from typing import Any

import pytest

from chatlas_like.testing import Rejection, validate_request

USER = {"role": "user", "content": "Hi"}


def body(**fields: Any) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 4096, "messages": [USER], **fields}


def rejected(request: dict[str, Any], **kwargs: Any) -> str:
    with pytest.raises(Rejection) as info:
        validate_request(request, 100, **kwargs)
    return info.value.message


def schema(**extra: Any) -> dict[str, Any]:
    return {
        "format": {"type": "json_schema", "schema": {"type": "object", "properties": {}, **extra}}
    }


def test_an_open_object_in_an_output_schema_is_refused() -> None:
    assert "additionalProperties" in rejected(body(output_config=schema()))
    validate_request(body(output_config=schema(additionalProperties=False)), 100)


def test_a_nested_open_object_is_refused_too() -> None:
    nested = schema(
        additionalProperties=False,
        **{"$defs": {"Inner": {"type": "object", "properties": {}}}},
    )
    assert "$defs.Inner" in rejected(body(output_config=nested))


def test_numeric_constraints_in_an_output_schema_are_refused() -> None:
    config = schema(
        additionalProperties=False, properties={"age": {"type": "integer", "minimum": 0}}
    )
    assert "'minimum' is not supported" in rejected(body(output_config=config))


def test_thinking_cannot_be_combined_with_a_forced_tool() -> None:
    request = body(
        thinking={"type": "enabled", "budget_tokens": 2048},
        tool_choice={"type": "tool", "name": "x"},
    )
    assert "tool_choice forces tool use" in rejected(request)


def test_a_thinking_budget_must_be_at_least_1024_and_below_max_tokens() -> None:
    assert "1024" in rejected(body(thinking={"type": "enabled", "budget_tokens": 100}))
    assert "greater than" in rejected(body(thinking={"type": "enabled", "budget_tokens": 4096}))


def test_thinking_blocks_need_their_signature() -> None:
    messages = [
        USER,
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}]},
        {"role": "user", "content": "and?"},
    ]
    assert "signature" in rejected(body(messages=messages))


def test_a_tool_loop_with_thinking_must_send_the_thinking_back() -> None:
    messages = [
        USER,
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
    ]
    thinking = {"type": "enabled", "budget_tokens": 2048}
    assert "must start with a thinking block" in rejected(
        body(messages=messages, thinking=thinking)
    )
    validate_request(body(messages=messages), 100)  # without thinking the same is fine


def test_the_count_endpoint_takes_no_max_tokens() -> None:
    assert "max_tokens" in rejected(body(), endpoint="count_tokens")
    validate_request({"model": "m", "messages": [USER]}, 100, endpoint="count_tokens")
