"""ToolInfo: what a tool request knows of the tool it calls (chatlas's ``request.tool``).

The turn loop sets it on every request of a registered tool as the request arrives,
before any review hook or ``on_tool_request`` callback sees it, so a hook can decide by
the tool's annotations (``request.tool.annotations.get("destructiveHint")``). It stays
on the request in the history and is saved with it: a loaded chat knows what each past
call was calling, even when the tool (an MCP server's, say) is gone.

It is plain data, a frozen dataclass: no function, nothing that cannot be saved.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, cast

__all__ = ["ToolInfo"]


class _ToolLike(Protocol):
    name: str


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """The saveable description of a tool: its name, description, schema and annotations.

    Parameters
    ----------
    name
        The name the model calls the tool by.
    description
        What the tool does, as the model reads it.
    parameters
        The JSON Schema of its arguments.
    annotations
        Hints about the tool (MCP's ``title``, ``readOnlyHint``, ``destructiveHint``,
        ``idempotentHint``, ``openWorldHint``), or None.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    annotations: dict[str, Any] | None = None

    @classmethod
    def from_tool(cls, tool: _ToolLike) -> ToolInfo:
        """The description of a :class:`~chatlas_like.Tool` or a
        :class:`~chatlas_like.ToolBuiltIn` (which has no schema: its name stands in)."""
        parameters: Any = getattr(tool, "parameters", None)
        if not isinstance(parameters, Mapping):  # a built-in tool: the provider runs it
            return cls(name=tool.name, description=tool.name, parameters={})
        annotations: Any = getattr(tool, "annotations", None)
        return cls(
            name=tool.name,
            description=str(getattr(tool, "description", "") or ""),
            parameters=dict(cast(Mapping[str, Any], parameters)),
            annotations=dict(cast(Mapping[str, Any], annotations)) if annotations else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain data (chatlas's shape): ``name``, ``description``, ``parameters``,
        ``annotations``."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "annotations": self.annotations,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolInfo:
        """A ToolInfo from :meth:`to_dict`'s output."""
        annotations = data.get("annotations")
        return cls(
            name=str(data["name"]),
            description=str(data.get("description") or ""),
            parameters=dict(data.get("parameters") or {}),
            annotations=dict(annotations) if annotations else None,
        )
