"""Anthropic's Messages API: the wire format, the SDK client, prices and server tools."""
