"""When to send a failed model call again, and after how long (pure; the drivers sleep).

Retried: 429, 5xx, 529 and connection errors, before any part of an answer arrived, so
a retry never duplicates a turn or a tool call. The wait honours the provider's
``retry-after`` / ``retry-after-ms``; otherwise it backs off exponentially with jitter.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from .._core.errors import ProviderError

__all__ = ["retry_delay"]

INITIAL_DELAY = 0.5
MAX_DELAY = 30.0


def retry_delay(
    attempt: int,
    error: BaseException,
    max_retries: int,
    rng: Callable[[], float] = random.random,
) -> float | None:
    """Seconds to wait before retry number ``attempt + 1``, or None to give up."""
    if attempt >= max_retries or not isinstance(error, ProviderError) or not error.retryable:
        return None
    if error.retry_after is not None:
        return max(0.0, min(error.retry_after, MAX_DELAY))
    backoff = min(INITIAL_DELAY * 2**attempt, MAX_DELAY)
    return backoff * (0.5 + rng() / 2)
