"""ContentToolResult: what a tool call ended in, and what the model reads of it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args

from ._content import Content, ContentToolRequest

if TYPE_CHECKING:
    from ._expansion import MessageExpansion

__all__ = ["ContentToolResult", "ModelFormat", "Outcome", "failed", "refused"]

Outcome = Literal["success", "error", "exception", "refused", "denied"]
ModelFormat = Literal["auto", "json", "str", "as_is"]

OUTCOMES: frozenset[str] = frozenset(get_args(Outcome))
FAILED_OUTCOMES: frozenset[str] = frozenset({"error", "exception", "refused"})
MODEL_FORMATS: frozenset[str] = frozenset(get_args(ModelFormat))


class _Unset:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<unset>"

    # One sentinel: a copied result (Chat.copy() deep-copies turns) must still see UNSET.
    def __copy__(self) -> _Unset:
        return self

    def __deepcopy__(self, memo: object) -> _Unset:
        return self

    def __reduce__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


@dataclass(frozen=True, slots=True)
class ContentToolResult(Content):
    """The result of calling a tool.

    The Chat builds one for every tool request the model makes, echoes it, yields it
    (``stream(content="all")``) and stores it in the history. A tool may also build
    and return one itself to choose how its value is sent.

    Parameters
    ----------
    value
        What the tool returned.
    model_format
        How ``value`` becomes what the model reads: ``"auto"`` (JSON where the value
        has a JSON form, text otherwise), ``"json"`` (JSON or an error result),
        ``"str"`` (``str(value)``) or ``"as_is"`` (passed through, e.g. a list of
        content blocks such as images). Strings always pass through.
    error
        Why the call failed: an exception or a message. The model reads a short,
        redacted form of it instead of the value.
    extra
        Data the application keeps with the result; never sent to the model.
    request
        The request this result answers; set by the Chat.
    options
        Provider options for the result's block, e.g.
        ``{"cache_control": {"type": "ephemeral"}}``.
    outcome
        ``"success"``, ``"error"``, ``"exception"``, ``"refused"`` or ``"denied"``.
        Defaults to ``"success"``, or ``"error"`` when ``error`` is given.
    exception
        The exception the library rescued from the tool, with its traceback. Kept for
        the run only: never sent, never saved, ignored by ``==`` and ``repr``.
    message_expansion
        Messages to insert into the conversation before the next model call (see
        :func:`expand`).
    original_length, stored_length, is_truncated
        UTF-8 byte sizes of the model-facing value before and after the
        ``max_result_bytes`` limit, and whether it was cut.

    Notes
    -----
    Results are immutable: a changed result is a new one.
    """

    content_type: ClassVar[str] = "tool_result"

    value: Any = None
    model_format: ModelFormat = "auto"
    error: BaseException | str | None = None
    extra: Any = None
    request: ContentToolRequest | None = None
    options: Mapping[str, Any] | None = None
    outcome: Outcome = None  # pyright: ignore[reportAssignmentType]  # resolved in __post_init__
    exception: BaseException | None = field(default=None, compare=False, repr=False)
    message_expansion: MessageExpansion | None = None
    original_length: int | None = None
    stored_length: int | None = None
    is_truncated: bool = False
    _model_value: Any = field(default=UNSET, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.model_format not in MODEL_FORMATS:
            raise ValueError(
                f"model_format must be one of {sorted(MODEL_FORMATS)}, got {self.model_format!r}"
            )
        outcome: str | None = self.outcome
        if outcome is None:
            outcome = "success" if self.error is None else "error"
            object.__setattr__(self, "outcome", outcome)
        elif outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {sorted(OUTCOMES)}, got {outcome!r}")
        if outcome == "success" and self.error is not None:
            raise ValueError("a result with an `error` cannot have outcome 'success'")
        if self.message_expansion is not None and outcome != "success":
            from ._errors import ExpansionError

            raise ExpansionError(
                f"a {outcome} result cannot carry a message expansion: only successful "
                "results put material into the conversation"
            )

    # -- outcome flags ---------------------------------------------------------------

    @property
    def is_error(self) -> bool:
        """True for ``error``, ``exception`` and ``refused`` results (not ``denied``)."""
        return self.outcome in FAILED_OUTCOMES

    @property
    def is_exception(self) -> bool:
        """True when the library rescued an exception raised by the tool."""
        return self.outcome == "exception"

    @property
    def is_refusal(self) -> bool:
        """True when the call was turned down before it could change anything."""
        return self.outcome == "refused"

    # -- the request it answers ------------------------------------------------------

    @property
    def id(self) -> str:
        """The id of the request this result answers."""
        return self._request().id

    @property
    def name(self) -> str:
        """The name of the tool that was called."""
        return self._request().name

    @property
    def arguments(self) -> Any:
        """The arguments of the call."""
        return self._request().arguments

    def _request(self) -> ContentToolRequest:
        if self.request is None:
            raise ValueError("this result is not attached to a tool request yet")
        return self.request

    # -- what the model reads --------------------------------------------------------

    def get_model_value(self) -> Any:
        """The value sent to the model: a string, or a list of content for ``as_is``.

        Computed once and cached, so a long history is not re-serialised on every
        request. Failed results give a short, redacted message (see
        :func:`chatlas_like._redact.failure_message`).
        """
        cached = self._model_value
        if cached is UNSET:
            cached = self._compute_model_value()
            object.__setattr__(self, "_model_value", cached)
        return cached

    def _compute_model_value(self) -> Any:
        if self.outcome in FAILED_OUTCOMES:
            from ._redact import failure_message

            return failure_message(self.error if self.error is not None else self.value)
        if self.outcome == "denied":
            from ._redact import redact

            reason = self.value if self.value is not None else self.error
            return redact(str(reason) if reason is not None else "The call was denied.")
        from ._model_format import format_value

        return format_value(self.value, self.model_format)

    def with_model_value(self, model_value: Any, **changes: Any) -> ContentToolResult:
        """A copy with ``changes`` applied and ``model_value`` as what the model reads."""
        new = replace(self, **changes) if changes else replace(self)
        object.__setattr__(new, "_model_value", model_value)
        return new

    def has_model_value(self) -> bool:
        """Whether the model-facing value has been computed (or fixed) already."""
        return self._model_value is not UNSET

    # -- display ---------------------------------------------------------------------

    def __str__(self) -> str:
        from ._display import format_result

        return format_result(self)

    def tagify(self) -> Any:
        """Render as an htmltools tag (for Shiny), with everything escaped."""
        from ._display import result_tag

        return result_tag(self)


def refused(request: ContentToolRequest, message: str) -> ContentToolResult:
    """A call turned down before it could change anything; safe to resend corrected."""
    return ContentToolResult(error=message, outcome="refused", request=request)


def failed(request: ContentToolRequest, message: str) -> ContentToolResult:
    """A call that failed (timed out, interrupted while running, a callback failed)."""
    return ContentToolResult(error=message, outcome="error", request=request)
