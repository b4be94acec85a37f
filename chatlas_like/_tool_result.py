"""ContentToolResult: what a tool call ended in, and what the model reads of it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args

from ._content import Content, ContentToolRequest
from ._model_format import format_value
from ._renderers import render, render_text

if TYPE_CHECKING:
    from ._errors import ToolRejectError
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


@dataclass(frozen=True, init=False)
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
    id, name, arguments
        chatlas's way to say which call this answers: without a ``request``, they
        build one; with one, they must agree with it.
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
    Results are immutable: a changed result is a new one. Fields left at their default
    are not stored on the instance (the class holds the default): building a result, on
    the path of every tool call, costs about a quarter of what a frozen slotted
    dataclass pays to fill thirteen slots (see ``benchmarks/bench_format.py``).
    """

    content_type: ClassVar[str] = "tool_result"

    value: Any = None
    model_format: ModelFormat = "auto"
    error: BaseException | str | None = None
    extra: Any = None
    request: ContentToolRequest | None = None
    options: Mapping[str, Any] | None = None
    outcome: Outcome = None  # pyright: ignore[reportAssignmentType]  # resolved in __init__
    exception: BaseException | None = field(default=None, compare=False, repr=False)
    message_expansion: MessageExpansion | None = None
    original_length: int | None = None
    stored_length: int | None = None
    is_truncated: bool = False
    _model_value: Any = field(default=UNSET, init=False, compare=False, repr=False)

    def __init__(
        self,
        value: Any = None,
        model_format: ModelFormat = "auto",
        error: BaseException | str | None = None,
        extra: Any = None,
        request: ContentToolRequest | None = None,
        options: Mapping[str, Any] | None = None,
        outcome: Outcome | None = None,
        exception: BaseException | None = None,
        message_expansion: MessageExpansion | None = None,
        original_length: int | None = None,
        stored_length: int | None = None,
        is_truncated: bool = False,
        *,
        id: str | None = None,
        name: str | None = None,
        arguments: Any = None,
    ) -> None:
        if id is not None or name is not None or arguments is not None:
            request = _request_for(request, id, name, arguments)
        if outcome is None:
            outcome = "success" if error is None else "error"
        elif outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {sorted(OUTCOMES)}, got {outcome!r}")
        # Written to the instance dict directly: the class is frozen, and a default
        # stays on the class (see Notes).
        stored = self.__dict__
        stored["value"] = value
        stored["outcome"] = outcome
        if model_format != "auto":
            if model_format not in MODEL_FORMATS:
                raise ValueError(
                    f"model_format must be one of {sorted(MODEL_FORMATS)}, got {model_format!r}"
                )
            stored["model_format"] = model_format
        if error is not None:
            if outcome == "success":
                raise ValueError("a result with an `error` cannot have outcome 'success'")
            stored["error"] = error
        if extra is not None:
            stored["extra"] = extra
        if request is not None:
            stored["request"] = request
        if options is not None:
            stored["options"] = options
        if exception is not None:
            stored["exception"] = exception
        if message_expansion is not None:
            if outcome != "success":
                from ._errors import ExpansionError

                raise ExpansionError(
                    f"a {outcome} result cannot carry a message expansion: only successful "
                    "results put material into the conversation"
                )
            stored["message_expansion"] = message_expansion
        if original_length is not None:
            stored["original_length"] = original_length
        if stored_length is not None:
            stored["stored_length"] = stored_length
        if is_truncated:
            stored["is_truncated"] = True

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
            if self.outcome == "success":  # inlined: this runs for every tool call
                cached = format_value(self.value, self.model_format)
            else:
                cached = self._compute_model_value()
            self.__dict__["_model_value"] = cached
        return cached

    def _compute_model_value(self) -> Any:
        outcome = self.outcome
        if outcome == "success":
            return format_value(self.value, self.model_format)
        if outcome in FAILED_OUTCOMES:
            from ._redact import failure_message

            return failure_message(self.error if self.error is not None else self.value)
        if self.outcome == "denied":
            from ._redact import redact

            reason = self.value if self.value is not None else self.error
            return redact(str(reason) if reason is not None else "The call was denied.")
        raise AssertionError(f"unknown outcome {outcome!r}")

    def with_model_value(self, model_value: Any, **changes: Any) -> ContentToolResult:
        """A copy with ``changes`` applied and ``model_value`` as what the model reads."""
        new = replace(self, **changes) if changes else replace(self)
        new.__dict__["_model_value"] = model_value
        return new

    def has_model_value(self) -> bool:
        """Whether the model-facing value has been computed (or fixed) already."""
        return self._model_value is not UNSET

    # -- display ---------------------------------------------------------------------

    def __str__(self) -> str:
        return render_text("format_result", self)

    def __rich__(self) -> Any:
        """Render for a terminal (rich): outcome, call and a capped preview."""
        return render("result_rich", self)

    def tagify(self) -> Any:
        """Render as an htmltools tag (for Shiny), with everything escaped."""
        return render("result_tag", self)

    def to_html(self) -> str:
        """The result as an HTML card (what notebooks show), with everything escaped."""
        return render_text("result_html", self)


def _request_for(
    request: ContentToolRequest | None, id: str | None, name: str | None, arguments: Any
) -> ContentToolRequest:
    """The request a result answers, from chatlas's ``id=``/``name=``/``arguments=``."""
    if request is None:
        return ContentToolRequest(id or "", name or "", {} if arguments is None else arguments)
    given = {"id": id, "name": name, "arguments": arguments}
    for key, value in given.items():
        if value is not None and value != getattr(request, key):
            raise ValueError(
                f"{key}={value!r} disagrees with the request's {key} "
                f"{getattr(request, key)!r}; give one or the other"
            )
    return request


def refused(request: ContentToolRequest, message: str) -> ContentToolResult:
    """A call turned down before it could change anything; safe to resend corrected."""
    return ContentToolResult(error=message, outcome="refused", request=request)


def rejected(request: ContentToolRequest, error: ToolRejectError) -> ContentToolResult:
    """A call turned down with :class:`ToolRejectError`: refused, the model reads its
    reason, and ``error`` is the exception itself for the rest of the run (as in chatlas;
    a saved chat keeps the reason)."""
    result = refused(request, error.reason)
    return result.with_model_value(result.get_model_value(), error=error)


def failed(request: ContentToolRequest, message: str) -> ContentToolResult:
    """A call that failed (timed out, interrupted while running, a callback failed)."""
    return ContentToolResult(error=message, outcome="error", request=request)
