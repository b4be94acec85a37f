"""Tools: from a Python function to a JSON Schema the model reads, and back.

``Tool.from_func`` reads the signature, type hints and docstring: parameters with
defaults are optional, ``Annotated[..., Field(description=...)]`` describes a
parameter, and names with a leading underscore keep their name (pydantic's
``create_model`` would drop them, so they are carried as aliases). The description is
the docstring as it is written, as chatlas sends it; with ``parse_docstring=True``
(ours) numpy/Google/reST/Epydoc parameter sections become the parameters' descriptions
instead (see :mod:`chatlas_like._tools.docstring`), and parameter documentation that
cannot reach the schema (a documented name the function lacks, a docstring text that a
``Field`` description overrides) is named in a warning, never dropped silently. A
schema never carries an empty ``description``.

Before a call, the model's arguments are validated and coerced by a pydantic model of
the signature (``"1"`` becomes ``1`` for an ``int``); a failure is an
:class:`ArgumentError` whose message names the argument, what was expected, and the
accepted names. pydantic is imported when the first tool is registered, not before.
"""

from __future__ import annotations

import copy
import inspect
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast, get_type_hints

from . import docstring as _docstring

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["ArgumentError", "Rerun", "Tool", "ToolBuiltIn"]

Rerun = Literal["rerun", "once"]
"""What a durable turn does with a call of the tool that a crash interrupted:
``"rerun"`` runs it again, ``"once"`` never does (it is answered as interrupted)."""

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
_INPUT_PREVIEW = 60
_SETTINGS = frozenset(
    {"name", "annotations", "sequential", "timeout", "max_result_bytes", "durable"}
)


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
    durable
        Ours, for durable conversations (:mod:`chatlas_like.durable`): whether a call
        that a crash interrupted while it ran is run again on recovery (``"rerun"``:
        running it twice does no harm) or never (``"once"``: it is answered with an
        ``error`` result saying it may or may not have taken effect). None (the
        default) decides from ``annotations``: ``idempotentHint`` or ``readOnlyHint``
        reruns, anything else runs once. Given, it wins over the annotations.
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
        durable: Rerun | None = None,
    ) -> None:
        _check_settings(name, timeout, max_result_bytes, durable)
        self.func = func
        self.name = name
        self.description = description
        self.parameters: dict[str, Any] = dict(parameters)
        self.annotations = dict(annotations) if annotations else None
        self.sequential = sequential
        self.timeout = timeout
        self.max_result_bytes = max_result_bytes
        self.durable: Rerun | None = durable
        call = inspect.getattr_static(type(func), "__call__", None)  # may be async
        self.is_async = any(
            inspect.iscoroutinefunction(f) or inspect.isasyncgenfunction(f) for f in (func, call)
        )
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
        durable: Rerun | None = None,
        parse_docstring: bool = False,
        model_instances: bool = False,
    ) -> Tool:
        """A tool from a function's signature, type hints and docstring.

        Parameters
        ----------
        func
            The function, sync or async.
        name
            The tool's name; defaults to the model's name when ``model`` is given (as in
            chatlas), else the function's.
        model
            A pydantic model describing the arguments, instead of the signature: its
            fields must be the function's parameters, with the same defaults. Its
            docstring, when it has one, is the tool's description.
        annotations, sequential, timeout, max_result_bytes, durable
            As for :class:`Tool`.
        parse_docstring
            Ours, off by default. Off, the description is the docstring exactly as
            written (``func.__doc__``, indentation and parameter section included), as
            chatlas sends it. On, its numpy, Google, reST or Epydoc parameter section
            becomes each parameter's ``description`` in the schema and the rest, its
            indentation removed, the tool's description (the whole docstring when no
            parameter can be read from it).
        model_instances
            Ours, off by default. Off, a parameter annotated with a pydantic model (or a
            list or dict of them) receives plain JSON data, as chatlas passes it
            (``order["customer"]`` works): what the model sent, validated against the
            model (values coerced, defaults filled). On, it receives the model instances.
        """
        tool_name = name or _default_name(func, model)
        if parse_docstring:
            doc = _docstring.parse_docstring(inspect.getdoc(func))
            description, documented = doc.description, doc.params
        else:  # chatlas's: the docstring as it is, parameters undescribed by it
            description, documented = getattr(func, "__doc__", None) or "", {}
        if model is not None:
            _check_model_fits(model, func)
            given = model.__doc__ or ""
            description = (inspect.cleandoc(given) if parse_docstring else given) or description
        validator = _SignatureValidator(func, documented, model, tool_name)
        validator.model_instances = model_instances
        tool = cls(
            func,
            tool_name,
            description,
            validator.schema(),
            annotations=annotations,
            sequential=sequential,
            timeout=timeout,
            max_result_bytes=max_result_bytes,
            durable=durable,
        )
        tool._validator = validator
        return tool

    @classmethod
    def from_mcp(cls, session: Any, mcp_tool: Any) -> Tool:
        """A tool that calls ``mcp_tool`` through an MCP session you hold (chatlas's).

        Parameters
        ----------
        session
            An open ``mcp.ClientSession``; you close it.
        mcp_tool
            One of the session's tools (an item of ``(await session.list_tools()).tools``).

        Returns
        -------
        Tool
            An async tool: its name, description, schema (without ``title`` keywords,
            closed unless the server says otherwise) and annotations are the server's;
            a call returns the server's text, image or PDF as chatlas does, and a
            server's error is a ``RuntimeError``. To register every tool of a server,
            ``chat.register_mcp_tools_stdio_async(...)`` manages the session for you.
        """
        # The MCP adapter sits above tools: loaded here, when called (an allowed upward
        # import, named in tests/test_architecture.py).
        from .._mcp.from_mcp import tool_from_mcp

        return tool_from_mcp(cls, session, mcp_tool)

    @property
    def schema(self) -> dict[str, Any]:
        """The tool as chatlas shows it: ``{"type": "function", "function": {...}}``.

        ``function`` holds ``name``, ``description`` (``""`` when there is none, as in
        chatlas; the request leaves an empty one out) and ``parameters`` (the JSON
        Schema of the arguments).
        """
        function = {"name": self.name, "description": self.description}
        return {"type": "function", "function": {**function, "parameters": self.parameters}}

    def with_settings(self, **changes: Any) -> Tool:
        """A copy with ``changes`` applied (``name``, ``annotations``, ``sequential``,
        ``timeout``, ``max_result_bytes``, ``durable``); this tool is left as it is."""
        unknown = set(changes) - _SETTINGS
        if unknown:
            raise TypeError(f"cannot change {', '.join(sorted(unknown))} of a Tool")
        new = copy.copy(self)
        new.parameters = dict(self.parameters)
        for key, value in changes.items():
            setattr(new, key, dict(value) if key == "annotations" and value else value)
        _check_settings(new.name, new.timeout, new.max_result_bytes, new.durable)
        return new

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


def _check_settings(
    name: str, timeout: float | None, max_result_bytes: int | None, durable: object
) -> None:
    if not _NAME.match(name):
        raise ValueError(f"tool name {name!r} must be 1-128 characters of letters, digits, _ or -")
    if timeout is not None and timeout <= 0:
        raise ValueError("timeout must be a positive number of seconds")
    if max_result_bytes is not None and max_result_bytes < 1:
        raise ValueError("max_result_bytes must be positive")
    if durable not in (None, "rerun", "once"):
        raise ValueError(f"durable must be 'rerun', 'once' or None, not {durable!r}")


class ToolBuiltIn:
    """A tool the provider runs itself (web search, web fetch...), sent as its definition.

    Parameters
    ----------
    name
        The tool's name.
    definition
        The provider's tool definition, sent as given.
    description
        What it does (for displays; the provider knows its own tools).
    annotations
        Hints about the tool, as for :class:`Tool`.
    """

    def __init__(
        self,
        name: str,
        definition: Mapping[str, Any],
        *,
        description: str = "",
        annotations: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self._definition: dict[str, Any] = dict(definition)
        self.description = description
        self.annotations = dict(annotations) if annotations else None

    @property
    def definition(self) -> dict[str, Any]:
        """The provider's tool definition, as sent."""
        return self._definition

    def get_definition(
        self, provider_name: str | None = None, *, cache_control: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The definition sent to the provider (chatlas's method).

        Parameters
        ----------
        provider_name
            The provider asking; a definition given by hand is sent as given to any.
        cache_control
            Prompt-caching settings to add to the definition.
        """
        definition = dict(self.definition)
        if cache_control is not None:
            definition["cache_control"] = dict(cache_control)
        return definition

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


# -- from a signature ------------------------------------------------------------------------


class _SignatureValidator:
    """A pydantic model of a function's parameters, keyed by alias so ``_x`` survives."""

    def __init__(
        self,
        func: Callable[..., Any],
        descriptions: Mapping[str, str],
        model: type[BaseModel] | None,
        tool_name: str,
    ) -> None:
        from pydantic import ConfigDict, Field, create_model

        self._var_kwargs = False
        self.model_instances = False  # pydantic models reach the function as plain data
        self._users_model = model is not None
        self._fields: dict[str, str] = {}
        self._descriptions: dict[str, str] = {}
        if model is not None:
            self.model = model
            fields = model.model_fields
            self._fields = {(info.alias or name): name for name, info in fields.items()}
            given = {a: fields[n].description or "" for a, n in self._fields.items()}
            self._descriptions = _usable(descriptions, self._fields, given, tool_name)
            return
        signature = inspect.signature(func)
        hints = _type_hints(func)
        definitions: dict[str, Any] = {}
        given: dict[str, str] = {}
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
            if param.name not in hints:
                func_name = getattr(func, "__name__", "tool")
                warnings.warn(  # chatlas's warning (naming the function, not the parameter twice)
                    f"Parameter `{param.name}` of function `{func_name}` has no type hint. "
                    "Using `Any` as a fallback.",
                    UserWarning,
                    stacklevel=4,
                )
            annotation = hints.get(param.name, Any)
            default = ... if param.default is param.empty else param.default
            given[param.name] = _field_description(annotation)
            definitions[field_name] = (annotation, Field(default, alias=param.name))
        self._descriptions = _usable(descriptions, self._fields, given, tool_name)
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
        properties: dict[str, Any] = schema.setdefault("properties", {})
        for name, text in self._descriptions.items():  # the docstring's, where no Field's is
            if isinstance(properties.get(name), dict):
                properties[name] = {**properties[name], "description": text}
        schema.setdefault("required", [])
        schema["additionalProperties"] = self._var_kwargs
        definitions: dict[str, Any] = schema.get("$defs", {})
        for definition in definitions.values():  # nested models closed too, as chatlas's
            if isinstance(definition, dict) and "properties" in definition:
                cast(dict[str, Any], definition).setdefault("additionalProperties", False)
        return schema

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        from pydantic import ValidationError

        # A user's model may ignore extra keys (pydantic's default): never run a call
        # with them. The model made here forbids them itself.
        unexpected = (
            [name for name in arguments if name not in self._fields] if self._users_model else []
        )
        try:
            instance = self.model.model_validate(arguments)
        except ValidationError as e:
            raise ArgumentError(self._explain(e.errors(include_url=False), unexpected)) from None
        if unexpected:
            raise ArgumentError(self._explain([], unexpected))
        values = {name: getattr(instance, field) for name, field in self._fields.items()}
        if not self.model_instances:
            for name, value in values.items():
                if _holds_model(value):  # chatlas's: plain data, not model instances
                    values[name] = _plain(value)
        if self._var_kwargs and instance.model_extra:
            values.update(instance.model_extra)
        return values

    def _explain(self, errors: Sequence[Any], unexpected: Sequence[str]) -> str:
        problems: list[str] = []
        for item in errors:
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
        problems += [f"unexpected argument `{name}`" for name in unexpected]
        accepted = ", ".join(self._fields) or "no arguments"
        return f"{'; '.join(problems)}; accepted: {accepted}"


def _holds_model(value: Any) -> bool:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_model(v) for v in cast("Sequence[Any]", value))
    if isinstance(value, dict):
        return any(_holds_model(v) for v in cast("dict[Any, Any]", value).values())
    return False


def _plain(value: Any) -> Any:
    """Validated models as plain JSON data (coerced, defaults filled, keys by alias)."""
    from pydantic import TypeAdapter

    return TypeAdapter(Any).dump_python(value, mode="json", by_alias=True)


def _default_name(func: Callable[..., Any], model: type[BaseModel] | None) -> str:
    """chatlas's default: the model's name when a model describes the arguments."""
    if model is not None:
        return model.__name__
    return getattr(func, "__name__", "tool")


def _check_model_fits(model: type[BaseModel], func: Callable[..., Any]) -> None:
    """The model's fields are the function's parameters, with the same defaults (checked
    in chatlas's order, and worded as chatlas words it: code matches on its messages)."""
    params = inspect.signature(func).parameters
    seen: set[str] = set()
    for field_name, info in model.model_fields.items():
        param_name = info.alias or field_name
        if param_name not in params:
            raise ValueError(
                f"`model` field `{field_name}` (param name `{param_name}`) "
                "has no corresponding function parameter."
            )
        seen.add(param_name)
        default = params[param_name].default
        if default is inspect.Parameter.empty:
            continue
        if info.is_required() or info.default != default:
            model_default = "no default" if info.is_required() else repr(info.default)
            raise ValueError(
                f"Function parameter `{param_name}` has default `{default!r}`, but model "
                f"field `{field_name}` has {model_default}. "
                "These must match in order to create a Tool."
            )
    extra = {n for n, p in params.items() if n not in seen and p.kind is not p.VAR_KEYWORD}
    if extra:
        raise ValueError(f"Function parameters {extra} have no corresponding model fields.")


def _usable(
    documented: Mapping[str, str],
    fields: Mapping[str, str],
    given: Mapping[str, str],
    tool_name: str,
) -> dict[str, str]:
    """The docstring's parameter descriptions that go into the schema; a warning for the rest.

    ``fields`` holds the parameters' names; ``given`` their ``Field`` descriptions ("" for
    none), which win over the docstring's, as in pydantic.
    """
    usable: dict[str, str] = {}
    unknown: list[str] = []
    overridden: list[str] = []
    for name, text in documented.items():
        if name not in fields:
            unknown.append(name)
        elif not given.get(name):
            usable[name] = text
        elif " ".join(given[name].split()) != " ".join(text.split()):
            overridden.append(name)
    if unknown:
        warnings.warn(
            f"tool {tool_name!r}: the docstring documents {', '.join(map(repr, unknown))}, "
            f"which {'is not a parameter' if len(unknown) == 1 else 'are not parameters'}; "
            "that documentation is not sent to the model",
            UserWarning,
            stacklevel=5,
        )
    if overridden:
        warnings.warn(
            f"tool {tool_name!r}: the Field description of {', '.join(map(repr, overridden))} "
            "is sent to the model, not the docstring's",
            UserWarning,
            stacklevel=5,
        )
    return usable


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
    from pydantic import BaseModel

    base = name.lstrip("_") or "arg"
    if base[0].isdigit():
        base = f"arg_{base}"
    candidate, n = base, 1
    # Not a name BaseModel has (``model_config`` would be read as its configuration);
    # the parameter keeps its name as the field's alias.
    while candidate in taken or hasattr(BaseModel, candidate):
        n += 1
        candidate = f"{base}_{n}"
    return candidate


def _field_description(annotation: Any) -> str:
    """The description an ``Annotated[..., Field(description=...)]`` gives, or ""."""
    for meta in getattr(annotation, "__metadata__", ()):
        description = getattr(meta, "description", None)
        if isinstance(description, str) and description:
            return description
    return ""


_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "contains")


def _strip_titles(schema: Any) -> Any:
    """Drop pydantic's generated ``title`` keywords (never a property named ``title``) and
    empty descriptions."""
    if not isinstance(schema, dict):
        return schema
    node: dict[str, Any] = {  # pyright: ignore[reportUnknownVariableType]
        k: v
        for k, v in schema.items()  # pyright: ignore[reportUnknownVariableType]
        if k != "title" and not (k == "description" and not v)
    }
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
