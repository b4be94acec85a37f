"""Every fenced Python block of README.md and docs/*.md runs as written, each on its own.

Each block runs in a fresh namespace, in an empty folder holding the few files the
examples open (``photo.jpg``, ``report.pdf``, ``prompts/summary.md``), with
``ANTHROPIC_BASE_URL`` pointing at a loopback server: the blocks' own
``ChatAnthropic()`` calls reach it through the real SDK. Its model answers whatever it
is sent the way Claude would in shape: it calls each chat's first tool once, with
arguments made from the tool's schema, answers the results, fills structured output
from the schema, and thinks when thinking is on. Top-level ``await`` works, as in a
notebook. Every name a block uses is defined in the block: its symbol tables are read,
so a name inside a function the docs model never calls counts too.

A block that cannot run here carries a mark on the line above its fence, with the
reason: ``<!-- docs-test: skip: REASON -->``. Keep such marks rare.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import re
import symtable
import sys
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from chatlas_like.testing import LoopbackServer, Reply

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)
SKIP = re.compile(r"<!-- docs-test: skip: (.+?) -->\s*\Z")


class Block:
    def __init__(self, page: Path, line: int, code: str, skip: str | None) -> None:
        self.page, self.line, self.code, self.skip = page, line, code, skip

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks() -> Iterator[Block]:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            before = text[: match.start()]
            mark = SKIP.search(before)
            line = before.count("\n") + 2  # the block's first line of code
            yield Block(page, line, match.group(1), mark.group(1) if mark else None)


BLOCKS = list(blocks())


# -- the model behind the docs' examples ---------------------------------------------------


def _sample(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> Any:
    """A value that fits ``schema`` (required fields, two items a list, the first enum)."""
    if "$ref" in schema:
        return _sample(defs[str(schema["$ref"]).rsplit("/", 1)[-1]], defs)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"]
            return _sample(options[0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        properties: Mapping[str, Any] = schema.get("properties", {})
        return {k: _sample(properties[k], defs) for k in schema.get("required", [])}
    if kind == "array":
        return [_sample(schema.get("items", {}), defs) for _ in range(2)]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 1))
        return max(low, min(1, schema.get("maximum", 1)))
    if kind == "boolean":
        return True
    return "Paris"


def _custom_tools(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [t for t in body.get("tools", []) if t.get("type") in (None, "custom")]


def docs_model(body: Mapping[str, Any]) -> Reply:
    """Answers any request in the shape Claude would (see the module's docstring)."""
    schema = (body.get("output_config") or {}).get("format", {}).get("schema")
    if schema is not None:
        return Reply.text(str(_json(_sample(schema, schema.get("$defs", {})))))
    forced = (body.get("tool_choice") or {}).get("name")
    tools = {t["name"]: t for t in _custom_tools(body)}
    if forced in tools:
        tool_schema = tools[forced]["input_schema"]
        return Reply.tool_call(forced, _sample(tool_schema, tool_schema.get("$defs", {})))
    last = body["messages"][-1]["content"]
    answered = isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)
    if tools and not answered:
        name, tool = next(iter(tools.items()))
        arguments = _sample(tool["input_schema"], tool["input_schema"].get("$defs", {}))
        return Reply.tool_call(name, arguments, text="Let me check.")
    text = "Done: **that** is the answer." if answered else "Hello from the **docs** model."
    if (body.get("thinking") or {}).get("type") in ("enabled", "adaptive"):
        thought = {"type": "thinking", "thinking": "Thinking it over.", "signature": "c2ln"}
        return Reply.blocks_of(thought, {"type": "text", "text": text})
    return Reply.text(text)


def _json(value: Any) -> str:
    import orjson

    return orjson.dumps(value).decode()


@pytest.fixture(scope="module")
def docs_server() -> Iterator[LoopbackServer]:
    with LoopbackServer(docs_model) as server:
        server.batches.polls_to_end = 1  # a batch has ended by its first poll
        yield server


@pytest.fixture(scope="module")
def example_files() -> dict[str, bytes]:
    """The files the examples open, made once: ``{relative path: content}``."""
    import io

    from PIL import Image

    photo = io.BytesIO()
    Image.new("RGB", (64, 48), "steelblue").save(photo, format="jpeg")
    return {
        "photo.jpg": photo.getvalue(),
        "report.pdf": _pdf(),
        "prompts/summary.md": b"Summarise what we know about {{ topic }}.",
    }


@pytest.fixture
def folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, example_files: dict[str, bytes]
) -> Path:
    """An empty folder with the files the examples open, as the working directory."""
    for name, content in example_files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(content)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _pdf() -> bytes:
    """A one-page PDF, made with matplotlib (a dev dependency), with no date in it."""
    import io

    from matplotlib.figure import Figure

    figure = Figure(figsize=(2, 1))
    figure.text(0.1, 0.5, "Quarterly report")
    out = io.BytesIO()
    figure.savefig(out, format="pdf", metadata={"CreationDate": None})
    return out.getvalue()


def run(code: str, filename: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run ``code`` as a script's module (pydantic looks names up there), with top-level
    ``await`` allowed as in a notebook cell."""
    module = types.ModuleType("docs_block")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    compiled = compile(code, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    outcome = eval(compiled, module.__dict__)
    if asyncio.iscoroutine(outcome):
        asyncio.run(outcome)


# -- the tests ----------------------------------------------------------------------------


def test_the_readme_and_the_docs_hold_python_blocks() -> None:
    assert {b.page.name for b in BLOCKS} >= {"README.md", "getting-started.md", "tools.md"}
    assert len(BLOCKS) >= 40


def test_a_skipped_block_is_rare_and_says_why() -> None:
    skipped = [b for b in BLOCKS if b.skip is not None]
    assert len(skipped) <= 3, [b.name for b in skipped]
    assert all(len(b.skip or "") >= 20 for b in skipped)


def undefined_names(code: str, filename: str) -> set[str]:
    """The names ``code`` reads that it never defines (nor Python's builtins do).

    A name read at the top level fails when the block runs; one read only inside a
    function the block defines fails only if that function is called, which the docs
    model may never do (it calls a chat's first tool once). Reading the symbol tables
    finds both without running anything.
    """
    top = symtable.symtable(code, filename, "exec")
    defined = {
        s.get_name()
        for s in top.get_symbols()
        if s.is_assigned() or s.is_imported() or s.is_namespace()
    }
    known = defined | set(dir(builtins)) | {"__name__", "__file__"}

    def missing(table: symtable.SymbolTable) -> Iterator[str]:
        for symbol in table.get_symbols():
            read_here = symbol.is_referenced() and (table is top or symbol.is_global())
            if read_here and symbol.get_name() not in known:
                yield symbol.get_name()
        for child in table.get_children():
            yield from missing(child)

    return set(missing(top))


def test_undefined_names_are_found_inside_functions_never_called() -> None:
    code = (
        "import json\n\n\ndef check(item):\n    return STOCK[item], json.dumps(item), len(item)\n"
    )
    assert undefined_names(code, "example") == {"STOCK"}


# A skipped block is a fragment continuing the one before it: it may use that one's names.
@pytest.mark.parametrize("block", [b for b in BLOCKS if b.skip is None], ids=lambda b: b.name)
def test_a_python_block_defines_every_name_it_uses(block: Block) -> None:
    assert not undefined_names(block.code, block.name)


@pytest.fixture
def process_settings() -> Iterator[None]:
    """Undo what a block configures for its whole process, as an application does
    (logging, OpenTelemetry's providers), so later tests start with neither."""
    import logging

    from .support.otel import set_meter_provider, set_tracer_provider

    loggers = [logging.getLogger(), logging.getLogger("chatlas_like")]
    saved = [(lg, lg.level, list(lg.handlers), lg.propagate) for lg in loggers]
    yield
    for lg, level, handlers, propagate in saved:
        lg.setLevel(level)
        lg.handlers[:] = handlers
        lg.propagate = propagate
    set_tracer_provider(None)
    set_meter_provider(None)


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.name)
def test_a_python_block_runs_on_its_own(
    block: Block,
    docs_server: LoopbackServer,
    folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    process_settings: None,
) -> None:
    if block.skip is not None:
        pytest.skip(block.skip)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", docs_server.url)
    before = len(docs_server.requests)
    run(block.code, block.name, monkeypatch)
    rejected = [r.body for r in docs_server.requests[before:] if (r.response_status or 0) >= 400]
    assert not rejected  # every request the block sent was one the API accepts
