"""Observability: the log lines, OpenTelemetry spans and token counts of chat calls."""
