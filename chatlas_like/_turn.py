"""Turns: one message of the conversation, with its role, content and token usage."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal, NamedTuple

from ._content import Content, ContentText, ContentToolRequest
from ._tool_result import ContentToolResult

__all__ = ["AssistantTurn", "FinishReason", "Role", "SystemTurn", "TokenUsage", "Turn", "UserTurn"]

Role = Literal["user", "assistant", "system"]
FinishReason = Literal[
    "end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal", "incomplete"
]


class TokenUsage(NamedTuple):
    """Tokens of one model call (or a sum of several).

    ``input`` counts uncached input; ``cache_read`` and ``cache_creation`` count
    input read from and written to the prompt cache.
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_creation: int = 0

    def __add__(self, other: object) -> TokenUsage:  # type: ignore[override]
        if not isinstance(other, TokenUsage):
            return NotImplemented
        return TokenUsage(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_creation + other.cache_creation,
        )

    @property
    def total(self) -> int:
        """All input (cached or not) plus output."""
        return self.input + self.output + self.cache_read + self.cache_creation


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
        Token usage of the model call that produced this turn (assistant turns).
    finish_reason
        Why the model stopped (assistant turns); ``"incomplete"`` for a cut stream.
    completion
        Provider metadata of the response (message id, model).

    Notes
    -----
    Treat turns as values: the library never changes one in place, and a provider
    may cache a turn's translation.
    """

    __slots__ = ("_wire", "completion", "contents", "finish_reason", "role", "tokens")

    def __init__(
        self,
        role: Role,
        contents: str | Content | Iterable[Content | str] = (),
        *,
        tokens: TokenUsage | None = None,
        finish_reason: FinishReason | None = None,
        completion: dict[str, Any] | None = None,
    ) -> None:
        if role not in ("user", "assistant", "system"):
            raise ValueError(f"role must be 'user', 'assistant' or 'system', got {role!r}")
        self.role: Role = role
        self.contents: list[Content] = _as_contents(contents)
        self.tokens = tokens
        self.finish_reason: FinishReason | None = finish_reason
        self.completion = completion
        self._wire: dict[str, Any] | None = None

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
            completion=self.completion,
        )
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Turn):
            return NotImplemented
        return (
            self.role == other.role
            and self.contents == other.contents
            and self.tokens == other.tokens
            and self.finish_reason == other.finish_reason
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        extra = f", tokens={tuple(self.tokens)}" if self.tokens else ""
        if self.finish_reason:
            extra += f", finish_reason={self.finish_reason!r}"
        return f"{type(self).__name__}({self.contents!r}{extra})"

    def __str__(self) -> str:
        return self.text

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
            from ._display import content_markdown

            return "\n\n".join(content_markdown(c) for c in self.contents)
        return default

    def _repr_markdown_(self) -> str:
        from ._display import content_markdown

        body = "\n\n".join(content_markdown(c) for c in self.contents)
        return f"**{self.role}**\n\n{body}"

    def _repr_html_(self) -> str:
        from ._display import content_html

        body = "".join(content_html(c) for c in self.contents)
        return f"<div class='chatlas-like-turn role-{self.role}'><strong>{self.role}</strong>{body}</div>"


class UserTurn(Turn):
    """A turn from the user (prompts, and tool results sent back to the model)."""

    __slots__ = ()

    def __init__(self, contents: str | Content | Iterable[Content | str] = ()) -> None:
        super().__init__("user", contents)


class AssistantTurn(Turn):
    """A turn from the model."""

    __slots__ = ()

    def __init__(
        self,
        contents: str | Content | Iterable[Content | str] = (),
        *,
        tokens: TokenUsage | None = None,
        finish_reason: FinishReason | None = None,
        completion: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(
            "assistant",
            contents,
            tokens=tokens,
            finish_reason=finish_reason,
            completion=completion,
        )


class SystemTurn(Turn):
    """The system prompt, as a turn."""

    __slots__ = ()

    def __init__(self, contents: str | Content | Iterable[Content | str] = ()) -> None:
        super().__init__("system", contents)


def make_turn(
    role: Role,
    contents: Sequence[Content],
    *,
    tokens: TokenUsage | None = None,
    finish_reason: FinishReason | None = None,
    completion: dict[str, Any] | None = None,
) -> Turn:
    """A turn of the class that matches ``role``."""
    if role == "assistant":
        return AssistantTurn(
            contents, tokens=tokens, finish_reason=finish_reason, completion=completion
        )
    if role == "user":
        return UserTurn(contents)
    return SystemTurn(contents)
