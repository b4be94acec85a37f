"""What a conversation's requests would cost under Anthropic's prompt-caching rules.

:class:`PromptCacheMeter` reads request bodies as they are sent (``server.requests``
of a :class:`LoopbackServer`, or any Messages API bodies) and bills each one the way
the API does, in input-token units:

- A request is a sequence of blocks in cache order: tool definitions, system blocks,
  then each message's content blocks. A block carrying ``cache_control`` is a
  breakpoint (at most 4); the prefix that ends there is written to the cache.
- A request reads from the cache the longest prefix written by an earlier request that
  ends within the 20 blocks before one of its breakpoints (the API's lookback), matched
  byte for byte. Prefixes shorter than ``minimum_tokens`` are never cached.
- Billed: tokens read at 0.1x, tokens written (from the end of what was read up to
  the last breakpoint) at 1.25x (5-minute cache; 2x for the 1-hour one), and every
  other input token at 1x.

Tokens are estimated as UTF-8 bytes of a block's JSON divided by ``bytes_per_token``
(4 by default): the meter compares clients on the same conversation, where the
estimate's error is the same for all. Cache lifetimes are not modelled (a test or a
benchmark runs within minutes).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import orjson

__all__ = ["BilledRequest", "PromptCacheMeter"]

LOOKBACK_BLOCKS = 20


@dataclass(frozen=True, slots=True)
class BilledRequest:
    """One request, billed: its input tokens by kind, and its size on the wire."""

    uncached: int
    cache_read: int
    cache_write: int
    body_bytes: int
    write_multiplier: float = 1.25

    @property
    def billed(self) -> float:
        """Input-token units: uncached x1, writes at their multiplier, reads x0.1."""
        return self.uncached + self.write_multiplier * self.cache_write + 0.1 * self.cache_read

    @property
    def total(self) -> int:
        """Every input token of the request, however billed."""
        return self.uncached + self.cache_read + self.cache_write


@dataclass(slots=True)
class PromptCacheMeter:
    """Bills requests in order, keeping the cache the earlier ones wrote.

    Parameters
    ----------
    minimum_tokens
        The shortest prefix the API caches (1,024 tokens for most models).
    bytes_per_token
        The token estimate's divisor.
    """

    minimum_tokens: int = 1024
    bytes_per_token: float = 4.0
    requests: list[BilledRequest] = field(default_factory=lambda: [])
    _cache: set[bytes] = field(default_factory=lambda: set())

    def bill(self, body: Mapping[str, Any]) -> BilledRequest:
        """Bill one request body (and remember what it wrote to the cache)."""
        blocks = list(_blocks(body))
        tokens = [max(1, round(len(b.data) / self.bytes_per_token)) for b in blocks]
        prefixes = _prefix_hashes(b.data for b in blocks)
        breakpoints = [i for i, b in enumerate(blocks) if b.breakpoint][-4:]
        hit = -1
        for i in range(len(blocks) - 1, -1, -1):
            near = any(0 <= b - i <= LOOKBACK_BLOCKS for b in breakpoints)
            if near and prefixes[i] in self._cache:
                hit = i
                break
        read = sum(tokens[: hit + 1])
        cached = [b for b in breakpoints if sum(tokens[: b + 1]) >= self.minimum_tokens]
        self._cache.update(prefixes[b] for b in cached)
        last = cached[-1] if cached else -1
        written = sum(tokens[hit + 1 : last + 1]) if last > hit else 0
        billed = BilledRequest(
            uncached=sum(tokens) - read - written,
            cache_read=read,
            cache_write=written,
            body_bytes=len(orjson.dumps(body)),
            write_multiplier=2.0 if _ttl(blocks) == "1h" else 1.25,
        )
        self.requests.append(billed)
        return billed

    @property
    def billed(self) -> float:
        """Every request's billed input-token units, summed."""
        return sum(r.billed for r in self.requests)

    @property
    def body_bytes(self) -> int:
        """Every request's bytes on the wire, summed."""
        return sum(r.body_bytes for r in self.requests)


@dataclass(frozen=True, slots=True)
class _Block:
    data: bytes
    breakpoint: bool
    ttl: str | None


def _blocks(body: Mapping[str, Any]) -> Iterable[_Block]:
    """The request's blocks in the cache's order, each as canonical JSON bytes."""
    for tool in cast(list[dict[str, Any]], body.get("tools") or []):
        yield _block("tool", tool)
    system: Any = body.get("system") or []
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system:
        yield _block("system", block)
    for message in cast(list[dict[str, Any]], body.get("messages") or []):
        content: Any = message.get("content")
        items = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for item in cast(list[dict[str, Any]], items):
            yield _block(str(message.get("role")), item)


def _block(where: str, block: dict[str, Any]) -> _Block:
    control: Any = block.get("cache_control")
    # The same block with or without a breakpoint is the same prefix.
    plain = {k: v for k, v in block.items() if k != "cache_control"}
    data = orjson.dumps([where, plain], option=orjson.OPT_SORT_KEYS)
    ttl = cast(dict[str, Any], control).get("ttl") if isinstance(control, dict) else None
    return _Block(data, control is not None, ttl)


def _prefix_hashes(blocks: Iterable[bytes]) -> list[bytes]:
    running = hashlib.sha256()
    hashes: list[bytes] = []
    for data in blocks:
        running.update(len(data).to_bytes(8, "big") + data)
        hashes.append(running.copy().digest())
    return hashes


def _ttl(blocks: list[_Block]) -> str | None:
    return next((b.ttl for b in reversed(blocks) if b.breakpoint), None)
