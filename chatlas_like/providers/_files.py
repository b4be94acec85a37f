"""Files hosted by the provider: upload once, refer to them in any number of turns.

``chat.files`` is a :class:`FileManager`. ``upload()`` returns a
:class:`~chatlas_like.types.ContentUploaded`, which goes into a prompt like any other
content and reaches the model as a reference (``{"type": "file", "file_id": ...}``)
instead of the file's bytes, so a large document costs its bytes once.

The async methods run the sync ones in a worker thread: one implementation, and the
event loop is never blocked by an upload.
"""

from __future__ import annotations

import asyncio
import builtins
import os
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ._base import Provider
from ._types import FileMetadata, FileSource

if TYPE_CHECKING:
    from .._core.content import ContentUploaded

__all__ = ["FileManager"]


class FileManager:
    """Files hosted by a chat's provider (``chat.files``).

    Parameters
    ----------
    provider
        The chat's provider; one without a files API raises ``NotImplementedError``.

    Examples
    --------
    ```python
    chat = ChatAnthropic()
    report = chat.files.upload("report.pdf")
    chat.chat("Summarise this report.", report)
    chat.chat("And its conclusion?")  # the history refers to the file, not its bytes
    chat.files.delete(report.id)
    ```
    """

    def __init__(self, provider: Provider) -> None:
        self._provider = provider

    def _files(self) -> Provider:
        # A provider without a files API raises NotImplementedError from its methods.
        return self._provider

    def upload(
        self, file: str | os.PathLike[str] | IO[bytes], *, mime_type: str | None = None
    ) -> ContentUploaded:
        """Upload a file once; returns content that refers to it.

        Parameters
        ----------
        file
            A path, or a binary file object.
        mime_type
            The media type; guessed from the name when None.
        """
        return self._files().file_upload(FileSource.read(file, mime_type))

    def list(self) -> builtins.list[FileMetadata]:
        """Every file uploaded with this chat's credentials."""
        return self._files().file_list()

    def get(self, id: str) -> FileMetadata:
        """One file's metadata."""
        return self._files().file_get(id)

    def delete(self, id: str) -> None:
        """Delete an uploaded file (turns that refer to it can then no longer be sent)."""
        self._files().file_delete(id)

    def download(self, id: str, path: str | os.PathLike[str] | None = None) -> bytes:
        """A file's bytes, also written to ``path`` when given.

        Anthropic serves only files its own tools created; an upload is refused.
        """
        data = self._files().file_download(id)
        if path is not None:
            Path(path).write_bytes(data)
        return data

    async def upload_async(
        self, file: str | os.PathLike[str] | IO[bytes], *, mime_type: str | None = None
    ) -> ContentUploaded:
        """:meth:`upload` without blocking the event loop."""
        return await asyncio.to_thread(self.upload, file, mime_type=mime_type)

    async def list_async(self) -> builtins.list[FileMetadata]:
        """:meth:`list` without blocking the event loop."""
        return await asyncio.to_thread(self.list)

    async def get_async(self, id: str) -> FileMetadata:
        """:meth:`get` without blocking the event loop."""
        return await asyncio.to_thread(self.get, id)

    async def delete_async(self, id: str) -> None:
        """:meth:`delete` without blocking the event loop."""
        await asyncio.to_thread(self.delete, id)

    async def download_async(self, id: str, path: str | os.PathLike[str] | None = None) -> bytes:
        """:meth:`download` without blocking the event loop."""
        return await asyncio.to_thread(self.download, id, path)
