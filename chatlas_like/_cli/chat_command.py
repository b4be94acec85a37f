"""``python -m chatlas_like chat``: the command, and the scripted model of ``--offline``.

The terminal chat itself is :func:`chatlas_like._display.console.run_chat` (also
``Chat.console()``); this module builds the chat the command talks to. Kept apart from
``_console`` because it needs the provider, which needs ``Chat``.

``--offline`` talks to a scripted model on a loopback server (it says so) that knows
a few prompts: the sales question of the demo, ``wait N seconds`` (a slow tool),
``wait 4 and 2 seconds`` (two calls running at once, the second finishing first) and
``take your time`` (a slow answer), so progress and Ctrl-C can be tried without a key.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Any

from .._display.console import run_chat

__all__ = ["offline_model", "run_chat_command", "wait"]

OFFLINE_HINTS = (
    "Which region had the highest Q3 sales?",
    "wait 5 seconds",
    "wait 4 and 2 seconds",
    "take your time",
)


# -- the offline model -------------------------------------------------------------------


def wait(seconds: float) -> str:
    """Waits for a number of seconds: a stand-in for slow work.

    Parameters
    ----------
    seconds
        How long to wait.
    """
    time.sleep(seconds)
    return f"waited {seconds:g} seconds"


def offline_model(body: Mapping[str, Any]) -> Any:
    """The scripted model of ``chat --offline``: a few prompts, answered the same way."""
    from ..testing import Reply
    from .demo import demo_model

    messages: list[dict[str, Any]] = body["messages"]
    blocks: list[dict[str, Any]] = messages[-1]["content"]
    texts = [b["text"] for b in blocks if b.get("type") == "text"]
    if not texts:
        return _answer_tool(messages, demo_model, Reply)
    prompt = texts[-1]
    lowered = prompt.lower()
    numbers = [float(n) for n in re.findall(r"\d+(?:\.\d+)?", prompt)]
    if "sales" in lowered or "region" in lowered:
        return Reply.tool_call("quarterly_sales", {}, text="Let me look up the sales figures.")
    if "wait" in lowered:
        waits = numbers or [3.0]  # several numbers: as many calls, run at once
        said = " and ".join(f"{s:g}" for s in waits)
        calls = [("wait", {"seconds": seconds}) for seconds in waits]
        return Reply.tool_calls(calls, text=f"Waiting {said} seconds.")
    if "take your time" in lowered or "slow" in lowered:
        seconds = numbers[0] if numbers else 5.0
        return Reply.text("There: an answer that took its time.").slowly(seconds)
    return Reply.text(
        f"(scripted) You said: {prompt!r}. Offline, I know a few prompts: "
        + "; ".join(repr(h) for h in OFFLINE_HINTS)
        + "."
    )


def _answer_tool(messages: list[dict[str, Any]], demo_model: Any, reply: Any) -> Any:
    last: list[dict[str, Any]] = messages[-1]["content"]
    asked: list[dict[str, Any]] = messages[-2]["content"] if len(messages) > 1 else []
    results = [b for b in last if b.get("type") == "tool_result"]
    names: dict[str, str] = {b["id"]: b["name"] for b in asked if b.get("type") == "tool_use"}
    first: dict[str, Any] = results[0] if results else {}
    if names.get(str(first.get("tool_use_id"))) == "quarterly_sales":
        return demo_model({"messages": messages})
    said = "; ".join(str(r.get("content", "nothing came back")) for r in results)
    return reply.text(f"Done: {said or 'nothing came back'}.")


def run_chat_command(*, offline: bool, model: str | None, system_prompt: str | None) -> int:
    """``python -m chatlas_like chat``; the exit status."""
    import os

    from rich.console import Console

    from .._chat_anthropic import ChatAnthropic
    from .demo import quarterly_sales

    console = Console()
    options: dict[str, Any] = {"model": model or "claude-haiku-4-5", "system_prompt": system_prompt}
    server: Any = None
    if offline:
        from ..testing import LoopbackServer

        server = LoopbackServer(offline_model).start()
        options.update(base_url=server.url, api_key="scripted-offline")
        banner = (
            "[bold]chatlas_like chat[/] — [bold yellow]OFFLINE[/]: the model is "
            "[bold yellow]SCRIPTED[/] (a loopback server on 127.0.0.1 speaking Anthropic's "
            "Messages API to the real SDK).\nTry: " + " · ".join(f"'{h}'" for h in OFFLINE_HINTS)
        )
    else:
        if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
            Console(stderr=True).print(
                "[red]ANTHROPIC_API_KEY is not set.[/] Set it to talk to Claude, or run "
                "[bold]python -m chatlas_like chat --offline[/] for the scripted model."
            )
            return 2
        banner = f"[bold]chatlas_like chat[/] — talking to Claude ({options['model']})."
    try:
        chat = ChatAnthropic(**options)
        chat.register_tool(quarterly_sales)
        chat.register_tool(wait)
        # Load the SDK before the first prompt, so a Ctrl-C never lands inside its import.
        chat.provider.warm_up()
        return run_chat(chat, console=console, banner=banner)
    finally:
        if server is not None:
            server.stop()
