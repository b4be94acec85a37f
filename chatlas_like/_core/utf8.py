"""UTF-8 sizes and cuts of text, without encoding all of a huge string at once.

Text that UTF-8 cannot encode (lone surrogates: what ``os.listdir`` or
``os.fsdecode`` give for a file name in another encoding) is made sendable by
:func:`clean_text`: each such character becomes U+FFFD and a note says so.
"""

from __future__ import annotations

import re

__all__ = ["clean_text", "cut_to_bytes", "replace_surrogates", "utf8_length"]

_CHUNK = 1 << 20
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def replace_surrogates(text: str) -> tuple[str, int]:
    """``text`` with each lone surrogate replaced by U+FFFD, and how many there were."""
    if text.isascii():
        return text, 0
    return _SURROGATE.subn(REPLACEMENT, text)


def replacement_note(count: int) -> str:
    """The line that says ``count`` characters were replaced."""
    return (
        f"\n[{count:,} character{'s' if count != 1 else ''} of this text were not valid "
        f"Unicode (such as a file name in another encoding) and were replaced by {REPLACEMENT}]"
    )


def clean_text(text: str) -> str:
    """``text`` made encodable as UTF-8, with a note when characters were replaced."""
    clean, count = replace_surrogates(text)
    return clean + replacement_note(count) if count else text


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
