"""Row 1: ``import chatlas_like`` cold vs ``import chatlas`` cold, and what each imports.

Each sample is a fresh interpreter: ``python -X importtime -c "import PKG"``. The
package's own line of the importtime report is the import time; the process wall
time less an empty interpreter's (sampled alongside) is the other view.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .._context import Context
from .._harness import Line, Metrics, Sampler, run_python

ROW = "1"
NAME = "import_time"
HEAVY = ("anthropic", "openai", "pandas", "numpy", "pydantic", "rich", "htmltools")
TARGET_S = 0.15


def importtime_us(stderr: str, package: str) -> float:
    """The cumulative microseconds of ``package``'s top-level line in -X importtime output."""
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        fields = line.split("|")
        if len(fields) == 3 and fields[2].rstrip() == f" {package}":
            return float(fields[1])
    raise ValueError(f"{package} not in the importtime report")


def sampler(python: str | Path, package: str) -> Sampler:
    def sample() -> Metrics:
        wall, done = run_python(python, f"import {package}", flags=("-X", "importtime"))
        return {"wall": wall, "import": importtime_us(done.stderr, package) / 1e6}

    return sample


def empty(python: str | Path) -> Sampler:
    def sample() -> Metrics:
        wall, _ = run_python(python, "pass")
        return {"wall": wall}

    return sample


def heavy_imports(python: str | Path, package: str) -> list[str]:
    code = (
        f"import sys, json, {package}; "
        f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))"
    )
    _, done = run_python(python, code)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(ctx: Context) -> list[Line]:
    ours_py = sys.executable
    samplers: dict[str, Sampler | None] = {
        "ours": sampler(ours_py, "chatlas_like"),
        "empty": empty(ours_py),
    }
    if ctx.chatlas_python is not None:
        samplers["chatlas"] = sampler(ctx.chatlas_python, "chatlas")
        samplers["chatlas_empty"] = empty(ctx.chatlas_python)
    samples = ctx.interleave(samplers, ctx.n(9, 3), optional=())
    heavy = {"ours": heavy_imports(ours_py, "chatlas_like")}
    if ctx.chatlas_python is not None:
        heavy["chatlas"] = heavy_imports(ctx.chatlas_python, "chatlas")

    def net(side: str, base: str) -> float | None:
        a, b = samples.median(side), samples.median(base)
        return None if a is None or b is None else a - b

    data: dict[str, Any] = {**samples.to_json(), "heavy": heavy}
    return [
        Line(
            ROW,
            "import, cold (-X importtime)",
            "s",
            ours=samples.median("ours", "import"),
            chatlas=samples.median("chatlas", "import"),
            target=f"<= {TARGET_S} s",
            target_value=TARGET_S,
            data=data,
        ),
        Line(
            ROW,
            "import, cold (process wall - empty python)",
            "s",
            ours=net("ours", "empty"),
            chatlas=net("chatlas", "chatlas_empty"),
            target=f"<= {TARGET_S} s",
            target_value=TARGET_S,
        ),
        Line(
            ROW,
            "heavy modules loaded by the import",
            "mods",
            ours=len(heavy["ours"]),
            chatlas=len(heavy["chatlas"]) if "chatlas" in heavy else None,
            target="none of " + "/".join(h for h in HEAVY if h != "openai"),
            met=not heavy["ours"],
            note="loaded: ours "
            + (", ".join(heavy["ours"]) or "none")
            + (
                "; chatlas " + (", ".join(heavy["chatlas"]) or "none") if "chatlas" in heavy else ""
            ),
        ),
    ]


def profile_row(url: str, out: Path, quick: bool) -> str:
    """The importtime report of ``import chatlas_like``, biggest self times first."""
    _, done = run_python(sys.executable, "import chatlas_like", flags=("-X", "importtime"))
    rows: list[tuple[int, int, str]] = []
    for line in done.stderr.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if len(fields) == 3 and fields[0].strip().isdigit():
            rows.append((int(fields[0]), int(fields[1]), fields[2].rstrip()))
    total = importtime_us(done.stderr, "chatlas_like")
    lines = [f"row 1: python -X importtime -c 'import chatlas_like': {total / 1e3:.1f} ms", ""]
    lines.append("top 30 modules by self time (us):")
    lines += [f"{s:>8} {c:>9}  {n.strip()}" for s, c, n in sorted(rows, reverse=True)[:30]]
    lines += ["", "the import tree (self, cumulative, module):"]
    lines += [f"{s:>8} {c:>9} {n}" for s, c, n in rows]
    text = "\n".join(lines) + "\n"
    out.with_suffix(".txt").write_text(text)
    return text
