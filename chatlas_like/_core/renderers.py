"""Where content finds its renderings, so that content never imports the display.

Dependencies run one way: :mod:`chatlas_like._display.render` imports the content types, and the
content types (``_content``, ``_tool_result``) know nothing of it. Their display methods
(``_repr_html_``, ``_repr_markdown_``, ``tagify()``, ``__rich__``, ``__str__`` of a tool
call or result) look their renderer up here by name. ``_display`` fills this table when
it is imported, and the package's ``__init__`` imports ``_display``; since Python runs a
package's ``__init__`` before any of its submodules, the table is full before any content
can exist, whichever module a user imported first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["register", "render", "render_text"]

_TABLE: dict[str, Callable[[Any], Any]] = {}


def register(**renderers: Callable[[Any], Any]) -> None:
    """Install renderers by name (the display module calls this once, when imported)."""
    _TABLE.update(renderers)


def render(name: str, value: object) -> Any:
    """``value`` rendered by the renderer called ``name``."""
    try:
        renderer = _TABLE[name]
    except KeyError:
        raise LookupError(
            f"no renderer {name!r} is installed: chatlas_like._display.render registers it when "
            "the chatlas_like package is imported"
        ) from None
    return renderer(value)


def render_text(name: str, value: object) -> str:
    """``value`` rendered as text by the renderer called ``name``."""
    return str(render(name, value))
