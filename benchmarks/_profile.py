"""cProfile for every thread, with the waiting set apart.

The chat's tool runner and tools run outside the main thread, so each thread gets its
own ``cProfile.Profile``. A client's wall-clock profile is mostly waiting (for the
server, on idle worker queues): the own time of the blocking calls (``poll``,
``acquire``, ``get``, ``recv``, ``sleep``...) is reported as "(waiting)", apart from
the work. (A CPU-clock timer would hide waits by itself, but at a microsecond a read
its overhead outweighs a tool round's real work.)

Python 3.11 has no ``threading.setprofile_all_threads``: threads started while the
profile is on get their own ``cProfile.Profile`` (through ``threading.setprofile``);
threads already running are not seen, so the row's sampler is made and warmed up
inside the profile, and the counts are cleared before the measured samples.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["collect", "compare", "write_profile"]


class AllThreads:
    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []
        self._lock = threading.Lock()

    def _install(self, *_: Any) -> None:
        sys.setprofile(None)
        profile = cProfile.Profile()
        with self._lock:
            self.profiles.append(profile)
        profile.enable()

    def start(self) -> None:
        threading.setprofile(self._install)
        self._install()

    def clear(self) -> None:
        with self._lock:
            for profile in self.profiles:
                profile.clear()

    def stop(self) -> pstats.Stats:
        threading.setprofile(None)  # pyright: ignore[reportArgumentType]
        self.profiles[0].disable()  # the main thread's; others stop with their threads
        with self._lock:
            profiles = list(self.profiles)
        stats = pstats.Stats(profiles[0])
        for profile in profiles[1:]:
            # Not create_stats(): it would disable from this thread and close the other
            # thread's open frames (an idle worker's wait) on this thread's clock.
            profile.snapshot_stats()
            if profile.stats:  # pyright: ignore[reportAttributeAccessIssue]
                stats.add(_Snapshot(profile.stats))  # pyright: ignore[reportAttributeAccessIssue,reportArgumentType]
        return stats


class _Snapshot:
    """Collected stats that ``pstats.Stats.add`` can take as they are."""

    def __init__(self, stats: dict[Any, Any]) -> None:
        self.stats = stats

    def create_stats(self) -> None:
        pass


def collect(make: Callable[[], Callable[[], Any]], n: int) -> pstats.Stats:
    """Profile ``n`` samples of the sampler ``make()`` returns (after one warm-up)."""
    threads = AllThreads()
    threads.start()
    try:
        sample = make()
        sample()  # warm-up: first imports, connections, worker threads
        threads.clear()
        for _ in range(n):
            sample()
    finally:
        stats = threads.stop()
    return stats


WAITS = (
    "'poll' of 'select.",
    "'select' of 'select.",
    "'acquire' of '_thread.",
    "'get' of '_queue.",
    "'recv' of '_socket.",
    "'recv_into' of '_socket.",
    "built-in method time.sleep",
    "'control' of 'select.kqueue",
)


def group_of(filename: str, function: str = "") -> str:
    """Where a function lives: our module, a third-party package, the stdlib, C, or a wait."""
    if filename == "~" or filename.startswith("<"):
        if any(w in function for w in WAITS):
            return "(waiting)"
        return "(builtins and C methods)"
    parts = Path(filename).parts
    if "site-packages" in parts:
        return parts[parts.index("site-packages") + 1]
    if "chatlas_like" in parts:
        return "/".join(parts[parts.index("chatlas_like") :]).removesuffix(".py")
    if "benchmarks" in parts:
        return "(the benchmark itself)"
    return f"stdlib {Path(filename).stem}"


def own_time_by_group(stats: pstats.Stats, n: int) -> dict[str, float]:
    """Own CPU milliseconds per sample, summed by :func:`group_of`."""
    groups: dict[str, float] = {}
    for (filename, _, function), row in stats.stats.items():  # pyright: ignore[reportAttributeAccessIssue,reportUnknownMemberType,reportUnknownVariableType]
        key = group_of(filename, function)  # pyright: ignore[reportUnknownArgumentType]
        groups[key] = groups.get(key, 0.0) + row[2] * 1e3 / n
    return groups


def compare(ours: pstats.Stats, floor: pstats.Stats, n: int, top: int = 25) -> str:
    """Own time per sample by group, ours against the floor, biggest differences first."""
    a, b = own_time_by_group(ours, n), own_time_by_group(floor, n)
    wait_a, wait_b = a.pop("(waiting)", 0.0), b.pop("(waiting)", 0.0)
    keys = sorted(set(a) | set(b), key=lambda k: -abs(a.get(k, 0.0) - b.get(k, 0.0)))
    lines = [
        f"{'own ms per sample (profiled)':<44} {'ours':>9} {'floor':>9} {'ours-floor':>11}",
        f"{'WORK (all but waiting)':<44} {sum(a.values()):>9.3f} {sum(b.values()):>9.3f} "
        f"{sum(a.values()) - sum(b.values()):>+11.3f}",
        f"{'(waiting)':<44} {wait_a:>9.3f} {wait_b:>9.3f} {wait_a - wait_b:>+11.3f}",
    ]
    for k in keys[:top]:
        x, y = a.get(k, 0.0), b.get(k, 0.0)
        lines.append(f"{k[:44]:<44} {x:>9.3f} {y:>9.3f} {x - y:>+11.3f}")
    return "\n".join(lines) + "\n"


def write_profile(
    stats: pstats.Stats, n: int, out: Path, title: str, preface: str = "", top: int = 35
) -> str:
    """Write ``stats`` as .prof and a .txt of the top functions; return the text."""
    out.parent.mkdir(parents=True, exist_ok=True)
    stats.dump_stats(str(out.with_suffix(".prof")))
    text = io.StringIO()
    text.write(
        f"{title}\n{n} samples after one warm-up; every thread started during the run; "
        "wall-clock timer, so blocking calls (poll, acquire, get, recv) hold the waits.\n"
    )
    if preface:
        text.write("\n" + preface)
    stats.stream = text  # pyright: ignore[reportAttributeAccessIssue]
    for order in ("tottime", "cumulative"):
        text.write(f"\n==== top {top} by {order} ====\n")
        stats.sort_stats(order).print_stats(top)
    text.write("\n==== callers of the top 8 by own time ====\n")
    stats.sort_stats("tottime").print_callers(8)
    out.with_suffix(".txt").write_text(text.getvalue())
    return text.getvalue()
