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


def test_the_mcp_benchmark_runs_one_round_over_both_transports(tmp_path: Path) -> None:
    from benchmarks import bench_mcp

    out = tmp_path / "mcp.json"
    assert bench_mcp.main(["--rounds", "1", "--json", str(out)]) == 0

    report = json.loads(out.read_text())
    for transport in ("stdio", "http"):
        assert set(report[transport]["median_ms"]) == {"direct", "tool", "runner"}
        assert all(ms > 0 for ms in report[transport]["median_ms"].values())
