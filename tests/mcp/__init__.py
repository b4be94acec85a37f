"""Tests of chatlas_like/_mcp: MCP sessions, their tools and results, the MCP docs page."""
