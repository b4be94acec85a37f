"""Progress in a notebook: one output per run, updated in place, executed by nbclient.

A notebook made here runs parallel_chat and batch_chat against a loopback server
started in the kernel, in the venv's ``python3`` kernel (the fixture of
``tests/test_notebooks.py``). Every message the kernel sends is recorded, so the tests see
both the updates and the output they leave.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from ..test_notebooks import kernel as kernel  # the venv's python3 kernelspec

pytestmark = pytest.mark.notebook

SETUP = """
import threading
from chatlas_like import ChatAnthropic, batch_chat_text, parallel_chat_text
from chatlas_like.testing import LoopbackServer, Reply

seen = set()
lock = threading.Lock()


def model(body):
    prompt = next(b["text"] for b in body["messages"][-1]["content"] if b.get("type") == "text")
    if prompt == "fail":
        return Reply.error(400, "invalid_request_error", "refused")
    with lock:
        first = prompt not in seen
        seen.add(prompt)
    if prompt == "busy" and first:
        return Reply.error(529, "overloaded_error", "busy", headers={"retry-after": "0"})
    return Reply.text(f"You said {prompt}.")


server = LoopbackServer(model).start()
chat = ChatAnthropic(base_url=server.url, api_key="test", model="claude-haiku-4-5-20251001")
"""
PARALLEL = """
texts = await parallel_chat_text(chat, ["a", "busy", "fail", "b"], rpm=None, on_error="continue")
"""
BATCH = """
import warnings

server.batches.per_poll = 1
server.batches.expire = {"prompt-2"}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the expired request's warning is not under test
    answers = batch_chat_text(chat, ["a", "b", "c"], "job.json", poll_interval=0.01)
"""
QUIET = """
quiet = await parallel_chat_text(chat, ["a", "b"], rpm=None, echo="none")
"""
CHECK = """
server.stop()
assert texts[:2] == ["You said a.", "You said busy."], texts
assert answers == ["You said a.", "You said b.", None], answers
assert quiet == ["You said a.", "You said b."], quiet
print("all checks passed")
"""
CELLS = {"setup": SETUP, "parallel": PARALLEL, "batch": BATCH, "quiet": QUIET, "check": CHECK}
CLOCK = r"\d+:\d\d:\d\d"


class Run:
    """The executed notebook, and the kernel's messages for each cell."""

    def __init__(self, outputs: dict[str, list[Any]], messages: dict[str, list[str]]) -> None:
        self.outputs = outputs
        self.messages = messages


@pytest.fixture(scope="module")
def run(kernel: str, tmp_path_factory: pytest.TempPathFactory) -> Run:
    import nbformat
    from nbclient import NotebookClient

    names = list(CELLS)
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(CELLS[name]) for name in names]
    )
    messages: dict[str, list[str]] = {name: [] for name in names}

    class Recording(NotebookClient):
        def process_message(self, msg: dict[str, Any], cell: Any, cell_index: int) -> Any:
            messages[names[cell_index]].append(msg["header"]["msg_type"])
            return super().process_message(msg, cell, cell_index)

    folder = tmp_path_factory.mktemp("progress-notebook")
    Recording(
        notebook, kernel_name=kernel, timeout=180, resources={"metadata": {"path": str(folder)}}
    ).execute()
    outputs = {name: list(cell.outputs) for name, cell in zip(names, notebook.cells, strict=True)}
    return Run(outputs, messages)


def only_display(outputs: list[Any]) -> dict[str, str]:
    """The one output a cell left: a display of the progress (no stream output at all)."""
    assert [o["output_type"] for o in outputs] == ["display_data"], outputs
    data = outputs[0]["data"]
    assert "chatlas-like-progress" in data["text/html"]
    return data


def test_the_notebook_runs_and_its_checks_pass(run: Run) -> None:
    assert "all checks passed" in "".join(o.get("text", "") for o in run.outputs["check"])


def test_parallel_chat_leaves_one_display_updated_in_place(run: Run) -> None:
    sent = run.messages["parallel"]
    assert sent.count("display_data") == 1
    assert sent.count("update_display_data") >= 2  # it moved while the work ran
    assert "stream" not in sent  # no redrawn bars written as text
    data = only_display(run.outputs["parallel"])
    assert re.fullmatch(
        rf"Answering 4 prompts: 4/4 \(100%\), {CLOCK}, 3 done \| 1 failed \| 1 retried",
        data["text/plain"],
    )


def test_the_notebook_display_shows_a_bar_and_coloured_counts(run: Run) -> None:
    html = only_display(run.outputs["parallel"])["text/html"]
    assert "<progress max='4' value='4'" in html
    assert "✔" in html
    assert "<span style='color:green'>3 done</span>" in html
    assert "<span style='color:#c00'>1 failed</span>" in html


def test_batch_chat_leaves_one_display_with_the_batchs_final_counts(run: Run) -> None:
    sent = run.messages["batch"]
    assert sent.count("display_data") == 1 and sent.count("update_display_data") >= 1
    data = only_display(run.outputs["batch"])
    assert re.fullmatch(
        rf"Processing 3 prompts: 3/3 \(100%\), {CLOCK}, 0 pending \| 2 done \| 1 failed",
        data["text/plain"],
    )


def test_echo_none_in_a_notebook_leaves_no_output(run: Run) -> None:
    assert run.outputs["quiet"] == []
    assert not {"display_data", "update_display_data", "stream"} & set(run.messages["quiet"])
