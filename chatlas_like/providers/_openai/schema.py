"""JSON Schemas as OpenAI's strict mode takes them (structured outputs, strict tools).

Strict mode needs every object closed (``additionalProperties: false``) with every
property required. A data model's schema is made so (its optional fields stay
optional in meaning: pydantic writes them as nullable); a tool's parameters are sent
strict only when they are so already, as chatlas's are.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, cast

from ..._tools.structured import model_schema

__all__ = ["is_strict", "strict_schema"]

_DROPPED = frozenset({"title", "default"})  # strict mode refuses or ignores them


def strict_schema(data_model: type[Any]) -> dict[str, Any]:
    """``data_model``'s schema, closed and all-required for strict mode (cached)."""
    return _strict_of(data_model)


@lru_cache(maxsize=256)
def _strict_of(data_model: type[Any]) -> dict[str, Any]:
    made: dict[str, Any] = _closed(model_schema(data_model))
    return made


def _closed(node: Any) -> Any:
    if isinstance(node, list):
        return [_closed(item) for item in node]  # pyright: ignore[reportUnknownVariableType]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {
        k: _closed(v)
        for k, v in node.items()  # pyright: ignore[reportUnknownVariableType]
        if k not in _DROPPED or not isinstance(v, (str, int, float, bool, type(None)))
    }
    if out.get("type") == "object" or "properties" in out:
        properties: Mapping[str, Any] = out.get("properties") or {}
        out["properties"] = dict(properties)
        out["required"] = list(properties)
        out["additionalProperties"] = False
    return out


def is_strict(schema: Mapping[str, Any]) -> bool:
    """Whether strict mode takes ``schema`` as it is: every object closed, with every
    property required."""
    if schema.get("type") == "object" or "properties" in schema:
        properties: Mapping[str, Any] = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required") or ()) != set(properties):
            return False
    for value in schema.values():
        for child in _children(value):
            if isinstance(child, Mapping) and not is_strict(cast("Mapping[str, Any]", child)):
                return False
    return True


def _children(value: object) -> list[object]:
    if isinstance(value, Mapping):
        return list(cast("Mapping[str, object]", value).values())
    if isinstance(value, list):
        return list(cast("list[object]", value))
    return []
