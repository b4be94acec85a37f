"""The package's architecture, held: folders by layer, imports pointing down only.

Every import statement counts, at module level, deferred inside a function, or under
``if TYPE_CHECKING:`` (a type-only import is still a dependency a reader must follow).
A circle is reported as its modules, with the imports that close it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "chatlas_like"

# The layers, top first: a module may import its own layer and those below it, never
# one above. "" is the package's root.
LAYERS: list[tuple[str, ...]] = [
    ("_cli", "__main__"),  # the command line (``python -m chatlas_like``)
    ("testing",),  # the loopback server, scripted models, the in-process provider
    ("durable",),  # conversations as DBOS workflows (the ``durable`` extra)
    # The public API: Chat, and the modules of the package's public functions.
    (
        "",
        "types",
        "shiny",
        "_chat",
        "_chat_anthropic",
        "_constructors",
        "_parallel",
        "_batch",
        "_interpolate",
        "_not_here",
    ),
    ("_mcp",),  # MCP sessions and their tools
    ("_persist",),  # chat files and bookmarks
    ("_store",),  # tool-result stores and their read API's queries
    ("_display",),  # renderings and the echo sinks
    ("_observe",),  # logging, OpenTelemetry, token counts
    ("_run",),  # the turn loop, its drivers, limits, retries, the echo interface
    ("providers",),  # the provider interface, and Anthropic's and OpenAI's behind it
    ("_tools",),  # tools from functions, the runner, finalising results
    ("_core",),  # content, turns, tool results, formatting, errors: imports nothing of ours
]
ROOT_MODULE_LIMIT = 15
FOLDER_MODULE_LIMIT = 20
# Circles counting deferred and type-only imports, each allowed for a reason: Chat and a
# feature chatlas's API puts on it, and the data model's own mutual references.
ALLOWED_CIRCLES: list[set[str]] = [
    # ``Chat.app()`` opens the Shiny app, which serves a Chat.
    {"chatlas_like._chat", "chatlas_like.shiny"},
    # A turn holds tool results; a result may carry turns to insert (MessageExpansion).
    {"chatlas_like._core.turn", "chatlas_like._core.tool_result", "chatlas_like._core.expansion"},
]
# Imports allowed to point up a layer, each deferred (inside a function) and for a
# reason. Keep it to what chatlas's API puts in the wrong room.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {
    ("chatlas_like._tools.tool", "chatlas_like._mcp.from_mcp"): (
        "Tool.from_mcp() is chatlas's classmethod on Tool; it loads the MCP adapter "
        "when called, so tools never load MCP otherwise"
    ),
}
# Modules outside providers/ that may name Anthropic's provider: the public entry
# points that build or re-export it.
ANTHROPIC_ENTRY_POINTS = {
    "chatlas_like",
    "chatlas_like.types",
    "chatlas_like._chat_anthropic",
    "chatlas_like._constructors.bedrock",
}
# The constructors of OpenAI's chats are the only modules outside providers/ that know it.
OPENAI_ENTRY_POINTS = {"chatlas_like._constructors.openai", "chatlas_like._constructors.compatible"}


@dataclass(frozen=True, slots=True)
class Import:
    source: str
    target: str
    line: int
    kind: str  # "runtime", "deferred" or "type-only"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _inside(tree: ast.Module, kind: type[ast.AST] | tuple[type[ast.AST], ...]) -> set[int]:
    """The ids of every node inside the bodies of ``kind`` nodes (an ``if TYPE_CHECKING``
    block when ``kind`` is ``ast.If``)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, kind):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            continue
        for statement in node.body:  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
            inside.update(id(n) for n in ast.walk(statement))  # pyright: ignore[reportUnknownArgumentType]
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


def imports() -> list[Import]:
    """Every import of one package module by another."""
    modules = package_modules()
    found: list[Import] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        type_only = _inside(tree, ast.If)
        deferred = _inside(tree, (ast.FunctionDef, ast.AsyncFunctionDef))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            kind = (
                "type-only"
                if id(node) in type_only
                else "deferred"
                if id(node) in deferred
                else "runtime"
            )
            for target in set(_imported(name, path, node)):
                if target in modules and target != name:
                    found.append(Import(name, target, node.lineno, kind))
    return found


def graph(kinds: set[str]) -> dict[str, set[str]]:
    """``{module: the package modules it imports}`` by imports of ``kinds``."""
    edges: dict[str, set[str]] = {name: set() for name in package_modules()}
    for edge in imports():
        if edge.kind in kinds:
            edges[edge.source].add(edge.target)
    return edges


def layer(module: str) -> int:
    parts = module.split(".")[1:]
    head = parts[0] if parts else ""
    for index, names in enumerate(LAYERS):
        if head in names:
            return index
    raise AssertionError(f"{module} is in no layer: add its folder to LAYERS")


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges[v]):
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

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def describe(component: list[str], edges: dict[str, set[str]]) -> str:
    members = set(component)
    return "; ".join(f"{a} -> {b}" for a in component for b in sorted(edges[a] & members))


def test_the_import_graph_sees_deferred_and_type_only_imports() -> None:
    found = {(e.source, e.target): e.kind for e in imports()}
    # Chat.save() imports the chat-file module when called: a deferred import is an edge.
    assert found[("chatlas_like._chat", "chatlas_like._persist.chat_file")] == "deferred"
    # The loop names the provider interface for its types and calls it.
    assert ("chatlas_like._run.loop", "chatlas_like.providers._base") in found


def test_every_module_is_in_a_layer() -> None:
    for name in package_modules():
        layer(name)


def test_no_import_points_up_a_layer() -> None:
    upward = [
        e
        for e in imports()
        if layer(e.target) < layer(e.source)
        and not ((e.source, e.target) in ALLOWED_UPWARD and e.kind == "deferred")
    ]
    assert not upward, "imports pointing up:\n" + "\n".join(
        f"{e.source}:{e.line} -> {e.target} ({e.kind})" for e in upward
    )


def test_each_allowed_upward_import_exists_and_is_deferred() -> None:
    kinds = {(e.source, e.target): e.kind for e in imports()}
    for edge in ALLOWED_UPWARD:
        assert kinds.get(edge) == "deferred", f"{edge}: gone or no longer deferred; drop it"


def test_no_two_package_modules_import_each_other_at_run_time() -> None:
    edges = graph({"runtime"})
    found = circles(edges)
    assert not found, "runtime import circles:\n" + "\n".join(describe(c, edges) for c in found)


def test_circles_counting_every_import_are_only_chat_and_the_features_it_opens() -> None:
    edges = graph({"runtime", "deferred", "type-only"})
    found = [c for c in circles(edges) if set(c) not in ALLOWED_CIRCLES]
    assert not found, "import circles:\n" + "\n".join(describe(c, edges) for c in found)


def test_a_deferred_import_keeps_something_off_the_import_of_the_package() -> None:
    # Deferring the import of a module that ``import chatlas_like`` loads anyway buys
    # nothing: such an import belongs at the top of its module.
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, chatlas_like; print('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    pointless = [
        e for e in imports() if e.kind == "deferred" and e.target in loaded and e.source in loaded
    ]
    assert not pointless, "deferred imports of modules loaded anyway:\n" + "\n".join(
        f"{e.source}:{e.line} -> {e.target}" for e in pointless
    )


def test_the_root_and_every_folder_stay_small() -> None:
    root = [p for p in PACKAGE.glob("*.py")]
    assert len(root) <= ROOT_MODULE_LIMIT, sorted(p.name for p in root)
    for folder in (p for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__"):
        modules = list(folder.glob("*.py"))
        assert len(modules) <= FOLDER_MODULE_LIMIT, (folder.name, len(modules))


def test_every_folder_says_its_job_in_one_line() -> None:
    for init in PACKAGE.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc, f"{init.parent.name}/__init__.py has no docstring"
        assert len(doc.splitlines()[0]) <= 100, init.parent.name


def test_only_providers_know_anthropic() -> None:
    for edge in imports():
        if edge.target.startswith("chatlas_like.providers._anthropic"):
            outside = not edge.source.startswith("chatlas_like.providers")
            assert not outside or edge.source in ANTHROPIC_ENTRY_POINTS, edge


def test_only_providers_and_the_openai_constructors_know_openai() -> None:
    for edge in imports():
        if edge.target.startswith("chatlas_like.providers._openai"):
            outside = not edge.source.startswith("chatlas_like.providers")
            assert not outside or edge.source in OPENAI_ENTRY_POINTS, edge


def test_only_one_module_imports_the_openai_sdk() -> None:
    importing = set()
    for name, path in package_modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import) and any(
                a.name.split(".")[0] == "openai" for a in node.names
            ):
                importing.add(name)
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "openai":
                importing.add(name)
    assert importing == {"chatlas_like.providers._openai.provider"}


def test_nothing_outside_providers_checks_a_providers_name_or_probes_it() -> None:
    for name, path in package_modules().items():
        if name.startswith("chatlas_like.providers"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                names = [c.value for c in ast.walk(node) if isinstance(c, ast.Constant)]
                assert "anthropic" not in names, f"{name}:{node.lineno} checks a provider's name"
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("getattr", "hasattr"):
                probed = ast.unparse(node.args[0]) if node.args else ""
                assert "provider" not in probed, f"{name}:{node.lineno} probes the provider"
            if isinstance(node, ast.Constant) and node.value == "pause_turn":
                raise AssertionError(f"{name}:{node.lineno} names Anthropic's pause_turn")


def _classes(tree: ast.Module) -> Iterator[ast.ClassDef]:
    return (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef))


def test_the_provider_contract_is_one_base_class_with_no_protocol_restating_it() -> None:
    base = ast.parse((PACKAGE / "providers" / "_base.py").read_text(encoding="utf-8"))
    contract = next(c for c in _classes(base) if c.name == "Provider")
    required = {
        n.name
        for n in contract.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(ast.unparse(d) == "abstractmethod" for d in n.decorator_list)
    }
    assert required == {"build_request", "accumulator", "open", "open_async"}
    for name, path in package_modules().items():
        if not name.startswith("chatlas_like.providers"):
            continue
        for cls in _classes(ast.parse(path.read_text(encoding="utf-8"))):
            if "Protocol" not in [ast.unparse(b) for b in cls.bases]:
                continue
            methods = {
                n.name for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            }
            assert not methods & required, f"{name}.{cls.name} restates the provider contract"


def test_every_capability_is_read_outside_providers() -> None:
    types = ast.parse((PACKAGE / "providers" / "_types.py").read_text(encoding="utf-8"))
    capabilities = next(c for c in _classes(types) if c.name == "Capabilities")
    fields = {
        n.target.id
        for n in capabilities.body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
    }
    read: set[str] = set()
    for name, path in package_modules().items():
        if name.startswith("chatlas_like.providers"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and ast.unparse(node.value).endswith("capabilities"):
                read.add(node.attr)
    assert fields and fields <= read, f"never read outside providers/: {sorted(fields - read)}"


def test_nothing_outside_providers_defines_a_providers_schema_rules_or_model_names() -> None:
    # The rules a provider's API puts on a request (closed schemas, model families)
    # live in providers/<name>/; the rest of the package only names models it is given.
    for name, path in package_modules().items():
        if name.startswith("chatlas_like.providers") or name in ANTHROPIC_ENTRY_POINTS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and "schema" in node.name:
                assert not node.name.startswith(("closed", "close_")), f"{name}.{node.name}"
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
            ):
                assert "^claude" not in node.value, f"{name}:{node.lineno} matches Claude models"


def test_providers_store_nothing_on_core_types() -> None:
    # A provider keeps its translations in caches of its own (the wire's, by turn),
    # never on a Turn or a Content: the core types carry no provider's data.
    core = set()
    for path in (PACKAGE / "_core").glob("*.py"):
        core |= {c.name for c in _classes(ast.parse(path.read_text(encoding="utf-8")))}
    turn = ast.parse((PACKAGE / "_core" / "turn.py").read_text(encoding="utf-8"))
    for cls in _classes(turn):
        for node in ast.walk(cls):
            if isinstance(node, ast.Assign) and any(
                ast.unparse(t) == "__slots__" for t in node.targets
            ):
                slots = [c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant)]
                assert not any("wire" in str(s) for s in slots), f"{cls.name} has a slot for a wire"
    for name, path in package_modules().items():
        if not name.startswith("chatlas_like.providers"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                if isinstance(target, ast.Attribute) and target.attr.startswith("_"):
                    owner = ast.unparse(target.value)
                    assert owner in ("self", "cls") or (
                        owner[:1].islower()
                        and owner
                        not in (
                            "turn",
                            "content",
                            "result",
                        )
                    ), f"{name}:{node.lineno} stores {ast.unparse(target)}"


def test_no_module_but_chat_uses_a_private_name_of_chat() -> None:
    tree = ast.parse((PACKAGE / "_chat.py").read_text(encoding="utf-8"))
    chat = next(c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == "Chat")
    private: set[str] = set()
    for node in ast.walk(chat):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            private.add(node.name)
        if isinstance(node, ast.Attribute) and ast.unparse(node.value) == "self":
            private.add(node.attr)
    private = {n for n in private if n.startswith("_") and not n.endswith("_")}
    for name, path in package_modules().items():
        if name == "chatlas_like._chat":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in private:
                owner = ast.unparse(node.value)
                assert owner in ("self", "cls"), f"{name}:{node.lineno} uses {owner}.{node.attr}"


def test_at_most_three_private_usages_are_suppressed_each_with_its_reason() -> None:
    found = [
        (path, line)
        for path in PACKAGE.rglob("*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if "reportPrivateUsage" in line
    ]
    assert len(found) <= 3, found


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
    assert lines[:3] == ["```python", "# 🔧 tool request (t1)", "add(x=1)"]  # chatlas's text
    assert "# ✅ tool result (t1)" in done.stdout
    assert "<em>hi</em>" in done.stdout
    assert "chatlas-like-tool-result" in done.stdout
    assert lines[-1] == "HTML HTML"


def test_no_method_of_chat_holds_over_40_lines_of_code() -> None:
    # Chat's methods delegate to the layer that owns the work; their docstrings (chatlas's
    # documented surface) are not counted.
    tree = ast.parse((PACKAGE / "_chat.py").read_text(encoding="utf-8"))
    chat = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Chat")
    long: list[str] = []
    for method in chat.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = method.body
        if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        if body and (body[-1].end_lineno or 0) - body[0].lineno + 1 > 40:
            long.append(method.name)
    assert not long, long


def test_tests_are_laid_out_in_the_package_wings() -> None:
    # tests/ mirrors the package, a folder per layer (CONTRIBUTING.md, "Where a test
    # goes"); its root keeps the tests of the whole project. A test module outside a
    # package would be imported by its bare name: its relative imports would fail, and
    # two wings could not hold modules of the same name.
    tests = Path(__file__).resolve().parent
    root = sorted(
        p.name for p in tests.glob("*.py") if p.name not in ("__init__.py", "conftest.py")
    )
    assert len(root) <= 10, root
    for folder in (p for p in tests.rglob("*") if p.is_dir() and p.name != "__pycache__"):
        modules = list(folder.glob("test_*.py"))
        name = folder.relative_to(tests).as_posix()
        assert len(modules) <= 25, (name, len(modules))
        if modules:
            assert (folder / "__init__.py").is_file(), f"tests/{name} has no __init__.py"
