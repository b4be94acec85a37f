"""The ``chatlas_like`` logger: silent unless asked, readable when on, never a secret.

It is a standard :mod:`logging` logger with a ``NullHandler``, so a library user sees
nothing until they ask. Two ways to ask:

- set ``CHATLAS_LIKE_LOG`` (or chatlas's ``CHATLAS_LOG``) to ``info`` or ``debug``
  before ``import chatlas_like``: a handler writing one readable line per record to
  standard error is installed at that level (``CHATLAS_LIKE_LOG`` wins when both are
  set) on this logger and, as chatlas does, on the provider SDK's loggers
  (``anthropic`` and its HTTP client's, ``httpx2``), so ``debug`` shows the HTTP
  exchange: the request's method and URL, the response's status and headers;
- or configure logging yourself (``logging.getLogger("chatlas_like").setLevel("INFO")``
  and a handler of your choice), as for any library.

At ``info``: each model request (model, messages, bytes, attempt), each retry with its
wait, each model response (tokens, time) and chatlas's token line, each tool call
(name, outcome, duration, bytes sent) and, for a failed one, chatlas's tool-error line,
each expansion; a failed store write at ``warning``. ``debug`` adds the request body,
the answer as this library read it, and each successful tool result as sent.

Every line goes through :func:`scrub`, the redaction tool errors get
(:mod:`chatlas_like._core.redact`): known secrets and key-shaped strings become
``[REDACTED]``, absolute paths their file name. Bodies are cut to the chat's
``max_result_bytes`` after redaction. Failures are logged by their redacted message,
never with a traceback.

Tool names, ids and answers that the model or a server chose reach log lines: every
record of the ``chatlas_like`` loggers (:func:`child` gives the others), and every
record the handler writes (the SDK's included), has its control sequences stripped and
its secrets redacted (:class:`~chatlas_like._core.redact.LogRedaction`) before a
handler prints it, so a log written to a terminal cannot set its title or clipboard,
and the API key never reaches one. The provider puts the same filter on its SDK's
loggers when it makes its client, for handlers of your own.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Mapping

from .._core.redact import LogRedaction, redact_loggers
from .._core.redact import scrub as scrub_failure
from .._core.utf8 import cut_to_bytes, utf8_length
from ..providers._registry import sdk_loggers

__all__ = [
    "ENV_VARS",
    "LOGGER_NAME",
    "child",
    "configure_from_env",
    "enable",
    "logger",
    "scrub",
]

LOGGER_NAME = "chatlas_like"
ENV_VARS = ("CHATLAS_LIKE_LOG", "CHATLAS_LOG")
LEVELS = {"info": logging.INFO, "debug": logging.DEBUG}
FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"


_SANITISED = LogRedaction()
logger = logging.getLogger(LOGGER_NAME)
logger.addHandler(logging.NullHandler())
logger.addFilter(_SANITISED)


def child(name: str) -> logging.Logger:
    """The ``chatlas_like.<name>`` logger, its records sanitised as this module's are
    (a logger's filters see only its own records, not those of its children)."""
    named = logger.getChild(name)
    if _SANITISED not in named.filters:
        named.addFilter(_SANITISED)
    return named


class _ReadableHandler(logging.StreamHandler):  # pyright: ignore[reportMissingTypeArgument]
    """The handler the environment variables install (one per process)."""


def enable(level: int | str = logging.INFO, *, sdk: bool = False) -> logging.Handler:
    """Log at ``level`` to standard error with a readable one-line format.

    The logger then stops passing its records to the root logger, so an application
    whose root logger also prints does not show every line twice. Calling it again
    changes the level and keeps the one handler. With ``sdk``, the provider SDK's
    loggers log at ``level`` through the same handler too (what ``CHATLAS_LOG`` does,
    as chatlas's does).
    """
    handler = _handler_of(logger)
    logger.setLevel(level)
    if sdk:
        for name in sdk_loggers():
            library = logging.getLogger(name)
            library.setLevel(level)
            if handler not in library.handlers:
                library.addHandler(handler)
            library.propagate = False
        redact_loggers(sdk_loggers())
    return handler


def _handler_of(log: logging.Logger) -> logging.Handler:
    for handler in log.handlers:
        if isinstance(handler, _ReadableHandler):
            return handler
    handler = _ReadableHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT, datefmt="%H:%M:%S"))
    handler.addFilter(_SANITISED)  # every record it writes, a library's included
    log.addHandler(handler)
    log.propagate = False
    return handler


def configure_from_env(environ: Mapping[str, str] = os.environ) -> int | None:
    """Apply ``CHATLAS_LIKE_LOG`` / ``CHATLAS_LOG``; the level set, or None if neither is."""
    for name in ENV_VARS:
        value = environ.get(name, "").strip().lower()
        if value:
            break
    else:
        return None
    level = LEVELS.get(value)
    if level is None:
        warnings.warn(  # chatlas's words
            f"{name} is set to '{value}', but the log level must be one of 'debug' or "
            "'info'. Defaulting to 'info'.",
            UserWarning,
            stacklevel=2,
        )
        level = logging.INFO
    enable(level, sdk=True)
    return level


def scrub(text: str, limit: int | None = None) -> str:
    """``text`` redacted as tool errors are (secrets, keys, paths), then cut to ``limit``."""
    text = scrub_failure(text)  # the one redaction (also: no traceback, no unencodable text)
    if limit is not None:
        size = utf8_length(text)
        if size > limit:
            text = f"{cut_to_bytes(text, limit)}... [cut: {limit:,} of {size:,} bytes shown]"
    return text


configure_from_env()
