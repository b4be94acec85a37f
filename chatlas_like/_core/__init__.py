"""The core: content, turns, tool results, formatting, errors, redaction; imports nothing above."""
