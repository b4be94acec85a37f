"""The core: content, turns, tool results and their formatting, errors and redaction; imports nothing else of ours."""
