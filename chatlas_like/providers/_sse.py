"""Server-sent events, decoded from raw bytes as they arrive: every provider's streams.

Works on bytes (the protocol is UTF-8), so no text decoding or charset detection runs
per response; each ``data:`` payload goes to orjson as it is. ``data: [DONE]`` (OpenAI's
end-of-stream marker) ends nothing by itself and is skipped: a stream ends when its
body does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import orjson

from .._core.errors import StreamInterruptedError

__all__ = ["SSEDecoder", "parse_sse", "parse_sse_async"]

_DONE = b"[DONE]"


class SSEDecoder:
    """Server-sent events, as raw bytes arrive, to event dicts.

    Works on bytes (the protocol is UTF-8) so no text decoding or charset detection
    runs per response; ``data:`` payloads go to orjson as they are. Malformed data
    raises :class:`StreamInterruptedError`, ending the stream.
    """

    __slots__ = ("_data", "_rest")

    def __init__(self) -> None:
        self._rest = b""
        self._data: list[bytes] = []

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        """Take the next bytes of the body; the events they complete."""
        lines = (self._rest + chunk).split(b"\n") if self._rest else chunk.split(b"\n")
        self._rest = lines.pop()
        events: list[dict[str, Any]] = []
        data = self._data
        for line in lines:
            if line.endswith(b"\r"):
                line = line[:-1]
            if line:
                if line.startswith(b"data:"):
                    data.append(line[6:] if line.startswith(b"data: ") else line[5:])
            elif data:
                payload = data[0] if len(data) == 1 else b"\n".join(data)
                if payload != _DONE:
                    events.append(_decode_event(payload))
                data.clear()
        return events

    def flush(self) -> dict[str, Any] | None:
        """The pending event, if any, at the end of the body."""
        events = self.feed(b"\n\n") if (self._rest or self._data) else []
        return events[0] if events else None


def parse_sse(chunks: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    """Server-sent events to event dicts, from the body's chunks."""
    decoder = SSEDecoder()
    for chunk in chunks:
        yield from decoder.feed(chunk)
    event = decoder.flush()
    if event is not None:
        yield event


def _decode_event(data: bytes) -> dict[str, Any]:
    try:
        event = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        shown = data[:120].decode(errors="replace") + ("…" if len(data) > 120 else "")
        raise StreamInterruptedError(
            f"malformed event data from the provider ({e}): {shown}"
        ) from None
    if not isinstance(event, dict):
        shown = data[:120].decode(errors="replace")
        raise StreamInterruptedError(f"malformed event from the provider: {shown}")
    return event  # pyright: ignore[reportUnknownVariableType]


async def parse_sse_async(chunks: AsyncIterator[bytes]) -> AsyncIterator[dict[str, Any]]:
    """The async twin of :func:`parse_sse`."""
    decoder = SSEDecoder()
    async for chunk in chunks:
        for event in decoder.feed(chunk):
            yield event
    event = decoder.flush()
    if event is not None:
        yield event
