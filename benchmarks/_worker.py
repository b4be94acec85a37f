"""A persistent worker that runs one side of the rows in another interpreter.

The runner starts it with the chatlas venv's Python (``python -m benchmarks._worker``)
and talks JSON lines over its stdin and stdout::

    {"op": "make", "id": 1, "row": "tool_round", "side": "chatlas", "url": ..., "params": {}}
    {"op": "sample", "id": 1}     -> {"ok": true, "result": {"wall": ..., "cpu": ...}}
    {"op": "call", "row": ..., "fn": ..., "url": ..., "params": {}} -> {"ok": true, "result": ...}
    {"op": "drop", "id": 1}

Anything the measured code prints goes to stderr, so stdout carries only the protocol.
Stdlib only at import time.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

# ``BENCH_SIDE_ALIAS=chatlas=ours``: asked for one side, run another (the runner's
# --baseline runs our side on an older chatlas_like in the chatlas column).
_ALIASES = dict(
    pair.split("=", 1) for pair in os.environ.get("BENCH_SIDE_ALIAS", "").split(",") if "=" in pair
)


def main() -> None:
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # prints of the measured code land in the log, not in the protocol
    samplers: dict[int, Callable[[], Any]] = {}
    for line in sys.stdin:
        request = json.loads(line)
        try:
            result = _handle(request, samplers)
            reply: dict[str, Any] = {"ok": True, "result": result}
        except BaseException:  # report every failure; the runner decides what to do
            reply = {"ok": False, "error": traceback.format_exc()}
        protocol.write(json.dumps(reply) + "\n")


def _handle(request: dict[str, Any], samplers: dict[int, Callable[[], Any]]) -> Any:
    op = request["op"]
    if op == "sample":
        gc.collect()
        return samplers[request["id"]]()
    if op == "drop":
        samplers.pop(request["id"], None)
        gc.unfreeze()
        gc.collect()
        return None
    module = importlib.import_module(f"benchmarks.rows.{request['row']}")
    if op == "make":
        factory = getattr(module, _ALIASES.get(request["side"], request["side"]))
        samplers[request["id"]] = factory(request["url"], request.get("params") or {})
        gc.collect()
        gc.freeze()  # keeps the collection before each sample cheap
        return None
    if op == "call":
        return getattr(module, request["fn"])(request["url"], request.get("params") or {})
    raise ValueError(f"unknown op {op!r}")


if __name__ == "__main__":
    main()
