"""Bookmarked conversations kept on the server, so a bookmark's URL holds only a key.

A Shiny page bookmarked in the URL (``bookmark_store="url"``) would otherwise carry the
whole conversation, tool results and cards included: 50 KB after one answer with three
tool calls, past what proxies accept in a request line (8 KB). Here each bookmark is one
JSON file named by a random key (128 bits, so a key cannot be guessed from another);
the page's URL names the key. A file is kept for ``max_age`` seconds after it was last
written, and files past it are removed when a bookmark is written. What a file holds
is the chat's bookmark state (:func:`~chatlas_like._persist.bookmark.chat_state`): the
history, never an API key.
"""

from __future__ import annotations

import os
import re
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

__all__ = ["DEFAULT_MAX_AGE", "BookmarkStore", "default_bookmark_dir"]

DEFAULT_MAX_AGE = 30 * 24 * 3600.0  # a month after the last answer
_KEY = re.compile(r"[0-9a-f]{32}")
_PRUNE_EVERY = 3600.0  # look for expired files at most hourly


def default_bookmark_dir() -> Path:
    """``$XDG_STATE_HOME/chatlas_like/shiny-bookmarks`` (``~/.local/state/...``)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "chatlas_like" / "shiny-bookmarks"


class BookmarkStore:
    """Conversations of bookmarked pages, one file per key.

    Parameters
    ----------
    directory
        Where the files go (made if missing, readable by its owner only); see
        :func:`default_bookmark_dir`.
    max_age
        Seconds a bookmark is kept after it was last written.
    """

    def __init__(
        self, directory: str | os.PathLike[str] | None = None, *, max_age: float = DEFAULT_MAX_AGE
    ) -> None:
        if max_age <= 0:
            raise ValueError("max_age must be positive")
        self.directory = Path(directory) if directory is not None else default_bookmark_dir()
        self.max_age = max_age
        self._pruned = 0.0

    @staticmethod
    def new_key() -> str:
        """A fresh, unguessable key."""
        return secrets.token_hex(16)

    def save(self, key: str, state: Any) -> None:
        """Keep ``state`` (JSON data) under ``key``, replacing what it held."""
        path = self._path(key)
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Written whole, then renamed: a reader never sees half a file.
        handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as f:
                f.write(orjson.dumps(state))
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        self._prune()

    def load(self, key: object) -> Any | None:
        """The state kept under ``key``; None for a key that is malformed, unknown or
        expired (a bookmark's URL is untrusted input)."""
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            return None
        path = self._path(key)
        try:
            if time.time() - path.stat().st_mtime > self.max_age:
                return None
            return orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return None

    def _path(self, key: str) -> Path:
        if not _KEY.fullmatch(key):
            raise ValueError("a bookmark key is 32 hexadecimal characters")
        return self.directory / f"{key}.json"

    def _prune(self) -> None:
        now = time.time()
        if now - self._pruned < _PRUNE_EVERY:
            return
        self._pruned = now
        for path in self.directory.glob("*.json"):
            try:
                if now - path.stat().st_mtime > self.max_age:
                    path.unlink()
            except OSError:
                continue  # removed meanwhile, by another worker
