"""Tools: a Python function as a tool, validating and running calls, and finalising their results."""
