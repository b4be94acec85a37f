"""Hostile input, chat files: a file someone sent you cannot redirect your key or crash a load.

Connection settings (endpoint, headers, client arguments, proxies) come from the code
that loads a chat or from the environment, never from the file; a file that carries
them loads with one warning naming what was ignored. A malformed file, whatever the
field, is refused with a :class:`PersistenceError` naming the field.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from chatlas_like import Chat, PersistenceError, UserTurn
from chatlas_like.providers._anthropic.provider import AnthropicProvider
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import TEST_KEY, TEST_MODEL


def saved_chat(tmp_path: Path, **provider: Any) -> Path:
    """A small saved chat; its document can then be tampered with."""
    chat = Chat(AnthropicProvider(model=TEST_MODEL, api_key=TEST_KEY, **provider))
    chat.set_turns([UserTurn(["Name a city."])])
    path = tmp_path / "chat.json"
    chat.save(path)
    return path


def tamper(path: Path, change: Callable[[dict[str, Any]], Any]) -> Path:
    document = orjson.loads(path.read_bytes())
    change(document)
    path.write_bytes(orjson.dumps(document))
    return path


def hostile(document: dict[str, Any], attacker: str) -> None:
    document["provider"]["base_url"] = attacker
    document["provider"]["client_kwargs"] = {
        "base_url": attacker,
        "default_headers": {"X-Exfiltrate": "1"},
        "proxies": attacker,
    }
    document["provider"]["default_headers"] = {"X-Exfiltrate": "1"}
    document["params"] = {
        "temperature": 0.5,
        "extra_headers": {"X-Exfiltrate": "1"},
        "extra_query": {"leak": "1"},
        "timeout": 1,
    }


@pytest.fixture
def servers(serve: Callable[..., LoopbackServer]) -> tuple[LoopbackServer, LoopbackServer]:
    """Ours, and the attacker's, both on loopback."""
    return serve([Reply.text("ok")] * 3), serve([Reply.text("stolen")] * 3)


def test_a_chat_file_cannot_send_the_key_to_its_own_endpoint(
    tmp_path: Path, servers: tuple[LoopbackServer, LoopbackServer]
) -> None:
    ours, attacker = servers
    path = tamper(saved_chat(tmp_path), lambda d: hostile(d, attacker.url))
    with pytest.warns(UserWarning, match="ignored connection settings") as caught:
        chat = Chat.load(path, api_key=TEST_KEY, base_url=ours.url)
    assert len(caught) == 1
    chat.chat("Hi", echo="none")
    assert attacker.requests == [] and len(ours.message_requests()) == 1


def test_the_warning_names_every_setting_that_was_ignored(
    tmp_path: Path, servers: tuple[LoopbackServer, LoopbackServer]
) -> None:
    ours, attacker = servers
    path = tamper(saved_chat(tmp_path), lambda d: hostile(d, attacker.url))
    with pytest.warns(UserWarning, match="ignored connection settings") as caught:
        Chat.load(path, api_key=TEST_KEY, base_url=ours.url)
    message = str(caught[0].message)
    for name in ("base_url", "client_kwargs", "default_headers", "extra_headers", "extra_query"):
        assert name in message
    assert attacker.url not in message  # names, not values


def test_without_a_base_url_the_environment_gives_the_endpoint(
    tmp_path: Path,
    servers: tuple[LoopbackServer, LoopbackServer],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ours, attacker = servers
    monkeypatch.setenv("ANTHROPIC_BASE_URL", ours.url)
    path = tamper(saved_chat(tmp_path), lambda d: hostile(d, attacker.url))
    with pytest.warns(UserWarning, match="ignored connection settings"):
        chat = Chat.load(path, api_key=TEST_KEY)
    chat.chat("Hi", echo="none")
    assert attacker.requests == [] and len(ours.message_requests()) == 1


def test_headers_from_the_file_are_never_sent(
    tmp_path: Path, servers: tuple[LoopbackServer, LoopbackServer]
) -> None:
    ours, attacker = servers
    path = tamper(saved_chat(tmp_path), lambda d: hostile(d, attacker.url))
    with pytest.warns(UserWarning, match="ignored connection settings"):
        chat = Chat.load(path, api_key=TEST_KEY, base_url=ours.url)
    chat.chat("Hi", echo="none")
    (request,) = [r for r in ours.requests if r.path.startswith("/v1/messages")]
    assert "x-exfiltrate" not in request.headers and "leak" not in request.path
    assert orjson.loads(request.raw)["temperature"] == 0.5  # a sampling setting is data


def test_a_saved_chat_carries_no_connection_settings(tmp_path: Path) -> None:
    path = saved_chat(tmp_path, base_url="http://127.0.0.1:9", client_kwargs={"timeout": 5})
    document = orjson.loads(path.read_bytes())
    assert "base_url" not in document["provider"] and "client_kwargs" not in document["provider"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Chat.load(path, api_key=TEST_KEY)  # an honest file loads without a warning


def test_the_base_url_given_to_load_is_used(tmp_path: Path) -> None:
    path = saved_chat(tmp_path)
    chat = Chat.load(path, api_key=TEST_KEY, base_url="http://127.0.0.1:1234")
    assert isinstance(chat.provider, AnthropicProvider)
    assert chat.provider.base_url == "http://127.0.0.1:1234"


# -- malformed files ----------------------------------------------------------------------------


def set_at(document: dict[str, Any], where: tuple[Any, ...], value: Any) -> None:
    target: Any = document
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value


@pytest.mark.parametrize(
    ("where", "value", "field"),
    [
        (("version",), "1", "version"),
        (("version",), True, "version"),
        (("run_id",), 42, "run_id"),
        (("run_id",), "not-a-uuid", "run_id"),
        (("last_sequence",), "three", "last_sequence"),
        (("last_sequence",), -1, "last_sequence"),
        (("system_prompt",), {"a": 1}, "system_prompt"),
        (("params",), ["temperature"], "params"),
        (("params", "temperature"), "hot", "params.temperature"),
        (("options",), "fast", "options"),
        (("options", "max_result_bytes"), "big", "options.max_result_bytes"),
        (("options", "max_concurrency"), 0, "options.max_concurrency"),
        (("tools",), {"name": "x"}, "tools"),
        (("provider",), "anthropic", "provider"),
        (("provider", "model"), 7, "provider.model"),
        (("provider", "max_tokens"), "many", "provider.max_tokens"),
        (("provider", "cache"), "forever", "provider.cache"),
        (("provider", "reasoning"), [1], "provider.reasoning"),
        (("turns",), [], "turns"),
        (("turns", "version"), "1", "turns.version"),
        (("turns", "turns"), {"role": "user"}, "turns.turns"),
        (("turns", "turns", 0), "hello", "turns.turns[0]"),
        (("turns", "turns", 0, "role"), "wizard", "turns.turns[0].role"),
        (("turns", "turns", 0, "contents"), "hello", "turns.turns[0].contents"),
        (("turns", "turns", 0, "contents", 0), 5, "turns.turns[0].contents[0]"),
        (("turns", "turns", 0, "contents", 0, "type"), ["x"], "turns.turns[0].contents[0]"),
        (("turns", "turns", 0, "contents", 0, "text"), 5, "turns.turns[0].contents[0]"),
        (("turns", "turns", 0, "tokens"), ["a", "b"], "turns.turns[0].tokens"),
    ],
)
def test_a_malformed_field_is_refused_naming_it(
    tmp_path: Path, where: tuple[Any, ...], value: Any, field: str
) -> None:
    path = tamper(saved_chat(tmp_path), lambda d: set_at(d, where, value))
    with pytest.raises(PersistenceError) as caught:
        load_and_show(path)
    assert field in str(caught.value)


def load_and_show(path: Path) -> None:
    """Load ``path`` and render it: a file that loads must also display."""
    Chat.load(path, api_key=TEST_KEY)._repr_html_()


def test_a_malformed_tool_result_is_refused_naming_it(tmp_path: Path) -> None:
    def bad_result(document: dict[str, Any]) -> None:
        document["turns"]["turns"].append(
            {"role": "user", "contents": [{"type": "tool_result", "outcome": "exploded"}]}
        )

    path = tamper(saved_chat(tmp_path), bad_result)
    with pytest.raises(PersistenceError, match=r"turns.turns\[1\].contents\[0\]"):
        Chat.load(path, api_key=TEST_KEY)


# -- limits come from the code that loads, not from the file ----------------------------------


def raise_limits(document: dict[str, Any]) -> None:
    document["options"].update(max_result_bytes=2**40, max_retries=10**6, max_tool_rounds=None)


def test_a_chat_file_cannot_raise_the_loaders_limits(tmp_path: Path) -> None:
    path = tamper(saved_chat(tmp_path), raise_limits)
    with pytest.warns(UserWarning, match="ignored limits looser than the defaults") as caught:
        chat = Chat.load(path, api_key=TEST_KEY)
    assert (chat.options.max_result_bytes, chat.options.max_retries) == (100_000, 3)
    assert chat.options.max_tool_rounds == 25
    message = str(caught[0].message)
    assert "max_result_bytes=1099511627776" in message and "max_tool_rounds=None" in message


def test_a_chat_file_may_tighten_a_limit(tmp_path: Path) -> None:
    path = tamper(saved_chat(tmp_path), lambda d: d["options"].update(max_result_bytes=2_000))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chat = Chat.load(path, api_key=TEST_KEY)
    assert chat.options.max_result_bytes == 2_000


def test_the_loading_code_raises_a_limit_itself(tmp_path: Path) -> None:
    path = tamper(saved_chat(tmp_path), raise_limits)
    with pytest.warns(UserWarning, match="ignored limits"):
        chat = Chat.load(path, api_key=TEST_KEY, max_result_bytes=1_000_000)
    assert chat.options.max_result_bytes == 1_000_000


def saved_tool_chat(tmp_path: Path) -> Path:
    """A saved chat with two answered tool calls."""
    from chatlas_like import AssistantTurn, ContentToolRequest, ContentToolResult

    chat = Chat(AnthropicProvider(model=TEST_MODEL, api_key=TEST_KEY))
    first = ContentToolRequest("toolu_1", "lookup", {"city": "Oslo"})
    second = ContentToolRequest("toolu_2", "lookup", {"city": "Lima"})
    chat.set_turns(
        [
            UserTurn("Weather?"),
            AssistantTurn([first]),
            UserTurn([ContentToolResult(value="sunny", request=first)]),
            AssistantTurn([second]),
            UserTurn([ContentToolResult(value="rain", request=second)]),
            AssistantTurn("Sunny in Oslo, rain in Lima."),
        ]
    )
    path = tmp_path / "tools.json"
    chat.save(path)
    return path


def test_a_chat_file_whose_tool_call_ids_repeat_is_refused_naming_the_id(
    tmp_path: Path,
) -> None:
    def repeat(document: dict[str, Any]) -> None:
        turns = document["turns"]["turns"]
        turns[3]["contents"][0]["id"] = "toolu_1"
        turns[4]["contents"][0]["request"]["id"] = "toolu_1"

    path = tamper(saved_tool_chat(tmp_path), repeat)
    with pytest.raises(PersistenceError, match="'toolu_1' appears twice"):
        Chat.load(path, api_key=TEST_KEY)


def test_a_chat_file_with_a_system_turn_is_refused(tmp_path: Path) -> None:
    def system(document: dict[str, Any]) -> None:
        document["turns"]["turns"][0]["role"] = "system"

    path = tamper(saved_chat(tmp_path), system)
    with pytest.raises(PersistenceError, match=r"turns\[0\]: a system turn"):
        Chat.load(path, api_key=TEST_KEY)


def test_a_chat_file_whose_tool_schema_is_not_an_object_is_refused(tmp_path: Path) -> None:
    def schema(document: dict[str, Any]) -> None:
        document["tools"] = [{"name": "lookup", "input_schema": "x"}]

    path = tamper(saved_chat(tmp_path), schema)
    with pytest.raises(PersistenceError, match=r"tools\[0\]\.input_schema: must be an object"):
        Chat.load(path, api_key=TEST_KEY)


def test_a_chat_file_missing_a_result_mid_conversation_loads_answered_and_goes_on(
    tmp_path: Path, serve: Callable[..., LoopbackServer]
) -> None:
    path = tamper(saved_tool_chat(tmp_path), lambda d: d["turns"]["turns"].pop(2))
    server = serve([Reply.text("ok")])
    with pytest.warns(UserWarning, match="calls tools not given to Chat.load"):
        chat = Chat.load(path, api_key=TEST_KEY, base_url=server.url)
    answer = chat.get_turns()[2]
    assert answer.role == "user" and answer.tool_results[0].is_refusal
    assert str(chat.chat("And now?", echo="none")) == "ok"  # the server checks the pairing
