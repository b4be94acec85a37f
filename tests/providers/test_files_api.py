"""FileManager: Anthropic's Files API through the real SDK against the loopback server."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import pytest

from chatlas_like import BadRequestError, ContentUploaded, FileManager, NotFoundError
from chatlas_like.testing import Reply, ScriptedProvider

from ..conftest import make_chat


@pytest.fixture
def report(tmp_path: Path) -> Path:
    path = tmp_path / "report.txt"
    path.write_text("Q3 revenue rose 12%.\n")
    return path


def test_upload_stores_the_file_and_returns_a_reference(serve: Any, report: Path) -> None:
    server = serve([])
    uploaded = make_chat(server).files.upload(report)
    assert isinstance(uploaded, ContentUploaded)
    assert (uploaded.filename, uploaded.mime_type, uploaded.provider) == (
        "report.txt",
        "text/plain",
        "anthropic",
    )
    assert server.files.files[uploaded.id].data == b"Q3 revenue rose 12%.\n"


def test_an_uploaded_file_is_sent_as_a_reference_not_its_bytes(serve: Any, report: Path) -> None:
    server = serve([Reply.text("Up 12%."), Reply.text("Revenue.")])
    chat = make_chat(server, cache="none")
    uploaded = chat.files.upload(report)
    chat.chat("What happened in Q3?", uploaded, echo="none")
    chat.chat("Which figure?", echo="none")
    for body in server.message_requests():
        assert body["messages"][0]["content"][1] == {
            "type": "document",
            "source": {"type": "file", "file_id": uploaded.id},
        }
    sent = [r.raw for r in server.requests if r.path == "/v1/messages"]
    assert len(sent) == 2 and not any(b"revenue rose" in raw for raw in sent)


def test_an_uploaded_image_is_sent_as_an_image(serve: Any) -> None:
    server = serve([Reply.text("A dot.")])
    chat = make_chat(server, cache="none")
    image = chat.files.upload(io.BytesIO(b"\x89PNG..."), mime_type="image/png")
    chat.chat("What is it?", image, echo="none")
    block = server.message_requests()[0]["messages"][0]["content"][1]
    assert block == {"type": "image", "source": {"type": "file", "file_id": image.id}}


def test_list_get_and_delete_manage_the_uploaded_files(serve: Any, report: Path) -> None:
    server = serve([])
    files = make_chat(server).files
    first = files.upload(report)
    second = files.upload(report)
    assert [f.id for f in files.list()] == [second.id, first.id]
    meta = files.get(first.id)
    assert (meta.filename, meta.size_bytes, meta.provider) == ("report.txt", 21, "anthropic")
    assert meta.created_at is not None
    files.delete(first.id)
    assert [f.id for f in files.list()] == [second.id]
    with pytest.raises(NotFoundError):
        files.get(first.id)


def test_a_deleted_file_can_no_longer_be_sent(serve: Any, report: Path) -> None:
    server = serve([Reply.text("Up 12%.")])
    chat = make_chat(server)
    uploaded = chat.files.upload(report)
    chat.files.delete(uploaded.id)
    with pytest.raises(BadRequestError, match="File not found"):
        chat.chat("What happened?", uploaded, echo="none")
    assert chat.get_turns() == []


def test_an_uploaded_file_cannot_be_downloaded_from_anthropic(serve: Any, report: Path) -> None:
    server = serve([])
    files = make_chat(server).files
    uploaded = files.upload(report)
    with pytest.raises(BadRequestError, match="not downloadable"):
        files.download(uploaded.id)


def test_the_async_methods_do_the_same(serve: Any, report: Path) -> None:
    server = serve([])
    files = make_chat(server).files

    async def scenario() -> list[str]:
        uploaded = await files.upload_async(report)
        await files.get_async(uploaded.id)
        listed = [f.id for f in await files.list_async()]
        await files.delete_async(uploaded.id)
        return listed + [f.id for f in await files.list_async()]

    assert asyncio.run(scenario()) == ["file_0001"]


def test_a_file_of_another_provider_is_refused_before_sending(serve: Any) -> None:
    server = serve([])
    chat = make_chat(server)
    foreign = ContentUploaded("file-abc", "application/pdf", provider="openai")
    with pytest.raises(ValueError, match="upload it again"):
        chat.chat("Read", foreign, echo="none")
    assert server.message_requests() == []


def test_a_provider_without_a_files_api_says_so() -> None:
    with pytest.raises(NotImplementedError, match="no files API"):
        FileManager(ScriptedProvider([])).list()
