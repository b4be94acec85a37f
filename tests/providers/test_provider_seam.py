"""One seam per provider: a provider written against the interface alone runs a chat.

``ScriptedProvider`` (chatlas_like.testing) answers in process, with no HTTP and no SDK.
The same tool-calling conversation runs on it and on Anthropic's provider against the
loopback server, and the two histories agree.
"""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chatlas_like import (
    AssistantTurn,
    Chat,
    ContentToolRequest,
    ContentToolResult,
    Turn,
    batch_chat,
)
from chatlas_like.testing import LoopbackServer, Reply, ScriptedProvider

from ..conftest import make_chat

PROVIDER_FILE = Path(__file__).resolve().parents[2] / "chatlas_like" / "testing" / "_provider.py"


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}"


def scripted_chat() -> tuple[Chat, ScriptedProvider]:
    provider = ScriptedProvider(
        [
            AssistantTurn(
                [ContentToolRequest(id="call_1", name="get_weather", arguments={"city": "Paris"})]
            ),
            AssistantTurn("It is sunny in Paris."),
        ]
    )
    chat = Chat(provider)
    chat.register_tool(get_weather)
    return chat, provider


def shape(turns: list[Turn]) -> list[tuple[str, list[Any]]]:
    """What a conversation said, without provider-made ids and token counts."""
    described: list[tuple[str, list[Any]]] = []
    for turn in turns:
        items: list[Any] = []
        for content in turn.contents:
            if isinstance(content, ContentToolRequest):
                items.append(("request", content.name, dict(content.arguments)))
            elif isinstance(content, ContentToolResult):
                items.append(("result", content.outcome, content.get_model_value()))
            else:
                items.append(("text", str(content)))
        described.append((turn.role, items))
    return described


def test_a_chat_runs_a_tool_round_on_a_provider_written_against_the_interface() -> None:
    chat, provider = scripted_chat()
    answer = chat.chat("Weather in Paris?", echo="none")
    assert str(answer) == "It is sunny in Paris."
    assert len(provider.requests) == 2
    last = provider.requests[1].turns[-1]
    assert [r.value for r in last.tool_results] == ["Sunny in Paris"]
    assert provider.requests[0].tools == ["get_weather"]


def test_the_same_conversation_on_the_loopback_server_gives_the_same_history(
    serve: Callable[..., LoopbackServer],
) -> None:
    server = serve(
        [Reply.tool_call("get_weather", {"city": "Paris"}), Reply.text("It is sunny in Paris.")]
    )
    anthropic = make_chat(server)
    anthropic.register_tool(get_weather)
    anthropic.chat("Weather in Paris?", echo="none")
    scripted, _ = scripted_chat()
    scripted.chat("Weather in Paris?", echo="none")
    assert shape(scripted.get_turns()) == shape(anthropic.get_turns())


def test_all_four_verbs_work_on_the_in_process_provider() -> None:
    streamed, _ = scripted_chat()
    items = list(streamed.stream("Weather in Paris?", content="all"))
    assert [type(i).__name__ for i in items if not isinstance(i, str)] == [
        "ContentToolRequest",
        "ContentToolResult",
    ]
    assert "".join(i for i in items if isinstance(i, str)) == "It is sunny in Paris."

    async def both() -> tuple[str, str]:
        chat, _ = scripted_chat()
        answer = await chat.chat_async("Weather in Paris?", echo="none")
        again, _ = scripted_chat()
        chunks = [c async for c in await again.stream_async("Weather in Paris?")]
        return str(answer), "".join(chunks)

    assert asyncio.run(both()) == ("It is sunny in Paris.", "It is sunny in Paris.")


def test_a_capability_the_provider_does_not_declare_is_a_clear_error(tmp_path: Path) -> None:
    chat, _ = scripted_chat()
    with pytest.raises(NotImplementedError, match="the Scripted provider cannot count tokens"):
        chat.token_count("Hi")
    with pytest.raises(NotImplementedError, match="the Scripted provider cannot list its models"):
        chat.list_models()
    with pytest.raises(TypeError, match="the Scripted provider has none"):
        batch_chat(chat, ["Hi"], tmp_path / "job.json")


def test_the_scripted_provider_imports_only_the_public_interface() -> None:
    tree = ast.parse(PROVIDER_FILE.read_text(encoding="utf-8"))
    ours = [
        (node.level, node.module)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and (node.level or "chatlas_like" in (node.module or ""))
    ]
    # `from .. import` is the package's public API; `from ..providers import` its
    # public provider interface. Nothing private, nothing of Anthropic's.
    assert set(ours) == {(2, None), (2, "providers")}
