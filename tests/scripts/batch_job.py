"""One batch job, built the same way by the tests and by a second process they start.

``python -m tests.scripts.batch_job URL PATH API`` runs the job against the loopback server at
``URL`` with its state in ``PATH``, on ``API`` (``anthropic``, ``responses`` or ``completions``),
and prints the answers as JSON.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from chatlas_like import Chat, ChatAnthropic, ChatOpenAI, ChatOpenAICompletions, batch_chat_text

PROMPTS = ["Capital of France?", "Capital of Peru?", "Capital of Japan?"]
CAPITALS = {"France": "Paris", "Peru": "Lima", "Japan": "Tokyo"}


def capital(country: str) -> str:
    """Looks up the capital of a country."""
    return CAPITALS[country]


KEY = "test-key-not-a-secret"
APIS = ("anthropic", "responses", "completions")


def job_chat(url: str, api: str = "anthropic", **kwargs: Any) -> Chat:
    """The job's chat on ``api``, against the loopback server at ``url``."""
    kwargs.setdefault("system_prompt", "Answer in one word.")
    if api == "anthropic":
        chat = ChatAnthropic(base_url=url, api_key=KEY, model="claude-haiku-4-5-20251001", **kwargs)
    else:
        make = ChatOpenAI if api == "responses" else ChatOpenAICompletions
        chat = make(base_url=url + "/v1", api_key=KEY, model="gpt-4.1", **kwargs)
    chat.register_tool(capital)
    return chat


if __name__ == "__main__":
    url, path, api = sys.argv[1:4]
    print(json.dumps(batch_chat_text(job_chat(url, api), PROMPTS, path, poll_interval=0.01)))
