"""The Files API on the loopback server, in Anthropic's and OpenAI's shapes: upload,
list, get, delete, download, in memory.

A request from the ``anthropic`` SDK (it sends ``anthropic-version``) gets Anthropic's
shapes: uploaded files are not downloadable (the real API serves only files its own
tools created). Any other request gets OpenAI's (``object: "file"``, a ``purpose``,
sizes in ``bytes``), and its files are downloadable, as the batch API's input and
output files are. A message that refers to a file the server does not hold is refused
with a 400, as the real APIs refuse an unknown or deleted file.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any, cast

from ._scripted import Counters, Response

__all__ = ["FileStore", "StoredFile"]

_PREFIX = "/v1/files"


@dataclass(frozen=True, slots=True)
class StoredFile:
    """One uploaded file."""

    id: str
    filename: str
    mime_type: str
    data: bytes
    created_at: datetime
    purpose: str = "user_data"

    def metadata(self, openai: bool = False) -> dict[str, Any]:
        if openai:
            return {
                "id": self.id,
                "object": "file",
                "bytes": len(self.data),
                "created_at": int(self.created_at.timestamp()),
                "filename": self.filename,
                "purpose": self.purpose,
                "status": "processed",
                "expires_at": None,
                "status_details": None,
            }
        return {
            "type": "file",
            "id": self.id,
            "filename": self.filename,
            "mime_type": self.mime_type,
            "size_bytes": len(self.data),
            "created_at": self.created_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "downloadable": False,
        }


class FileStore:
    """The server's uploaded files, newest last."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.files: dict[str, StoredFile] = {}

    def handle(
        self, method: str, path: str, headers: dict[str, str], raw: bytes, counters: Counters
    ) -> Response | None:
        """Answer a Files API request, or None for another path."""
        if path != _PREFIX and not path.startswith(_PREFIX + "/"):
            return None
        openai = "anthropic-version" not in headers
        rest = path[len(_PREFIX) :].strip("/")
        if not rest:
            if method == "POST":
                return self._upload(headers.get("content-type", ""), raw, counters, openai)
            if method == "GET":
                return self._list(openai)
        file_id, _, tail = rest.partition("/")
        with self._lock:
            stored = self.files.get(file_id)
        if stored is None:
            return _error(404, "not_found_error", f"File not found: {file_id}", openai)
        if method == "GET" and not tail:
            return Response(json=stored.metadata(openai))
        if method == "GET" and tail == "content":
            if openai:
                return Response(raw=stored.data, content_type=stored.mime_type)
            return _error(400, "invalid_request_error", f"File {file_id} is not downloadable")
        if method == "DELETE" and not tail:
            with self._lock:
                self.files.pop(file_id, None)
            if openai:
                return Response(json={"id": file_id, "object": "file", "deleted": True})
            return Response(json={"id": file_id, "type": "file_deleted"})
        return _error(404, "not_found_error", f"no route for {method} {path}", openai)

    def add(
        self, counters: Counters, filename: str, data: bytes, purpose: str, mime_type: str
    ) -> StoredFile:
        """Hold a file the server made (a batch's output) or was sent."""
        stored = StoredFile(
            id=counters.next("file"),
            filename=filename,
            mime_type=mime_type,
            data=data,
            created_at=datetime.now(UTC),
            purpose=purpose,
        )
        with self._lock:
            self.files[stored.id] = stored
        return stored

    def get(self, file_id: str) -> StoredFile | None:
        with self._lock:
            return self.files.get(file_id)

    def unknown_references(self, body: dict[str, Any]) -> list[str]:
        """File ids that ``body``'s messages refer to and the server does not hold."""
        referred = [
            str(_dict(block.get("source")).get("file_id"))
            for message in _list(body.get("messages"))
            for block in map(_dict, _list(_dict(message).get("content")))
            if _dict(block.get("source")).get("type") == "file"
        ]
        with self._lock:
            return [file_id for file_id in referred if file_id not in self.files]

    def unknown_openai_references(self, body: dict[str, Any]) -> list[str]:
        """File ids that an OpenAI request's input refers to and the server does not hold:
        ``input_file`` and ``input_image`` parts (Responses), ``file`` parts (Completions)."""
        referred: list[str] = []
        for item in map(_dict, _list(body.get("input")) + _list(body.get("messages"))):
            for part in map(_dict, _list(item.get("content")) + _list(item.get("output"))):
                file_id = part.get("file_id") or _dict(part.get("file")).get("file_id")
                if isinstance(file_id, str):
                    referred.append(file_id)
        with self._lock:
            return [file_id for file_id in referred if file_id not in self.files]

    def _upload(self, content_type: str, raw: bytes, counters: Counters, openai: bool) -> Response:
        form = _form(content_type, raw)
        if form is None or "file" not in form.files:
            message = "file: Field required (multipart form)"
            return _error(400, "invalid_request_error", message, openai)
        purpose = form.fields.get("purpose", "")
        if openai and not purpose:
            return _error(400, "invalid_request_error", "purpose: Field required", openai)
        filename, mime_type, data = form.files["file"]
        stored = self.add(counters, filename, data, purpose or "user_data", mime_type)
        return Response(json=stored.metadata(openai))

    def _list(self, openai: bool) -> Response:
        with self._lock:
            data = [f.metadata(openai) for f in reversed(self.files.values())]
        if openai:
            return Response(json={"object": "list", "data": data, "has_more": False})
        return Response(
            json={
                "data": data,
                "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
        )


@dataclass(slots=True)
class _Form:
    fields: dict[str, str]
    files: dict[str, tuple[str, str, bytes]]  # name: (filename, media type, bytes)


def _form(content_type: str, raw: bytes) -> _Form | None:
    """The fields and files of a multipart/form-data body."""
    if not content_type.startswith("multipart/form-data"):
        return None
    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw
    )
    form = _Form({}, {})
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        filename = part.get_filename()
        if filename is None:
            form.fields[name] = data.decode("utf-8", "replace")
        else:
            form.files[name] = (filename or "upload", part.get_content_type(), data)
    return form


def _dict(value: Any) -> dict[str, Any]:
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return cast(list[Any], value) if isinstance(value, list) else []


def _error(status: int, error_type: str, message: str, openai: bool = False) -> Response:
    if openai:
        error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
        return Response(status=status, json={"error": error})
    return Response(
        status=status, json={"type": "error", "error": {"type": error_type, "message": message}}
    )
