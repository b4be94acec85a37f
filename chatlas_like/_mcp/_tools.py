"""The tools an MCP server lists, as ordinary :class:`~chatlas_like.Tool` objects.

Each keeps the server's ``inputSchema`` exactly as sent (that is what the model
reads) and checks the model's arguments against it before the call, as our own tools
are checked: a call that does not fit is refused with a message naming the problem
and the accepted arguments. The description is the server's; the MCP annotations
(``title``, ``readOnlyHint``, ``destructiveHint``, ``idempotentHint``,
``openWorldHint``) become the tool's ``annotations``, which each request carries in
its :class:`~chatlas_like.types.ToolInfo`.

Names: the model calls a tool by a name of letters, digits, ``_`` and ``-``. An MCP
name with other characters (``files.read``) has them replaced by ``_``; a
``namespace`` is put in front, joined by ``_`` (``github_create_issue``). The MCP
name is kept for the call itself.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from .._core.terminal_safe import strip_controls
from .._core.tool_result import ContentToolResult
from .._tools.tool import ArgumentError, Tool

__all__ = ["McpTool", "ToolFilter", "build_tools"]

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_SHOWN = 120

Caller = Callable[[str, dict[str, Any]], Awaitable[ContentToolResult]]


@dataclass(frozen=True, slots=True)
class ToolFilter:
    """Which of a server's tools to register, and how (the ``register_mcp_tools_*`` options)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    namespace: str | None = None
    timeout: float | None = None

    def __post_init__(self) -> None:
        if self.include and self.exclude:
            raise ValueError("give include_tools or exclude_tools, not both")
        if self.namespace is not None and not re.fullmatch(r"[a-zA-Z0-9_-]+", self.namespace):
            raise ValueError(
                f"namespace {self.namespace!r} must be letters, digits, _ or - (it starts "
                "each tool name, and the model's tool names allow only those)"
            )
        if self.timeout is not None and self.timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")

    def chat_name(self, mcp_name: str) -> str:
        """The name the model calls an MCP tool by."""
        safe = _UNSAFE.sub("_", mcp_name)
        return f"{self.namespace}_{safe}" if self.namespace else safe

    def keeps(self, mcp_name: str) -> bool:
        if self.include:
            return mcp_name in self.include
        return mcp_name not in self.exclude


class McpTool(Tool):
    """A tool of an MCP server: called through the server's session.

    Parameters
    ----------
    server
        The name of the MCP session it comes from.
    mcp_name
        Its name on the server.
    """

    def __init__(
        self,
        call: Caller,
        *,
        name: str,
        mcp_name: str,
        server: str,
        description: str,
        parameters: Mapping[str, Any],
        annotations: Mapping[str, Any] | None,
        timeout: float | None,
    ) -> None:
        async def invoke(**arguments: Any) -> ContentToolResult:
            return await call(mcp_name, arguments)

        invoke.__name__ = name
        super().__init__(
            invoke,
            name,
            description,
            parameters,
            annotations=annotations,
            timeout=timeout,
        )
        self.server = server
        self.mcp_name = mcp_name
        self._schema_validator = _validator(self.parameters)

    def validate_arguments(self, arguments: Any) -> dict[str, Any]:
        """The arguments, checked against the server's ``inputSchema``, or ArgumentError."""
        if not isinstance(arguments, dict):
            raise ArgumentError(
                f"arguments must be a JSON object, got {type(arguments).__name__}; "
                f"accepted: {self._accepted()}"
            )
        checked = cast(dict[str, Any], arguments)
        errors = list(self._schema_validator.iter_errors(checked))
        if errors:
            problems = sorted({_problem(e, checked, self.parameters) for e in errors})
            raise ArgumentError(f"{'; '.join(problems)}; accepted: {self._accepted()}")
        return dict(checked)

    def __repr__(self) -> str:
        return f"McpTool(name={self.name!r}, server={self.server!r})"


def build_tools(
    listed: Sequence[Any], server: str, options: ToolFilter, call: Caller
) -> dict[str, McpTool]:
    """The listed MCP tools that ``options`` keeps, by the name the model calls them.

    A tool whose schema cannot be offered to the model (not an object schema, not valid
    JSON Schema) or whose name is too long is left out with a warning naming it; two
    tools that come to the same name are an error.
    """
    tools: dict[str, McpTool] = {}
    for item in listed:
        mcp_name = str(item.name)
        if not options.keeps(mcp_name):
            continue
        name = options.chat_name(mcp_name)
        if name in tools:
            raise ValueError(
                f"MCP server {server!r}: the tools {tools[name].mcp_name!r} and {mcp_name!r} "
                f"both become {name!r}"
            )
        try:
            tools[name] = McpTool(
                call,
                name=name,
                mcp_name=mcp_name,
                server=server,
                description=str(item.description or ""),
                parameters=_schema(item.input_schema),
                annotations=_annotations(item),
                timeout=options.timeout,
            )
        except ValueError as e:
            warnings.warn(
                f"MCP server {server!r}: tool {mcp_name!r} is not registered: "
                f"{strip_controls(str(e))}",
                UserWarning,
                stacklevel=4,
            )
    return tools


def warn_unmatched(listed: Sequence[Any], server: str, options: ToolFilter) -> None:
    """One warning for names in include_tools / exclude_tools the server does not have."""
    names = {str(item.name) for item in listed}
    for label, wanted in (("include_tools", options.include), ("exclude_tools", options.exclude)):
        unknown = [n for n in wanted if n not in names]
        if unknown:
            listed = strip_controls(", ".join(sorted(names)))  # the server's own names
            warnings.warn(
                f"MCP server {server!r} has no tool named {', '.join(map(repr, unknown))} "
                f"(from {label}); its tools: {listed or 'none'}",
                UserWarning,
                stacklevel=4,
            )


def _schema(schema: Any) -> dict[str, Any]:
    if not isinstance(schema, dict):
        raise ValueError("its inputSchema is not a JSON object")
    data = cast(dict[str, Any], schema)
    if data.get("type") != "object":
        raise ValueError("its inputSchema does not describe an object")
    return data


def _annotations(item: Any) -> dict[str, Any] | None:
    hints: Any = getattr(item, "annotations", None)
    found: dict[str, Any] = {}
    if hints is not None:
        dumped: Any = hints.model_dump(by_alias=True, exclude_none=True)
        found = dict(cast(dict[str, Any], dumped))
    title = getattr(item, "title", None)
    if title and "title" not in found:
        found["title"] = str(title)
    return found or None


def _validator(schema: dict[str, Any]) -> Any:
    from jsonschema import SchemaError
    from jsonschema.validators import validator_for

    cls: Any = validator_for(schema)
    try:
        cls.check_schema(schema)
    except SchemaError as e:
        raise ValueError(f"its inputSchema is not valid JSON Schema ({e.message})") from None
    return cls(schema)


def _problem(error: Any, arguments: dict[str, Any], schema: dict[str, Any]) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "required" and not path:
        missing = [n for n in error.validator_value if n not in arguments]
        return "; ".join(f"missing required argument `{n}`" for n in missing)
    if error.validator == "additionalProperties" and not path:
        known = set(schema.get("properties") or {})
        extra = sorted(n for n in arguments if n not in known)
        return "; ".join(f"unexpected argument `{n}`" for n in extra) or str(error.message)
    message = str(error.message)
    if len(message) > _SHOWN:
        message = message[:_SHOWN] + "…"
    return f"argument `{path}`: {message}" if path else message
