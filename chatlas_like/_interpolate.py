"""Prompt templates: values put into a prompt with ``{{ name }}`` (Jinja2, as chatlas).

``{{ }}`` rather than f-strings' ``{ }``, so prompts can hold code and JSON as they are.
Jinja2 is imported on the first call.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

__all__ = ["interpolate", "interpolate_file"]


def interpolate(
    prompt: str,
    *,
    variables: dict[str, Any] | None = None,
    variable_start: str = "{{",
    variable_end: str = "}}",
) -> str:
    """Fill a prompt template.

    Parameters
    ----------
    prompt
        The template: ``{{ x }}`` is replaced by ``x``'s value; Jinja2's ``{% for %}``,
        ``{% if %}`` and filters work too.
    variables
        The values by name; the caller's globals and locals when None.
    variable_start, variable_end
        The delimiters of a value.

    Examples
    --------
    ```python
    x = 1
    interpolate("The value of `x` is: {{ x }}")  # 'The value of `x` is: 1'
    ```
    """
    if variables is None:
        variables = _caller_variables(inspect.currentframe())
    return _render(prompt, variables, variable_start, variable_end)


def interpolate_file(
    path: str | Path,
    *,
    variables: dict[str, Any] | None = None,
    variable_start: str = "{{",
    variable_end: str = "}}",
) -> str:
    """Fill a prompt template read from a file (see :func:`interpolate`)."""
    if variables is None:
        variables = _caller_variables(inspect.currentframe())
    template = Path(path).read_text(encoding="utf-8")
    return _render(template, variables, variable_start, variable_end)


def _render(template: str, variables: dict[str, Any], start: str, end: str) -> str:
    from jinja2 import Environment

    environment = Environment(variable_start_string=start, variable_end_string=end)
    return environment.from_string(template).render(variables)


def _caller_variables(frame: Any) -> dict[str, Any]:
    caller = frame.f_back if frame is not None else None
    if caller is None:
        raise RuntimeError("could not read the caller's variables: pass variables= explicitly")
    try:
        return {**caller.f_globals, **caller.f_locals}
    finally:
        del frame, caller
