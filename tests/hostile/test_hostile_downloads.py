"""Hostile input, downloads: a chat file or a bookmark cannot make us fetch a URL.

A text document given by URL is downloaded by this library when a request is built
(Anthropic fetches only PDFs itself). Only a URL the program asked for with
``content_document_url()`` is ever downloaded; one restored from a chat file, a Shiny
bookmark or ``from_json`` is refused before anything is fetched or sent. Every download
refuses private, loopback and link-local addresses unless allowed, refuses redirects
to another host, caps the body and ends at an overall deadline.

Every server here is ours, on 127.0.0.1; the refused outside addresses are refused
before any connection (an IP in the URL) or resolved by a resolver the test controls.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from chatlas_like import (
    AssistantTurn,
    Chat,
    ContentDocument,
    UserTurn,
    content_document_url,
)
from chatlas_like._core import download
from chatlas_like._core.content_files import fetch_document
from chatlas_like._persist.serialize import from_json, to_json
from chatlas_like.providers._anthropic.provider import AnthropicProvider
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import TEST_KEY, TEST_MODEL, make_chat

BODY = b"region,q3\nMidwest,264\n"


class _Handler(BaseHTTPRequestHandler):
    """Serves ``/doc.csv``, redirects ``/away`` to another host, drips ``/drip``,
    answers ``/big`` with more than the cap (``/big-unsized`` without a length)."""

    hits: list[str]
    redirect_to: str = ""

    def do_GET(self) -> None:
        self.hits.append(self.path)
        if self.path.startswith("/away"):
            self.send_response(302)
            self.send_header("Location", self.redirect_to)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/drip":
            self._drip()
        elif self.path.startswith("/big"):
            self.send_response(200)
            if self.path == "/big":
                self.send_header("Content-Length", str(5_000))
            self.end_headers()
            self.wfile.write(b"x" * 5_000)
        else:
            self.send_response(200)
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            self.wfile.write(BODY)

    def _drip(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        for _ in range(100):  # 10 s at most: a download without a deadline ends, and fails
            try:
                self.wfile.write(b"x")
                self.wfile.flush()
            except OSError:
                return
            time.sleep(0.1)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class DocumentServer:
    """A document server on 127.0.0.1 that records the paths asked for."""

    def __init__(self) -> None:
        handler = type("Handler", (_Handler,), {"hits": []})
        self.handler = handler
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def hits(self) -> list[str]:
        return self.handler.hits

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def documents() -> Iterator[DocumentServer]:
    server = DocumentServer()
    yield server
    server.stop()


def fresh(server: DocumentServer) -> str:
    """A document URL no other test approved (approvals last for the process)."""
    return server.url(f"/{uuid.uuid4().hex}/doc.csv")


def history_with(url: str) -> list[Any]:
    """A conversation that holds a document by URL, as a file or bookmark would carry it."""
    document = ContentDocument(url=url, filename="doc.csv", mime_type="text/csv")
    return [UserTurn(["Read this.", document]), AssistantTurn(["Read."])]


def saved_file(tmp_path: Path, url: str) -> Path:
    chat = Chat(AnthropicProvider(model=TEST_MODEL, api_key=TEST_KEY))
    chat.set_turns(history_with(url))
    path = tmp_path / "chat.json"
    chat.save(path)
    return path


# -- content from a file or a URL is never fetched -------------------------------------------


def test_a_chat_file_never_makes_the_loading_machine_download_its_document(
    tmp_path: Path, documents: DocumentServer, serve: Callable[..., LoopbackServer]
) -> None:
    path = saved_file(tmp_path, fresh(documents))
    model = serve([Reply.text("never")])
    chat = Chat.load(path, api_key=TEST_KEY, base_url=model.url)
    with pytest.raises(ValueError, match=r"not downloading .*content_document_url"):
        chat.chat("And now?", echo="none")
    chat.close()
    assert documents.hits == [] and model.message_requests() == []


def test_a_bookmark_never_makes_the_app_download_its_document(
    documents: DocumentServer, serve: Callable[..., LoopbackServer]
) -> None:
    state = {"version": 1, "turns": orjson_of(history_with(fresh(documents)))}
    model = serve([Reply.text("never")])
    chat = make_chat(model)
    asyncio.run(chat.set_state(state))
    with pytest.raises(ValueError, match="not downloading"):
        chat.chat("And now?", echo="none")
    assert documents.hits == [] and model.message_requests() == []


def orjson_of(turns: list[Any]) -> Any:
    import orjson

    return orjson.loads(to_json(turns))


def test_turns_read_with_from_json_never_download_their_document(
    documents: DocumentServer, serve: Callable[..., LoopbackServer]
) -> None:
    model = serve([Reply.text("never")])
    chat = make_chat(model)
    chat.set_turns(from_json(to_json(history_with(fresh(documents)))))
    with pytest.raises(ValueError, match="not downloading"):
        chat.chat("And now?", echo="none")
    assert documents.hits == []


def test_a_url_the_program_approves_is_downloaded_after_a_load(
    tmp_path: Path, documents: DocumentServer, serve: Callable[..., LoopbackServer]
) -> None:
    url = fresh(documents)
    path = saved_file(tmp_path, url)
    model = serve([Reply.text("Midwest")])
    chat = Chat.load(path, api_key=TEST_KEY, base_url=model.url)
    content_document_url(url, allow_private=True)  # the opt-in: the program says so
    chat.chat("Top region?", echo="none")
    chat.close()
    sent = model.message_requests()[0]["messages"][0]["content"][1]
    assert sent["source"]["data"] == BODY.decode()


# -- every download is guarded ---------------------------------------------------------------


@pytest.fixture
def no_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything tries to connect anywhere."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"a connection was attempted: {args[0]!r}")

    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://169.254.169.254/latest/meta-data/iam", "link-local"),
        ("http://[fe80::1]/notes.txt", "link-local"),
        ("http://127.0.0.1:8080/admin.txt", "loopback"),
        ("http://[::1]/notes.txt", "loopback"),
        ("http://[::ffff:127.0.0.1]/notes.txt", "loopback"),
        ("http://10.0.0.8/intranet.txt", "private"),
        ("http://192.168.1.1/router.txt", "private"),
        ("http://100.64.0.1/cgnat.txt", "private"),
        ("http://0.0.0.0/any.txt", "private"),
    ],
)
def test_private_and_link_local_addresses_are_refused_before_any_connection(
    no_connections: None, url: str, kind: str
) -> None:
    content_document_url(url)
    with pytest.raises(ValueError, match=f"is a {kind} address; pass allow_private=True"):
        fetch_document(url)


def test_a_name_resolving_to_a_private_address_is_refused_before_any_connection(
    no_connections: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def resolve(host: str, port: int) -> list[str]:
        return {"metadata.test": ["169.254.169.254"]}[host]

    monkeypatch.setattr(download, "resolve", resolve)
    url = f"http://metadata.test/{uuid.uuid4().hex}/creds.txt"
    content_document_url(url)
    with pytest.raises(ValueError, match=r"metadata\.test \(169\.254\.169\.254\) is a link-local"):
        fetch_document(url)


def test_a_redirect_to_another_host_is_refused(documents: DocumentServer) -> None:
    documents.handler.redirect_to = documents.url("/elsewhere.csv", host="localhost")
    url = documents.url(f"/away/{uuid.uuid4().hex}.csv")
    content_document_url(url, allow_private=True)
    with pytest.raises(ValueError, match=r"redirects to another host \(localhost\)"):
        fetch_document(url)
    assert documents.hits == [url.split(str(documents.port))[1]]  # never followed


@pytest.mark.parametrize("path", ["/big", "/big-unsized"])
def test_a_body_over_the_cap_is_refused(
    documents: DocumentServer, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    monkeypatch.setattr(download, "MAX_BYTES", 1_000)
    url = documents.url(f"{path}?{uuid.uuid4().hex}")
    content_document_url(url, allow_private=True)
    with pytest.raises(ValueError, match="over 1,000"):
        fetch_document(url)


def test_a_dripping_server_is_given_up_on_at_the_deadline(
    documents: DocumentServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(download, "DEADLINE", 0.5)
    url = documents.url("/drip")
    content_document_url(url, allow_private=True)
    with pytest.raises(ValueError, match=r"not done within 0\.5 s"):
        fetch_document(url)
