"""Saving a chat to a file and loading it back, through real conversations."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from chatlas_like import (
    AssistantTurn,
    Chat,
    ChatAnthropic,
    ContentImageInline,
    ContentText,
    ContentToolResult,
    PersistenceError,
    RestoredToolError,
    SqliteStore,
    UserTurn,
    to_json,
)
from chatlas_like._core.expansion import expand
from chatlas_like._persist.chat_file import CHAT_VERSION
from chatlas_like.providers import RequestSpec
from chatlas_like.providers._anthropic.provider import AnthropicProvider
from chatlas_like.testing import Reply

from ..conftest import TEST_KEY, make_chat


def frame() -> Any:
    """Returns a table."""
    import pandas as pd

    return pd.DataFrame({"city": ["Oslo", "Lima"], "temp": [3.5, 19.0]})


def boom(city: str) -> str:
    """Always fails."""
    raise ConnectionError(f"weather service down for {city}")


def long_text() -> str:
    """Returns more than the model may read."""
    return "ü" * 3000 + "😀" * 1000


TOOLS = [frame, boom, long_text]


def three_results_script() -> list[Reply]:
    return [
        Reply.tool_calls([("frame", {}), ("boom", {"city": "Oslo"}), ("long_text", {})]),
        Reply.text("Done."),
        Reply.text("Again."),
        Reply.text("Again."),
    ]


def chat_with_results(serve: Callable[..., Any], **options: Any) -> tuple[Any, Chat]:
    server = serve(three_results_script())
    chat = make_chat(server, system_prompt="Be terse.", max_result_bytes=2000, **options)
    for tool in TOOLS:
        chat.register_tool(tool)
    chat.set_model_params(temperature=0.25)
    chat.chat("Go", echo="none")
    return server, chat


def results_of(chat: Chat) -> list[ContentToolResult]:
    return [c for t in chat.get_turns() for c in t.contents if isinstance(c, ContentToolResult)]


def test_a_loaded_chat_sends_the_same_next_request_byte_for_byte(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    server, chat = chat_with_results(serve)
    table, error, cut = results_of(chat)
    assert error.is_exception and cut.is_truncated and "Lima" in table.get_model_value()
    chat.save(tmp_path / "chat.json")
    loaded = Chat.load(tmp_path / "chat.json", TOOLS, api_key=TEST_KEY, base_url=server.url)
    chat.chat("Once more", echo="none")
    loaded.chat("Once more", echo="none")
    original, restored = [r for r in server.requests if r.path == "/v1/messages"][2:4]
    assert restored.raw == original.raw


def model() -> Any:
    """Returns a pydantic model."""
    from pydantic import BaseModel

    class Forecast(BaseModel):
        city: str
        days: list[float]

    return Forecast(city="Oslo", days=[1.5, 2.0])


def array() -> Any:
    """Returns a numpy array."""
    import numpy as np

    return np.arange(6, dtype=np.float32).reshape(2, 3) / 3


def picture() -> ContentToolResult:
    """Returns an image."""
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
    return ContentToolResult(
        value=[ContentImageInline("image/png", pixel), ContentText("a red pixel")],
        model_format="as_is",
    )


def test_pydantic_numpy_and_image_results_load_and_send_the_same_request(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    tools = [model, array, picture]
    server = serve(
        [Reply.tool_calls([("model", {}), ("array", {}), ("picture", {})])] + [Reply.text("ok")] * 3
    )
    chat = make_chat(server)
    for tool in tools:
        chat.register_tool(tool)
    chat.chat("Go", echo="none")
    assert [r.outcome for r in results_of(chat)] == ["success"] * 3
    chat.save(tmp_path / "chat.json")
    loaded = Chat.load(tmp_path / "chat.json", tools, api_key=TEST_KEY, base_url=server.url)
    chat.chat("Next", echo="none")
    loaded.chat("Next", echo="none")
    original, restored = [r for r in server.requests if r.path == "/v1/messages"][2:4]
    assert restored.raw == original.raw
    assert b'"type":"image"' in restored.raw


def test_a_loaded_chat_has_the_same_turns_run_and_settings(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    _, chat = chat_with_results(serve)
    chat.save(tmp_path / "chat.json")
    loaded = Chat.load(tmp_path / "chat.json", TOOLS, api_key=TEST_KEY)
    assert to_json(loaded.get_turns()) == to_json(chat.get_turns())
    assert loaded.parent_runs == (chat.run_id,) and loaded.system_prompt == "Be terse."
    assert loaded.provider.model == chat.provider.model
    assert loaded.options == chat.options and loaded._params == {"temperature": 0.25}
    assert loaded._history.last_sequence == 3


def saved_and_loaded(tmp_path: Path, **settings: Any) -> tuple[Chat, AnthropicProvider]:
    """A chat on a provider with ``settings``, and the provider of its saved and loaded copy."""
    settings.setdefault("model", "claude-sonnet-4-5")
    chat = Chat(AnthropicProvider(api_key=TEST_KEY, **settings))
    chat.set_turns([UserTurn(["Name a city."])])
    chat.save(tmp_path / "chat.json")
    loaded = Chat.load(tmp_path / "chat.json", api_key=TEST_KEY).provider
    assert isinstance(loaded, AnthropicProvider)
    return chat, loaded


def test_a_loaded_chat_sends_the_same_thinking_budget(tmp_path: Path) -> None:
    chat, loaded = saved_and_loaded(
        tmp_path, max_tokens=8000, reasoning=2000, structured_output_mode="tool", prefill=False
    )
    body = loaded.build_request(chat.get_turns(), RequestSpec())
    assert body == chat.provider.build_request(chat.get_turns(), RequestSpec())
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2000}


def test_a_loaded_chat_keeps_an_adaptive_thinking_effort(tmp_path: Path) -> None:
    chat, loaded = saved_and_loaded(tmp_path, model="claude-opus-4-6", reasoning="high")
    body = loaded.build_request(chat.get_turns(), RequestSpec())
    assert body == chat.provider.build_request(chat.get_turns(), RequestSpec())
    assert body["output_config"]["effort"] == "high"


def test_a_loaded_chat_asks_for_structured_data_the_same_way(tmp_path: Path) -> None:
    from pydantic import BaseModel

    class City(BaseModel):
        name: str

    chat, loaded = saved_and_loaded(tmp_path, structured_output_mode="tool")
    spec = RequestSpec(data_model=City)
    body = loaded.build_request(chat.get_turns(), spec)
    assert body == chat.provider.build_request(chat.get_turns(), spec)
    assert body["tool_choice"]["type"] == "tool"


def test_a_loaded_chat_keeps_its_prefill_setting(tmp_path: Path) -> None:
    _, loaded = saved_and_loaded(tmp_path, reasoning=2000, prefill=False)
    assert loaded.supports_prefill() is False


def test_an_error_result_keeps_message_outcome_and_exception_type(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    _, chat = chat_with_results(serve)
    chat.save(tmp_path / "chat.json")
    error = results_of(Chat.load(tmp_path / "chat.json", TOOLS, api_key=TEST_KEY))[1]
    assert error.outcome == "exception" and error.is_exception and error.exception is None
    assert isinstance(error.error, RestoredToolError)
    assert error.error.type_name == "ConnectionError"
    assert error.error.message == "weather service down for Oslo"


def test_the_api_key_is_never_saved(serve: Callable[..., Any], tmp_path: Path) -> None:
    _, chat = chat_with_results(serve)
    chat.save(tmp_path / "chat.json")
    assert TEST_KEY.encode() not in (tmp_path / "chat.json").read_bytes()


def test_a_tool_schema_is_stored_once_per_conversation(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    server = serve([Reply.tool_call("boom", {"city": c}) for c in "ABCDE"] + [Reply.text("ok")])
    chat = make_chat(server)
    chat.register_tool(boom)
    chat.chat("Go", echo="none")
    chat.save(tmp_path / "chat.json")
    raw = (tmp_path / "chat.json").read_bytes()
    assert len(results_of(chat)) == 5
    assert raw.count(b"Always fails.") == 1 and raw.count(b'"input_schema"') == 1


def test_load_warns_once_naming_tools_missing_from_tools(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    _, chat = chat_with_results(serve)
    chat.save(tmp_path / "chat.json")
    with pytest.warns(UserWarning, match="not given to Chat.load: boom, long_text;") as caught:
        loaded = Chat.load(tmp_path / "chat.json", [frame], api_key=TEST_KEY)
    assert len(caught) == 1
    assert [t.name for t in loaded.get_tools()] == ["frame"]


def test_load_puts_the_tools_in_their_saved_order(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    _, chat = chat_with_results(serve)
    chat.save(tmp_path / "chat.json")
    loaded = Chat.load(tmp_path / "chat.json", list(reversed(TOOLS)), api_key=TEST_KEY)
    assert [t.name for t in loaded.get_tools()] == ["frame", "boom", "long_text"]


def test_a_loaded_chat_continues_the_sequence_numbers_in_a_run_of_its_own(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    server = serve([Reply.tool_call("boom", {"city": c}) for c in "AB"] + [Reply.text("ok")] * 2)
    chat = make_chat(server, store=tmp_path / "r.db", tenant_id="acme")
    chat.register_tool(boom)
    chat.chat("Go", echo="none")
    chat.save(tmp_path / "chat.json")
    server.backend.model.add(Reply.tool_call("boom", {"city": "C"}), Reply.text("ok"))
    store = SqliteStore(tmp_path / "r.db")
    loaded = Chat.load(
        tmp_path / "chat.json", [boom], base_url=server.url, store=store, tenant_id="acme"
    )
    loaded.chat("More", echo="none")  # served the spare "ok"
    loaded.chat("And more", echo="none")
    saved = [(r.sequence, r.tool_call_id) for r in store.list("acme", chat.run_id)]
    added = [(r.sequence, r.tool_call_id) for r in store.list("acme", loaded.run_id)]
    assert saved == [(1, "toolu_0001"), (2, "toolu_0002")] and added == [(3, "toolu_0003")]
    assert loaded.parent_runs == (chat.run_id,)


def document() -> Any:
    """The lines of a topic the tool puts into the conversation."""
    return expand(
        "FULL DOCUMENT",
        [AssistantTurn(["Here is the document: FULL DOCUMENT"]), UserTurn(["Use it."])],
        result_content="(document inserted above)",
    )


def test_a_pending_expansion_is_not_saved_so_the_full_content_is_sent(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    server = serve([Reply.tool_call("document", {}), Reply.text("ok"), Reply.text("ok")])
    chat = make_chat(server)
    chat.register_tool(document)
    stream = chat.stream("Go", content="all")
    for item in stream:
        if isinstance(item, ContentToolResult):
            break
    stream.close()
    assert results_of(chat)[0].message_expansion is not None
    chat.save(tmp_path / "chat.json")
    assert b"Use it." not in (tmp_path / "chat.json").read_bytes()
    loaded = Chat.load(tmp_path / "chat.json", [document], api_key=TEST_KEY, base_url=server.url)
    loaded.chat("Next", echo="none")
    messages = server.message_requests()[-1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[2]["content"][0]["content"] == "FULL DOCUMENT"
    assert [b.get("text") for b in messages[2]["content"][1:]] == ["Next"]


# -- atomic writes --------------------------------------------------------------------------

KILLED_SAVER = """
import sys, time
from chatlas_like import ChatAnthropic, UserTurn, AssistantTurn
from chatlas_like._persist import chat_file as _persist

chat = ChatAnthropic(model="m", api_key="k", base_url="http://127.0.0.1:9")
chat.set_turns([UserTurn(["new " * 200_000]), AssistantTurn(["newer answer"])])

def pause(temp):
    print(temp, flush=True)
    time.sleep(120)

_persist.before_replace = pause
chat.save(sys.argv[1])
"""


def test_a_process_killed_mid_save_leaves_the_previous_file_intact(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    _, chat = chat_with_results(serve)
    path = tmp_path / "chat.json"
    chat.save(path)
    before = path.read_bytes()
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_SAVER, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    temp = Path(child.stdout.readline().strip())
    assert temp.parent == tmp_path and temp.stat().st_size > 800_000  # written, not renamed
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    assert path.read_bytes() == before
    loaded = Chat.load(path, TOOLS, api_key=TEST_KEY)
    assert to_json(loaded.get_turns()) == to_json(chat.get_turns())


def test_a_save_that_fails_leaves_no_temporary_file(tmp_path: Path) -> None:
    chat = ChatAnthropic(model="m", base_url="http://127.0.0.1:9")
    chat._params["metadata"] = object()  # not JSON
    with pytest.raises(PersistenceError, match="cannot be saved"):
        chat.save(tmp_path / "chat.json")
    assert list(tmp_path.iterdir()) == []


def test_save_keeps_the_permissions_of_the_file_it_replaces(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    _, chat = chat_with_results(serve)
    path = tmp_path / "chat.json"
    path.write_text("{}")
    path.chmod(0o640)
    chat.save(path)
    assert path.stat().st_mode & 0o777 == 0o640


# -- files that are not a saved chat --------------------------------------------------------


@pytest.fixture
def saved(serve: Callable[..., Any], tmp_path: Path) -> Path:
    _, chat = chat_with_results(serve)
    chat.save(tmp_path / "chat.json")
    return tmp_path / "chat.json"


def test_an_empty_file_is_refused_clearly(tmp_path: Path) -> None:
    (tmp_path / "empty.json").write_bytes(b"")
    with pytest.raises(PersistenceError, match="the file is empty"):
        Chat.load(tmp_path / "empty.json")


def test_a_truncated_file_is_refused_clearly(saved: Path) -> None:
    saved.write_bytes(saved.read_bytes()[:-200])
    with pytest.raises(PersistenceError, match="the file is truncated"):
        Chat.load(saved, TOOLS)


def test_a_corrupt_file_is_refused_clearly(saved: Path) -> None:
    raw = bytearray(saved.read_bytes())
    raw[100:110] = b"\x00garbage!\x01"
    saved.write_bytes(bytes(raw))
    with pytest.raises(PersistenceError, match="the file is corrupt"):
        Chat.load(saved, TOOLS)


def test_a_foreign_json_file_is_refused_clearly(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"name": "left-pad", "version": "1.3.0"}')
    with pytest.raises(
        PersistenceError, match=r"not a saved chatlas_like chat \(no 'format' field"
    ):
        Chat.load(tmp_path / "package.json")


def test_a_turns_document_is_pointed_to_from_json(tmp_path: Path) -> None:
    (tmp_path / "turns.json").write_text(to_json([UserTurn(["hi"])]))
    with pytest.raises(PersistenceError, match=r"turns only .*from_json"):
        Chat.load(tmp_path / "turns.json")


def test_a_newer_format_version_is_refused_naming_the_version_needed(saved: Path) -> None:
    data = orjson.loads(saved.read_bytes())
    data["version"] = CHAT_VERSION + 1
    saved.write_bytes(orjson.dumps(data))
    with pytest.raises(PersistenceError, match=f"version {CHAT_VERSION + 1}; .* reads up to"):
        Chat.load(saved, TOOLS)


def test_a_damaged_turn_is_refused_naming_the_file(saved: Path) -> None:
    data = orjson.loads(saved.read_bytes())
    del data["turns"]["turns"][0]["role"]
    saved.write_bytes(orjson.dumps(data))
    with pytest.raises(
        PersistenceError, match=r"chat\.json: a turn could not be read: turns\.turns\[0\]\.role"
    ):
        Chat.load(saved, TOOLS)


def test_what_is_never_persisted_never_reaches_the_json() -> None:
    from chatlas_like import (
        AssistantTurn,
        ContentToolRequest,
        ContentToolResult,
        MessageExpansion,
        UserTurn,
    )
    from chatlas_like._persist.serialize import NEVER_PERSISTED

    request = ContentToolRequest("toolu_1", "t", {})
    error = ValueError("boom")
    rescued = ContentToolResult(error=error, outcome="exception", exception=error, request=request)
    pending = ContentToolResult(
        value="doc", message_expansion=MessageExpansion([UserTurn("x")]), request=request
    )
    text = to_json([AssistantTurn([request]), UserTurn([rescued, pending])])

    def keys(node: object) -> set[str]:
        if isinstance(node, dict):
            return set(node) | {k for v in node.values() for k in keys(v)}
        if isinstance(node, list):
            return {k for v in node for k in keys(v)}
        return set()

    assert not keys(orjson.loads(text)) & NEVER_PERSISTED
    assert '"outcome":"exception"' in text
