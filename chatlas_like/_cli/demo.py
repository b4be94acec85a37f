"""``python -m chatlas_like demo``: a real tool-calling conversation, offline by default.

Offline, the model is scripted: a loopback server on 127.0.0.1 speaks Anthropic's
Messages API to the real ``anthropic`` SDK, asks for the ``quarterly_sales`` tool, reads
the DataFrame it returns (as JSON records, the way Claude would) and answers from it.
``--live`` asks Claude the same question (needs ``ANTHROPIC_API_KEY``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from .._chat import Chat
from .._chat_anthropic import ChatAnthropic

__all__ = ["demo_model", "quarterly_sales", "run_demo"]

QUESTION = "Which region had the highest Q3 sales, and how much?"
SYSTEM_PROMPT = "You are a terse sales analyst. Use the tools to look up figures."


# The notebooks (by a word of their name) that need an extra beyond [demo].
NOTEBOOK_EXTRAS = {"durable": "durable", "providers": "openai"}


def quarterly_sales(region: str | None = None) -> Any:
    """Quarterly sales by region, in thousands of dollars.

    Parameters
    ----------
    region
        Only this region; every region when omitted.
    """
    import pandas as pd

    frame = pd.DataFrame(
        {
            "region": ["Northeast", "Southwest", "Midwest", "Pacific"],
            "q1": [120, 98, 210, 175],
            "q2": [135, 102, 205, 180],
            "q3": [150, 88, 264, 193],
            "updated": pd.to_datetime(["2024-10-01", "2024-10-01", "2024-10-02", "2024-10-03"]),
        }
    )
    if region is not None:
        frame = frame[frame["region"].str.lower() == region.lower()]
    return frame


def demo_model(body: Mapping[str, Any]) -> Any:
    """The scripted model: ask for the tool, then answer from what it returned."""
    from ..testing import Reply

    last: dict[str, Any] = body["messages"][-1]
    blocks: list[dict[str, Any]] = last["content"]
    results = [b for b in blocks if b.get("type") == "tool_result"]
    if not results:
        return Reply.tool_call(
            "quarterly_sales", {}, text="Let me look up the quarterly sales figures."
        )
    content: str = results[0].get("content", "[]")
    if results[0].get("is_error"):
        return Reply.text(f"The sales lookup failed: {content}")
    rows = orjson.loads(content)
    best = max(rows, key=lambda row: row["q3"])
    return Reply.text(
        f"**{best['region']}** had the highest Q3 sales: ${best['q3']}k, ahead of "
        f"{len(rows) - 1} other regions (figures updated {best['updated'][:10]})."
    )


def _chat(base_url: str | None, api_key: str | None, model: str | None) -> Chat:
    chat = ChatAnthropic(
        system_prompt=SYSTEM_PROMPT,
        model=model or "claude-haiku-4-5",
        base_url=base_url,
        api_key=api_key,
    )
    chat.register_tool(quarterly_sales)
    return chat


def run_demo(*, live: bool = False, model: str | None = None) -> int:
    """Run the demo; returns the process exit status."""
    from rich.console import Console

    console = Console()
    if live:
        return _run_live(console, model)
    from ..testing import LoopbackServer

    console.print(
        "[bold]chatlas_like demo[/] — the model is [bold yellow]SCRIPTED[/]: a loopback server "
        "on 127.0.0.1 speaks Anthropic's Messages API to the real anthropic SDK.\n",
        highlight=False,
    )
    with LoopbackServer(demo_model) as server:
        chat = _chat(server.url, "scripted-demo", model)
        console.print(f"[bold]👤 {QUESTION}[/]")
        chat.chat(QUESTION)
        result = chat.get_turns()[2].tool_results[0]
        console.print(
            f"\n[dim]The tool returned a {type(result.value).__name__}; the model read it as "
            f"{result.original_length} bytes of JSON records, over "
            f"{len(server.message_requests())} HTTP requests to the loopback server.[/]",
            highlight=False,
        )
    _next_steps(console)
    return 0


def _run_live(console: Any, model: str | None) -> int:
    from rich.console import Console

    from .._core.errors import ChatlasLikeError

    errors = Console(stderr=True, soft_wrap=True, highlight=False)
    if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        errors.print(
            "ANTHROPIC_API_KEY is not set: set it to ask Claude, or run "
            f"`{_python()} -m chatlas_like demo` (without --live) for the scripted model.",
            markup=False,
        )
        return 2
    console.print("[bold]chatlas_like demo[/] — talking to Claude (live).\n")
    chat = _chat(None, None, model)
    console.print(f"[bold]👤 {QUESTION}[/]")
    try:
        chat.chat(QUESTION)
    except ChatlasLikeError as e:
        # One line, not a traceback: the message says what to fix (a key, a model...).
        errors.print(f"✖ {type(e).__name__}: {e}", style="bold red", markup=False)
        return 1
    return 0


def _python() -> str:
    """How to call this interpreter from here: ``.venv/bin/python`` in a checkout."""
    path = os.path.relpath(sys.executable)
    return path if not path.startswith("..") and os.sep in path else "python"


def _next_steps(console: Any) -> None:
    """What to try after the demo; the notebooks and docs only where they are (a clone)."""
    from rich.markup import escape

    python = _python()
    steps = [
        (f"{python} -m chatlas_like chat --offline", "chat with the scripted model here"),
        (f"{python} -m chatlas_like demo --live", "ask Claude (needs ANTHROPIC_API_KEY)"),
    ]
    notebooks = sorted(Path("notebooks").glob("*.ipynb")) if os.path.isdir("notebooks") else []
    if notebooks:
        what = f"{len(notebooks)} notebooks that run offline (docs/notebooks.md)"
        # Those that need more than [demo] say so before they fail.
        for topic, extra in NOTEBOOK_EXTRAS.items():
            needing = [n.name[:2] for n in notebooks if topic in n.name]
            if needing:
                what += f"; {', '.join(needing)} needs pip install 'chatlas_like[{extra}]'"
        steps.append(("notebooks/", what))
    if os.path.isdir("docs"):
        steps.append(("docs/getting-started.md", "the guide; `make docs` builds the site"))
    width = max(len(command) for command, _ in steps)
    console.print("\n[bold]Next:[/]")
    for command, what in steps:
        line = f"  {escape(f'{command:<{width}}')}  [dim]{escape(what)}[/]"
        console.print(line, highlight=False, soft_wrap=True)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run_demo())
