"""The runner's end of :mod:`benchmarks._worker`: samplers that run in another interpreter."""

from __future__ import annotations

import itertools
import json
import os
import selectors
import subprocess
import time
from pathlib import Path
from typing import IO, Any

from ._harness import REPO, Metrics, Sampler, end_process

__all__ = ["Worker", "WorkerError"]


class WorkerError(RuntimeError):
    """The worker failed, or did not answer in time."""


class Worker:
    """A :mod:`benchmarks._worker` process running ``python``; restarted after a failure."""

    def __init__(
        self,
        python: str | os.PathLike[str],
        log: Path,
        env: dict[str, str] | None = None,
        cwd: Path = REPO,
    ):
        self.python = str(python)
        self.log = log
        self.env = env or {}
        self.cwd = cwd
        self._proc: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self._ids = itertools.count(1)
        self._log_file: IO[bytes] | None = None
        self._live: list[int] = []

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            if self._log_file is None:
                self._log_file = open(self.log, "ab")  # noqa: SIM115
            self._proc = subprocess.Popen(
                [self.python, "-m", "benchmarks._worker"],
                cwd=self.cwd,
                env={**os.environ, **self.env},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._log_file,
            )
            self._buffer = b""
        return self._proc

    def request(self, message: dict[str, Any], timeout: float) -> Any:
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
        line = self._readline(proc, timeout)
        reply = json.loads(line)
        if not reply["ok"]:
            raise WorkerError(reply["error"])
        return reply["result"]

    def _readline(self, proc: subprocess.Popen[bytes], timeout: float) -> bytes:
        assert proc.stdout is not None
        deadline = time.monotonic() + timeout
        fd = proc.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    self.close()
                    raise WorkerError(f"no answer from the worker within {timeout:.0f} s")
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    self.close()
                    raise WorkerError(f"the worker exited; see {self.log}")
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def sampler(
        self, row: str, side: str, url: str, params: dict[str, Any], timeout: float = 300
    ) -> Sampler:
        ident = next(self._ids)
        message = {"op": "make", "id": ident, "row": row, "side": side, "url": url}
        self.request({**message, "params": params}, timeout)
        self._live.append(ident)

        def sample() -> Metrics:
            return self.request({"op": "sample", "id": ident}, timeout)

        return sample

    def call(
        self, row: str, fn: str, url: str, params: dict[str, Any], timeout: float = 300
    ) -> Any:
        return self.request(
            {"op": "call", "row": row, "fn": fn, "url": url, "params": params}, timeout
        )

    def drop_all(self) -> None:
        """Forget every sampler made so far (frees the worker's memory between rows)."""
        live, self._live = self._live, []
        if self._proc is None:
            return
        for ident in live:
            self.request({"op": "drop", "id": ident}, 60)

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.stdin is not None:
                proc.stdin.close()
            end_process(proc, 5)
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
