"""The benchmark runner: ``python -m benchmarks.run`` (``make bench``).

Measures chatlas_like ("ours") against the floor (the raw ``anthropic`` SDK doing the
same exchange by hand, or whatever the row names) and chatlas 0.23.0, side by side in
one run: samples interleaved (A B C, B C A, ...), medians reported, ratios to the
floor judged against the targets of the performance issue. Every side talks to one
loopback server in its own process (:mod:`benchmarks._server`); the chatlas side runs
in a scratch venv the runner makes (:mod:`benchmarks._chatlas_env`) through a worker
process (:mod:`benchmarks._worker`).

Prints one table and writes ``benchmarks/results/latest.json``. Options::

    --quick            small sizes and few samples (a smoke run, about a minute)
    --only ROW         rows by number or name, or bench_format / bench_store /
                       bench_read_api (repeat or comma-separate); without it every
                       row and script runs
    --no-chatlas       skip the chatlas column (no venv is made)
    --no-external      skip benchmarks/bench_format.py, bench_store.py, bench_read_api.py
    --profile ROW      profile our side of ROW under cProfile (all threads) into results/
    --samples N        every row takes N samples (the smoke test uses 1)
    --tracer-provider  row 3 also runs ours with an OpenTelemetry tracer provider
                       installed, interleaved with ours without (the tracing overhead)
    --json PATH        where to write the JSON (default benchmarks/results/latest.json)
    --baseline REF     the third column runs chatlas_like as of git REF instead of chatlas
                       (rows 3-7: before and after a change, interleaved in one run)

Other scripts (``bench_format.py``, ``bench_store.py``, ``bench_read_api.py``) are run
when present; see ``benchmarks/README.md`` for what they receive and how their JSON is
merged.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from ._context import Context
from ._harness import REPO, Line

__all__ = ["EXTERNAL_SCRIPTS", "ROWS", "main"]

# The rows, in table order: modules of benchmarks.rows.
ROWS = (
    "import_time",
    "first_chat",
    "tool_round",
    "streaming",
    "long_chat",
    "echo",
    "parallel_tools",
    "big_result",
    "parallel_chat",
    "shared_store",
    "long_context",
    "openai_chat",
)
# Scripts written separately; run as subprocesses when present, their JSON merged.
EXTERNAL_SCRIPTS = ("bench_format", "bench_store", "bench_read_api")
EXTERNAL_TIMEOUT_S = 300
RESULTS = REPO / "benchmarks" / "results"


def _row_module(name: str) -> ModuleType:
    return importlib.import_module(f"benchmarks.rows.{name}")


def _wanted(only: Sequence[str]) -> list[str]:
    return [w.strip() for item in only for w in item.split(",") if w.strip()]


def select_rows(only: Sequence[str]) -> list[str]:
    """Row module names for ``--only`` values (numbers or names); all rows by default."""
    wanted = [w for w in _wanted(only) if w not in EXTERNAL_SCRIPTS]
    if not wanted:
        return [] if _wanted(only) else list(ROWS)
    chosen: list[str] = []
    for w in wanted:
        match = [n for n in ROWS if w in (n, _row_module(n).ROW)]
        if not match:
            known = ", ".join([*(f"{_row_module(n).ROW}={n}" for n in ROWS), *EXTERNAL_SCRIPTS])
            raise SystemExit(f"unknown row {w!r}; rows: {known}")
        chosen.extend(m for m in match if m not in chosen)
    return chosen


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--quick", action="store_true", help="small sizes, few samples")
    parser.add_argument("--only", action="append", default=[], metavar="ROW")
    parser.add_argument("--no-chatlas", action="store_true")
    parser.add_argument("--no-external", action="store_true")
    parser.add_argument("--profile", action="append", default=[], metavar="ROW")
    parser.add_argument("--samples", type=int, default=None)
    parser.add_argument("--tracer-provider", action="store_true")
    parser.add_argument("--json", type=Path, default=RESULTS / "latest.json")
    parser.add_argument("--baseline", metavar="REF", default=None)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    _compile_package()
    if args.profile:
        return _profile_rows(select_rows(args.profile), quick=args.quick)
    rows = select_rows(args.only)
    external = [] if args.no_external else [s for s in EXTERNAL_SCRIPTS if s in _wanted(args.only)]
    started = time.perf_counter()
    report = run_rows(
        rows,
        quick=args.quick,
        chatlas=not args.no_chatlas,
        external=external if args.only or args.no_external else list(EXTERNAL_SCRIPTS),
        samples=args.samples,
        tracer_provider=args.tracer_provider,
        baseline=args.baseline,
    )
    report["meta"]["wall_s"] = round(time.perf_counter() - started, 1)
    print(format_table(report))
    print(f"\nwall time {report['meta']['wall_s']:.0f} s; JSON in {_shown(args.json)}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1, default=str) + "\n")
    return 0


def _compile_package() -> None:
    """Byte-compile chatlas_like, as any installed package (the SDK included) is.

    An editable checkout under ``PYTHONDONTWRITEBYTECODE=1`` (set on these machines)
    would otherwise compile every module from source on each cold import, a cost the
    SDK's precompiled site-packages never pay, and the import rows would compare unlike
    things.
    """
    import compileall

    import chatlas_like

    compileall.compile_dir(str(Path(chatlas_like.__file__).parent), quiet=1)


def run_rows(
    rows: Sequence[str],
    *,
    quick: bool,
    chatlas: bool,
    external: Sequence[str] = EXTERNAL_SCRIPTS,
    samples: int | None = None,
    tracer_provider: bool = False,
    baseline: str | None = None,
) -> dict[str, Any]:
    """Run ``rows`` (and the external scripts); the report as a JSON-able dict.

    With ``baseline`` (a git ref), the chatlas column is chatlas_like as of that ref
    instead, run by the same worker protocol (rows 3-7, which sample it remotely).
    """
    from ._chatlas_env import ensure_chatlas_venv
    from ._remote import Worker
    from ._server import ServerProcess, fetch_log

    RESULTS.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"meta": _meta(quick), "lines": [], "errors": [], "external": {}}
    chatlas_python: Path | None = None
    if chatlas:
        try:
            chatlas_python = ensure_chatlas_venv(log=RESULTS / "chatlas-venv.log")
        except (OSError, subprocess.CalledProcessError) as e:
            report["errors"].append(f"chatlas venv: {e} (see results/chatlas-venv.log)")
            print(f"[bench] no chatlas column: {e}", file=sys.stderr)
    worker = Worker(chatlas_python, RESULTS / "chatlas-worker.log") if chatlas_python else None
    if baseline is not None:
        worker = _baseline_worker(baseline)
        report["meta"]["baseline"] = _git("rev-parse", "--short", baseline)
    report["meta"]["chatlas_python"] = str(chatlas_python) if chatlas_python else None
    local = Worker(sys.executable, RESULTS / "today-worker.log") if baseline else None
    try:
        with ServerProcess() as url:
            ctx = Context(
                url=url,
                quick=quick,
                worker=worker,
                chatlas_python=chatlas_python,
                results=RESULTS,
                samples=samples,
                tracer_provider=tracer_provider,
                local=local,
            )
            for name in rows:
                module = _row_module(name)
                ctx.log(f"row {module.ROW} {name} ...")
                row_start = time.perf_counter()
                try:
                    lines: list[Line] = module.run(ctx)
                except Exception:
                    error = traceback.format_exc()
                    report["errors"].append(f"row {module.ROW} {name}: {error}")
                    ctx.log(f"row {module.ROW} {name} FAILED:\n{error}")
                    lines = []
                finally:
                    for used in (worker, ctx.local):
                        if used is not None:
                            _drop(used, ctx)
                    fetch_log(url)  # forget the requests of this row
                took = time.perf_counter() - row_start
                report["meta"].setdefault("row_wall_s", {})[name] = round(took, 1)
                report["lines"].extend(line.to_json() for line in lines)
                _save_partial(report)
            for script in external:
                _run_external(script, report, quick=quick, url=url, chatlas=chatlas_python)
                _save_partial(report)
            report["meta"]["loadavg_end"] = list(os.getloadavg())
    finally:
        if worker is not None:
            worker.close()
        if local is not None:
            local.close()
    return report


def _baseline_worker(ref: str) -> Any:
    """A worker whose "chatlas" side runs our side of a row on chatlas_like as of ``ref``.

    The package at ``ref`` is unpacked into a folder of its own, and the worker starts
    there with the repository after it on the path, so it imports the old package and
    today's rows.
    """
    from ._remote import Worker

    sha = _git("rev-parse", "--short", ref)
    shadow = RESULTS / f"baseline-{sha}"
    if not (shadow / "chatlas_like").is_dir():
        shadow.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", sha, "chatlas_like"], cwd=REPO, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(shadow)], input=archive, check=True)
        import compileall

        compileall.compile_dir(str(shadow / "chatlas_like"), quiet=1)
    return Worker(
        sys.executable,
        RESULTS / f"baseline-{sha}-worker.log",
        # The old package first (the worker's folder), today's benchmarks/ after it: no
        # link back into the repository (setuptools would walk it for packages).
        env={"BENCH_SIDE_ALIAS": "chatlas=ours", "PYTHONPATH": str(REPO)},
        cwd=shadow,
    )


def _save_partial(report: dict[str, Any]) -> None:
    """The report so far, so that a run stopped part way keeps the rows it measured."""
    partial = RESULTS / "partial.json"
    partial.write_text(json.dumps(report, indent=1, default=str) + "\n")


def _drop(worker: Any, ctx: Context) -> None:
    from ._remote import WorkerError

    try:
        worker.drop_all()
    except WorkerError as e:
        ctx.log(f"chatlas worker: {e}")


def _meta(quick: bool) -> dict[str, Any]:
    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "commit": _git("rev-parse", "--short", "HEAD"),
        "dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "loadavg_start": list(os.getloadavg()),
        "quick": quick,
    }


def _git(*args: str) -> str:
    try:
        return subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        return ""


# -- scripts written separately -------------------------------------------------------------


def _run_external(
    script: str, report: dict[str, Any], *, quick: bool, url: str, chatlas: Path | None
) -> None:
    """Run ``benchmarks/<script>.py`` if present and merge the JSON it gives back.

    It gets ``BENCH_JSON`` (a path to write its JSON to), ``BENCH_QUICK`` ("1" or ""),
    ``BENCH_CHATLAS_PYTHON`` (the chatlas venv's interpreter or "") and
    ``BENCH_SERVER_URL``; when it writes nothing there, the last JSON line it prints
    is taken.
    """
    path = REPO / "benchmarks" / f"{script}.py"
    if not path.exists():
        return
    print(f"[bench] {script} ...", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        env = {
            **os.environ,
            "BENCH_JSON": str(out),
            "BENCH_QUICK": "1" if quick else "",
            "BENCH_CHATLAS_PYTHON": str(chatlas or ""),
            "BENCH_SERVER_URL": url,
        }
        started = time.perf_counter()
        try:
            done = subprocess.run(
                [sys.executable, "-m", f"benchmarks.{script}"],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=EXTERNAL_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired as e:
            report["errors"].append(f"{script}: killed after {EXTERNAL_TIMEOUT_S} s")
            report["external"][script] = {"stdout": str(e.stdout or "")[-4000:]}
            return
        took = round(time.perf_counter() - started, 1)
        payload: Any = None
        if out.exists() and out.stat().st_size:
            payload = json.loads(out.read_text())
        else:
            from ._harness import last_json

            try:
                payload = last_json(done.stdout)
            except ValueError:
                payload = None
    report["meta"].setdefault("row_wall_s", {})[script] = took
    if done.returncode != 0 or payload is None:
        report["errors"].append(
            f"{script}: exit {done.returncode}, no JSON; stderr tail: {done.stderr[-1500:]}"
        )
        report["external"][script] = {"stdout": done.stdout[-4000:]}
        return
    report["external"][script] = payload
    report["lines"].extend(_external_lines(script, payload))


_KEYS = {
    "row": ("row", "id"),
    "what": ("what", "name", "label", "case", "title"),
    "unit": ("unit", "units"),
    "ours": ("ours", "chatlas_like", "value"),
    "floor": ("floor", "baseline", "orjson", "pandas"),
    "chatlas": ("chatlas",),
    "target": ("target",),
    "met": ("met", "ok", "passed"),
    "note": ("note", "notes"),
}


def _external_lines(script: str, payload: Any) -> list[dict[str, Any]]:
    """Table lines from another script's JSON: a list of dicts or ``{"lines": [...]}``."""
    items: Any = payload
    if isinstance(payload, dict):
        for key in ("lines", "rows", "results"):
            if isinstance(payload.get(key), list):  # pyright: ignore[reportUnknownMemberType]
                items = payload[key]
                break
    if not isinstance(items, list):
        return []
    lines: list[dict[str, Any]] = []
    for item in items:  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(item, dict):
            continue
        line: dict[str, Any] = {"source": script}
        for key, names in _KEYS.items():
            line[key] = next((item[n] for n in names if n in item), None)  # pyright: ignore[reportUnknownArgumentType]
        line["row"] = str(line["row"] or script)
        line["what"] = str(line["what"] or "")
        line["unit"] = str(line["unit"] or "")
        line["ratio_ours"] = _number(item.get("ratio_ours", item.get("ratio")))  # pyright: ignore[reportUnknownMemberType,reportUnknownArgumentType]
        line["ratio_chatlas"] = _number(item.get("ratio_chatlas"))  # pyright: ignore[reportUnknownMemberType,reportUnknownArgumentType]
        for side in ("ours", "floor", "chatlas"):
            line[side] = _number(line[side])
        if line["ratio_ours"] is None and line["ours"] and line["floor"]:
            line["ratio_ours"] = line["ours"] / line["floor"]
        if line["ratio_chatlas"] is None and line["chatlas"] and line["floor"]:
            line["ratio_chatlas"] = line["chatlas"] / line["floor"]
        line["data"] = item
        lines.append(line)
    return lines


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


# -- the table ------------------------------------------------------------------------------

HEADERS = (
    "row",
    "what",
    "ours",
    "floor",
    "chatlas",
    "ours/floor",
    "chatlas/floor",
    "target",
    "met",
)


def _value(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if (float(value).is_integer() and abs(value) < 1e6) or abs(value) >= 100:
        text = f"{value:,.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"
    return f"{text} {unit}".strip()


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _met(value: Any) -> str:
    return {True: "yes", False: "NO", None: "-"}.get(value, str(value))


def format_table(report: dict[str, Any]) -> str:
    """The report as a plain-text table, notes below it."""
    before = report["meta"].get("baseline")
    headers = HEADERS
    if before:  # --baseline: the third column is chatlas_like at that commit
        headers = tuple(h.replace("chatlas", f"before {before}") for h in HEADERS)
    rows: list[tuple[str, ...]] = [headers]
    notes: list[str] = []
    for line in report["lines"]:
        unit = line.get("unit") or ""
        what = line["what"]
        if line.get("note"):
            notes.append(line["note"])
            what = f"{what} [{len(notes)}]"
        rows.append(
            (
                str(line["row"]),
                what,
                _value(line.get("ours"), unit),
                _value(line.get("floor"), unit),
                _value(line.get("chatlas"), unit),
                _ratio(line.get("ratio_ours")),
                _ratio(line.get("ratio_chatlas")),
                str(line.get("target") or ""),
                _met(line.get("met")),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADERS))]
    right = {2, 3, 4, 5, 6}

    def fmt(r: tuple[str, ...]) -> str:
        cells = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ]
        return " | ".join(cells).rstrip()

    out = [fmt(rows[0]), "-+-".join("-" * w for w in widths)]
    out.extend(fmt(r) for r in rows[1:])
    meta = report["meta"]
    out.append("")
    out.append(
        f"commit {meta.get('commit')}{' (dirty)' if meta.get('dirty') else ''}, Python "
        f"{meta.get('python')}, {meta.get('cpus')} CPUs, load {meta.get('loadavg_start', [0])[0]:.2f}"
        f"{', QUICK sizes' if meta.get('quick') else ''}"
    )
    out.extend(f"[{i}] {n}" for i, n in enumerate(notes, 1))
    for error in report["errors"]:
        out.append(f"ERROR {error.strip().splitlines()[0]} ... {error.strip().splitlines()[-1]}")
    return "\n".join(out)


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


# -- profiles -------------------------------------------------------------------------------


def _profile_rows(rows: Sequence[str], *, quick: bool) -> int:
    from ._profile import collect, compare, write_profile
    from ._server import ServerProcess

    with ServerProcess() as url:
        for name in rows:
            module = _row_module(name)
            out = RESULTS / f"profile-{module.ROW}-{name}"
            custom = getattr(module, "profile_row", None)
            if custom is not None:
                text = custom(url, out, quick)
            elif getattr(module, "profile", None) is None:
                print(f"[bench] row {module.ROW} {name} has no profile", file=sys.stderr)
                continue
            else:
                params = dict(getattr(module, "PROFILE_PARAMS", {}))
                n = 3 if quick else int(getattr(module, "PROFILE_SAMPLES", 20))
                title = f"row {module.ROW} {name}: our side, params {params}"
                ours = collect(lambda m=module, p=params: m.profile(url, p), n)
                preface = ""
                if getattr(module, "floor", None) is not None:
                    floor = collect(lambda m=module, p=params: m.floor(url, p), n)
                    write_profile(floor, n, Path(f"{out}-floor"), title.replace("our", "the floor"))
                    preface = "==== ours against the floor (its profile: *-floor.txt) ====\n"
                    preface += compare(ours, floor, n)
                text = write_profile(ours, n, out, title, preface)
            print("\n".join(text.splitlines()[:70]))
            print(f"[bench] profile written to {_shown(out)}.txt (and .prof)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
