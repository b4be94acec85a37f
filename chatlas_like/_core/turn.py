"""Turns: one message of the conversation, with its role, content and token usage."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, NamedTuple, Self

from .content import Content, ContentText, ContentToolRequest, content_classes
from .renderers import render_text
from .tool_result import ContentToolResult

__all__ = [
    "AssistantTurn",
    "FinishReason",
    "Role",
    "SystemTurn",
    "Tokens",
    "Turn",
    "Usage",
    "UserTurn",
]

Role = Literal["user", "assistant", "system"]
FinishReason = Literal[
    "success",
    "tool_use",
    "max_tokens",
    "content_filter",
    "context_window",
    "stop_sequence",
    "incomplete",
]
"""Why the model stopped, as chatlas names it (a cut response has None, as in chatlas).

A provider's reason this list does not name (a paused turn, say) is kept as the
provider sent it.
"""
Tokens = tuple[int, int, int]
"""chatlas's token triple: ``(input, output, cached input)``."""


class Usage(NamedTuple):
    """The four token counts of one model call (or a sum of several).

    ``input`` counts uncached input; ``cache_read`` and ``cache_creation`` count
    input read from and written to the prompt cache.
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_creation: int = 0

    def __add__(self, other: object) -> Usage:  # type: ignore[override]
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_creation + other.cache_creation,
        )

    @property
    def total(self) -> int:
        """All input (cached or not) plus output."""
        return self.input + self.output + self.cache_read + self.cache_creation

    def tokens(self, cache_write_multiplier: float = 1.25) -> Tokens:
        """chatlas's ``(input, output, cached)``: cache writes count as input at their price.

        Anthropic bills a cache write at 1.25 times the input price (5-minute cache) or
        2 times (1-hour cache); chatlas folds writes into input at that multiplier so
        that one input price prices both.
        """
        written = int(self.cache_creation * cache_write_multiplier)
        return (self.input + written, self.output, self.cache_read)


def _as_tokens(tokens: Sequence[int] | None) -> Tokens | None:
    if tokens is None:
        return None
    if isinstance(tokens, tuple) and len(tokens) == 3:  # the provider's, already right
        return tokens
    if isinstance(tokens, Usage) or len(tokens) != 3:
        raise ValueError(
            "tokens must be (input, output, cached), three counts as chatlas has them; "
            "pass the four counts of a call as usage="
        )
    return (int(tokens[0]), int(tokens[1]), int(tokens[2]))


def _as_contents(contents: str | Content | Iterable[Content | str]) -> list[Content]:
    if isinstance(contents, str):
        return [ContentText(contents)]
    if isinstance(contents, Content):
        return [contents]
    return [ContentText(c) if isinstance(c, str) else c for c in contents]


class Turn:
    """One message: a role and its contents.

    Parameters
    ----------
    role
        ``"user"``, ``"assistant"`` or ``"system"``.
    contents
        A string, a content object, or a sequence of them.
    tokens
        chatlas's ``(input, output, cached)`` token counts of the model call that
        produced this turn (assistant turns); see :attr:`usage` for all four counts.
    finish_reason
        Why the model stopped (assistant turns), normalised as chatlas does
        (``"success"``, ``"tool_use"``, ``"max_tokens"`` ...); None for a cut stream,
        as in chatlas (``partial_reason`` says why).
    completion
        The provider's response object, when there is one.
    cost
        What the call cost in USD, when the model's price is known.
    partial_reason
        Set on a turn whose answer stopped early (``"interrupted"``, ``"cancelled"``,
        or the reason given to a ``StreamController``).
    usage
        The four token counts of the call (:class:`Usage`); ``tokens`` follows from
        them when not given.
    stop_reason
        The provider's own stop reason (e.g. Anthropic's ``"end_turn"``).

    Notes
    -----
    Treat turns as values: the library never changes one in place, and a provider
    may cache a turn's translation. ``model_dump()``, ``model_dump_json()``,
    ``model_validate()``, ``model_validate_json()`` and ``model_copy()`` read and write
    chatlas's JSON shape, so histories saved by chatlas load here and the other way
    round; :func:`~chatlas_like.to_json` keeps everything this library knows.
    """

    __slots__ = (
        "__weakref__",  # a provider caches a turn's translation by the turn's identity
        "_completion",
        "_completion_factory",
        "completion_data",
        "contents",
        "cost",
        "finish_reason",
        "partial_reason",
        "role",
        "stop_reason",
        "tokens",
        "usage",
    )

    def __init__(
        self,
        role: Role,
        contents: str | Content | Iterable[Content | str] = (),
        *,
        tokens: Sequence[int] | None = None,
        finish_reason: FinishReason | str | None = None,
        completion: Any = None,
        cost: float | None = None,
        partial_reason: str | None = None,
        usage: Usage | None = None,
        stop_reason: str | None = None,
    ) -> None:
        if role not in ("user", "assistant", "system"):
            raise ValueError(f"role must be 'user', 'assistant' or 'system', got {role!r}")
        self.role: Role = role
        self.contents: list[Content] = _as_contents(contents)
        self.usage = usage
        self.tokens: Tokens | None = (
            _as_tokens(tokens) if tokens is not None else (usage.tokens() if usage else None)
        )
        self.finish_reason: FinishReason | str | None = finish_reason
        self.stop_reason = stop_reason
        self.cost = cost
        self.partial_reason = partial_reason
        # What the provider said of the response, as plain data (id, model, usage...).
        self.completion_data: dict[str, Any] | None = None
        self._completion = completion
        self._completion_factory: Callable[[Turn], Any] | None = None

    @property
    def completion(self) -> Any:
        """The provider's response, e.g. the SDK's ``anthropic.types.Message``.

        Built on first access from what the response said (so a stream pays nothing
        for it); None for turns that did not come from a provider in this process
        (built by hand, or loaded from JSON).
        """
        factory = self._completion_factory
        if factory is not None:
            self._completion_factory = None
            self._completion = factory(self)
        return self._completion

    def attach_completion(self, data: dict[str, Any], factory: Callable[[Turn], Any]) -> None:
        """Keep the provider's response data; ``factory(turn)`` builds :attr:`completion`."""
        self.completion_data = data
        self._completion_factory = factory

    @property
    def is_partial(self) -> bool:
        """Whether the answer stopped early (see ``partial_reason``)."""
        return self.partial_reason is not None

    @property
    def text(self) -> str:
        """The concatenated text content."""
        return "".join(c.text for c in self.contents if isinstance(c, ContentText))

    @property
    def tool_requests(self) -> list[ContentToolRequest]:
        """The tool requests in this turn, in order."""
        return [c for c in self.contents if type(c) is ContentToolRequest]

    @property
    def tool_results(self) -> list[ContentToolResult]:
        """The tool results in this turn, in order."""
        return [c for c in self.contents if isinstance(c, ContentToolResult)]

    def copy_with(self, contents: Sequence[Content]) -> Turn:
        """The same turn with other contents (a new object, same class)."""
        new = type(self).__new__(type(self))
        Turn.__init__(
            new,
            self.role,
            list(contents),
            tokens=self.tokens,
            finish_reason=self.finish_reason,
            completion=self._completion,
            cost=self.cost,
            partial_reason=self.partial_reason,
            usage=self.usage,
            stop_reason=self.stop_reason,
        )
        new.completion_data = self.completion_data
        new._completion_factory = self._completion_factory
        return new

    # -- chatlas's JSON shape --------------------------------------------------------

    def model_dump(
        self,
        *,
        mode: Literal["python", "json"] | str = "python",
        include: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        exclude_none: bool = False,
    ) -> dict[str, Any]:
        """The turn as chatlas's data (``{"contents": [...], "role": ..., ...}``).

        Parameters
        ----------
        mode
            ``"python"`` keeps Python values (``tokens`` is a tuple); ``"json"`` gives
            only JSON types.
        include, exclude
            Top-level keys to keep or leave out.
        exclude_none
            Leave out keys whose value is None.
        """
        from .chatlas_shape import dump_turn, select

        data = dump_turn(self, json_mode=_json_mode(mode))
        return select(data, include, exclude, exclude_none)

    def model_dump_json(
        self,
        *,
        indent: int | None = None,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        exclude_none: bool = False,
    ) -> str:
        """The turn as chatlas's JSON text (what ``Turn.model_validate_json`` reads)."""
        from .chatlas_shape import dumps

        data = self.model_dump(
            mode="json", include=include, exclude=exclude, exclude_none=exclude_none
        )
        return dumps(data, indent)

    @classmethod
    def model_validate(cls, obj: Any) -> Self:
        """A turn from chatlas's data; on ``Turn`` the role picks the class.

        Raises
        ------
        ValueError
            The data is not a turn of this class (unknown role or content type, a
            missing field).
        """
        if isinstance(obj, cls):
            return obj
        from .chatlas_shape import load_turn

        return load_turn(cls, obj, _TURN_CLASSES, {**content_classes(), "usage": Usage})

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray) -> Self:
        """A turn from chatlas's JSON text (``model_dump_json()``'s output)."""
        from .chatlas_shape import loads

        return cls.model_validate(loads(json_data))

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy, with the attributes in ``update`` changed (as pydantic's ``model_copy``)."""
        import copy

        new = copy.deepcopy(self) if deep else copy.copy(self)
        for name, value in (update or {}).items():
            if name == "role" and value != self.role:
                raise ValueError(f"a {type(self).__name__} keeps its role ({self.role!r})")
            if name not in _COPYABLE:
                raise ValueError(f"{type(self).__name__} has no field {name!r}")
            setattr(new, name, _as_contents(value) if name == "contents" else value)
        return new

    def __copy__(self) -> Self:
        new = type(self).__new__(type(self))
        for name in Turn.__slots__:
            if name != "__weakref__":
                setattr(new, name, getattr(self, name))
        new.contents = list(self.contents)
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Turn):
            return NotImplemented
        return (
            self.role == other.role
            and self.contents == other.contents
            and self.tokens == other.tokens
            and self.finish_reason == other.finish_reason
            and self.partial_reason == other.partial_reason
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        """The turn's text, as chatlas's ``repr`` gives it (``turn.contents`` shows the
        structure)."""
        return self.__str__()

    def __str__(self) -> str:
        return "\n".join(str(c) for c in self.contents)

    def get(self, key: str, default: Any = None) -> Any:
        """Dict-style reading, for tools that take a chat client's turns as turn dicts.

        shinychat does, when it restores a bookmarked page of
        ``chat.enable_bookmarking(client)``: ``"role"`` is the turn's role and
        ``"content"`` the turn as Markdown (tool calls and results fenced); any other
        key gives ``default``.
        """
        if key == "role":
            return self.role
        if key == "content":
            return "\n\n".join(render_text("content_markdown", c) for c in self.contents)
        return default

    def _repr_markdown_(self) -> str:
        body = "\n\n".join(render_text("content_markdown", c) for c in self.contents)
        return f"**{self.role}**\n\n{body}"

    def _repr_html_(self) -> str:
        body = "".join(render_text("content_html", c) for c in self.contents)
        return f"<div class='chatlas-like-turn role-{self.role}'><strong>{self.role}</strong>{body}</div>"


_COPYABLE = frozenset(
    {"contents", "tokens", "finish_reason", "cost", "partial_reason", "usage", "stop_reason"}
)


def _json_mode(mode: str) -> bool:
    if mode not in ("python", "json"):
        raise ValueError(f"mode must be 'python' or 'json', got {mode!r}")
    return mode == "json"


class UserTurn(Turn):
    """A turn from the user (prompts, and tool results sent back to the model)."""

    __slots__ = ()

    def __init__(self, contents: str | Content | Iterable[Content | str] = ()) -> None:
        super().__init__("user", contents)


class AssistantTurn(Turn):
    """A turn from the model.

    Parameters
    ----------
    contents
        A string, a content object, or a sequence of them.
    tokens
        chatlas's ``(input, output, cached)`` token counts.
    finish_reason
        Why the model stopped (see :data:`~chatlas_like.types.FinishReason`).
    completion
        The provider's response object.
    cost
        What the call cost in USD.
    partial_reason
        Why the answer stopped early, for a partial turn (see :attr:`is_partial`).
    usage
        The four token counts of the call (:class:`Usage`).
    stop_reason
        The provider's own stop reason.
    """

    __slots__ = ()

    def __init__(
        self,
        contents: str | Content | Iterable[Content | str] = (),
        *,
        tokens: Sequence[int] | None = None,
        finish_reason: FinishReason | str | None = None,
        completion: Any = None,
        cost: float | None = None,
        partial_reason: str | None = None,
        usage: Usage | None = None,
        stop_reason: str | None = None,
    ) -> None:
        super().__init__(
            "assistant",
            contents,
            tokens=tokens,
            finish_reason=finish_reason,
            completion=completion,
            cost=cost,
            partial_reason=partial_reason,
            usage=usage,
            stop_reason=stop_reason,
        )


class SystemTurn(Turn):
    """The system prompt, as a turn."""

    __slots__ = ()

    def __init__(self, contents: str | Content | Iterable[Content | str] = ()) -> None:
        super().__init__("system", contents)


_TURN_CLASSES: dict[str, type[Turn]] = {
    "user": UserTurn,
    "assistant": AssistantTurn,
    "system": SystemTurn,
}


def make_turn(
    role: Role,
    contents: Sequence[Content],
    **assistant: Any,
) -> Turn:
    """A turn of the class that matches ``role`` (``assistant`` keywords for answers)."""
    if role == "assistant":
        return AssistantTurn(contents, **assistant)
    if role == "user":
        return UserTurn(contents)
    return SystemTurn(contents)
