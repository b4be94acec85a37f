"""Row 2: a fresh process's import + construct + first ``chat()`` to the loopback server.

Each sample is a new interpreter that times, from its first line, the import, the
client's construction and one exchange; interpreter start-up is not counted. The
floor is ``import anthropic`` + ``Anthropic()`` + ``messages.create``. The first line
is the same exchange (one JSON response, no echo); the second is ``chat()`` with its
defaults (streamed, echo "output" to a pipe) against a streamed ``create`` iterated
by hand.
"""

from __future__ import annotations

import io
import pstats
import sys
import tempfile
from pathlib import Path

from .._context import Context
from .._harness import API_KEY, Line, Metrics, Sampler, last_json, run_python
from .._server import model_name

ROW = "2"
NAME = "first_chat"
MODEL = model_name("hello")
TARGET = 1.05

_START = "import time, json\nstart = time.perf_counter()\n"
_END = "\nprint('\\n' + json.dumps({'t': time.perf_counter() - start}))\n"

OURS = {
    "plain": """
from chatlas_like import ChatAnthropic
chat = ChatAnthropic(model=MODEL, api_key=KEY, base_url=URL)
chat.chat("Hello", echo="none", stream=False)
""",
    "default": """
from chatlas_like import ChatAnthropic
chat = ChatAnthropic(model=MODEL, api_key=KEY, base_url=URL)
chat.chat("Hello")
""",
}
FLOOR = {
    "plain": """
import anthropic
client = anthropic.Anthropic(api_key=KEY, base_url=URL)
client.messages.create(model=MODEL, max_tokens=4096, messages=[{"role": "user", "content": "Hello"}])
""",
    "default": """
import anthropic
client = anthropic.Anthropic(api_key=KEY, base_url=URL)
parts = []
for event in client.messages.create(
    model=MODEL, max_tokens=4096, messages=[{"role": "user", "content": "Hello"}], stream=True
):
    if event.type == "content_block_delta" and event.delta.type == "text_delta":
        parts.append(event.delta.text)
print("".join(parts))
""",
}
CHATLAS = {
    "plain": """
from chatlas import ChatAnthropic
chat = ChatAnthropic(model=MODEL, api_key=KEY, kwargs={"base_url": URL})
chat.chat("Hello", echo="none", stream=False)
""",
    "default": """
from chatlas import ChatAnthropic
chat = ChatAnthropic(model=MODEL, api_key=KEY, kwargs={"base_url": URL})
chat.chat("Hello")
""",
}


def sampler(python: str, body: str, url: str) -> Sampler:
    prelude = f"MODEL, KEY, URL = {MODEL!r}, {API_KEY!r}, {url!r}\n"
    code = _START + prelude + body + _END

    def sample() -> Metrics:
        wall, done = run_python(python, code)
        return {"wall": wall, "inner": last_json(done.stdout)["t"]}

    return sample


def run(ctx: Context) -> list[Line]:
    lines: list[Line] = []
    what = {
        "plain": "import + construct + first chat() (no stream, no echo)",
        "default": "import + construct + first chat() (defaults: stream, echo)",
    }
    for variant, n in (("plain", ctx.n(5, 2)), ("default", ctx.n(3, 1))):
        samplers: dict[str, Sampler | None] = {
            "ours": sampler(sys.executable, OURS[variant], ctx.url),
            "floor": sampler(sys.executable, FLOOR[variant], ctx.url),
        }
        if ctx.chatlas_python is not None:
            samplers["chatlas"] = sampler(str(ctx.chatlas_python), CHATLAS[variant], ctx.url)
        samples = ctx.interleave(samplers, n)
        lines.append(
            Line(
                ROW,
                what[variant],
                "s",
                ours=samples.median("ours", "inner"),
                floor=samples.median("floor", "inner"),
                chatlas=samples.median("chatlas", "inner"),
                target=f"<= {TARGET}x raw SDK",
                target_ratio=TARGET,
                note=samples.note(),
                data=samples.to_json(),
            )
        )
    return lines


def profile_row(url: str, out: Path, quick: bool) -> str:
    """cProfile of one fresh process doing our plain first chat."""
    prelude = f"MODEL, KEY, URL = {MODEL!r}, {API_KEY!r}, {url!r}\n"
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "first_chat.py"
        script.write_text(prelude + OURS["plain"])
        prof = out.with_suffix(".prof")
        run_python(sys.executable, None, "-o", str(prof), str(script), flags=("-m", "cProfile"))
    text = io.StringIO()
    text.write("row 2: import + construct + first chat() in a fresh process, cProfile\n")
    stats = pstats.Stats(str(prof), stream=text)
    for order in ("cumulative", "tottime"):
        text.write(f"\n==== top 35 by {order} ====\n")
        stats.sort_stats(order).print_stats(35)
    out.with_suffix(".txt").write_text(text.getvalue())
    return text.getvalue()
