"""A durable chat app for a browser test:
``python tests/scripts/durable_shiny_app.py DB PORT MODE``.

Serves ``chatlas_like.durable.shiny.chat_app`` on 127.0.0.1:PORT, with DBOS on the
SQLite file DB and the scripted model on a loopback server of its own, and prints
``ready`` once it listens. Asked for the report, the model calls ``slow_report``
(read-only, so safe to run again); with MODE ``crash`` that tool kills the process,
mid tool round. With MODE ``serve`` it answers, and ``DBOS.launch()`` completes the
turn a killed process left unfinished.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from chatlas_like import ChatAnthropic
from chatlas_like.testing import LoopbackServer, Reply

DONE = "The slow report is done."


def model(body: dict[str, Any]) -> Reply:
    last = body["messages"][-1]["content"]
    if isinstance(last, list) and any(block.get("type") == "tool_result" for block in last):
        return Reply.text(DONE)
    return Reply.tool_call("slow_report", {}, text="Building the report.")


def slow_report() -> str:
    """A report that takes a while to build."""
    if sys.argv[3] == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    return "the report is ready"


def main() -> None:
    from dbos import DBOS

    from chatlas_like.durable import DurableChat
    from chatlas_like.durable.shiny import chat_app
    from chatlas_like.shiny import AppServer

    database, port = sys.argv[1], int(sys.argv[2])
    with LoopbackServer(model) as api:
        chat = ChatAnthropic(base_url=api.url, api_key="test-key-not-a-secret")
        chat.register_tool(slow_report, annotations={"readOnlyHint": True})
        desk = DurableChat(chat, name="desk", poll_interval=0.05)
        DBOS(
            config={
                "name": "durable-desk",
                "system_database_url": f"sqlite:///{database}",
                "log_level": "WARNING",
                "notification_listener_polling_interval_sec": 0.05,
            }
        )
        DBOS.launch()
        server = AppServer(chat_app(desk), port=port)
        print("ready", flush=True)
        server.serve()
        DBOS.destroy()


if __name__ == "__main__":
    main()
