"""What the model may read of a failure: short, without paths, without secrets.

A failure reaches the model as ``Type: message`` (or the tool's own message), cut to
``MAX_FAILURE_BYTES`` UTF-8 bytes, with no traceback, absolute paths and ``file://``
URLs reduced to their file name (an OSError's own file names by value), and secrets
replaced by ``[REDACTED]``. Secrets are the values of the process's environment
variables whose names end in ``_KEY``, ``_TOKEN``, ``_SECRET`` or ``_PASSWORD``, and
strings shaped like well-known API keys. This is a safety net: tools should still keep
secrets out of their messages.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import cast

from ._utf8 import cut_to_bytes

__all__ = ["MAX_FAILURE_BYTES", "failure_message", "redact"]

MAX_FAILURE_BYTES = 1_000
REDACTED = "[REDACTED]"
_SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
_MIN_SECRET_LENGTH = 6

_KEY_SHAPES = re.compile(
    r"sk-ant-[A-Za-z0-9_\-]{8,}"  # Anthropic
    r"|sk-(?:proj-)?[A-Za-z0-9_\-]{20,}"  # OpenAI style
    r"|gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}"  # Slack
    r"|AKIA[0-9A-Z]{16}"  # AWS access key id
    r"|AIza[0-9A-Za-z_\-]{30,}"  # Google
    r"|(?<=Bearer )[A-Za-z0-9._\-]{16,}"
)
# An absolute POSIX, Windows (either slash, doubled as repr() writes them) or UNC path,
# or a file:// URL: keep only its last component. A Windows folder name may hold spaces
# (``C:\\Users\\Jane Doe\\``): it runs to the next separator.
_ABS_PATH = re.compile(
    r"(?<![\w.:/\\-])"
    r"(?:(?i:file)://[^\s/'\"<>|]*/(?:[^\s/'\"<>|]+/)*"
    r"|/(?:[^\s/'\"<>|:]+/)+"
    r"|[A-Za-z]:[\\/]+(?:[^\r\n\t\\/'\"<>|:]+[\\/]+)+"
    r"|\\{2,}(?:[^\r\n\t\\'\"<>|:]+\\+)+)"
    r"(?=[^\s/\\'\"<>|:]+)"
)
# An absolute POSIX path in quotes (as an OSError writes its file name): the quotes
# bound it, so its folder names may hold spaces.
_QUOTED_PATH = re.compile(r"(?<=(['\"]))/(?:[^\r\n/'\"]+/)+(?=[^\r\n/'\"]+\1)")
# A traceback pasted into a message: the header and its indented frames.
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):\n(?:[ \t]+[^\n]*(?:\n|$))*")


def _env_secrets() -> tuple[str, ...]:
    values = {
        value
        for name, value in os.environ.items()
        if name.upper().endswith(_SECRET_SUFFIXES) and len(value) >= _MIN_SECRET_LENGTH
    }
    # Longest first, so a secret containing another is replaced whole.
    return tuple(sorted(values, key=len, reverse=True))


@lru_cache(maxsize=8)
def _secret_pattern(secrets: tuple[str, ...]) -> re.Pattern[str] | None:
    if not secrets:
        return None
    return re.compile("|".join(re.escape(s) for s in secrets))


def redact(text: str) -> str:
    """Replace known secrets and key-shaped strings in ``text`` by ``[REDACTED]``."""
    pattern = _secret_pattern(_env_secrets())
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    return _KEY_SHAPES.sub(REDACTED, text)


def strip_paths(text: str) -> str:
    """Reduce absolute file paths and ``file://`` URLs in ``text`` to their file name."""
    return _ABS_PATH.sub("", _QUOTED_PATH.sub("", text))


def _base_name(path: str) -> str:
    """The last component of ``path``, split at either slash."""
    parts = [p for p in re.split(r"[\\/]+", path) if p]
    return parts[-1] if parts else path


def _reduce_file_names(error: object, text: str) -> str:
    """``text`` with an OSError's ``filename``/``filename2`` reduced to their base name.

    By value, so a path with spaces, a relative path or one the patterns of
    :func:`strip_paths` miss is reduced too.
    """
    if not isinstance(error, OSError):
        return text
    for value in (error.filename, error.filename2):
        if isinstance(value, (str, bytes, os.PathLike)):
            path = os.fsdecode(cast("str | bytes | os.PathLike[str]", value))
            base = _base_name(path)
            text = text.replace(repr(cast(object, value)), repr(base)).replace(path, base)
    return text


def describe_error(error: object) -> str:
    """``Type: message`` for an exception, the text itself for a message."""
    if isinstance(error, BaseException):
        from ._errors import RestoredToolError

        if isinstance(error, RestoredToolError):
            name, message = error.type_name, error.message
        else:
            name, message = type(error).__name__, str(error)
        return f"{name}: {message}" if message else name
    return str(error) if error is not None else "The tool call failed."


def failure_message(error: object, limit: int = MAX_FAILURE_BYTES) -> str:
    """What the model reads for a failed call: described, path-free, redacted, cut."""
    described = _reduce_file_names(error, describe_error(error))
    text = redact(strip_paths(_TRACEBACK.sub("", described)))
    cut = cut_to_bytes(text, limit)
    if len(cut) < len(text):
        cut = cut_to_bytes(text, limit - 3) + "..."
    return cut
