"""ContentToolResult: what a tool call ended in, and what the model reads of it.

The layout, for speed (a result is built for every tool call): each field is a
read-only property over a private attribute (``value`` reads ``_f_value``), and a
field left at its default is not stored at all (``_f_extra`` is found on the class).
Building a result is one Python call and two plain attribute stores. A frozen
dataclass must bypass its own ``__setattr__`` through the instance ``__dict__``, and
CPython then builds a dict for every result: that made building a result and asking
for its model value cost about 7 times ``orjson.dumps`` of a small dict, against 5
now (``benchmarks/bench_format.py``). Assigning or deleting a field still raises
:class:`dataclasses.FrozenInstanceError`, and ``==``, ``hash``, ``repr``,
:func:`dataclasses.replace`, copying and pickling see the fields as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import FrozenInstanceError, dataclass, field, fields, replace
from operator import attrgetter
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Literal,
    TypeVar,
    cast,
    dataclass_transform,
    get_args,
)

from .content import Content, ContentToolRequest
from .errors import ExpansionError
from .model_format import (
    _DEFAULTS,
    _OBJECTS,
    _PLAIN_OPTS,
    _dumps,
    _JSONEncodeError,
    _object_json,
    _recover,
    format_value,
)
from .redact import redact, tool_failure_text
from .renderers import render, render_text

if TYPE_CHECKING:
    from .errors import ToolRejectError
    from .expansion import MessageExpansion

__all__ = [
    "ContentToolResult",
    "ContentToolResultProgress",
    "ModelFormat",
    "Outcome",
    "WholeResult",
    "failed",
    "refused",
]

Outcome = Literal["success", "error", "exception", "refused", "denied"]
ModelFormat = Literal["auto", "json", "str", "as_is"]

OUTCOMES: frozenset[str] = frozenset(get_args(Outcome))
# Decided here, once: ``is_error`` (the model reads an error; a span is marked failed)...
FAILED_OUTCOMES: frozenset[str] = frozenset({"error", "exception", "refused"})
# ...and what the log says the reason of (a denial is a decision, not an error, with a reason).
EXPLAINED_OUTCOMES: frozenset[str] = FAILED_OUTCOMES | {"denied"}
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
_T = TypeVar("_T")
_PRIVATE = "_f_"  # value is kept in _f_value, and so on


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def _frozen_fields(cls: type[_T]) -> type[_T]:
    """A dataclass (``==``, ``hash``, ``repr``, ``replace``) whose fields are read-only
    properties over private attributes, the defaults on the class (see the module
    docstring). Type checkers see a frozen dataclass."""
    cls = dataclass(frozen=True, init=False)(cls)
    for f in fields(cls):  # pyright: ignore[reportArgumentType]
        private = _PRIVATE + f.name
        setattr(cls, private, f.default)
        setattr(cls, f.name, property(attrgetter(private), *_refusals(f.name)))
    # The fields refuse changes themselves: attribute stores go back to the C slot
    # (a Python __setattr__ here, or inherited from Content, costs a call per store).
    cls.__setattr__ = object.__setattr__  # type: ignore[method-assign]
    cls.__delattr__ = object.__delattr__  # type: ignore[method-assign]
    # Content's (a slotted dataclass) would restore the fields through their names.
    cls.__getstate__ = _getstate  # type: ignore[attr-defined]
    cls.__setstate__ = _setstate  # type: ignore[attr-defined]
    return cls


def _getstate(result: Any) -> dict[str, Any]:
    state: dict[str, Any] = result.__dict__
    return dict(state)


def _setstate(result: Any, state: Any) -> None:
    if isinstance(state, dict):
        stored: dict[str, Any] = result.__dict__
        stored.update(cast(dict[str, Any], state))
    else:  # a field list, as a frozen dataclass pickles (an older chatlas_like)
        for f, value in zip(fields(result), cast(list[Any], state), strict=False):
            setattr(result, _PRIVATE + f.name, value)


def _refusals(name: str) -> tuple[Callable[[Any, Any], None], Callable[[Any], None]]:
    def assign(result: Any, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def delete(result: Any) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    return assign, delete


@_frozen_fields
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
    parts
        A generator tool's result: what it yielded, each as the
        :class:`ContentToolResultProgress` delivered while it ran (``value`` holds
        what the model reads of them, as chatlas builds it). Kept for the run only:
        never sent, never saved, ignored by ``==`` and ``repr``.

    Notes
    -----
    Results are immutable: a changed result is a new one. Fields left at their default
    are not stored on the instance (the class holds the default), and the model value
    is formatted on the first :meth:`get_model_value`, not when the result is built.
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
    parts: tuple[ContentToolResult, ...] | None = field(default=None, compare=False, repr=False)
    # What the model reads, once computed (not a field: never compared or shown).
    _model_value = UNSET

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
        parts: tuple[ContentToolResult, ...] | None = None,
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
        this: Any = self  # the private attributes behind the fields (see the module docstring)
        this._f_value = value
        this._f_outcome = outcome
        if (
            model_format != "auto"
            or error is not None
            or extra is not None
            or request is not None
            or options is not None
            or exception is not None
            or message_expansion is not None
            or original_length is not None
            or stored_length is not None
            or is_truncated
            or parts is not None
        ):
            self._set_more(
                outcome,
                model_format,
                error,
                extra,
                request,
                options,
                exception,
                message_expansion,
                original_length,
                stored_length,
                is_truncated,
                parts,
            )

    def _set_more(
        self,
        outcome: Outcome,
        model_format: ModelFormat,
        error: BaseException | str | None,
        extra: Any,
        request: ContentToolRequest | None,
        options: Mapping[str, Any] | None,
        exception: BaseException | None,
        message_expansion: MessageExpansion | None,
        original_length: int | None,
        stored_length: int | None,
        is_truncated: bool,
        parts: tuple[ContentToolResult, ...] | None = None,
    ) -> None:
        """Check and store the arguments that are not at their default."""
        this: Any = self
        if model_format != "auto":
            if model_format not in MODEL_FORMATS:
                raise ValueError(
                    f"model_format must be one of {sorted(MODEL_FORMATS)}, got {model_format!r}"
                )
            this._f_model_format = model_format
        if error is not None:
            if outcome == "success":
                raise ValueError("a result with an `error` cannot have outcome 'success'")
            this._f_error = error
        if extra is not None:
            this._f_extra = extra
        if request is not None:
            this._f_request = request
        if options is not None:
            this._f_options = options
        if exception is not None:
            this._f_exception = exception
        if message_expansion is not None:
            if outcome != "success":
                raise ExpansionError(
                    f"a {outcome} result cannot carry a message expansion: only successful "
                    "results put material into the conversation"
                )
            this._f_message_expansion = message_expansion
        if original_length is not None:
            this._f_original_length = original_length
        if stored_length is not None:
            this._f_stored_length = stored_length
        if is_truncated:
            this._f_is_truncated = True
        if parts is not None:
            this._f_parts = tuple(parts)

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
        request. Failed results give chatlas's ``Tool call failed with error:
        '<message>'``, the message short and redacted (see
        :func:`chatlas_like._core.redact.tool_failure_text`).
        """
        this: Any = self
        cached = this._model_value
        if cached is UNSET:
            value = this._f_value
            kind = type(value)  # pyright: ignore[reportUnknownVariableType]
            if this._f_outcome != "success" or this._f_model_format != "auto":
                cached = self._compute_model_value()
            elif kind is dict or kind is list:
                # format_value's common cases, inlined: this runs for every tool call
                try:
                    cached = _dumps(value, default=_DEFAULTS[True], option=_PLAIN_OPTS).decode()
                except _JSONEncodeError as e:
                    cached = _recover(value, True, e)
            elif kind in _OBJECTS:
                cached = _object_json(value, True)
                if cached is None:
                    cached = self._compute_model_value()
            else:
                cached = self._compute_model_value()
            this._model_value = cached
        return cached

    def _compute_model_value(self) -> Any:
        outcome = self.outcome
        if outcome == "success":
            return format_value(self.value, self.model_format)
        if outcome in FAILED_OUTCOMES:
            return tool_failure_text(self.error if self.error is not None else self.value)
        if self.outcome == "denied":
            reason = self.value if self.value is not None else self.error
            return redact(str(reason) if reason is not None else "The call was denied.")
        raise AssertionError(f"unknown outcome {outcome!r}")

    def with_model_value(self, model_value: Any, **changes: Any) -> ContentToolResult:
        """A copy with ``changes`` applied and ``model_value`` as what the model reads."""
        new: Any = replace(self, **changes) if changes else replace(self)
        new._model_value = model_value
        return new

    def has_model_value(self) -> bool:
        """Whether the model-facing value has been computed (or fixed) already."""
        return self._model_value is not UNSET

    # -- display ---------------------------------------------------------------------

    def __str__(self) -> str:
        return render_text("format_result", self)

    def to_display_markdown(self, max_lines: int | None = None) -> str:
        """Render as a fenced code block (``str()``), as chatlas does.

        Parameters
        ----------
        max_lines
            Cut the value to this many lines, the rest replaced by a count of what was
            dropped; None (the default) keeps the whole value.
        """
        text = render_text("format_result", self)
        lines = text.split("\n")
        head, value, tail = lines[:2], lines[2:-1], lines[-1:]
        if max_lines is None or len(value) <= max_lines:
            return text
        dropped = len(value) - max_lines
        note = f"# … {dropped} more line{'' if dropped == 1 else 's'}"
        return "\n".join([*head, *value[:max_lines], note, *tail])

    def __rich__(self) -> Any:
        """Render for a terminal (rich): outcome, call and a capped preview."""
        return render("result_rich", self)

    def tagify(self) -> Any:
        """Render as an htmltools tag (for Shiny), with everything escaped."""
        return render("result_tag", self)

    def to_html(self) -> str:
        """The result as an HTML card (what notebooks show), with everything escaped."""
        return render_text("result_html", self)


class ContentToolResultProgress(ContentToolResult):
    """Part of a call's result, delivered while the tool still runs.

    A generator tool's yields arrive as these, one per yield: echoed, yielded by
    ``stream(content="all")`` and passed to ``on_tool_result`` as they come, and
    nothing more, as in chatlas. The call's one :class:`ContentToolResult` combines
    them for the model and the history (its ``value`` the joined text, its
    :attr:`~ContentToolResult.parts` these items); it is not delivered again.
    """


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
    """A call turned down with :class:`ToolRejectError`: refused, and the model reads
    chatlas's text for it (``Tool call failed with error: 'Tool call rejected. <reason>'``);
    ``error`` is the exception itself for the rest of the run, as in chatlas (a saved
    chat keeps the reason, and the text the model read)."""
    result = refused(request, error.reason)
    return result.with_model_value(tool_failure_text(error.message), error=error)


def failed(request: ContentToolRequest, message: str) -> ContentToolResult:
    """A call that failed (timed out, interrupted while running, a callback failed)."""
    return ContentToolResult(error=message, outcome="error", request=request)


@dataclass(frozen=True, slots=True)
class WholeResult:
    """A result before the cut for the model, with its whole model-facing text (what a
    result store keeps, and what observers see of a finalised batch)."""

    result: ContentToolResult
    text: str
    size: int
    sequence: int
