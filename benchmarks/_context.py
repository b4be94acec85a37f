"""What a row gets from the runner: the server, the chatlas worker, sizes, a log."""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._harness import Metrics, Sampler
from ._remote import Worker, WorkerError

__all__ = ["CHATLAS_BUDGET_S", "Context", "Samples"]

# A chatlas measurement that would take longer than this runs once, at reduced size.
CHATLAS_BUDGET_S = 60.0


@dataclass
class Samples:
    """Every sample of every side of one interleaved run, and why a side dropped out."""

    by_side: dict[str, list[Metrics]]
    errors: dict[str, str] = field(default_factory=lambda: {})
    reduced: dict[str, int] = field(default_factory=lambda: {})  # sides that took fewer samples

    def median(self, side: str, key: str = "wall", scale: float = 1.0) -> float | None:
        from ._harness import median

        values = [s[key] for s in self.by_side.get(side, []) if key in s]
        return median(values) * scale if values else None

    def note(self) -> str:
        """What went wrong or was cut, for the table's notes."""
        parts = [f"{side} failed: {why}" for side, why in self.errors.items()]
        parts += [
            f"{side}: {k} sample{'s' if k > 1 else ''} (over {CHATLAS_BUDGET_S:.0f} s budget)"
            for side, k in self.reduced.items()
        ]
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"samples": self.by_side, "errors": self.errors, "reduced": self.reduced}


@dataclass
class Context:
    url: str
    quick: bool = False
    worker: Worker | None = None
    chatlas_python: Path | None = None
    results: Path = Path("benchmarks/results")
    samples: int | None = None  # overrides every row's sample count (the smoke test uses 1)
    tracer_provider: bool = False  # row 3 adds ours with a tracer provider (--tracer-provider)
    notes: list[str] = field(default_factory=lambda: [])
    # --baseline: ours and the floor also run in a worker (today's code), so that the
    # three columns are measured alike against the worker running the older code.
    local: Worker | None = None

    def log(self, message: str) -> None:
        print(f"[bench] {message}", file=sys.stderr, flush=True)

    def n(self, full: int, quick: int) -> int:
        """How many samples: ``full``, ``quick`` with --quick, or the override."""
        if self.samples is not None:
            return self.samples
        return quick if self.quick else full

    def size(self, full: int, quick: int) -> int:
        return quick if self.quick else full

    @property
    def has_chatlas(self) -> bool:
        return self.worker is not None

    def remote(self, row: str, params: Mapping[str, Any], side: str = "chatlas") -> Sampler | None:
        """A sampler of ``side`` of ``row`` in the chatlas venv, or None without chatlas."""
        if self.worker is None:
            return None
        try:
            return self.worker.sampler(row, side, self.url, dict(params))
        except WorkerError as e:
            self.log(f"chatlas side of {row} failed to start: {_last_line(e)}")
            return None

    def side(
        self,
        row: str,
        side: str,
        factory: Callable[[str, dict[str, Any]], Sampler],
        params: Mapping[str, Any],
    ) -> Sampler:
        """``factory``'s sampler for ``side``: in this process, or in today's worker when
        the run compares against a baseline."""
        if self.local is None:
            return factory(self.url, dict(params))
        return self.local.sampler(row, side, self.url, dict(params))

    def call(self, row: str, fn: str, params: Mapping[str, Any], timeout: float = 300) -> Any:
        """Run ``row.fn(url, params)`` once in the chatlas venv (None without chatlas)."""
        if self.worker is None:
            return None
        return self.worker.call(row, fn, self.url, dict(params), timeout=timeout)

    def interleave(
        self,
        samplers: Mapping[str, Sampler | None],
        n: int,
        *,
        warmup: int = 1,
        optional: Collection[str] = ("chatlas",),
        budget_s: float = CHATLAS_BUDGET_S,
    ) -> Samples:
        """``n`` samples of each side, in rotating order, after ``warmup`` rounds.

        An optional side (chatlas) that fails is dropped, with the reason; one whose
        warm-up says ``n`` samples would take over ``budget_s`` takes fewer.
        """
        live: dict[str, Sampler] = {k: v for k, v in samplers.items() if v is not None}
        errors: dict[str, str] = {}
        quota = dict.fromkeys(live, n)
        for _ in range(warmup):
            for side, sampler in live.items():
                started = time.perf_counter()
                self._sample(side, sampler, optional, errors)
                took = time.perf_counter() - started
                if side in optional and took * n > budget_s:
                    quota[side] = min(quota[side], max(1, int(budget_s / took)))
        by_side: dict[str, list[Metrics]] = {side: [] for side in live}
        names = list(live)
        # What exists now lives through the run: freeze it, so the collection before
        # each sample (fairness: nobody pays for another side's garbage) stays cheap.
        gc.collect()
        gc.freeze()
        try:
            for i in range(n):
                for side in names[i % len(names) :] + names[: i % len(names)]:
                    if side in errors or len(by_side[side]) >= quota[side]:
                        continue
                    metrics = self._sample(side, live[side], optional, errors)
                    if metrics:
                        by_side[side].append(metrics)
        finally:
            gc.unfreeze()
        for side in errors:
            by_side[side] = []
        samples = Samples(by_side, errors)
        samples.reduced = {s: q for s, q in quota.items() if q < n and s not in errors}
        return samples

    def _sample(
        self, side: str, sampler: Sampler, optional: Collection[str], errors: dict[str, str]
    ) -> Metrics:
        if side in errors:
            return {}
        gc.collect()
        if side not in optional:
            return sampler()
        try:
            return sampler()
        except Exception as e:  # an optional side's failure is reported, not fatal
            errors[side] = _last_line(e)
            self.log(f"{side} dropped out: {errors[side]}")
            return {}


def _last_line(error: BaseException) -> str:
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__
