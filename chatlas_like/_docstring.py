"""A tool's description and parameter descriptions, read from its docstring.

Understands numpy style (``Parameters`` with a dashed underline), Google style
(``Args:``) and reST fields (``:param name: text``). The description is the docstring
with those sections removed.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

__all__ = ["ParsedDocstring", "parse_docstring"]

_NUMPY_HEADER = re.compile(r"^(\w[\w ]*)\n\s*-{3,}\s*$", re.MULTILINE)
_GOOGLE_HEADER = re.compile(
    r"^(Args|Arguments|Parameters|Params|Returns|Return|Raises|Yields|Examples?|Notes?|"
    r"Attributes|See Also|Warnings?|References):\s*$",
    re.MULTILINE,
)
_REST_PARAM = re.compile(r"^:param\s+(?:[^:]+\s)?(\w+):\s*(.*)$")
_PARAM_SECTIONS = {"parameters", "params", "args", "arguments", "other parameters"}


@dataclass
class ParsedDocstring:
    """A docstring split into its description and per-parameter descriptions."""

    description: str = ""
    params: dict[str, str] = field(default_factory=lambda: {})


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Split ``doc`` into a description and parameter descriptions."""
    if not doc:
        return ParsedDocstring()
    text = inspect.cleandoc(doc)
    if _NUMPY_HEADER.search(text):
        return _numpy(text)
    if _GOOGLE_HEADER.search(text):
        return _google(text)
    return _rest(text)


def _numpy(text: str) -> ParsedDocstring:
    matches = list(_NUMPY_HEADER.finditer(text))
    params: dict[str, str] = {}
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        if match.group(1).strip().lower() in _PARAM_SECTIONS:
            params.update(_numpy_params(text[match.end() : end]))
    return ParsedDocstring(text[: matches[0].start()].strip(), params)


def _numpy_params(body: str) -> dict[str, str]:
    params: dict[str, str] = {}
    name: str | None = None
    lines: list[str] = []
    for line in body.splitlines():
        if line and not line[0].isspace():
            if name:
                params[name] = " ".join(lines).strip()
            head = line.split(":", 1)[0].strip()
            name, lines = head.lstrip("*"), []
        elif name:
            lines.append(line.strip())
    if name:
        params[name] = " ".join(lines).strip()
    return {n: d for n, d in params.items() if n}


def _google(text: str) -> ParsedDocstring:
    matches = list(_GOOGLE_HEADER.finditer(text))
    params: dict[str, str] = {}
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        if match.group(1).lower() in _PARAM_SECTIONS:
            params.update(_google_params(text[match.end() : end]))
    return ParsedDocstring(text[: matches[0].start()].strip(), params)


def _google_params(body: str) -> dict[str, str]:
    params: dict[str, str] = {}
    indent: int | None = None
    name: str | None = None
    for line in body.splitlines():
        if not line.strip():
            continue
        current = len(line) - len(line.lstrip())
        if indent is None:
            indent = current
        if current == indent and ":" in line:
            head, _, rest = line.strip().partition(":")
            name = head.split("(", 1)[0].strip().lstrip("*")
            params[name] = rest.strip()
        elif name:
            params[name] = f"{params[name]} {line.strip()}".strip()
    return params


def _rest(text: str) -> ParsedDocstring:
    description: list[str] = []
    params: dict[str, str] = {}
    for line in text.splitlines():
        match = _REST_PARAM.match(line.strip())
        if match:
            params[match.group(1)] = match.group(2).strip()
        elif not line.strip().startswith(":"):
            description.append(line)
    return ParsedDocstring("\n".join(description).strip(), params)
