"""The exceptions chatlas_like raises, in one tree.

::

    ChatlasLikeError
    ├── ProviderError                  the model provider answered with an error, or not at all
    │   ├── BadRequestError            400: the request broke one of the API's rules
    │   ├── AuthenticationError        401: missing or wrong API key
    │   ├── PermissionDeniedError      403
    │   ├── NotFoundError              404: unknown model or endpoint
    │   ├── RequestTooLargeError       413
    │   ├── RateLimitError             429: see ``retry_after``
    │   ├── ServerError                500 and other 5xx
    │   │   └── OverloadedError        529
    │   └── ProviderConnectionError    the connection failed, was reset or timed out
    ├── StreamInterruptedError         a response stream ended before the model finished
    ├── ToolLoopLimitError             ``max_tool_rounds`` or ``max_tokens_per_chat`` reached
    ├── HistoryError                   a history that cannot be continued (e.g. a superseded stream)
    ├── ExpansionError (ValueError)    a message expansion built with a role it cannot carry
    ├── PersistenceError               a saved conversation that cannot be loaded
    ├── McpServerError (RuntimeError)  an MCP server that cannot be connected to
    └── StoreError                     a tool-result store that cannot be opened, read or written
                                       (defined in ``_store/_protocol.py``)

    ToolRejectError (Exception)        raised by a callback or a tool to turn a call down
    RestoredToolError (Exception)      stands in for a tool's exception after a load

Warnings (the conversation goes on): ``ToolFailureWarning`` (RuntimeWarning, chatlas's:
a tool call led to an error), ``ExpansionWarning`` (an expansion was not applied, the
full result was sent) and ``StoreWarning`` (results that could not be stored).

Exceptions raised by tools never escape the turn loop: they become tool results.
"""

from __future__ import annotations

import warnings

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "ChatlasLikeError",
    "ExpansionError",
    "HistoryError",
    "McpServerError",
    "NotFoundError",
    "OverloadedError",
    "PermissionDeniedError",
    "PersistenceError",
    "ProviderConnectionError",
    "ProviderError",
    "RateLimitError",
    "RequestTooLargeError",
    "RestoredToolError",
    "ServerError",
    "StreamInterruptedError",
    "ToolFailureWarning",
    "ToolLoopLimitError",
    "ToolRejectError",
]


class ChatlasLikeError(Exception):
    """Base class of every error chatlas_like raises on its own account."""


class ProviderError(ChatlasLikeError):
    """The provider answered with an error status, or the request could not be made.

    Attributes
    ----------
    status_code
        The HTTP status, or None when no response arrived.
    retry_after
        Seconds the provider asked us to wait before retrying, if it said.
    error_type
        The provider's own error type (e.g. ``"overloaded_error"``), if it said.
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
        error_type: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.retry_after = retry_after
        self.error_type = error_type

    @property
    def retryable(self) -> bool:
        """Whether sending the same request again may succeed."""
        return False


class BadRequestError(ProviderError):
    """400: the request broke one of the API's rules; the message says which."""


class AuthenticationError(ProviderError):
    """401: the API key is missing or wrong."""


class PermissionDeniedError(ProviderError):
    """403: the key may not use this model or feature."""


class NotFoundError(ProviderError):
    """404: the model or endpoint does not exist."""


class RequestTooLargeError(ProviderError):
    """413: the request body exceeds the provider's limit."""


class RateLimitError(ProviderError):
    """429: too many requests or tokens; wait ``retry_after`` seconds."""

    @property
    def retryable(self) -> bool:
        return True


class ServerError(ProviderError):
    """5xx: the provider failed; usually worth a retry."""

    @property
    def retryable(self) -> bool:
        return True


class OverloadedError(ServerError):
    """529: the provider is overloaded."""


class ProviderConnectionError(ProviderError):
    """The connection could not be made, was reset, or timed out."""

    @property
    def retryable(self) -> bool:
        return True


class StreamInterruptedError(ChatlasLikeError):
    """A response stream ended before the model finished its answer.

    The partial assistant turn is kept in the history (``partial_reason`` says why;
    its ``finish_reason`` is None, as chatlas's) and its tool requests are answered with
    refused results, so the next ``chat()`` sends a valid request.
    """


class ToolLoopLimitError(ChatlasLikeError):
    """The turn loop stopped at ``max_tool_rounds`` or ``max_tokens_per_chat``.

    Pending tool requests were answered with refused results saying why; the
    history is valid and the next ``chat()`` continues from it.
    """


class HistoryError(ChatlasLikeError):
    """The history cannot be continued the way it was asked to be."""


class ExpansionError(ChatlasLikeError, ValueError):
    """A message expansion was built with content it cannot carry."""


class PersistenceError(ChatlasLikeError):
    """A saved conversation cannot be read: corrupt, truncated, foreign or too new."""


class McpServerError(ChatlasLikeError, RuntimeError):
    """An MCP server could not be connected to, initialised or listed.

    A ``RuntimeError`` too, as chatlas raises for a failed registration. Failures of a
    call to a connected server are not raised: they become ``error`` tool results.
    """


class ToolRejectError(Exception):
    """Raise from ``on_tool_request`` (or in a tool, before it acts) to turn a call down.

    The model receives the reason as a refused result, which it may correct and resend.

    Parameters
    ----------
    reason
        What the model is told.

    Attributes
    ----------
    reason
        The reason as given.
    message
        ``"Tool call rejected. "`` and the reason: the exception's text, as in chatlas.
    """

    def __init__(self, reason: str = "The user has chosen to disallow the tool call.") -> None:
        message = f"Tool call rejected. {reason}"
        super().__init__(message)
        self.reason = reason
        self.message = message


class ToolFailureWarning(RuntimeWarning):
    """A tool call led to an error: ``Calling tool '<name>' led to an error: <message>``.

    chatlas's warning, worded as chatlas words it, the message redacted as what the
    model reads is. As in chatlas it is shown every time (not once per place), unless
    a filter of yours says otherwise; no traceback is printed with it.
    """


# As chatlas: every failure shows, not only the first from a place. Appended, so a
# filter the application set before (``ignore``) still wins.
warnings.filterwarnings("always", category=ToolFailureWarning, append=True)


class RestoredToolError(Exception):
    """A tool's exception as it survives a save and load: its type name and message.

    Parameters
    ----------
    type_name
        The original exception's class name, e.g. ``"ValueError"``.
    message
        The original exception's message.
    """

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(message)
        self.type_name = type_name
        self.message = message

    def __repr__(self) -> str:
        return f"RestoredToolError({self.type_name!r}, {self.message!r})"
