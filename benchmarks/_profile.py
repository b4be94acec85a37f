"""cProfile for every thread: the chat's tool runner and tools run outside the main thread.

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

__all__ = ["profile_sampler"]


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
            profile.snapshot_stats()
            if profile.stats:  # pyright: ignore[reportAttributeAccessIssue]
                stats.add(profile)  # pyright: ignore[reportArgumentType]
        return stats


def profile_sampler(
    make: Callable[[], Callable[[], Any]], n: int, out: Path, title: str, top: int = 35
) -> str:
    """Profile ``n`` samples of the sampler ``make()`` returns; write .prof and .txt."""
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
    out.parent.mkdir(parents=True, exist_ok=True)
    stats.dump_stats(str(out.with_suffix(".prof")))
    text = io.StringIO()
    text.write(f"{title}\n{n} samples after one warm-up; all threads started during the run.\n")
    for order in ("tottime", "cumulative"):
        text.write(f"\n==== top {top} by {order} ====\n")
        stats.stream = text  # pyright: ignore[reportAttributeAccessIssue]
        stats.sort_stats(order).print_stats(top)
    out.with_suffix(".txt").write_text(text.getvalue())
    return text.getvalue()
