"""Bookmarked conversations kept on the server: by an unguessable key, for a while."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from chatlas_like._persist.bookmark_store import BookmarkStore, default_bookmark_dir


def test_a_saved_conversation_is_read_back_by_its_key(tmp_path: Path) -> None:
    store = BookmarkStore(tmp_path)
    key = store.new_key()
    store.save(key, {"version": 1, "turns": []})
    assert store.load(key) == {"version": 1, "turns": []}


def test_keys_are_unguessable_and_never_repeat() -> None:
    keys = {BookmarkStore.new_key() for _ in range(1000)}
    assert len(keys) == 1000 and all(len(k) == 32 for k in keys)


@pytest.mark.parametrize(
    "key", ["../../etc/passwd", "A" * 32, "", None, 42, {"k": 1}, "0" * 31, "0" * 33]
)
def test_a_malformed_key_from_a_url_reads_nothing(tmp_path: Path, key: object) -> None:
    assert BookmarkStore(tmp_path).load(key) is None


def test_an_unknown_key_reads_nothing(tmp_path: Path) -> None:
    assert BookmarkStore(tmp_path).load("0" * 32) is None


def test_a_conversation_past_its_age_reads_nothing(tmp_path: Path) -> None:
    store = BookmarkStore(tmp_path, max_age=60)
    key = store.new_key()
    store.save(key, {"turns": []})
    old = time.time() - 120
    os.utime(tmp_path / f"{key}.json", (old, old))
    assert store.load(key) is None


def test_expired_conversations_are_removed_when_a_bookmark_is_written(tmp_path: Path) -> None:
    old_key = BookmarkStore(tmp_path).new_key()
    BookmarkStore(tmp_path).save(old_key, {})
    old = time.time() - 120
    os.utime(tmp_path / f"{old_key}.json", (old, old))
    BookmarkStore(tmp_path, max_age=60).save(BookmarkStore.new_key(), {})
    assert not (tmp_path / f"{old_key}.json").exists()


def test_the_folder_and_its_files_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    folder = tmp_path / "bookmarks"
    store = BookmarkStore(folder)
    key = store.new_key()
    store.save(key, {})
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / f"{key}.json").stat().st_mode) == 0o600


def test_the_default_folder_is_under_the_users_state_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert default_bookmark_dir() == tmp_path / "chatlas_like" / "shiny-bookmarks"
