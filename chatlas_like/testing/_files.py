"""Anthropic's Files API on the loopback server: upload, list, get, delete, in memory.

Uploaded files are not downloadable (as with the real API, which serves only files
its own tools created), and a message that refers to a file the server does not hold
is refused with a 400, as the real API refuses an unknown or deleted file.
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
    created_at: str

    def metadata(self) -> dict[str, Any]:
        return {
            "type": "file",
            "id": self.id,
            "filename": self.filename,
            "mime_type": self.mime_type,
            "size_bytes": len(self.data),
            "created_at": self.created_at,
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
        rest = path[len(_PREFIX) :].strip("/")
        if not rest:
            if method == "POST":
                return self._upload(headers.get("content-type", ""), raw, counters)
            if method == "GET":
                return self._list()
        file_id, _, tail = rest.partition("/")
        with self._lock:
            stored = self.files.get(file_id)
        if stored is None:
            return _error(404, "not_found_error", f"File not found: {file_id}")
        if method == "GET" and not tail:
            return Response(json=stored.metadata())
        if method == "GET" and tail == "content":
            return _error(400, "invalid_request_error", f"File {file_id} is not downloadable")
        if method == "DELETE" and not tail:
            with self._lock:
                self.files.pop(file_id, None)
            return Response(json={"id": file_id, "type": "file_deleted"})
        return _error(404, "not_found_error", f"no route for {method} {path}")

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

    def _upload(self, content_type: str, raw: bytes, counters: Counters) -> Response:
        part = _file_part(content_type, raw)
        if part is None:
            return _error(400, "invalid_request_error", "file: Field required (multipart form)")
        filename, mime_type, data = part
        stored = StoredFile(
            id=counters.next("file"),
            filename=filename,
            mime_type=mime_type,
            data=data,
            created_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        )
        with self._lock:
            self.files[stored.id] = stored
        return Response(json=stored.metadata())

    def _list(self) -> Response:
        with self._lock:
            data = [f.metadata() for f in reversed(self.files.values())]
        return Response(
            json={
                "data": data,
                "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
        )


def _file_part(content_type: str, raw: bytes) -> tuple[str, str, bytes] | None:
    """The ``file`` field of a multipart/form-data body: (filename, media type, bytes)."""
    if not content_type.startswith("multipart/form-data"):
        return None
    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw
    )
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") != "file":
            continue
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        filename = part.get_filename() or "upload"
        return filename, part.get_content_type(), data
    return None


def _dict(value: Any) -> dict[str, Any]:
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return cast(list[Any], value) if isinstance(value, list) else []


def _error(status: int, error_type: str, message: str) -> Response:
    return Response(
        status=status, json={"type": "error", "error": {"type": error_type, "message": message}}
    )
