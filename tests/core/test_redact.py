"""What the model reads of a failure: short, path-free, secret-free, no traceback."""

from __future__ import annotations

import traceback
from typing import Any

import pytest

from chatlas_like import ContentToolResult, RestoredToolError
from chatlas_like._core.redact import MAX_FAILURE_BYTES, failure_message, redact, strip_paths
from chatlas_like.testing import Reply

from ..conftest import make_chat


@pytest.mark.parametrize("suffix", ["_KEY", "_TOKEN", "_SECRET", "_PASSWORD"])
def test_values_of_secret_environment_variables_are_redacted(
    monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    monkeypatch.setenv(f"BILLING{suffix}", "hunter2-but-longer")
    message = failure_message(RuntimeError("login with hunter2-but-longer failed"))
    assert message == "RuntimeError: login with [REDACTED] failed"


def test_other_environment_variables_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BILLING_REGION", "eu-west-region")
    assert failure_message("no quota in eu-west-region") == "no quota in eu-west-region"


def test_a_secret_containing_another_is_redacted_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHORT_TOKEN", "abcdef")
    monkeypatch.setenv("LONG_TOKEN", "abcdef-ghijkl")
    assert redact("x abcdef-ghijkl y abcdef") == "x [REDACTED] y [REDACTED]"


@pytest.mark.parametrize(
    "key",
    [
        "sk-ant-api03-AbCdEf0123456789_xyz",
        "sk-proj-abcdefghijklmnopqrstuvwx",
        "ghp_abcdefghijklmnopqrstuvwxyz0123",
        "xoxb-1234567890-abcdef",
        "AKIAABCDEFGHIJKLMNOP",
        "AIzaSyAbCdEfGhIjKlMnOpQrStUvWxYz0123456",
    ],
)
def test_key_shaped_strings_are_redacted(key: str) -> None:
    assert failure_message(PermissionError(f"rejected key {key}.")) == (
        "PermissionError: rejected key [REDACTED]."
    )


def test_a_bearer_token_is_redacted() -> None:
    assert redact("Authorization: Bearer abcdefghijklmnop.qrstuv") == (
        "Authorization: Bearer [REDACTED]"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("open /home/alice/secret/notes.txt failed", "open notes.txt failed"),
        ("'/srv/app/config.yaml' missing", "'config.yaml' missing"),
        (r"C:\Users\bob\Documents\q3.xlsx locked", "q3.xlsx locked"),
        ("C:/Users/bob/report.pdf locked", "report.pdf locked"),
        (r"\\fileserver\share\plan.docx gone", "plan.docx gone"),
        ("see https://example.org/a/b.html", "see https://example.org/a/b.html"),
        ("relative data/x.csv stays", "relative data/x.csv stays"),
        ("ratio 3/4 stays", "ratio 3/4 stays"),
        ("see file:///home/alice/private/notes.txt", "see notes.txt"),
        ("FILE://host/share/plan.docx gone", "plan.docx gone"),
        ("file:///C:/Users/Jane%20Doe/plan.docx gone", "plan.docx gone"),
        (r"C:\Users\Jane Doe\Documents\plan.docx locked", "plan.docx locked"),
        (r"'C:\\Users\\Jane Doe\\plan.docx' locked", "'plan.docx' locked"),
        (r"\\fileserver\team share\plan.docx gone", "plan.docx gone"),
        ("open '/home/John Smith/keys.txt' failed", "open 'keys.txt' failed"),
        ("cannot open /srv/My Reports/q3 summary.xlsx", "cannot open q3 summary.xlsx"),
    ],
)
def test_absolute_paths_are_reduced_to_their_file_name(text: str, expected: str) -> None:
    assert strip_paths(text) == expected


def test_a_file_name_with_spaces_of_an_os_error_is_reduced_to_its_base_name() -> None:
    error = FileNotFoundError(2, "No such file or directory", "/home/John Smith/secrets/keys.txt")
    assert failure_message(error) == (
        "FileNotFoundError: [Errno 2] No such file or directory: 'keys.txt'"
    )


def test_both_file_names_of_an_os_error_are_reduced_even_when_relative() -> None:
    error = OSError(18, "Invalid cross-device link", "my docs/a.txt", None, "/mnt/Jane Doe/b.txt")
    assert failure_message(error) == (
        "OSError: [Errno 18] Invalid cross-device link: 'a.txt' -> 'b.txt'"
    )


def test_a_file_url_in_a_message_is_reduced_to_its_file_name() -> None:
    message = failure_message(ValueError("see file:///home/alice/private/notes.txt"))
    assert message == "ValueError: see notes.txt"


def test_a_windows_path_with_spaces_in_a_message_is_reduced_to_its_file_name() -> None:
    message = failure_message(PermissionError(r"C:\Users\Jane Doe\Documents\plan.docx is locked"))
    assert message == "PermissionError: plan.docx is locked"


def test_the_cut_is_at_most_1000_bytes_on_a_character_boundary() -> None:
    message = failure_message(ValueError("€" * 1_000))  # 3 bytes each
    encoded = message.encode()
    assert len(encoded) <= MAX_FAILURE_BYTES
    assert message.endswith("€...")
    encoded.decode()  # whole characters only


def test_a_short_message_is_not_cut() -> None:
    text = "x" * (MAX_FAILURE_BYTES - len("ValueError: "))
    assert failure_message(ValueError(text)) == f"ValueError: {text}"


def _traceback_text() -> str:
    try:
        {}["missing"]
    except KeyError:
        return traceback.format_exc()
    raise AssertionError


def test_no_traceback_reaches_the_model_even_inside_a_message() -> None:
    message = failure_message(RuntimeError(f"wrapped: {_traceback_text()}"))
    assert "Traceback" not in message and "File " not in message
    assert message.startswith("RuntimeError: wrapped: KeyError: 'missing'")


def test_an_exception_with_no_message_is_its_type_name() -> None:
    assert failure_message(TimeoutError()) == "TimeoutError"


def test_a_restored_error_reads_as_the_original() -> None:
    assert failure_message(RestoredToolError("OSError", "disk full")) == "OSError: disk full"


def test_a_denial_reason_is_redacted_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADMIN_PASSWORD", "correct-horse")
    result = ContentToolResult(value="password correct-horse is wrong", outcome="denied")
    assert result.get_model_value() == "password [REDACTED] is wrong"


def leaky(city: str) -> str:
    """Raises with a path and a secret in its message."""
    raise FileNotFoundError(f"/var/lib/weather/{city}.json not found (key sk-ant-api03-abcdef1234)")


def test_what_the_model_reads_of_a_raising_tool_is_redacted(serve: Any) -> None:
    server = serve([Reply.tool_call("leaky", {"city": "oslo"}), Reply.text("Ok.")])
    chat = make_chat(server)
    chat.register_tool(leaky)
    chat.chat("Go", echo="none")
    sent = server.message_requests()[1]["messages"][-1]["content"][0]
    assert sent["content"] == "Tool call failed with error: 'oslo.json not found (key [REDACTED])'"
    result = chat.get_turns()[2].tool_results[0]
    assert "/var/lib/weather" in str(result.exception)  # the run keeps the full exception
