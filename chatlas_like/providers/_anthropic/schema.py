"""Anthropic's rules for structured data: the schema its structured outputs accept.

``closed_schema(Model)`` is the model's JSON Schema made acceptable to Anthropic's
structured outputs: every object is closed (``additionalProperties: false``; a mapping
with free keys such as ``dict[str, int]`` or ``dict[str, Any]`` cannot be, and is
refused). A model that allows extra keys (``extra="allow"``) is never closed silently:
structured outputs cannot express it, so ``"auto"`` asks for it through the forced tool,
whose schema keeps ``additionalProperties: true``, and an explicit ``"native"`` is a
``TypeError`` before any request. Nested
models stay ``$defs`` referenced by ``$ref``, and keywords the API does not enforce
(``minimum``, ``maxLength``...) move into the description, where the model still reads
them; pydantic enforces them when the answer is validated. The same schema serves the
forced-tool fallback for models without structured outputs.

The provider-neutral part (a pydantic model's schema, the answer read back) is
:mod:`chatlas_like._tools.structured`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Literal

from ..._tools.structured import model_schema

__all__ = [
    "STRUCTURED_TOOL",
    "StructuredMode",
    "allows_extra_keys",
    "closed_schema",
    "supports_structured_outputs",
]

StructuredMode = Literal["auto", "native", "tool"]
STRUCTURED_TOOL = "_structured_tool_call"

# Kept as they are: the structure and what Anthropic's structured outputs enforce.
_KEPT = frozenset(
    {
        "type",
        "properties",
        "required",
        "items",
        "enum",
        "const",
        "anyOf",
        "allOf",
        "$ref",
        "$defs",
        "description",
        "title",
        "default",
        "pattern",
    }
)
_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
_MODEL_WITH_STRUCTURED_OUTPUTS = re.compile(r"^claude-[a-z]+-(4-[5-9]|[5-9]|[1-9]\d)(-|$)")


def supports_structured_outputs(model: str) -> bool:
    """Whether ``model`` takes ``output_config.format`` (Claude 4.5 and later)."""
    return bool(_MODEL_WITH_STRUCTURED_OUTPUTS.match(model))


@lru_cache(maxsize=256)
def closed_schema(data_model: type[Any], open_allowed: bool = False) -> dict[str, Any]:
    """The JSON Schema of a pydantic model, with every object closed.

    With ``open_allowed``, a model that allows extra keys (``extra="allow"``) keeps
    ``additionalProperties: true``; without, it is a ``TypeError`` (never closed
    silently). Cached per model class: the schema is built once per model, not once per
    request. Treat the returned dict as read-only.
    """
    return _close(model_schema(data_model), data_model.__name__, open_allowed)


@lru_cache(maxsize=256)
def allows_extra_keys(data_model: type[Any]) -> bool:
    """Whether the model, or a model inside it, allows extra keys (``extra="allow"``)."""
    return _has_open_object(model_schema(data_model))


def _has_open_object(node: Any) -> bool:
    if isinstance(node, list):
        return any(_has_open_object(item) for item in node)  # pyright: ignore[reportUnknownVariableType]
    if not isinstance(node, dict):
        return False
    schema: dict[str, Any] = node  # pyright: ignore[reportUnknownVariableType]
    if schema.get("additionalProperties") is True and "properties" in schema:
        return True
    return any(_has_open_object(value) for value in schema.values())


def _close(schema: dict[str, Any], where: str, open_allowed: bool = False) -> dict[str, Any]:
    """``schema`` closed; ``where`` names it in errors (``Model.field``)."""
    out: dict[str, Any] = {}
    moved: dict[str, Any] = {}
    stays_open = False
    for key, value in schema.items():
        if key == "properties":
            out[key] = {
                name: _close(sub, f"{where}.{name}", open_allowed) for name, sub in value.items()
            }
        elif key == "$defs":
            out[key] = {name: _close(sub, name, open_allowed) for name, sub in value.items()}
        elif key in ("items",) and isinstance(value, dict):
            out[key] = _close(value, f"{where}[]", open_allowed)  # pyright: ignore[reportUnknownArgumentType]
        elif key in ("anyOf", "allOf", "oneOf"):
            out["allOf" if key == "allOf" else "anyOf"] = [
                _close(v, where, open_allowed) for v in value
            ]
        elif key == "format":
            if value in _FORMATS:
                out[key] = value
            else:
                moved[key] = value
        elif key == "minItems" and value in (0, 1):
            out[key] = value
        elif key == "additionalProperties":
            # A mapping (dict[str, X], dict[str, Any], dict): free keys, no listed ones.
            if not isinstance(value, bool) or (value and "properties" not in schema):
                raise _open_mapping(where)
            if value and not open_allowed:
                raise _open_model(where)
            stays_open = value  # extra="allow", asked through the forced tool
            continue  # every other object is closed below
        elif key in _KEPT:
            out[key] = value
        else:
            moved[key] = value
    if out.get("type") == "object":
        out.setdefault("properties", {})
        out["additionalProperties"] = stays_open
    if moved:
        note = "{" + ", ".join(f"{k}: {v}" for k, v in moved.items()) + "}"
        description = out.get("description")
        out["description"] = f"{description}\n\n{note}" if description else note
    return out


def _open_mapping(where: str) -> TypeError:
    # Closing a dict[str, X] would leave the model nothing to answer but {}.
    return TypeError(
        f"{where} is a mapping with free keys (e.g. dict[str, int]), which structured "
        "outputs cannot express: every object must list its keys. Use a list of key/value "
        "models instead, e.g. `list[Entry]` with `class Entry(BaseModel): key: str; "
        "value: int`"
    )


def _open_model(where: str) -> TypeError:
    return TypeError(
        f"{where} allows extra keys (extra='allow'), which Anthropic's structured outputs "
        "cannot express (every object must be closed). Leave ChatAnthropic's "
        "structured_output_mode at 'auto' or set it to 'tool' (the data is then asked "
        "for through a forced tool, whose schema stays open), or close the model"
    )
