"""The ``chatlas_like`` logger: quiet by default, CHATLAS_LOG / CHATLAS_LIKE_LOG, no secrets."""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from chatlas_like import ContentToolResult, expand
from chatlas_like._observe.log import LOGGER_NAME, configure_from_env, logger, scrub
from chatlas_like.providers._registry import sdk_loggers
from chatlas_like.testing import Reply

from ..conftest import TEST_MODEL, make_chat, run_in_child

Serve = Callable[..., Any]
FAST_RETRY = {"retry-after-ms": "5"}
ENV_SECRET = "pk-live-51HxQeRt9aBcDeF"
KEY_SHAPED = "sk-ant-api03-Zx8Yw7Vu6Ts5Rq4Po3"
DEPLOY_PATH = "/srv/deploy/payments/config/credentials.toml"


@pytest.fixture(autouse=True)
def _restore_logger() -> Iterator[None]:
    """Leave the package's and the SDK's loggers as the test found them (level, handlers,
    propagation): CHATLAS_LOG sets them all."""
    loggers = [logger, *(logging.getLogger(name) for name in sdk_loggers())]
    saved = [(log.level, list(log.handlers), log.propagate) for log in loggers]
    yield
    for log, (level, handlers, propagate) in zip(loggers, saved, strict=True):
        log.setLevel(level)
        log.handlers[:] = handlers
        log.propagate = propagate


@pytest.fixture
def at_debug(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Every logger of the process at DEBUG, captured."""
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger=LOGGER_NAME)
    return caplog


def ours(caplog: pytest.LogCaptureFixture, level: int | None = None) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == LOGGER_NAME and (level is None or r.levelno == level)
    ]


def weather(city: str) -> str:
    """The weather in a city."""
    return f"{city}: sunny"


def leaky_tool_chat(serve: Serve, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("PAYMENTS_API_KEY", ENV_SECRET)

    def charge(amount: int) -> str:
        """Charge a card."""
        raise RuntimeError(
            f"gateway refused key {ENV_SECRET} (fallback {KEY_SHAPED}); see {DEPLOY_PATH}"
        )

    server = serve([Reply.tool_call("charge", {"amount": 5}), Reply.text("It failed.")])
    chat = make_chat(server)
    chat.register_tool(charge)
    return chat


# -- no secrets, at any level -------------------------------------------------------------------


def test_no_secret_from_a_tool_error_reaches_any_log_record_at_any_level(
    serve: Serve, monkeypatch: pytest.MonkeyPatch, at_debug: pytest.LogCaptureFixture
) -> None:
    chat = leaky_tool_chat(serve, monkeypatch)
    chat.chat("Charge 5", echo="none")
    assert ours(at_debug)  # the chat was logged, at several levels
    for record in at_debug.records:
        text = record.getMessage() + (record.exc_text or "") + str(record.exc_info or "")
        for secret in (ENV_SECRET, KEY_SHAPED, "/srv/deploy/payments"):
            assert secret not in text, (record.name, record.levelname)


def test_the_chats_own_api_key_reaches_no_log_record_at_any_level(
    serve: Serve, at_debug: pytest.LogCaptureFixture
) -> None:
    from chatlas_like import ChatAnthropic

    api_key = "sk-ant-api03-OwnKeyOfThisChat9876543210"
    server = serve([Reply.tool_call("weather", {"city": "Oslo"}), Reply.text("Sunny.")])
    chat = ChatAnthropic(model=TEST_MODEL, api_key=api_key, base_url=server.url)
    chat.register_tool(weather)
    chat.chat("Weather?", echo="none")
    chat.close()
    assert ours(at_debug)
    assert any(r.name.startswith(("anthropic", "httpx", "httpcore")) for r in at_debug.records)
    for record in at_debug.records:  # the SDK's and httpx's debug records included
        text = record.getMessage() + (record.exc_text or "") + str(record.args or "")
        assert api_key not in text and api_key[-12:] not in text, (record.name, record.levelname)


def test_an_sdk_record_is_redacted_whoever_handles_it(
    serve: Serve, at_debug: pytest.LogCaptureFixture
) -> None:
    from chatlas_like import ChatAnthropic

    api_key = "plain-key-no-shape-1234"  # given as an argument: no variable names it
    server = serve([Reply.text("Hi.")])
    chat = ChatAnthropic(model=TEST_MODEL, api_key=api_key, base_url=server.url)
    chat.chat("Hi", echo="none")
    chat.close()
    logging.getLogger("anthropic._base_client").debug("header x-api-key: %s", api_key)
    logging.getLogger("httpx2").info("\x1b]0;title\x07key %s", api_key)
    sdk = [r.getMessage() for r in at_debug.records if r.name.startswith(("anthropic", "httpx2"))]
    assert "header x-api-key: [REDACTED]" in sdk and "key [REDACTED]" in sdk
    assert not any(api_key in line or "\x1b" in line for line in sdk)


def test_chatlas_log_debug_shows_the_sdks_request_and_response_lines(serve: Serve) -> None:
    server = serve([Reply.text("Hello.")])
    child = run_chat_in_child(server.url, CHATLAS_LOG="debug")
    assert child.returncode == 0, child.stderr
    sdk = [line for line in child.stderr.splitlines() if " anthropic._base_client DEBUG " in line]
    assert any(f"Sending HTTP Request: POST {server.url}/v1/messages" in line for line in sdk)
    assert any("HTTP Response: POST " in line and '"200 OK"' in line for line in sdk)
    assert "response body:" not in child.stderr  # our reading is labelled as ours


def test_a_failed_tool_call_is_logged_with_its_redacted_message(
    serve: Serve, monkeypatch: pytest.MonkeyPatch, at_debug: pytest.LogCaptureFixture
) -> None:
    chat = leaky_tool_chat(serve, monkeypatch)
    chat.chat("Charge 5", echo="none")
    call_id = chat.get_turns()[1].tool_requests[0].id
    (line,) = [m for m in ours(at_debug, logging.INFO) if m.startswith("tool charge")]
    assert line.startswith(f"tool charge ({call_id}): exception, ")
    assert line.endswith(
        ": RuntimeError: gateway refused key [REDACTED] (fallback [REDACTED]); see credentials.toml"
    )


def test_scrub_redacts_like_tool_errors_and_cuts_to_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PAYMENTS_API_KEY", ENV_SECRET)
    assert scrub(f"key={ENV_SECRET} at {DEPLOY_PATH}") == "key=[REDACTED] at credentials.toml"
    assert scrub("é" * 10, limit=5) == "éé... [cut: 5 of 20 bytes shown]"


# -- what info and debug show -----------------------------------------------------------------


def test_info_logs_each_request_response_and_tool_call(
    serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    server = serve([Reply.tool_call("weather", {"city": "Oslo"}), Reply.text("Sunny.")])
    chat = make_chat(server)
    chat.register_tool(weather)
    chat.chat("Weather?", echo="none")
    call_id = chat.get_turns()[1].tool_requests[0].id
    lines = ours(caplog)
    assert [line.split(":")[0] for line in lines] == [
        "model request",
        "model response",
        "Provider 'Anthropic' generated a response of 19 tokens from an input of 27 tokens "
        "and 0 cached input tokens.",
        f"tool weather ({call_id})",
        "model request",
        "model response",
        "Provider 'Anthropic' generated a response of 7 tokens from an input of 97 tokens "
        "and 0 cached input tokens.",
    ]
    assert lines[0].startswith(f"model request: model={TEST_MODEL}, 1 messages, ")
    assert lines[0].endswith(" bytes")
    assert lines[1].startswith("model response: id=msg_")
    assert ", stop=tool_use, tokens in=" in lines[1]
    assert lines[3].startswith(f"tool weather ({call_id}): success, ")
    assert lines[3].endswith(" ms, 11 bytes sent")
    assert lines[4].startswith(f"model request: model={TEST_MODEL}, 3 messages, ")


def test_info_logs_a_retry_with_its_wait(serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    server = serve(
        [Reply.error(529, "overloaded_error", "busy", headers=FAST_RETRY), Reply.text("Hello.")]
    )
    chat = make_chat(server)
    chat.chat("Hi", echo="none")
    (line,) = [m for m in ours(caplog) if m.startswith("retry")]
    assert line.startswith("retry 1 of 3 in 0.01 s after OverloadedError: ")


def test_info_logs_an_expansion(serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)

    def manual() -> ContentToolResult:
        """The manual."""
        return expand(
            "the whole manual",
            [
                {"role": "assistant", "content": "Here is the manual."},
                {"role": "user", "content": "Manual text."},
            ],
        )

    server = serve([Reply.tool_call("manual", {}), Reply.text("Read it.")])
    chat = make_chat(server)
    chat.register_tool(manual)
    chat.chat("Read the manual", echo="none")
    call_id = chat.get_turns()[1].tool_requests[0].id
    assert f"expansion of manual ({call_id}): 2 messages inserted" in ours(caplog)


def test_a_cut_result_is_logged_with_both_sizes(
    serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)

    def big() -> str:
        """A long text."""
        return "x" * 5000

    server = serve([Reply.tool_call("big", {}), Reply.text("ok")])
    chat = make_chat(server, max_result_bytes=1000)
    chat.register_tool(big)
    chat.chat("go", echo="none")
    sent = chat.get_turns()[2].tool_results[0].stored_length
    (line,) = [m for m in ours(caplog) if m.startswith("tool big")]
    assert line.endswith(f" ms, {sent:,} bytes sent (cut from 5,000)")


def test_bodies_are_logged_at_debug_only(serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    server = serve([Reply.text("Hello."), Reply.text("Again.")])
    chat = make_chat(server)
    chat.chat("Hi", echo="none")
    assert ours(caplog, logging.DEBUG) == []
    caplog.set_level(logging.DEBUG, logger=LOGGER_NAME)
    chat.chat("Once more", echo="none")
    request, response = ours(caplog, logging.DEBUG)
    assert request.startswith('request body: {"model":') and '"Once more"' in request
    # our reading of the answer, never passed off as the body (the SDK's lines show that)
    assert response.startswith("answer as read: {") and '"Again."' in response


def test_a_logged_body_is_cut_to_max_result_bytes(
    serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER_NAME)
    server = serve([Reply.text("Hello.")])
    chat = make_chat(server, max_result_bytes=1500)
    chat.chat("long " * 2000, echo="none")
    (request,) = [m for m in ours(caplog, logging.DEBUG) if m.startswith("request body")]
    assert request.endswith(" bytes shown]")
    assert len(request.encode()) < 1500 + 100


def test_a_failed_store_write_is_logged_as_a_warning(
    serve: Serve, caplog: pytest.LogCaptureFixture, tmp_path: Any
) -> None:
    from chatlas_like import SqliteStore, StoreWarning

    caplog.set_level(logging.WARNING, logger=LOGGER_NAME)
    server = serve([Reply.tool_call("weather", {"city": "Oslo"}), Reply.text("Sunny.")])
    chat = make_chat(server, store=SqliteStore(tmp_path / "no" / "such" / "dir.db"))
    chat.register_tool(weather)
    with pytest.warns(StoreWarning):
        chat.chat("Weather?", echo="none")
    (line,) = ours(caplog, logging.WARNING)
    assert line.startswith(f"tool results 1-1 of run {chat.run_id} were not stored: StoreError")
    assert str(tmp_path) not in line


# -- turning it on ------------------------------------------------------------------------------


def run_chat_in_child(url: str, **env: str) -> subprocess.CompletedProcess[str]:
    code = (
        "from chatlas_like import ChatAnthropic\n"
        f"chat = ChatAnthropic(model={TEST_MODEL!r}, api_key='k', base_url={url!r})\n"
        "print(chat.chat('Hi', echo='none'))\n"
    )
    return run_in_child(code, **env)


def test_nothing_is_logged_by_default(serve: Serve) -> None:
    server = serve([Reply.text("Hello.")])
    child = run_chat_in_child(server.url)
    assert child.returncode == 0, child.stderr
    assert child.stdout == "Hello.\n"
    assert child.stderr == ""


def test_chatlas_log_info_prints_readable_lines_to_stderr(serve: Serve) -> None:
    server = serve([Reply.text("Hello.")])
    child = run_chat_in_child(server.url, CHATLAS_LOG="info")
    assert child.returncode == 0, child.stderr
    lines = child.stderr.splitlines()
    assert [line.split(" ", 3)[1:3] for line in lines] == [
        ["chatlas_like", "INFO"],
        ["httpx2", "INFO"],  # the SDK's HTTP client, turned on as chatlas turns it on
        ["chatlas_like", "INFO"],
        ["chatlas_like", "INFO"],
    ]
    assert lines[0].split(" ", 3)[3].startswith(f"model request: model={TEST_MODEL}")
    assert lines[1].split(" ", 3)[3].startswith("HTTP Request: POST ")


def test_chatlas_like_log_wins_over_chatlas_log(serve: Serve) -> None:
    server = serve([Reply.text("Hello.")])
    child = run_chat_in_child(server.url, CHATLAS_LOG="info", CHATLAS_LIKE_LOG="debug")
    assert child.returncode == 0, child.stderr
    assert " chatlas_like DEBUG request body: " in child.stderr


def test_an_unknown_level_warns_and_logs_at_info() -> None:
    with pytest.warns(
        UserWarning,
        match=r"CHATLAS_LOG is set to 'loud', but the log level must be one of 'debug' or "
        r"'info'\. Defaulting to 'info'\.",
    ):
        level = configure_from_env({"CHATLAS_LOG": "loud"})
    assert level == logging.INFO
    assert logger.level == logging.INFO


def test_no_variable_leaves_the_logger_alone() -> None:
    assert configure_from_env({}) is None
    assert logger.level == logging.NOTSET
