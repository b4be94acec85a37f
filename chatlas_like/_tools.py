"""Tools: from a Python function to a JSON Schema the model reads, and back.

``Tool.from_func`` reads the signature, type hints and docstring: parameters with
defaults are optional, ``Annotated[..., Field(description=...)]`` and numpy/Google/reST
docstring sections describe parameters, and names with a leading underscore keep their
name (pydantic's ``create_model`` would drop them, so they are carried as aliases).

Before a call, the model's arguments are validated and coerced by a pydantic model of
the signature (``"1"`` becomes ``1`` for an ``int``); a failure is an
:class:`ArgumentError` whose message names the argument, what was expected, and the
accepted names. pydantic is imported when the first tool is registered, not before.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, get_type_hints

from ._docstring import parse_docstring

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["ArgumentError", "Tool", "ToolBuiltIn"]

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
_INPUT_PREVIEW = 60


class ArgumentError(ValueError):
    """The model's arguments do not fit the tool's parameters."""


class Tool:
    """A function the model may call.

    Build one with :meth:`Tool.from_func` (what ``Chat.register_tool`` does with a
    plain function), or directly from a JSON Schema.

    Parameters
    ----------
    func
        The function to call, sync or async.
    name
        The name the model calls it by.
    description
        What it does, for the model.
    parameters
        JSON Schema of its arguments (an object schema).
    annotations
        Hints about the tool (e.g. ``{"title": ..., "readOnlyHint": True}``).
    sequential
        Run alone, in call order, never beside another tool (for code that is not
        thread-safe, e.g. matplotlib).
    timeout
        Seconds a call may take before it becomes an ``error`` result.
    max_result_bytes
        Cap on the UTF-8 bytes of one result that the model receives (overrides the
        chat's).
    """

    def __init__(
        self,
        func: Callable[..., Any],
        name: str,
        description: str,
        parameters: Mapping[str, Any],
        *,
        annotations: Mapping[str, Any] | None = None,
        sequential: bool = False,
        timeout: float | None = None,
        max_result_bytes: int | None = None,
    ) -> None:
        if not _NAME.match(name):
            raise ValueError(
                f"tool name {name!r} must be 1-128 characters of letters, digits, _ or -"
            )
        if timeout is not None and timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        if max_result_bytes is not None and max_result_bytes < 1:
            raise ValueError("max_result_bytes must be positive")
        self.func = func
        self.name = name
        self.description = description
        self.parameters: dict[str, Any] = dict(parameters)
        self.annotations = dict(annotations) if annotations else None
        self.sequential = sequential
        self.timeout = timeout
        self.max_result_bytes = max_result_bytes
        self.is_async = inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func)
        self._validator: _SignatureValidator | None = None

    @classmethod
    def from_func(
        cls,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        model: type[BaseModel] | None = None,
        annotations: Mapping[str, Any] | None = None,
        sequential: bool = False,
        timeout: float | None = None,
        max_result_bytes: int | None = None,
    ) -> Tool:
        """A tool from a function's signature, type hints and docstring.

        Parameters
        ----------
        func
            The function, sync or async.
        name
            The tool's name; defaults to the function's name.
        model
            A pydantic model describing the arguments, instead of the signature.
        annotations, sequential, timeout, max_result_bytes
            As for :class:`Tool`.
        """
        doc = parse_docstring(inspect.getdoc(func))
        validator = _SignatureValidator(func, doc.params, model)
        tool = cls(
            func,
            name or getattr(func, "__name__", "tool"),
            doc.description or (model.__doc__ or "" if model else ""),
            validator.schema(),
            annotations=annotations,
            sequential=sequential,
            timeout=timeout,
            max_result_bytes=max_result_bytes,
        )
        tool._validator = validator
        return tool

    def validate_arguments(self, arguments: Any) -> dict[str, Any]:
        """The keyword arguments to call the function with, or :class:`ArgumentError`."""
        if not isinstance(arguments, dict):
            raise ArgumentError(
                f"arguments must be a JSON object, got {type(arguments).__name__}; "
                f"accepted: {self._accepted()}"
            )
        args: dict[str, Any] = arguments  # pyright: ignore[reportUnknownVariableType]
        if self._validator is not None:
            return self._validator.validate(args)
        return _check_schema(args, self.parameters)

    def _accepted(self) -> str:
        names = list(self.parameters.get("properties", {}))
        return ", ".join(names) if names else "no arguments"

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r})"


class ToolBuiltIn:
    """A tool the provider runs itself (web search, web fetch...), sent as its definition.

    Parameters
    ----------
    name
        The tool's name.
    definition
        The provider's tool definition, sent as given.
    """

    def __init__(self, name: str, definition: Mapping[str, Any]) -> None:
        self.name = name
        self.definition: dict[str, Any] = dict(definition)

    def __repr__(self) -> str:
        return f"ToolBuiltIn(name={self.name!r})"


# -- from a signature ------------------------------------------------------------------------


class _SignatureValidator:
    """A pydantic model of a function's parameters, keyed by alias so ``_x`` survives."""

    def __init__(
        self,
        func: Callable[..., Any],
        descriptions: Mapping[str, str],
        model: type[BaseModel] | None,
    ) -> None:
        from pydantic import ConfigDict, Field, create_model

        self._var_kwargs = False
        self._fields: dict[str, str] = {}
        if model is not None:
            self.model = model
            self._fields = {(info.alias or name): name for name, info in model.model_fields.items()}
            return
        signature = inspect.signature(func)
        hints = _type_hints(func)
        definitions: dict[str, Any] = {}
        for param in signature.parameters.values():
            if param.kind is param.VAR_POSITIONAL:
                raise TypeError(
                    f"tool {func.__name__!r}: *{param.name} cannot be filled by a model; "
                    "use named parameters"
                )
            if param.kind is param.VAR_KEYWORD:
                self._var_kwargs = True
                continue
            if param.kind is param.POSITIONAL_ONLY:
                raise TypeError(
                    f"tool {func.__name__!r}: positional-only parameter {param.name!r} "
                    "cannot be passed by name"
                )
            field_name = _field_name(param.name, self._fields.values())
            self._fields[param.name] = field_name
            annotation = hints.get(param.name, Any)
            default = ... if param.default is param.empty else param.default
            extra: dict[str, Any] = {}
            if not _has_description(annotation) and param.name in descriptions:
                extra["description"] = descriptions[param.name]
            definitions[field_name] = (annotation, Field(default, alias=param.name, **extra))
        self.model = create_model(  # pyright: ignore[reportCallIssue, reportUnknownVariableType]
            f"{getattr(func, '__name__', 'tool')}_arguments",
            __config__=ConfigDict(
                extra="allow" if self._var_kwargs else "forbid",
                arbitrary_types_allowed=True,
            ),
            **definitions,
        )

    def schema(self) -> dict[str, Any]:
        raw = self.model.model_json_schema(by_alias=True)
        schema = _strip_titles(raw)
        schema.pop("description", None)
        schema.setdefault("properties", {})
        schema.setdefault("required", [])
        schema["additionalProperties"] = self._var_kwargs
        return schema

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        from pydantic import ValidationError

        try:
            instance = self.model.model_validate(arguments)
        except ValidationError as e:
            raise ArgumentError(self._explain(e)) from None
        values = {name: getattr(instance, field) for name, field in self._fields.items()}
        if self._var_kwargs and instance.model_extra:
            values.update(instance.model_extra)
        return values

    def _explain(self, error: Any) -> str:
        problems: list[str] = []
        for item in error.errors(include_url=False):
            loc = ".".join(str(part) for part in item["loc"])
            kind = item["type"]
            if kind == "missing":
                problems.append(f"missing required argument `{loc}`")
            elif kind == "extra_forbidden":
                problems.append(f"unexpected argument `{loc}`")
            else:
                shown = repr(item.get("input"))
                if len(shown) > _INPUT_PREVIEW:
                    shown = shown[:_INPUT_PREVIEW] + "…"
                problems.append(f"argument `{loc}`: {item['msg'].lower()} (got {shown})")
        accepted = ", ".join(self._fields) or "no arguments"
        return f"{'; '.join(problems)}; accepted: {accepted}"


def _type_hints(func: Callable[..., Any]) -> dict[str, Any]:
    target: Any = func
    try:
        return get_type_hints(target, include_extras=True)
    except NameError as e:
        raise TypeError(
            f"tool {getattr(func, '__name__', func)!r}: the type hint {e.name!r} cannot be "
            "resolved; define it at module level (annotations are strings under "
            "`from __future__ import annotations`) or pass model= to describe the arguments"
        ) from None


def _field_name(name: str, taken: Any) -> str:
    base = name.lstrip("_") or "arg"
    if base[0].isdigit():
        base = f"arg_{base}"
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}_{n}"
    return candidate


def _has_description(annotation: Any) -> bool:
    for meta in getattr(annotation, "__metadata__", ()):
        if getattr(meta, "description", None):
            return True
    return False


_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "contains")


def _strip_titles(schema: Any) -> Any:
    """Drop pydantic's generated ``title`` keywords (never a property named ``title``)."""
    if not isinstance(schema, dict):
        return schema
    node: dict[str, Any] = {k: v for k, v in schema.items() if k != "title"}  # pyright: ignore[reportUnknownVariableType]
    for key in _SCHEMA_MAPS:
        if isinstance(node.get(key), dict):
            node[key] = {name: _strip_titles(sub) for name, sub in node[key].items()}
    for key in _SCHEMA_LISTS:
        if isinstance(node.get(key), list):
            node[key] = [_strip_titles(sub) for sub in node[key]]
    for key in _SCHEMA_VALUES:
        if isinstance(node.get(key), dict):
            node[key] = _strip_titles(node[key])
    return node


def _check_schema(arguments: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """Required and unexpected names, for tools given as a bare JSON Schema."""
    properties: Mapping[str, Any] = schema.get("properties", {})
    required: list[str] = list(schema.get("required", []))
    problems = [f"missing required argument `{n}`" for n in required if n not in arguments]
    if schema.get("additionalProperties") is False:
        problems += [f"unexpected argument `{n}`" for n in arguments if n not in properties]
    if problems:
        accepted = ", ".join(properties) or "no arguments"
        raise ArgumentError(f"{'; '.join(problems)}; accepted: {accepted}")
    return dict(arguments)
