"""UTF-8 sizes and cuts of text, without encoding all of a huge string at once."""

from __future__ import annotations

__all__ = ["cut_to_bytes", "utf8_length"]

_CHUNK = 1 << 20


def utf8_length(text: str) -> int:
    """UTF-8 bytes of ``text``, without encoding all of a huge string at once."""
    if text.isascii():
        return len(text)
    if len(text) <= _CHUNK:
        return len(text.encode())
    return sum(len(text[i : i + _CHUNK].encode()) for i in range(0, len(text), _CHUNK))


def cut_to_bytes(text: str, limit: int) -> str:
    """The longest prefix of ``text`` within ``limit`` UTF-8 bytes (whole characters)."""
    head = text[:limit]
    if head.isascii():
        return head
    return head.encode()[:limit].decode(errors="ignore")
