"""The crash battery: a durable turn killed with SIGKILL at each point, recovered by a new process.

``tests/scripts/durable_crash_script.py`` runs in two processes. The first starts turn 0 of one
conversation per case, each with a side-effecting tool (``charge``) and an idempotent
one (``lookup``) that run concurrently; every conversation holds still at its case's
point, and then the process sends itself SIGKILL. The second, on the same database,
recovers every turn at ``DBOS.launch()`` and reports, per case, the answer, the history,
the tools' own logs and the result store, after one more ``chat()`` on the
conversation.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chatlas_like.durable import INTERRUPTED_BY_CRASH

pytest_plugins = ["tests.support.postgres"]
pytest.importorskip("dbos")

SCRIPT = Path(__file__).parent.parent / "scripts" / "durable_crash_script.py"
ANSWER = "Charging and checking.\n\nAll done: card 42 was charged."
TIMEOUT = 180
SQLITE_CASES = (
    "before_model",
    "mid_stream",
    "before_tools",
    "charge",
    "lookup",
    "after_tools",
    "final_answer",
    "tool_gone",
    "options",
)
POSTGRES_CASES = ("lookup", "after_tools")


class Battery:
    """The two processes of a battery: the crash, and the recovery's report per case."""

    def __init__(
        self, crashed: subprocess.CompletedProcess[str], recovered: subprocess.CompletedProcess[str]
    ) -> None:
        self.crashed = crashed
        self.recovered = recovered

    def __getitem__(self, case: str) -> Case:
        assert self.crashed.returncode == -signal.SIGKILL, self.crashed.stderr
        assert self.recovered.returncode == 0, self.recovered.stderr
        reports = json.loads(self.recovered.stdout.strip().splitlines()[-1])
        return Case(reports[case], self.recovered.stderr)


class Case:
    """What the recovering process reported of one case."""

    def __init__(self, report: dict[str, Any], stderr: str) -> None:
        self.report = report
        self.stderr = stderr

    def runs(self, tool: str) -> tuple[int, int]:
        """How often ``tool`` started and how often it finished, by its own log."""
        lines: list[str] = self.report["logs"][tool]
        return (
            sum(line.startswith("start") for line in lines),
            sum(line.startswith("done") for line in lines),
        )

    def outcome(self, tool: str) -> tuple[str, str]:
        [result] = [r for t in self.report["turns"] for r in t["results"] if r["name"] == tool]
        return result["outcome"], result["error"]


def _run(
    mode: str, url: str, root: Path, cases: tuple[str, ...]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), mode, url, str(root), ",".join(cases)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def _battery(url: str, root: Path, cases: tuple[str, ...]) -> Battery:
    """Every case crashed by one SIGKILL, then recovered by one new process."""
    crashed = _run("crash", url, root, cases)
    return Battery(crashed, _run("recover", url, root, cases))


@pytest.fixture(scope="module")
def sqlite_battery(tmp_path_factory: pytest.TempPathFactory) -> Battery:
    root = tmp_path_factory.mktemp("durable-battery")
    return _battery(f"sqlite:///{root / 'dbos.sqlite'}", root, SQLITE_CASES)


@pytest.fixture(scope="module")
def postgres_battery(tmp_path_factory: pytest.TempPathFactory, postgres_server: Any) -> Battery:
    root = tmp_path_factory.mktemp("durable-battery-pg")
    url = postgres_server.create_database().replace("postgresql://", "postgresql+psycopg://", 1)
    return _battery(url, root, POSTGRES_CASES)


def _check_ends_well(case: Case) -> None:
    """The answer, the history an uninterrupted run makes, the store, the next turn."""
    report = case.report
    assert report["status"] == "SUCCESS"
    assert report["answer"] == ANSWER
    assert report["thanks"] == "You're welcome."
    turns = report["turns"]
    assert [t["role"] for t in turns] == ["user", "assistant"] * 3
    assert turns[1]["requests"] == ["charge", "lookup"]
    assert [r["name"] for r in turns[2]["results"]] == ["charge", "lookup"]
    assert turns[3]["text"] == "All done: card 42 was charged."
    # One record per call, whatever the crash point (a replay writes the same ones).
    assert sorted(r["sequence"] for r in report["records"]) == [1, 2]


@pytest.mark.parametrize("point", ["before_model", "mid_stream", "before_tools"])
def test_a_turn_killed_before_any_tool_started_runs_each_tool_once(
    sqlite_battery: Battery, point: str
) -> None:
    case = sqlite_battery[point]
    _check_ends_well(case)
    assert case.runs("charge") == (1, 1)
    assert case.runs("lookup") == (1, 1)
    assert case.outcome("charge") == ("success", "")
    assert not any(r["is_error"] for r in case.report["records"])


@pytest.mark.parametrize("point", ["after_tools", "final_answer"])
def test_a_turn_killed_after_its_tools_finished_replays_their_results(
    sqlite_battery: Battery, point: str
) -> None:
    case = sqlite_battery[point]
    _check_ends_well(case)
    assert case.runs("charge") == (1, 1)
    assert case.runs("lookup") == (1, 1)
    assert case.outcome("charge") == ("success", "")
    assert case.outcome("lookup") == ("success", "")


def test_a_side_effecting_tool_killed_mid_call_is_answered_as_interrupted_not_run_again(
    sqlite_battery: Battery,
) -> None:
    case = sqlite_battery["charge"]
    _check_ends_well(case)
    assert case.runs("charge") == (1, 0)
    assert case.outcome("charge") == ("error", INTERRUPTED_BY_CRASH)
    assert case.runs("lookup") == (1, 1)  # it had finished: replayed, not run again
    assert sorted(r["is_error"] for r in case.report["records"]) == [False, True]


def test_an_idempotent_tool_killed_mid_call_runs_again_beside_the_interrupted_one(
    sqlite_battery: Battery,
) -> None:
    case = sqlite_battery["lookup"]
    _check_ends_well(case)
    assert case.runs("lookup") == (2, 1)
    assert case.outcome("lookup") == ("success", "")
    assert case.runs("charge") == (1, 0)  # it was running too: not run again
    assert case.outcome("charge") == ("error", INTERRUPTED_BY_CRASH)


def test_register_tool_durable_decides_a_rerun_over_the_annotations(
    sqlite_battery: Battery,
) -> None:
    case = sqlite_battery["options"]  # both killed mid-call
    _check_ends_well(case)
    assert case.runs("lookup") == (2, 1)  # durable="rerun", no annotations
    assert case.outcome("lookup") == ("success", "")
    assert case.runs("charge") == (1, 0)  # durable="once" despite idempotentHint
    assert case.outcome("charge") == ("error", INTERRUPTED_BY_CRASH)


def test_a_tool_gone_at_recovery_is_named_in_a_warning_and_nothing_recorded_is_lost(
    sqlite_battery: Battery,
) -> None:
    case = sqlite_battery["tool_gone"]
    _check_ends_well(case)
    warning = case.stderr
    assert "DurableWarning" in warning and "`charge`" in warning
    assert "not registered in this process" in warning
    assert case.outcome("charge") == ("error", INTERRUPTED_BY_CRASH)
    assert case.outcome("lookup") == ("success", "")  # the recorded result, replayed
    assert case.runs("lookup") == (1, 1)


@pytest.mark.postgres
@pytest.mark.parametrize("point", POSTGRES_CASES)
def test_the_same_crash_recovers_on_postgresql(postgres_battery: Battery, point: str) -> None:
    case = postgres_battery[point]
    _check_ends_well(case)
    assert case.runs("lookup") == ((2, 1) if point == "lookup" else (1, 1))
    assert case.runs("charge") == ((1, 0) if point == "lookup" else (1, 1))


@pytest.mark.postgres
def test_queued_turns_of_a_killed_worker_are_finished_by_the_others_without_running_twice(
    postgres_server: Any,
) -> None:
    # The scale-out benchmark, small: two worker processes on PostgreSQL, one SIGKILLed
    # once half the turns are done, its turns resumed for the other (recover_executor).
    from benchmarks import bench_durable

    report = bench_durable.scale(8, runs=((2, True),), postgres=postgres_server)
    run = report["2 workers"]
    assert run["answered"] == 8
    assert run["charge_starts"] == 8  # a call the dead worker had started is not run again
    assert run["worker_killed"] == "w1"
