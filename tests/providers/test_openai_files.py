"""chat.files on OpenAI: its Files API through the real SDK against the loopback server, and
an uploaded file referred to by id on both APIs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chatlas_like import (
    Chat,
    ChatAnthropic,
    ChatOpenAI,
    ChatOpenAICompletions,
    ContentUploaded,
    NotFoundError,
)
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import TEST_KEY

APIS: dict[str, Callable[..., Chat]] = {
    "responses": ChatOpenAI,
    "completions": ChatOpenAICompletions,
}


@pytest.fixture(params=list(APIS))
def api(request: pytest.FixtureRequest) -> str:
    return request.param


def openai_chat(server: LoopbackServer, api: str) -> Chat:
    return APIS[api](base_url=server.openai_url, api_key=TEST_KEY, model="gpt-4.1")


@pytest.fixture
def report(tmp_path: Path) -> Path:
    path = tmp_path / "report.pdf"
    path.write_bytes(b"%PDF-1.4 Q3 revenue rose 12%.\n")
    return path


def test_an_upload_is_a_user_data_file_of_the_openai_key(
    serve: Any, report: Path, api: str
) -> None:
    server = serve([])
    uploaded = openai_chat(server, api).files.upload(report)
    assert isinstance(uploaded, ContentUploaded)
    assert (uploaded.filename, uploaded.mime_type, uploaded.provider) == (
        "report.pdf",
        "application/pdf",
        "openai",
    )
    stored = server.files.files[uploaded.id]
    assert (stored.purpose, stored.data) == ("user_data", report.read_bytes())


def test_an_uploaded_file_is_sent_by_its_id_not_its_bytes(
    serve: Any, report: Path, api: str
) -> None:
    server = serve([Reply.text("Up 12%.")])
    chat = openai_chat(server, api)
    uploaded = chat.files.upload(report)
    chat.chat("What happened in Q3?", uploaded, echo="none")
    (body,) = server.message_requests()
    if api == "responses":
        part = body["input"][1]["content"][0]  # one input message per content, as chatlas
        assert part == {"type": "input_file", "file_id": uploaded.id}
    else:
        part = body["messages"][0]["content"][1]
        assert part == {"type": "file", "file": {"file_id": uploaded.id}}
    sent = [r.raw for r in server.requests if r.path.startswith(("/v1/responses", "/v1/chat"))]
    assert not any(b"revenue rose" in raw for raw in sent)


def test_list_get_download_and_delete_manage_the_files(serve: Any, report: Path, api: str) -> None:
    server = serve([])
    files = openai_chat(server, api).files
    first, second = files.upload(report), files.upload(report)
    assert [f.id for f in files.list()] == [second.id, first.id]
    meta = files.get(first.id)
    assert (meta.filename, meta.size_bytes, meta.provider) == ("report.pdf", 30, "openai")
    assert meta.created_at is not None and meta.extra["purpose"] == "user_data"
    assert files.download(first.id) == report.read_bytes()
    files.delete(first.id)
    assert [f.id for f in files.list()] == [second.id]
    with pytest.raises(NotFoundError):
        files.get(first.id)


def test_a_deleted_file_can_no_longer_be_sent(serve: Any, report: Path, api: str) -> None:
    server = serve([Reply.text("Up 12%.")])
    chat = openai_chat(server, api)
    uploaded = chat.files.upload(report)
    chat.files.delete(uploaded.id)
    with pytest.raises(NotFoundError, match="No such File object"):
        chat.chat("What happened?", uploaded, echo="none")
    assert chat.get_turns() == []


def test_a_file_uploaded_to_anthropic_is_refused_with_a_clear_message(
    serve: Any, report: Path, api: str
) -> None:
    server = serve([Reply.text("never sent")])
    anthropic = ChatAnthropic(base_url=server.url, api_key=TEST_KEY, model="claude-haiku-4-5")
    uploaded = anthropic.files.upload(report)
    with pytest.raises(ValueError, match=r"uploaded to provider 'anthropic'.*Re-upload"):
        openai_chat(server, api).chat("What happened?", uploaded, echo="none")
    assert server.message_requests() == []
