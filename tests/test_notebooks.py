"""The notebooks in ``notebooks/`` run top to bottom, offline, and end by checking themselves.

Their metadata names the stock ``python3`` kernel, so they open in anyone's Jupyter.
Here they execute with nbclient in the ``python3`` kernelspec installed inside this venv
(``python -m ipykernel install --sys-prefix``, which ``make test`` does and the fixture
repeats when the spec does not start this interpreter): jupyter_client looks in the
venv's own kernels folder first, so the kernel runs this venv's interpreter, which a
test checks by asking the running kernel.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def test_there_are_four_notebooks() -> None:
    assert [p.name for p in NOTEBOOKS] == [
        "01-getting-started.ipynb",
        "02-tool-results.ipynb",
        "03-saving.ipynb",
        "04-durable.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_names_the_stock_python3_kernel(path: Path) -> None:
    import nbformat

    spec = nbformat.read(path, as_version=4).metadata.kernelspec
    assert (spec.name, spec.language) == ("python3", "python")


def test_the_python3_kernel_runs_this_venvs_interpreter(kernel: str) -> None:
    import nbformat
    from nbclient import NotebookClient

    probe = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import sys; print(sys.prefix); print(sys.executable)")]
    )
    NotebookClient(probe, kernel_name=kernel, timeout=120).execute()
    prefix, executable = probe.cells[0].outputs[0]["text"].split()
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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_runs_and_its_checks_pass(path: Path, kernel: str, tmp_path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, kernel_name=kernel, timeout=180, resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
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
