"""Hostile input, secrets: no secret a failure carries reaches a file, a store, a screen or a log.

What the model reads of a failure was always redacted; these pin that what is saved,
stored, displayed and warned about goes through the same redaction, and that the
redaction knows the common shapes of a secret.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from chatlas_like import Chat, ContentToolResult, SqliteStore, StoreWarning, to_json
from chatlas_like._core.redact import failure_message, redact, scrub, strip_paths
from chatlas_like._display.render import error_html
from chatlas_like.testing import Reply

from ..conftest import TEST_KEY, make_chat


def leaks_the_key() -> str:
    """Fails, quoting the API key it was handed."""
    raise PermissionError(f"upstream refused key {os.environ['ANTHROPIC_API_KEY']}")


def errs_with_the_key() -> ContentToolResult:
    """Reports a failure as a message that quotes the API key."""
    return ContentToolResult(error=f"bad key {os.environ['ANTHROPIC_API_KEY']}")


def chat_that_failed(serve: Callable[..., Any], tool: Callable[..., Any], **kwargs: Any) -> Chat:
    server = serve([Reply.tool_call(tool.__name__, {}), Reply.text("Sorry."), Reply.text("ok")])
    chat = make_chat(server, **kwargs)
    chat.register_tool(tool)
    chat.chat("Go", echo="none")
    return chat


# -- one redaction wherever a failure goes ---------------------------------------------------


@pytest.mark.parametrize("tool", [leaks_the_key, errs_with_the_key])
def test_a_saved_chat_never_holds_the_api_key_a_tool_error_quoted(
    serve: Callable[..., Any], tmp_path: Path, tool: Callable[..., Any]
) -> None:
    chat = chat_that_failed(serve, tool)
    chat.save(tmp_path / "chat.json")
    saved = (tmp_path / "chat.json").read_bytes()
    assert TEST_KEY.encode() not in saved and b"[REDACTED]" in saved


def test_turns_as_json_never_hold_the_api_key_a_tool_error_quoted(
    serve: Callable[..., Any],
) -> None:
    chat = chat_that_failed(serve, leaks_the_key)
    assert TEST_KEY not in to_json(chat.get_turns())


def test_a_loaded_chat_shows_the_redacted_message_and_keeps_the_type(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    chat = chat_that_failed(serve, leaks_the_key)
    chat.save(tmp_path / "chat.json")
    loaded = Chat.load(tmp_path / "chat.json", [leaks_the_key])
    result = loaded.get_turns()[2].tool_results[0]
    assert result.error is not None and not isinstance(result.error, str)
    assert str(result.error) == "upstream refused key [REDACTED]"
    assert TEST_KEY not in loaded._repr_html_() and TEST_KEY not in loaded._repr_markdown_()


def test_the_runtime_exception_keeps_the_original_message_and_is_never_saved(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    chat = chat_that_failed(serve, leaks_the_key)
    result = chat.get_turns()[2].tool_results[0]
    assert TEST_KEY in str(result.exception)  # for the application's own callbacks
    chat.save(tmp_path / "chat.json")
    saved = (tmp_path / "chat.json").read_text()
    assert "exception" not in keys_in(json.loads(saved))
    assert "Traceback" not in saved and TEST_KEY not in saved


def keys_in(node: Any) -> set[str]:
    """Every mapping key anywhere in a JSON document."""
    if isinstance(node, dict):
        mapping = cast("dict[str, Any]", node)
        return set(mapping).union(*(keys_in(v) for v in mapping.values()))
    if isinstance(node, list):
        return set[str]().union(*(keys_in(v) for v in cast("list[Any]", node)))
    return set()


def test_a_stored_failure_never_holds_the_api_key(
    serve: Callable[..., Any], tmp_path: Path
) -> None:
    chat = chat_that_failed(serve, leaks_the_key, store=tmp_path / "r.db", tenant_id="acme")
    store = SqliteStore(tmp_path / "r.db")
    try:
        (record,) = store.list("acme", chat.run_id)
    finally:
        store.close()
    assert record.result is not None and TEST_KEY not in record.result


def test_a_displayed_failure_never_holds_the_api_key(serve: Callable[..., Any]) -> None:
    chat = chat_that_failed(serve, errs_with_the_key)
    result = chat.get_turns()[2].tool_results[0]
    for shown in (str(result), result._repr_html_(), chat._repr_markdown_(), repr(chat)):
        assert TEST_KEY not in shown


def test_an_error_box_strips_paths_as_the_model_message_does() -> None:
    shown = error_html(RuntimeError(f"cannot read /home/alice/secret/plan.txt with {TEST_KEY}"))
    assert "/home/alice" not in shown and TEST_KEY not in shown and "plan.txt" in shown


def test_a_warning_about_a_failing_callback_is_redacted(serve: Callable[..., Any]) -> None:
    server = serve([Reply.tool_call("errs_with_the_key", {}), Reply.text("ok")])
    chat = make_chat(server)
    chat.register_tool(errs_with_the_key)

    def fragile(result: ContentToolResult) -> None:
        raise RuntimeError(f"logging failed with token {TEST_KEY}")

    chat.on_tool_result(fragile)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chat.chat("Go", echo="none")
    messages = [str(w.message) for w in caught]
    assert messages and all(TEST_KEY not in m for m in messages)


def test_a_store_warning_is_redacted(
    serve: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RESULTS_DB_PASSWORD", "pg-pass-123456")

    class Refusing(SqliteStore):
        def write_many(self, records: Any) -> None:
            raise OSError("cannot write with password pg-pass-123456 to /srv/db/results.db")

    store = Refusing(tmp_path / "r.db")
    with pytest.warns(StoreWarning) as caught:
        chat_that_failed(serve, errs_with_the_key, store=store, tenant_id="acme")
    text = " ".join(str(w.message) for w in caught)
    assert "pg-pass-123456" not in text and "/srv/db" not in text and "results.db" in text


# -- the shapes of a secret --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "cannot reach postgresql://app:hunter2hunter@db.internal:5432/prod",
            "cannot reach postgresql://app:[REDACTED]@db.internal:5432/prod",
        ),
        ("redis://:s3cr3t-pw@cache:6379/0 down", "redis://:[REDACTED]@cache:6379/0 down"),
        ("https://bob:p@ss@example.org/x failed", "https://bob:[REDACTED]@example.org/x failed"),
        ("see https://example.org/a@b stays", "see https://example.org/a@b stays"),
        ("mailto user@example.org stays", "mailto user@example.org stays"),
    ],
)
def test_a_password_in_a_url_is_redacted(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_the_password_of_a_database_url_variable_is_redacted_even_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://app:Tr0ub4dor-3@db:5432/prod")
    assert redact("login failed: password Tr0ub4dor-3 rejected") == (
        "login failed: password [REDACTED] rejected"
    )


@pytest.mark.parametrize("name", ["PGPASSWORD", "DB_PASS", "MYSQL_PWD", "SMTP_PASSWD", "GH_TOKEN"])
def test_values_of_password_style_variables_are_redacted(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv(name, "very-secret-value")
    assert redact("using very-secret-value now") == "using [REDACTED] now"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("authorization: bearer abc123def456ghi789", "authorization: bearer [REDACTED]"),
        ("BEARER abc+def/ghi=jkl+mno/pq==", "BEARER [REDACTED]"),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED]"),
        ("token=eyJhbGci.eyJzdWIi.c2lnbmF0dXJl", "token=[REDACTED]"),
    ],
)
def test_bearer_basic_and_jwt_tokens_are_redacted_in_any_case(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_a_bearer_of_plain_words_is_left_alone() -> None:
    assert redact("the bearer of bad news") == "the bearer of bad news"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("open /home/Jane Doe/project/notes.txt failed", "open notes.txt failed"),
        ("open /Users/Jane Doe/My Files/plan.md failed", "open plan.md failed"),
    ],
)
def test_a_home_folder_with_spaces_is_stripped(text: str, expected: str) -> None:
    assert strip_paths(text) == expected


def test_the_users_own_home_folder_is_stripped_by_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/srv/people/Jane Q Doe")
    assert strip_paths("cannot read /srv/people/Jane Q Doe/.netrc") == "cannot read .netrc"


def test_every_shape_is_redacted_in_what_the_model_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGPASSWORD", "pg-secret-99")
    message = failure_message(
        ConnectionError("postgresql://u:pw123456@h/db pg-secret-99 bearer abcdefghijklmnop+/==")
    )
    assert message == (
        "ConnectionError: postgresql://u:[REDACTED]@h/db [REDACTED] bearer [REDACTED]"
    )


def test_scrub_is_failure_message_without_the_cut() -> None:
    text = f"{TEST_KEY} " + "x" * 5000
    assert scrub(text) == "[REDACTED] " + "x" * 5000
