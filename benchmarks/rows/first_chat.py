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
    for variant, n in (("plain", ctx.n(9, 2)), ("default", ctx.n(7, 1))):  # noisy: many samples
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


def _cprofile(body: str, url: str, prof: Path, n: int) -> pstats.Stats:
    """``n`` fresh processes under cProfile, their stats summed (and saved to ``prof``)."""
    prelude = f"MODEL, KEY, URL = {MODEL!r}, {API_KEY!r}, {url!r}\n"
    stats: pstats.Stats | None = None
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "first_chat.py"
        script.write_text(prelude + body)
        for i in range(n):
            one = Path(tmp) / f"{i}.prof"
            run_python(sys.executable, None, "-o", str(one), str(script), flags=("-m", "cProfile"))
            stats = pstats.Stats(str(one)) if stats is None else stats.add(str(one))
    assert stats is not None
    stats.dump_stats(str(prof))
    return stats


def _imports(body: str, url: str) -> dict[str, int]:
    """Module -> self microseconds, from ``-X importtime`` of one fresh process."""
    prelude = f"MODEL, KEY, URL = {MODEL!r}, {API_KEY!r}, {url!r}\n"
    _, done = run_python(sys.executable, prelude + body, flags=("-X", "importtime"))
    modules: dict[str, int] = {}
    for line in done.stderr.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if len(fields) == 3 and fields[0].strip().isdigit():
            modules[fields[2].strip()] = int(fields[0])
    return modules


def _import_difference(variant: str, url: str) -> str:
    ours, floor = _imports(OURS[variant], url), _imports(FLOOR[variant], url)
    extra = {m: us for m, us in ours.items() if m not in floor}
    tops: dict[str, int] = {}
    for module, us in extra.items():
        top = module.split(".")[0]
        tops[top] = tops.get(top, 0) + us
    lines = [
        f"modules ours imports and the floor does not: {len(extra)}, "
        f"{sum(extra.values()) / 1e3:.1f} ms of import self time; by top-level package:"
    ]
    lines += [
        f"  {us / 1e3:8.1f} ms  {top}" for top, us in sorted(tops.items(), key=lambda t: -t[1])
    ][:25]
    missing = [m for m in floor if m not in ours]
    lines.append(f"modules the floor imports and ours does not: {len(missing)}")
    return "\n".join(lines) + "\n"


def profile_row(url: str, out: Path, quick: bool) -> str:
    """cProfile of a fresh process doing each variant, ours against the floor."""
    from .._profile import compare

    text = io.StringIO()
    n = 1 if quick else 3
    for variant in ("default", "plain"):
        path = Path(f"{out}-{variant}")
        ours = _cprofile(OURS[variant], url, path.with_suffix(".prof"), n)
        floor = _cprofile(FLOOR[variant], url, Path(f"{path}-floor.prof"), n)
        text.write(f"row 2 ({variant}): a fresh process's import + construct + first chat()\n")
        text.write(f"\n==== ours against the floor, own time by package, {n} processes each ====\n")
        text.write(compare(ours, floor, n))
        text.write(f"\n==== what ours imports beyond the floor (-X importtime, {variant}) ====\n")
        text.write(_import_difference(variant, url))
        ours.stream = text  # pyright: ignore[reportAttributeAccessIssue]
        text.write(f"\n==== ours ({variant}): top 30 by cumulative ====\n")
        ours.sort_stats("cumulative").print_stats(30)
        text.write("\n")
    out.with_suffix(".txt").write_text(text.getvalue())
    return text.getvalue()
