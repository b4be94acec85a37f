"""Checking data read from a file against the annotations of the class it becomes.

A saved chat is data someone may have written by hand (or to do harm): before a value
from it becomes a field of a frozen dataclass, its type is checked against the field's
annotation, so a wrong type is refused when the file is loaded, naming the field,
instead of failing later (on display, on the next request). The check reads the
annotation text (``"str | None"``, ``"dict[str, Any]"``, ``"Literal['a', 'b']"``):
plain types, ``None``, containers by their outer type and literals; any other name
(``Any``, an alias) accepts every value.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from functools import lru_cache
from typing import Any

__all__ = ["check_fields", "mismatch"]

_CONTAINERS: dict[str, tuple[type, ...]] = {
    "dict": (dict,),
    "Mapping": (dict,),
    "list": (list,),
    "Sequence": (list, tuple),
    "tuple": (list, tuple),
}


def _alternatives(annotation: str) -> list[str]:
    """``annotation`` split at its top-level ``|``."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(annotation):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(annotation[start:i].strip())
            start = i + 1
    parts.append(annotation[start:].strip())
    return parts


def _accepts(value: Any, alternative: str) -> bool:
    base, _, inner = alternative.partition("[")
    base = base.strip()
    if base == "None":
        return value is None
    if base == "str":
        return isinstance(value, str)
    if base == "bool":
        return isinstance(value, bool)
    if base == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if base == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if base == "bytes":
        return isinstance(value, bytes)
    if base in _CONTAINERS:
        return isinstance(value, _CONTAINERS[base])
    if base == "Literal":
        return value in _literal_values(inner.rstrip("]"))
    return True  # Any, or a name this check does not know


@lru_cache(maxsize=64)
def _literal_values(inner: str) -> tuple[Any, ...]:
    values = ast.literal_eval(f"({inner},)")
    return tuple(values)


def mismatch(value: Any, annotation: str) -> str | None:
    """Why ``value`` does not fit ``annotation``, or None when it does."""
    if any(_accepts(value, alt) for alt in _alternatives(annotation)):
        return None
    return f"expected {annotation}, got {type(value).__name__} {_shown(value)}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_fields(cls: type, values: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming the first field of ``values`` that ``cls`` would not take.

    Unknown names are refused too; missing ones are left to the constructor.
    """
    assert is_dataclass(cls)
    annotations = _annotations(cls)
    for name, value in values.items():
        annotation = annotations.get(name)
        if annotation is None:
            raise ValueError(f"{name}: not a field of {cls.__name__}")
        problem = mismatch(value, annotation)
        if problem is not None:
            raise ValueError(f"{name}: {problem}")


@lru_cache(maxsize=64)
def _annotations(cls: type) -> dict[str, str]:
    return {f.name: str(f.type) for f in fields(cls) if f.init}  # pyright: ignore[reportArgumentType]
