"""A small HTTP/1.1 load client: many keep-alive connections, one latency per request.

Plain asyncio streams and a minimal parser (status line, ``Content-Length``), so that
the client's own cost per request stays small and the same for every server it
measures. Stdlib only.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Answer", "fetch_all", "percentile"]


@dataclass(frozen=True, slots=True)
class Answer:
    path: str
    status: int
    body: bytes
    seconds: float


async def _worker(
    host: str,
    port: int,
    paths: Sequence[str],
    queue: list[int],
    answers: list[Answer | None],
    head: bytes,
) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while queue:
            index = queue.pop()
            path = paths[index]
            started = time.perf_counter()
            writer.write(b"GET " + path.encode() + b" HTTP/1.1\r\n" + head)
            status_line = await reader.readline()
            length = 0
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b""):
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            body = await reader.readexactly(length) if length else b""
            seconds = time.perf_counter() - started
            answers[index] = Answer(path, int(status_line.split()[1]), body, seconds)
    finally:
        writer.close()


async def _fetch(
    host: str, port: int, paths: Sequence[str], concurrency: int, headers: Mapping[str, str]
) -> list[Answer]:
    head = f"Host: {host}:{port}\r\n".encode()
    head += b"".join(f"{k}: {v}\r\n".encode() for k, v in headers.items()) + b"\r\n"
    queue = list(range(len(paths)))[::-1]  # popped from the end: in order
    answers: list[Answer | None] = [None] * len(paths)
    workers = min(concurrency, len(paths))
    await asyncio.gather(
        *(_worker(host, port, paths, queue, answers, head) for _ in range(workers))
    )
    return [a for a in answers if a is not None]


def fetch_all(
    host: str,
    port: int,
    paths: Sequence[str],
    *,
    concurrency: int,
    headers: Mapping[str, str] | None = None,
) -> list[Answer]:
    """GET every path, ``concurrency`` at a time on as many keep-alive connections."""
    return asyncio.run(_fetch(host, port, paths, concurrency, headers or {}))


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]
