"""Dependencies run one way: no runtime import circle between the package's modules.

Every import statement counts, at module level or inside a function (a lazy import is
still a dependency); only imports under ``if TYPE_CHECKING:`` are left out, since they
never run. A circle is reported as its modules, with the imports that close it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "chatlas_like"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of every node inside an ``if TYPE_CHECKING:`` block."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for branch in node.body:
                inside.update(id(n) for n in ast.walk(branch))
    return inside


def _imported(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The dotted names an import statement may load (a module, or a name in one)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    if node.level:
        here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        base = here[: len(here) - (node.level - 1)]
        target = ".".join([*base, *([node.module] if node.module else [])])
    else:
        target = node.module or ""
    yield target
    yield from (f"{target}.{alias.name}" for alias in node.names)


def import_graph() -> dict[str, set[str]]:
    """``{module: the package modules it imports at run time}``."""
    modules = package_modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_only(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in skip:
                graph[name] |= {t for t in _imported(name, path, node) if t in modules} - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component: list[str] = []
            while (w := stack.pop()) != v:
                component.append(w)
            component.append(v)
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def describe(component: list[str], graph: dict[str, set[str]]) -> str:
    members = set(component)
    edges = [f"{a} -> {b}" for a in component for b in sorted(graph[a] & members)]
    return "; ".join(edges)


def test_the_import_graph_sees_lazy_imports_and_skips_type_checking_ones() -> None:
    graph = import_graph()
    # chat_html is imported inside Chat._repr_html_: a lazy import is still an edge.
    assert "chatlas_like._display.render" in graph["chatlas_like._chat"]
    # _display names Chat only for type checking.
    assert "chatlas_like._chat" not in graph["chatlas_like._display.render"]


def test_no_two_package_modules_import_each_other_at_run_time() -> None:
    graph = import_graph()
    found = circles(graph)
    assert not found, "runtime import circles:\n" + "\n".join(describe(c, graph) for c in found)


def test_content_knows_nothing_of_display_persistence_or_providers() -> None:
    graph = import_graph()
    above = {
        "chatlas_like._display.render",
        "chatlas_like._persist.chat_file",
        "chatlas_like._chat",
    }
    for lower in ("chatlas_like._core.content", "chatlas_like._core.tool_result"):
        assert not (graph[lower] & above), (lower, graph[lower] & above)
        assert not any(t.startswith("chatlas_like.providers") for t in graph[lower]), lower


def test_providers_never_import_the_chat() -> None:
    graph = import_graph()
    for name, targets in graph.items():
        if name.startswith("chatlas_like.providers"):
            assert "chatlas_like._chat" not in targets, name


def test_content_displays_itself_when_only_its_own_module_was_imported() -> None:
    # The renderers are installed by the package's __init__, which Python runs before
    # any submodule: a user importing only the content module still gets every display.
    code = (
        "from chatlas_like._core.content import ContentText, ContentToolRequest\n"
        "from chatlas_like._core.tool_result import ContentToolResult\n"
        "request = ContentToolRequest(id='t1', name='add', arguments={'x': 1})\n"
        "result = ContentToolResult(value=2, request=request)\n"
        "print(str(request)); print(str(result))\n"
        "print(ContentText('*hi*')._repr_html_()); print(result._repr_html_())\n"
        "print(type(result.tagify()).__name__, type(request.tagify()).__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "add(x=1)"
    assert lines[1] == "✔ result add(x=1)"
    assert "<em>hi</em>" in done.stdout
    assert "chatlas-like-tool-result" in done.stdout
    assert lines[-1] == "HTML HTML"
