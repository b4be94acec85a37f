"""A tool's description and parameter descriptions, read from its docstring.

Used by ``Tool.from_func(..., parse_docstring=True)`` (ours, off by default: chatlas
sends the docstring as it is, and so do we without it). The parameters are read by
``docstring_parser`` (numpy, Google, reST and Epydoc
styles), imported on the first docstring that has a section, never at
``import chatlas_like``. Two things are ours:

- **Choosing the style.** A cheap look at the section markers picks it, so the parser
  runs once rather than once per style (a third of the cost of registering a tool
  otherwise), and a docstring without sections skips it altogether.
- **What the model reads.** Parameter descriptions go into the schema, so the
  parameter section leaves the description; everything else stays (returns, raises,
  examples), as chatlas sends it. When no parameter could be read, the whole
  docstring is the description: nothing a tool's author wrote is lost.

The style chatlas's own documentation uses, ``lat: The latitude`` lines under a numpy
``Parameters`` heading, is read too (the parser takes the text for a type there).
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["ParsedDocstring", "parse_docstring"]

Style = Literal["numpy", "google", "rest", "epydoc"]

_NUMPY_HEADER = re.compile(r"^([A-Za-z][\w ]*)\n[ \t]*-{3,}[ \t]*$", re.MULTILINE)
_GOOGLE_HEADER = re.compile(r"^([A-Za-z][\w ]*):[ \t]*$", re.MULTILINE)
_REST_FIELD = re.compile(r"^:(\w+)", re.MULTILINE)
_EPYDOC_FIELD = re.compile(r"^@(\w+)", re.MULTILINE)
_GOOGLE_SECTIONS = {
    "args",
    "arguments",
    "parameters",
    "params",
    "raises",
    "exceptions",
    "except",
    "attributes",
    "example",
    "examples",
    "returns",
    "yields",
    # Sections that only end the one before (kept in the description): without them, an
    # `Args:` section ran on over a `Note:` and the note was dropped with it.
    "note",
    "notes",
    "warning",
    "warnings",
    "warns",
    "todo",
    "see also",
    "references",
    "attention",
    "caution",
    "danger",
    "hint",
    "important",
    "tip",
    "other parameters",
    "keyword args",
    "keyword arguments",
}
# Sections whose entries become the schema's parameter descriptions.
_PARAM_SECTIONS = {
    "parameters",
    "params",
    "arguments",
    "args",
    "other parameters",
    "other params",
    "other arguments",
    "other args",
    "keyword arguments",
    "keyword args",
}
_PARAM_FIELDS = {"param", "parameter", "arg", "argument", "key", "keyword", "type"}
_PARAM_KINDS = {"param", "parameter", "arg", "argument", "key", "keyword", "other_param"}


@dataclass
class ParsedDocstring:
    """A docstring split into what the model reads of the tool and of each parameter.

    Attributes
    ----------
    description
        The tool's description: the docstring without its parameter section, or the
        whole docstring when no parameter could be read from it.
    params
        Each documented parameter's description (never empty).
    """

    description: str = ""
    params: dict[str, str] = field(default_factory=lambda: {})


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Split ``doc`` into a tool description and parameter descriptions."""
    if not doc or not doc.strip():
        return ParsedDocstring()
    text = inspect.cleandoc(doc)
    style = _style(text)
    if style is None:
        return ParsedDocstring(text)
    params = _params(text, style)
    if not params:
        return ParsedDocstring(text)
    return ParsedDocstring(_without_param_sections(text, style), params)


def _style(text: str) -> Style | None:
    """The docstring's style from its section markers; None when it has none."""
    if _NUMPY_HEADER.search(text):
        return "numpy"
    if any(m.group(1).lower() in _GOOGLE_SECTIONS for m in _GOOGLE_HEADER.finditer(text)):
        return "google"
    if _REST_FIELD.search(text):
        return "rest"
    if _EPYDOC_FIELD.search(text):
        return "epydoc"
    return None


def _params(text: str, style: Style) -> dict[str, str]:
    import docstring_parser

    styles = {
        "numpy": docstring_parser.DocstringStyle.NUMPYDOC,
        "google": docstring_parser.DocstringStyle.GOOGLE,
        "rest": docstring_parser.DocstringStyle.REST,
        "epydoc": docstring_parser.DocstringStyle.EPYDOC,
    }
    try:
        parsed = docstring_parser.parse(text, style=styles[style])
    except docstring_parser.ParseError:
        return {}
    params: dict[str, str] = {}
    for item in parsed.meta:
        if not isinstance(item, docstring_parser.DocstringParam):
            continue
        if not item.args or item.args[0] not in _PARAM_KINDS:
            continue
        name = item.arg_name.lstrip("*")
        description = _description(item, text, style)
        if name and description:
            params[name] = description
    return params


def _description(item: Any, text: str, style: Style) -> str:
    description = (item.description or "").strip()
    type_name = (item.type_name or "").strip()
    if description or not type_name or style != "numpy":
        return description
    # `lat: The latitude` (no space before the colon) is a description, not a type.
    line = re.compile(rf"^[ \t]*\*{{0,2}}{re.escape(item.arg_name)}:[ \t]*\S", re.MULTILINE)
    return type_name if line.search(text) else ""


def _without_param_sections(text: str, style: Style) -> str:
    if style == "numpy":
        kept = _drop_sections(text, list(_NUMPY_HEADER.finditer(text)))
    elif style == "google":
        headers = [
            m for m in _GOOGLE_HEADER.finditer(text) if m.group(1).lower() in _GOOGLE_SECTIONS
        ]
        kept = _drop_sections(text, headers)
    else:
        kept = _drop_fields(text, "@" if style == "epydoc" else ":")
    return re.sub(r"\n{3,}", "\n\n", kept).strip()


def _drop_sections(text: str, headers: list[re.Match[str]]) -> str:
    """``text`` without the parameter sections among the sections ``headers`` start."""
    parts = [text[: headers[0].start()]]
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(text)
        if header.group(1).strip().lower() not in _PARAM_SECTIONS:
            parts.append(text[header.start() : end])
    return "".join(parts)


def _drop_fields(text: str, marker: str) -> str:
    """``text`` without reST/Epydoc parameter fields and their continuation lines."""
    kept: list[str] = []
    dropping = False
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(marker):
            kind = re.split(r"[\s:]", stripped[1:], maxsplit=1)[0]
            dropping = kind in _PARAM_FIELDS
        elif dropping and line[:1].isspace() and stripped:
            continue  # an indented continuation of a dropped field
        else:
            dropping = False
        if not dropping:
            kept.append(line)
    return "\n".join(kept)
