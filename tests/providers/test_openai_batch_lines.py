"""OpenAI's Batch API as data: the input file, a batch's status, and its result lines read
back (the pure half of the provider; the wire is in tests/chat/test_batch.py)."""

from __future__ import annotations

import orjson

from chatlas_like.providers._openai.batches import (
    batch_failure,
    batch_status,
    input_file,
    outcome,
    output_lines,
)
from chatlas_like.providers._types import BatchStatus


def test_the_input_file_has_one_post_line_per_request() -> None:
    data = input_file("/v1/responses", {"prompt-0": {"model": "m"}, "prompt-1": {"model": "n"}})
    assert [orjson.loads(line) for line in data.splitlines()] == [
        {"custom_id": "prompt-0", "method": "POST", "url": "/v1/responses", "body": {"model": "m"}},
        {"custom_id": "prompt-1", "method": "POST", "url": "/v1/responses", "body": {"model": "n"}},
    ]


def test_a_running_batch_counts_what_is_neither_completed_nor_failed_as_processing() -> None:
    batch = {
        "id": "batch_1",
        "status": "in_progress",
        "request_counts": {"total": 5, "completed": 2, "failed": 1},
    }
    assert batch_status(batch) == BatchStatus("batch_1", False, 2, 2, 1)


def test_completed_failed_expired_and_cancelled_batches_have_ended() -> None:
    for status in ("completed", "failed", "expired", "cancelled"):
        assert batch_status({"id": "b", "status": status}).ended
    assert not batch_status({"id": "b", "status": "finalizing"}).ended


def test_a_refused_input_file_is_explained_line_by_line() -> None:
    errors = {"data": [{"line": 2, "message": "bad url"}, {"message": "too many lines"}]}
    batch = {"id": "batch_9", "status": "failed", "errors": errors}
    assert batch_failure(batch) == "OpenAI refused batch batch_9: line 2: bad url; too many lines"
    assert batch_failure({"id": "b", "status": "completed"}) is None


def test_an_answered_line_gives_its_body() -> None:
    line = {"custom_id": "prompt-0", "response": {"status_code": 200, "body": {"id": "resp_1"}}}
    assert outcome(line) == ("prompt-0", {"id": "resp_1"}, None)


def test_an_http_error_line_gives_its_type_and_message() -> None:
    error = {"error": {"type": "invalid_request_error", "message": "no such model"}}
    line = {"custom_id": "prompt-1", "response": {"status_code": 404, "body": error}}
    assert outcome(line) == ("prompt-1", None, "errored (invalid_request_error: no such model)")


def test_expired_and_cancelled_requests_are_named_as_batch_chat_names_them() -> None:
    expired = {"custom_id": "a", "response": None, "error": {"code": "batch_expired"}}
    cancelled = {"custom_id": "b", "response": None, "error": {"code": "batch_cancelled"}}
    assert outcome(expired) == ("a", None, "expired")
    assert outcome(cancelled) == ("b", None, "canceled")


def test_a_line_that_is_not_a_json_object_is_dropped() -> None:
    lines = output_lines([b'{"custom_id": "a"}\n{cut\n[1]\n', b'{"custom_id": "b"}\n'])
    assert [line["custom_id"] for line in lines] == ["a", "b"]


def test_an_error_message_holding_a_secret_is_redacted() -> None:
    secret = "sk-proj-" + "x" * 40
    error = {"error": {"type": "authentication_error", "message": f"bad key {secret}"}}
    _, _, said = outcome({"custom_id": "a", "response": {"status_code": 401, "body": error}})
    assert said is not None and secret not in said
