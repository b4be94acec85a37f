"""Programs the tests run as child processes (by path, or with ``python -m tests.scripts.NAME``)."""
