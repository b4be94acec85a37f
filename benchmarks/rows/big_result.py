"""Row 8: a tool returning 50 MB: what reaches the model, and the client's peak memory.

Each side runs in a fresh process: a warm-up exchange loads everything, then
``ru_maxrss`` is read, then one ``chat()`` whose tool builds and returns 50 MB of
text; the growth of the peak RSS includes the result itself. The bytes sent come
from the server's request log (the whole request, and the text of its tool results).
chatlas sends the result whole; the server answers 413 as the API does for bodies
over 32 MB.
"""

from __future__ import annotations

import sys
from typing import Any

from .._context import Context
from .._harness import API_KEY, Line, last_json, run_python
from .._server import fetch_log, model_name

ROW = "8"
NAME = "big_result"
MODEL = model_name("big")
RESULT_MB = 50
MAX_RESULT_BYTES = 100_000  # chatlas_like's default max_result_bytes

_COMMON = """
import json, resource, sys
MODEL, KEY, URL, SIZE = {model!r}, {key!r}, {url!r}, {size!r}
BLOCK = "".join(f"row {{i:04d}}: status=ok value={{i * 7 % 1000}} owner=team-{{i % 9}}\\n" for i in range(20))

def big(key: str) -> str:
    \"\"\"Return the whole export for a key.

    Parameters
    ----------
    key
        Which export.
    \"\"\"
    return BLOCK * (SIZE // len(BLOCK))

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""

OURS = """
from chatlas_like import ChatAnthropic
chat = ChatAnthropic(model=MODEL, api_key=KEY, base_url=URL)
chat.register_tool(lambda key: "small", name="big")
chat.chat("warm up", echo="none")
chat.register_tool(big, force=True)
chat.set_turns([])
before = peak_mb()
error = None
try:
    chat.chat("Get the export.", echo="none")
except Exception as e:
    error = f"{type(e).__name__}: {e}"
print(json.dumps({"before": before, "after": peak_mb(), "error": error}))
"""

CHATLAS = """
from chatlas import ChatAnthropic, Tool
chat = ChatAnthropic(model=MODEL, api_key=KEY, kwargs={"base_url": URL})
def small(key: str) -> str:
    \"\"\"Return the whole export for a key.\"\"\"
    return "small"
chat.register_tool(Tool.from_func(small, name="big"))
chat.chat("warm up", echo="none")
chat.register_tool(Tool.from_func(big, name="big"), force=True)
chat.set_turns([])
before = peak_mb()
error = None
try:
    chat.chat("Get the export.", echo="none")
except Exception as e:
    error = f"{type(e).__name__}: {str(e)[:200]}"
print(json.dumps({"before": before, "after": peak_mb(), "error": error}))
"""


def measure(python: str, body: str, url: str, size: int) -> dict[str, Any]:
    """One fresh-process run; its memory, error, and what the server received."""
    fetch_log(url)
    code = _COMMON.format(model=MODEL, key=API_KEY, url=url, size=size) + body
    wall, done = run_python(python, code, timeout=600)
    result: dict[str, Any] = last_json(done.stdout)
    log = [r for r in fetch_log(url) if r["model"] == MODEL]
    biggest = max(log, key=lambda r: r["bytes"]) if log else {}
    return {
        **result,
        "wall": wall,
        "growth_mb": result["after"] - result["before"],
        "request_bytes": biggest.get("bytes"),
        "tool_result_bytes": biggest.get("tool_result_bytes"),
        "status": biggest.get("status"),
        "requests": log,
    }


def run(ctx: Context) -> list[Line]:
    size = ctx.size(RESULT_MB, 5) * 1_000_000
    ours = measure(sys.executable, OURS, ctx.url, size)
    theirs = (
        measure(str(ctx.chatlas_python), CHATLAS, ctx.url, size) if ctx.chatlas_python else None
    )
    mb = size / 1e6

    def sent(r: dict[str, Any] | None) -> str:
        if r is None:
            return ""
        what = f"request {r['request_bytes'] or 0:,} B (tool result text {r['tool_result_bytes'] or 0:,} B), HTTP {r['status']}"
        return what + (f", raised {r['error']}" if r.get("error") else "")

    note = f"ours: {sent(ours)}" + (f"; chatlas: {sent(theirs)}" if theirs else "")
    return [
        Line(
            ROW,
            f"{mb:.0f} MB tool result: tool-result bytes sent to the model",
            "MB",
            ours=(ours["tool_result_bytes"] or 0) / 1e6,
            chatlas=(theirs["tool_result_bytes"] or 0) / 1e6 if theirs else None,
            target=f"<= max_result_bytes ({MAX_RESULT_BYTES:,} B)",
            met=(ours["tool_result_bytes"] or 0) <= MAX_RESULT_BYTES and ours["status"] == 200,
            note=note,
            data={"ours": ours, "chatlas": theirs},
        ),
        Line(
            ROW,
            f"{mb:.0f} MB tool result: peak RSS growth",
            "MB",
            ours=ours["growth_mb"],
            chatlas=theirs["growth_mb"] if theirs else None,
            target=f"<= 2x the result ({2 * mb:.0f} MB)",
            target_value=2 * mb,
        ),
    ]
