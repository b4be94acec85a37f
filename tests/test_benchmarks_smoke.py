"""The benchmark runner still runs: one row, tiny, no chatlas venv, no timing asserted."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import run


def test_the_runner_writes_a_well_formed_report_for_one_quick_row(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    argv = ["--quick", "--only", "tool_round", "--no-chatlas", "--samples", "1", "--json", str(out)]

    assert run.main(argv) == 0

    report = json.loads(out.read_text())
    assert report["errors"] == []
    assert report["meta"]["quick"] is True
    assert {line["row"] for line in report["lines"]} == {"3"}
    for line in report["lines"]:
        assert line["ours"] > 0
        assert line["floor"] > 0
        assert line["chatlas"] is None
        assert isinstance(line["met"], bool)
