"""The notebooks in ``notebooks/`` run top to bottom, offline, and end by checking themselves.

Their metadata names the stock ``python3`` kernel, so they open in anyone's Jupyter.
Here they execute with nbclient in the ``python3`` kernelspec installed inside this venv
(``python -m ipykernel install --sys-prefix``, which ``make test`` does and the fixture
repeats when the spec does not start this interpreter): jupyter_client looks in the
venv's own kernels folder first, so the kernel runs this venv's interpreter, which a
test checks by asking the running kernel.
"""

from __future__ import annotations

import ast
import html
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
KERNEL = "python3"

pytestmark = pytest.mark.notebook


@pytest.fixture(scope="module")
def kernel() -> str:
    from jupyter_client.kernelspec import KernelSpecManager

    def starts_this_interpreter() -> bool:
        # ipykernel's wheel ships a spec whose argv is a bare "python" (whatever is on
        # PATH). Compare folders unresolved: a venv's python links to the system one.
        program = Path(KernelSpecManager().get_kernel_spec(KERNEL).argv[0])
        return program.is_absolute() and program.parent == Path(sys.executable).absolute().parent

    if not starts_this_interpreter():
        subprocess.run(
            [sys.executable, "-m", "ipykernel", "install", "--sys-prefix"],
            check=True,
            capture_output=True,
        )
    assert starts_this_interpreter(), KernelSpecManager().get_kernel_spec(KERNEL).argv
    return KERNEL


# A small notebook run once for several tests: the kernel's interpreter, then a chat asked
# in the ways a user does (cells 2 to 5).
PROBE = [
    "import sys; print(sys.prefix); print(sys.executable)",
    "from chatlas_like import ChatAnthropic\n"
    "from chatlas_like.testing import LoopbackServer, Reply\n"
    "replies = [Reply.text('First.'), Reply.text('Second.'), Reply.text('Third.')]\n"
    "server = LoopbackServer(replies).start()\n"
    "chat = ChatAnthropic(base_url=server.url, api_key='offline', model='claude-haiku-4-5')",
    "chat.chat('one')",
    "_",
    "chat.chat('two', echo='none')",
    "await chat.chat_async('three')",
    "server.stop()",
]


@pytest.fixture(scope="module")
def probe(kernel: str) -> list[list[Any]]:
    """The outputs of each cell of :data:`PROBE`."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in PROBE])
    NotebookClient(notebook, kernel_name=kernel, timeout=120).execute()
    return [list(cell.outputs) for cell in notebook.cells]


def test_there_are_five_notebooks() -> None:
    assert [p.name for p in NOTEBOOKS] == [
        "01-getting-started.ipynb",
        "02-tool-results.ipynb",
        "03-saving.ipynb",
        "04-durable.ipynb",
        "05-providers.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_names_the_stock_python3_kernel(path: Path) -> None:
    import nbformat

    spec = nbformat.read(path, as_version=4).metadata.kernelspec
    assert (spec.name, spec.language) == ("python3", "python")


def test_the_python3_kernel_runs_this_venvs_interpreter(probe: list[list[Any]]) -> None:
    (printed,) = probe[0]
    prefix, executable = printed["text"].split()
    assert Path(prefix).resolve() == Path(sys.prefix).resolve()
    assert Path(executable).parent == Path(sys.executable).absolute().parent


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_says_it_is_offline_and_skips_nothing(path: Path) -> None:
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    assert "runs offline" in notebook.cells[0].source and "scripted" in notebook.cells[0].source
    for cell in notebook.cells:
        tags = cell.metadata.get("tags", [])
        assert not [t for t in tags if "skip" in t or "raises" in t], (cell.source[:60], tags)
        if cell.cell_type == "code":
            assert not cell.get("outputs"), "commit notebooks without outputs"
    last = notebook.cells[-1]
    assert last.cell_type == "code" and "assert " in last.source


@pytest.fixture(scope="module")
def executed(kernel: str, tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path], Any]:
    """Each notebook executed once for the module's tests, in a folder of its own."""
    import nbformat
    from nbclient import NotebookClient

    done: dict[Path, Any] = {}

    def execute(path: Path) -> Any:
        if path not in done:
            notebook = nbformat.read(path, as_version=4)
            folder = tmp_path_factory.mktemp(path.stem)
            resources = {"metadata": {"path": str(folder)}}
            NotebookClient(notebook, kernel_name=kernel, timeout=180, resources=resources).execute()
            done[path] = notebook
        return done[path]

    return execute


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_runs_and_its_checks_pass(path: Path, executed: Callable[[Path], Any]) -> None:
    notebook = executed(path)
    last = notebook.cells[-1]
    printed = "".join(o.get("text", "") for o in last.outputs)
    assert "all checks passed" in printed
    html = [
        o["data"]["text/html"]
        for cell in notebook.cells
        for o in cell.get("outputs", [])
        if "text/html" in o.get("data", {})
    ]
    assert any("chatlas-like-tool-result" in h for h in html)  # cards were displayed


def scripted_answers(notebook: Any) -> set[str]:
    """The texts the notebook's scripted model answers with: the literals given to
    ``Reply.text(...)``, or as a ``text=`` or ``answer=`` argument of any call."""
    found: set[str] = set()
    for cell in notebook.cells:
        if cell.cell_type == "code":
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, ast.Call):
                    given = [k.value for k in node.keywords if k.arg in ("text", "answer")]
                    if ast.unparse(node.func) == "Reply.text":
                        given += node.args[:1]
                    found |= {a.value for a in given if isinstance(a, ast.Constant)}
    return {plain(text) for text in found if isinstance(text, str)}


def plain(text: str) -> str:
    """What a reader sees of a text, HTML or Markdown: tags and emphasis gone."""
    text = html.unescape(re.sub(r"<[^>]+>", " ", text)).replace("*", "").replace("`", "")
    return " ".join(text.split())


def shown(output: Any) -> str:
    """Everything one output shows, in all its formats."""
    data = output.get("data", {})
    return plain(" ".join([output.get("text", ""), *(str(v) for v in data.values())]))


def ends_with_a_chat_call(source: str) -> bool:
    """Whether a cell's last statement is an expression calling ``.chat(...)``
    (or awaiting ``.chat_async(...)``)."""
    last = ast.parse(source).body[-1:]
    if not last or not isinstance(last[0], ast.Expr):
        return False
    value = last[0].value
    value = value.value if isinstance(value, ast.Await) else value
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in ("chat", "chat_async")
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_shows_each_answer_once_in_a_cell(
    path: Path, executed: Callable[[Path], Any]
) -> None:
    notebook = executed(path)
    answers = scripted_answers(notebook)
    assert answers
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        outputs = [shown(o) for o in cell.outputs]
        counts = {a: sum(a in text for text in outputs) for a in answers}
        assert all(n <= 1 for n in counts.values()), (cell.source[:60], counts)
        if ends_with_a_chat_call(cell.source):  # the echo showed it; no Out repeats it
            assert 1 in counts.values(), (cell.source[:60], outputs)
            assert [o.output_type for o in cell.outputs].count("execute_result") == 0


def test_a_notebook_ends_a_cell_with_a_chat_call() -> None:
    import nbformat

    cells = [c for p in NOTEBOOKS for c in nbformat.read(p, as_version=4).cells]
    assert any(c.cell_type == "code" and ends_with_a_chat_call(c.source) for c in cells)


def test_an_echoed_chat_call_as_a_cells_last_expression_adds_no_out(
    probe: list[list[Any]],
) -> None:
    (echo,) = probe[2]
    assert echo.output_type == "display_data" and "First." in echo.data["text/html"]


def test_an_awaited_chat_async_call_adds_no_out_to_its_echo(probe: list[list[Any]]) -> None:
    (echo,) = probe[5]
    assert echo.output_type == "display_data" and "Third." in echo.data["text/html"]


def test_an_echoed_answer_asked_for_in_a_later_cell_shows_as_markdown(
    probe: list[list[Any]],
) -> None:
    (out,) = probe[3]
    assert out.output_type == "execute_result" and out.data["text/markdown"] == "First."


def test_an_answer_not_echoed_shows_as_markdown(probe: list[list[Any]]) -> None:
    (out,) = probe[4]
    assert out.output_type == "execute_result" and out.data["text/markdown"] == "Second."


def test_the_outcomes_notebook_shows_each_call_as_a_call_and_no_library_path(
    executed: Callable[[Path], Any],
) -> None:
    notebook = executed(next(p for p in NOTEBOOKS if p.name == "02-tool-results.ipynb"))
    outputs = [o for cell in notebook.cells for o in cell.get("outputs", [])]
    table = next(shown(o) for o in outputs if "is_refusal" in shown(o))  # the outcomes table
    assert "invoice(number=7)" in table
    assert "tool request (" not in table  # not chatlas's markdown of the request
    warned = [o.get("text", "") for o in outputs if o.get("name") == "stderr"]
    assert warned and all("chatlas_like" + "/" not in text for text in warned), warned


def test_an_echoed_answer_carries_its_text_for_front_ends_without_html(
    probe: list[list[Any]],
) -> None:
    (echo,) = probe[2]
    assert echo.data["text/plain"] == "First."


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_displayed_output_of_a_notebook_has_text_not_an_objects_repr(
    path: Path, executed: Callable[[Path], Any]
) -> None:
    notebook = executed(path)
    displayed = [o for cell in notebook.cells for o in cell.get("outputs", []) if "data" in o]
    assert displayed
    for output in displayed:
        text = output["data"].get("text/plain", "")
        assert text and not text.startswith("<IPython.core.display"), output["data"]
