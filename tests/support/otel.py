"""Set or clear OpenTelemetry's process-wide providers in tests.

The API lets a process set its global tracer and meter providers once. Tests reset the
two globals behind each, as OpenTelemetry's own test utilities do, so that a test that
needs a provider has one and every other test runs with none, the default.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.util._once import Once

__all__ = ["set_meter_provider", "set_tracer_provider"]


def set_tracer_provider(provider: Any) -> None:
    """Make ``provider`` the global tracer provider; None: none (the API's proxy)."""
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace._TRACER_PROVIDER = None
    if provider is not None:
        trace.set_tracer_provider(provider)


def set_meter_provider(provider: Any) -> None:
    """Make ``provider`` the global meter provider; None: none (the API's proxy)."""
    internal = metrics._internal
    internal._METER_PROVIDER_SET_ONCE = Once()
    internal._METER_PROVIDER = None
    if provider is not None:
        metrics.set_meter_provider(provider)
