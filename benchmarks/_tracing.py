"""A tracer provider switched on around one side's samples (``--tracer-provider``).

What an application in production installs, minus the network: the SDK's
``TracerProvider`` with a ``BatchSpanProcessor`` (spans queued, exported from its own
thread) and an exporter that keeps nothing. The OpenTelemetry API lets a process set
its global provider once; to interleave samples with and without a provider in one
run, the two globals are reset around each sample, as OpenTelemetry's own test
utilities do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["with_tracer_provider"]


def with_tracer_provider(sampler: Callable[[], Any]) -> Callable[[], Any]:
    """``sampler`` run with the provider installed, and removed again after it."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        SpanExporter,
        SpanExportResult,
    )
    from opentelemetry.util._once import Once

    class Discard(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Discard()))

    def install(value: Any) -> None:
        trace._TRACER_PROVIDER_SET_ONCE = Once()  # pyright: ignore[reportPrivateUsage]
        trace._TRACER_PROVIDER = None  # pyright: ignore[reportPrivateUsage]
        if value is not None:
            trace.set_tracer_provider(value)

    def sample() -> Any:
        install(provider)
        try:
            return sampler()
        finally:
            install(None)

    return sample
