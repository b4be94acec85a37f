"""A Griffe extension for the docs site: Sphinx roles in docstrings become links.

The package's docstrings cross-reference in the Sphinx way (``:class:`Chat```,
``:meth:`~chatlas_like.Chat.stream```), which reads well in the source and in
``help()``; mkdocstrings renders Markdown, where such a role would show raw. Once the
package is loaded, every role becomes an autorefs link (``[`Chat`][chatlas_like.Chat]``)
when its target is documented on the site (a public name, or a public member of a
documented class), and inline code otherwise (a private module, a local name). A
relative target (``:meth:`save``` in a docstring of ``Chat``) is looked up in the
docstring's own class first.

mkdocs.yml loads it: ``extensions: [scripts/griffe_roles.py]``.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(class|meth|func|mod|attr|exc|data|obj):`(~?)([\w.]+)(?:\(\))?`")
# The modules whose public names the reference documents (their __all__).
DOCUMENTED_MODULES = ("", "testing", "shiny")


class SphinxRoles(griffe.Extension):
    """Rewrite Sphinx roles in every docstring of the package into autorefs links."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name != "chatlas_like":
            return
        public = _documented(pkg)
        canonical = {target: path for path, target in public.items()}
        for obj in _objects(pkg):
            if obj.docstring is not None:
                scope = _scope(obj, canonical)
                links = partial(_link, scope=scope, public=set(public))
                obj.docstring.value = ROLE.sub(links, obj.docstring.value)


def _documented(pkg: griffe.Module) -> dict[str, str]:
    """``{public path: canonical path}`` of every object the reference shows."""
    found: dict[str, str] = {}
    for name in DOCUMENTED_MODULES:
        module: Any = pkg[name] if name else pkg
        prefix = f"{pkg.name}.{name}" if name else pkg.name
        for export in map(str, module.exports or []):
            member: Any = module[export]
            try:
                target = member.final_target if member.is_alias else member
            except griffe.AliasResolutionError:
                continue  # not loaded (an optional dependency): shown as code
            found[f"{prefix}.{export}"] = target.path
            if target.is_class:
                for attr, sub in target.members.items():
                    if not attr.startswith("_"):
                        found[f"{prefix}.{export}.{attr}"] = sub.path
    return found


def _objects(obj: Any) -> Any:
    """Every object defined in the package (aliases skipped: their targets are visited)."""
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _objects(member)


def _scope(obj: Any, canonical: dict[str, str]) -> list[str]:
    """Where a relative target is looked up: the docstring's class, then the package."""
    scopes: list[str] = []
    owner = obj if obj.is_class else obj.parent
    if owner is not None and owner.is_class and owner.path in canonical:
        scopes.append(canonical[owner.path])
    return [*scopes, "chatlas_like", "chatlas_like.testing", "chatlas_like.shiny"]


def _link(match: re.Match[str], scope: list[str], public: set[str]) -> str:
    role, tilde, target = match.groups()
    shown = target.rsplit(".", 1)[-1] if tilde else target
    if role in ("meth", "func"):
        shown += "()"
    candidates = [target] if target.startswith("chatlas_like.") else []
    candidates += [f"{base}.{target}" for base in scope]
    for candidate in candidates:
        if candidate in public:
            return f"[`{shown}`][{candidate}]"
    return f"`{shown}`"
