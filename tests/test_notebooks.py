"""The notebooks in ``notebooks/`` run top to bottom, offline, and end by checking themselves.

They execute with nbclient in a kernel that runs this venv's interpreter
(``python -m ipykernel install --sys-prefix --name chatlas-like``, which ``make test``
does and the fixture repeats if it is missing).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
KERNEL = "chatlas-like"

pytestmark = pytest.mark.notebook


@pytest.fixture(scope="module")
def kernel() -> str:
    from jupyter_client.kernelspec import KernelSpecManager

    specs = KernelSpecManager().find_kernel_specs()
    if KERNEL not in specs:
        subprocess.run(
            [sys.executable, "-m", "ipykernel", "install", "--sys-prefix", "--name", KERNEL],
            check=True,
            capture_output=True,
        )
    spec = KernelSpecManager().get_kernel_spec(KERNEL)
    assert Path(spec.argv[0]).resolve() == Path(sys.executable).resolve(), spec.argv
    return KERNEL


def test_there_are_three_notebooks() -> None:
    assert [p.name for p in NOTEBOOKS] == [
        "01-getting-started.ipynb",
        "02-tool-results.ipynb",
        "03-saving.ipynb",
    ]


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
