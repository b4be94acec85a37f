"""Fixtures and helpers several wings share (PostgreSQL, MCP servers, OpenTelemetry globals)."""
