"""What may be shown of a failure: short, without paths, without secrets.

A failure reaches the model as chatlas words it, ``Tool call failed with error:
'<message>'`` (:func:`tool_failure_text`), and a log line or a span as ``Type: message``
(:func:`failure_message`); either message is cut to ``MAX_FAILURE_BYTES`` UTF-8 bytes,
with no traceback, absolute paths and ``file://`` URLs reduced to their file name (an
OSError's own file names by value, the user's home folder by value, other home folders
even with spaces in their names), and secrets replaced by ``[REDACTED]``.

Secrets are:

* the values of the process's environment variables named like a secret: ending in
  ``_KEY``, ``TOKEN``, ``SECRET``, ``PASSWORD``, ``PASSWD``, ``_PASS``, ``_PWD`` or
  ``_CREDENTIAL(S)`` (``ANTHROPIC_API_KEY``, ``PGPASSWORD``, ``DB_PASS``,
  ``MYSQL_PWD``), of six characters or more;
* the password of every environment variable whose value is a URL with credentials
  (``DATABASE_URL=postgresql://user:PASSWORD@host/db``), wherever it appears;
* the password of any ``scheme://user:password@host`` URL in the text;
* bearer and basic tokens (``Authorization: Bearer ...``, in any case, ``+/=``
  included), JSON web tokens, and strings shaped like well-known API keys;
* the values given to :func:`remember_secret` (the chat's own API key, when it was
  passed as an argument rather than read from the environment).

One redaction covers everything that leaves a failure: what the model reads
(:func:`tool_failure_text`) and what is saved with a chat, stored, displayed, warned
about (:func:`warn_tool_failure`) or logged (:func:`scrub`, :func:`safe_error_message`:
the same without the cut; :class:`LogRedaction` for the records of libraries).
This is a safety net: tools should still keep secrets out of their messages.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import warnings
from collections.abc import Iterable
from functools import lru_cache
from typing import cast

from .callers import caller_stacklevel
from .errors import RestoredToolError, ToolFailureWarning
from .terminal_safe import strip_controls
from .utf8 import clean_text, cut_to_bytes

__all__ = [
    "MAX_FAILURE_BYTES",
    "LogRedaction",
    "describe_error",
    "failure_message",
    "redact",
    "redact_loggers",
    "remember_secret",
    "safe_description",
    "safe_error_message",
    "scrub",
    "strip_paths",
    "tool_failure_text",
    "warn_tool_failure",
]

MAX_FAILURE_BYTES = 1_000
REDACTED = "[REDACTED]"
_SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")  # the classic four
# A variable named like a secret: a suffix after ``_`` (``DB_PASS``), or a word that
# ends the name whatever precedes it (``PGPASSWORD``, ``GITHUBTOKEN``).
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:KEY|PASS|PWD|CREDENTIALS?)$|(?:TOKEN|SECRET|PASSWORD|PASSWD|APIKEY)$"
)
_MIN_SECRET_LENGTH = 6

# ``scheme://user:password@host``: the password runs to the last ``@`` before the host
# (a raw ``@`` in a password is common) and is replaced; the user name is kept.
_URL_PASSWORD = re.compile(
    r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@'\"<>]*:)"
    r"([^\s/?#'\"<>]+?)"
    r"(?=@[^\s/?#@'\"<>]+(?:[/?#\s'\"<>]|$))"
)
_TOKEN_CHARS = r"[A-Za-z0-9._~+/=\-]"
_KEY_SHAPES = re.compile(
    r"sk-ant-[A-Za-z0-9_\-]{8,}"  # Anthropic
    r"|sk-(?:proj-)?[A-Za-z0-9_\-]{20,}"  # OpenAI style
    r"|gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}"  # Slack
    r"|AKIA[0-9A-Z]{16}"  # AWS access key id
    r"|AIza[0-9A-Za-z_\-]{30,}"  # Google
    # A bearer token, any case: 16 characters or more, or 8 with a digit or a symbol
    # (so "the bearer of bad news" stays).
    rf"|(?<=[Bb][Ee][Aa][Rr][Ee][Rr] )(?:{_TOKEN_CHARS}{{16,}}"
    rf"|(?={_TOKEN_CHARS}*[0-9._~+/\-]){_TOKEN_CHARS}{{8,}})=*"
    r"|(?<=[Bb][Aa][Ss][Ii][Cc] )(?=[A-Za-z0-9+/]*[0-9+/=])[A-Za-z0-9+/]{8,}=*"
    r"|\beyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]+"  # JSON web token
)
# An absolute POSIX, Windows (either slash, doubled as repr() writes them) or UNC path,
# or a file:// URL: keep only its last component. A folder name may hold spaces
# (``C:\\Users\\Jane Doe\\``, ``/srv/My Reports/``; on POSIX not the first one): the
# path runs to the last separator on its line, so prose after it may go too.
_ABS_PATH = re.compile(
    r"(?<![\w.:/\\-])"
    r"(?:(?i:file)://[^\s/'\"<>|]*/(?:[^\s/'\"<>|]+/)*"
    r"|/(?:[^\s/'\"<>|:]+/)+(?:[^\r\n\t/'\"<>|:]+/)*"
    r"|[A-Za-z]:[\\/]+(?:[^\r\n\t\\/'\"<>|:]+[\\/]+)+"
    r"|\\{2,}(?:[^\r\n\t\\'\"<>|:]+\\+)+)"
    r"(?=[^\s/\\'\"<>|:]+)"
)
# A home folder (``/home/NAME/``, ``/Users/NAME/``) whose names may hold spaces, and the
# folders below it: everything up to the last slash goes.
_HOME_PATH = re.compile(r"(?<![\w.:/\\-])/(?:home|Users)/(?:[^\r\n/'\"<>|:]+/)+(?=[^\s/'\"<>|:]+)")
# An absolute POSIX path in quotes (as an OSError writes its file name): the quotes
# bound it, so its folder names may hold spaces.
_QUOTED_PATH = re.compile(r"(?<=(['\"]))/(?:[^\r\n/'\"]+/)+(?=[^\r\n/'\"]+\1)")
# A traceback pasted into a message: the header and its indented frames.
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):\n(?:[ \t]+[^\n]*(?:\n|$))*")


_remembered: set[str] = set()


def remember_secret(value: str | None) -> None:
    """Redact ``value`` from now on in this process, wherever :func:`redact` runs (a
    key passed as an argument, which no environment variable names)."""
    if value and len(value) >= _MIN_SECRET_LENGTH:
        _remembered.add(value)


def _env_secrets() -> tuple[str, ...]:
    values: set[str] = set(_remembered)
    for name, value in os.environ.items():
        if _SECRET_NAME.search(name.upper()):
            values.add(value)
        if "://" in value:
            values.update(m.group(2) for m in _URL_PASSWORD.finditer(value))
    kept = (v for v in values if len(v) >= _MIN_SECRET_LENGTH)
    # Longest first, so a secret containing another is replaced whole.
    return tuple(sorted(kept, key=len, reverse=True))


@lru_cache(maxsize=8)
def _secret_pattern(secrets: tuple[str, ...]) -> re.Pattern[str] | None:
    if not secrets:
        return None
    return re.compile("|".join(re.escape(s) for s in secrets))


def redact(text: str) -> str:
    """Replace known secrets and secret-shaped strings in ``text`` by ``[REDACTED]``."""
    pattern = _secret_pattern(_env_secrets())
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    if "://" in text:
        text = _URL_PASSWORD.sub(rf"\1{REDACTED}", text)
    return _KEY_SHAPES.sub(REDACTED, text)


def strip_paths(text: str) -> str:
    """Reduce absolute file paths and ``file://`` URLs in ``text`` to their file name."""
    home = _home_folder()
    if home is not None and home in text:
        text = _home_pattern(home).sub("", text)
    text = _HOME_PATH.sub("", text)
    return _ABS_PATH.sub("", _QUOTED_PATH.sub("", text))


def _home_folder() -> str | None:
    """The user's home folder, when it is deep enough to name someone (not ``/``)."""
    home = (os.environ.get("HOME") or os.environ.get("USERPROFILE") or "").rstrip("\\/")
    return home if len(home) > 1 and ("/" in home or "\\" in home) else None


@lru_cache(maxsize=4)
def _home_pattern(home: str) -> re.Pattern[str]:
    # The home folder, by value (spaces and all), with the folders below it.
    return re.compile(re.escape(home) + r"[\\/]+(?:[^\r\n\\/'\"<>|]+[\\/]+)*")


def scrub(text: str) -> str:
    """``text`` without a traceback, absolute paths or secrets; not cut.

    Characters UTF-8 cannot encode are replaced (and a note says so), so the text can
    be sent, saved and printed.

    What is saved, stored, displayed, warned about or logged of a failure goes through
    this: it is what :func:`failure_message` does, without the size cut.
    """
    return redact(strip_paths(_TRACEBACK.sub("", clean_text(text))))


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
        if isinstance(error, RestoredToolError):
            name, message = error.type_name, error.message
        else:
            name, message = type(error).__name__, str(error)
        return f"{name}: {message}" if message else name
    return str(error) if error is not None else "The tool call failed."


def safe_error_message(error: BaseException | str) -> str:
    """The message of ``error`` (without its type name), scrubbed (see :func:`scrub`)."""
    if isinstance(error, str):
        return scrub(error)

    message = error.message if isinstance(error, RestoredToolError) else str(error)
    return scrub(_reduce_file_names(error, message))


def safe_description(error: object) -> str:
    """``Type: message`` (see :func:`describe_error`), scrubbed; not cut."""
    return scrub(_reduce_file_names(error, describe_error(error)))


def failure_message(error: object, limit: int = MAX_FAILURE_BYTES) -> str:
    """A failure as logs and spans show it (``Type: message``): path-free, redacted, cut."""
    return _cut(safe_description(error), limit)


def tool_failure_text(error: object, limit: int = MAX_FAILURE_BYTES) -> str:
    """What the model reads for a failed call, as chatlas words it.

    ``Tool call failed with error: '<message>'``: the exception's message (``str(e)``,
    without its type name, as chatlas formats it) or the text given, path-free,
    redacted and cut to ``limit`` bytes.
    """
    if error is None:
        message = "The tool call failed."
    elif isinstance(error, BaseException):
        message = safe_error_message(error)
    else:
        message = scrub(str(error))
    return f"Tool call failed with error: '{_cut(message, limit)}'"


def warn_tool_failure(name: str, error: BaseException | str | None) -> None:
    """Warn ``ToolFailureWarning`` for a call of ``name`` that led to an error, as chatlas
    does (``Calling tool '<name>' led to an error: <message>``), the message redacted
    and control sequences stripped; no traceback is printed."""
    message = safe_error_message(error) if error is not None else "The tool call failed."
    warnings.warn(
        strip_controls(f"Calling tool '{name}' led to an error: {message}"),
        ToolFailureWarning,
        stacklevel=caller_stacklevel(),  # the user's call, never a line of the library
    )


def _cut(text: str, limit: int) -> str:
    cut = cut_to_bytes(text, limit)
    if len(cut) < len(text):
        cut = cut_to_bytes(text, limit - 3) + "..."
    return cut


class LogRedaction(logging.Filter):
    """Makes a log record safe to keep and to print: its message (and a traceback it
    carries) with control sequences stripped and secrets redacted (:func:`redact`).

    On a logger it sees that logger's own records; on a handler, every record the
    handler writes, a child logger's or a library's included. A changed record keeps
    no arguments, and its traceback is kept as redacted text only.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(strip_controls(message))
        if clean != message:  # a clean record keeps its format and arguments
            record.msg, record.args = clean, ()
        if record.exc_info:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text = redact(strip_controls(text))
            record.exc_info = None
        return True


_REDACTION = LogRedaction()
_redacted: set[str] = set()
_redacted_lock = threading.Lock()


def redact_loggers(prefixes: Iterable[str]) -> None:
    """Put :class:`LogRedaction` on every logger now known whose name is one of
    ``prefixes`` or starts with one and a dot (a library's loggers, once it is
    imported), so their records are redacted before any handler sees them."""
    wanted = tuple(prefixes)
    manager = logging.Logger.manager
    with _redacted_lock:
        names = [n for n in list(manager.loggerDict) if n not in _redacted]
        for name in names:
            if any(name == p or name.startswith(p + ".") for p in wanted):
                found = logging.getLogger(name)
                if _REDACTION not in found.filters:
                    found.addFilter(_REDACTION)
                _redacted.add(name)
