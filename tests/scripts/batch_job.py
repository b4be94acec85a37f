"""One batch job, built the same way by the tests and by a second process they start.

``python -m tests.scripts.batch_job URL PATH`` runs the job against the server at ``URL`` with
its state in ``PATH`` and prints the answers as JSON.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from chatlas_like import Chat, ChatAnthropic, batch_chat_text

PROMPTS = ["Capital of France?", "Capital of Peru?", "Capital of Japan?"]
CAPITALS = {"France": "Paris", "Peru": "Lima", "Japan": "Tokyo"}


def capital(country: str) -> str:
    """Looks up the capital of a country."""
    return CAPITALS[country]


def job_chat(url: str, **kwargs: Any) -> Chat:
    chat = ChatAnthropic(
        base_url=url,
        api_key="test-key-not-a-secret",
        model="claude-haiku-4-5-20251001",
        system_prompt="Answer in one word.",
        **kwargs,
    )
    chat.register_tool(capital)
    return chat


if __name__ == "__main__":
    url, path = sys.argv[1:3]
    print(json.dumps(batch_chat_text(job_chat(url), PROMPTS, path, poll_interval=0.01)))
