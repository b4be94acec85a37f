"""Chat: a conversation with a model, its tools, and the four verbs.

The verbs (``chat``, ``stream``, ``chat_async``, ``stream_async``) are thin: each builds
one :class:`~chatlas_like._loop.Run` and hands the turn loop to a driver
(:mod:`chatlas_like._drive`). Everything else (echo, tool running, repair) happens
once, in the loop, for all four.
"""

from __future__ import annotations

import copy as _copy
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, Literal, TypeVar, overload

from ._callbacks import CallbackList
from ._content import Content, ContentToolRequest
from ._drive import drive, drive_async
from ._echo import Echo, make_echo
from ._expansion import apply_expansions
from ._finalize import Finalizer, ResultHook
from ._history import History, answer_dangling
from ._loop import Run, turn_loop
from ._options import CallOptions, ChatOptions
from ._tokens import record_usage
from ._tool_result import ContentToolResult
from ._tool_runner import ToolContext
from ._tools import Tool, ToolBuiltIn
from ._turn import AssistantTurn, SystemTurn, TokenUsage, Turn, UserTurn
from ._workers import WorkerPool
from .providers._base import Provider, RequestSpec

__all__ = ["Chat", "ChatResponse", "ChatResponseAsync", "ChatStream"]

T = TypeVar("T")
EchoOption = Literal["none", "text", "output", "all"]
ContentOption = Literal["text", "all"]
DANGLING = "Not run: the conversation moved on before this call was answered."


class Chat:
    """A conversation with a model.

    Build one with a provider function such as :func:`ChatAnthropic`.

    Parameters
    ----------
    provider
        The model provider.
    system_prompt
        The system prompt.
    turns
        Turns to start from.
    **options
        Options from the table in :class:`ChatOptions` (``max_tool_rounds`` ...).
    """

    def __init__(
        self,
        provider: Provider,
        *,
        system_prompt: str | None = None,
        turns: Sequence[Turn] = (),
        **options: Any,
    ) -> None:
        self.provider = provider
        self.system_prompt = system_prompt
        self.options = ChatOptions(**options)
        self._history = History()
        self._tools: dict[str, Tool | ToolBuiltIn] = {}
        self._on_tool_request: CallbackList[ContentToolRequest] = CallbackList()
        self._on_tool_result: CallbackList[ContentToolResult] = CallbackList()
        self._review: Callable[[ContentToolRequest], Any] | None = None
        self._params: dict[str, Any] = {}
        self._result_hooks: list[ResultHook] = []
        self._before_model_call: list[Callable[[Run], Sequence[Turn] | None]] = [
            _answer_dangling,
            apply_expansions,
        ]
        self._pool = WorkerPool(keep_idle=self.options.max_concurrency)
        if turns:
            self.set_turns(turns)

    # -- history -----------------------------------------------------------------------------

    @property
    def run_id(self) -> str:
        """The id of this conversation's run (keys its results in a tool-result store)."""
        return self._history.run_id

    def get_turns(self, *, include_system_prompt: bool = False) -> list[Turn]:
        """The conversation's turns, oldest first.

        Parameters
        ----------
        include_system_prompt
            Put the system prompt first, as a :class:`SystemTurn`.
        """
        turns = list(self._history.turns)
        if include_system_prompt and self.system_prompt:
            turns.insert(0, SystemTurn(self.system_prompt))
        return turns

    def set_turns(self, turns: Sequence[Turn]) -> None:
        """Replace the conversation's turns.

        A leading :class:`SystemTurn` sets the system prompt. Tool requests left without
        a result are answered with refused results, so the next request is valid.
        """
        turns = list(turns)
        if turns and turns[0].role == "system":
            self.system_prompt = turns.pop(0).text
        if any(t.role == "system" for t in turns):
            raise ValueError("only the first turn may be a system turn")
        self._history.replace(turns)
        answer_dangling(self._history.turns, DANGLING, self._finalizer(self.options))

    def add_turn(self, turn: Turn) -> None:
        """Append one turn to the conversation."""
        self.set_turns([*self._history.turns, turn])

    @overload
    def get_last_turn(
        self, *, role: Literal["assistant"] = "assistant"
    ) -> AssistantTurn | None: ...
    @overload
    def get_last_turn(self, *, role: Literal["user"]) -> UserTurn | None: ...
    @overload
    def get_last_turn(self, *, role: Literal["system"]) -> SystemTurn | None: ...

    def get_last_turn(self, *, role: Literal["assistant", "user", "system"] = "assistant") -> Any:
        """The most recent turn of ``role``, or None."""
        if role == "system":
            return SystemTurn(self.system_prompt) if self.system_prompt else None
        for turn in reversed(self._history.turns):
            if turn.role == role:
                return turn
        return None

    def get_tokens(self) -> list[TokenUsage]:
        """Token usage of each assistant turn, oldest first."""
        return [t.tokens for t in self._history.turns if t.tokens is not None]

    def token_usage(self) -> TokenUsage:
        """Tokens used by this conversation so far."""
        total = TokenUsage()
        for tokens in self.get_tokens():
            total = total + tokens
        return total

    # -- tools -------------------------------------------------------------------------------

    def register_tool(
        self,
        func: Callable[..., Any] | Tool | ToolBuiltIn,
        *,
        force: bool = False,
        name: str | None = None,
        model: Any = None,
        annotations: dict[str, Any] | None = None,
        sequential: bool = False,
        timeout: float | None = None,
        max_result_bytes: int | None = None,
    ) -> None:
        """Let the model call ``func``.

        Parameters
        ----------
        func
            A function (sync or async), a :class:`Tool` or a :class:`ToolBuiltIn`.
        force
            Replace a registered tool of the same name instead of raising.
        name, model, annotations, sequential, timeout, max_result_bytes
            As for :meth:`Tool.from_func` (ignored when ``func`` is a Tool).
        """
        if isinstance(func, (Tool, ToolBuiltIn)):
            tool = func
        else:
            tool = Tool.from_func(
                func,
                name=name,
                model=model,
                annotations=annotations,
                sequential=sequential,
                timeout=timeout,
                max_result_bytes=max_result_bytes,
            )
        if tool.name in self._tools and not force:
            raise ValueError(
                f"a tool named {tool.name!r} is already registered; pass force=True to replace it"
            )
        self._tools[tool.name] = tool

    def get_tools(self) -> list[Tool | ToolBuiltIn]:
        """The registered tools."""
        return list(self._tools.values())

    def set_tools(self, tools: Sequence[Callable[..., Any] | Tool | ToolBuiltIn]) -> None:
        """Replace the registered tools."""
        self._tools = {}
        for tool in tools:
            self.register_tool(tool)

    def on_tool_request(self, callback: Callable[[ContentToolRequest], Any]) -> Callable[[], None]:
        """Call ``callback(request)`` before each tool call; returns a remover.

        Raise :class:`ToolRejectError` in it to turn the call down.
        """
        return self._on_tool_request.add(callback)

    def on_tool_result(self, callback: Callable[[ContentToolResult], Any]) -> Callable[[], None]:
        """Call ``callback(result)`` for each tool result, in call order; returns a remover."""
        return self._on_tool_result.add(callback)

    def on_tool_review(self, review: Callable[[ContentToolRequest], Any]) -> Callable[[], None]:
        """Decide each call before any tool of the turn runs: return ``Allow()`` or ``Deny()``.

        One review hook at a time; returns a function that removes it.
        """
        self._review = review

        def remove() -> None:
            if self._review is review:
                self._review = None

        return remove

    # -- options -----------------------------------------------------------------------------

    def set_options(self, **options: Any) -> None:
        """Change chat options (see :class:`ChatOptions`)."""
        self.options = self.options.merged(options)

    def set_model_params(self, **params: Any) -> None:
        """Set request parameters (``temperature``, ``top_p``, ``stop_sequences``...).

        ``max_tokens`` changes the provider's limit; ``stop`` is an alias of
        ``stop_sequences``; a value of None removes a parameter.
        """
        if "stop" in params:
            stop = params.pop("stop")
            params["stop_sequences"] = [stop] if isinstance(stop, str) else stop
        if "max_tokens" in params:
            self.provider.max_tokens = params.pop("max_tokens")  # pyright: ignore[reportAttributeAccessIssue]
        for key, value in params.items():
            if value is None:
                self._params.pop(key, None)
            else:
                self._params[key] = value

    # -- the verbs ---------------------------------------------------------------------------

    def chat(
        self,
        *args: Content | str,
        echo: EchoOption = "output",
        stream: bool = True,
        kwargs: dict[str, Any] | None = None,
        **options: Any,
    ) -> ChatResponse:
        """Send a message and wait for the whole answer (running tools as asked).

        Parameters
        ----------
        *args
            The message: strings and content objects.
        echo
            ``"output"`` (default) shows text and tool calls; ``"text"``, ``"all"``
            or ``"none"``.
        stream
            Stream the answer (default) or ask for one JSON response.
        kwargs
            Extra request parameters for this call.
        **options
            Per-call :class:`ChatOptions` overrides.

        Returns
        -------
        ChatResponse
            The answer's text (``str(response)``).
        """
        run, opts = self._run(args, echo, "text", stream, kwargs, options)
        response = ChatResponse(drive(turn_loop(run, _prompt(args)), self.provider, *opts))
        response.get_content()
        return response

    @overload
    def stream(
        self,
        *args: Content | str,
        content: Literal["text"] = "text",
        echo: EchoOption = "none",
        kwargs: dict[str, Any] | None = None,
        **options: Any,
    ) -> ChatStream[str]: ...
    @overload
    def stream(
        self,
        *args: Content | str,
        content: Literal["all"],
        echo: EchoOption = "none",
        kwargs: dict[str, Any] | None = None,
        **options: Any,
    ) -> ChatStream[str | Content]: ...

    def stream(
        self,
        *args: Content | str,
        content: ContentOption = "text",
        echo: EchoOption = "none",
        kwargs: dict[str, Any] | None = None,
        **options: Any,
    ) -> ChatStream[Any]:
        """Send a message and iterate over the answer as it arrives.

        Parameters
        ----------
        *args
            The message.
        content
            ``"text"`` yields text chunks; ``"all"`` also yields tool requests and
            results (and other content) as they happen.
        echo
            As for :meth:`chat`; ``"none"`` by default.
        kwargs
            Extra request parameters for this call.
        **options
            Per-call :class:`ChatOptions` overrides.
        """
        run, opts = self._run(args, echo, content, True, kwargs, options)
        return ChatStream(drive(turn_loop(run, _prompt(args)), self.provider, *opts))

    async def chat_async(
        self,
        *args: Content | str,
        echo: EchoOption = "output",
        stream: bool = True,
        kwargs: dict[str, Any] | None = None,
        **options: Any,
    ) -> ChatResponseAsync:
        """The async :meth:`chat`: tools run without blocking the event loop."""
        run, opts = self._run(args, echo, "text", stream, kwargs, options)
        response = ChatResponseAsync(
            drive_async(turn_loop(run, _prompt(args)), self.provider, *opts)
        )
        await response.get_content()
        return response

    async def stream_async(
        self,
        *args: Content | str,
        content: ContentOption = "text",
        echo: EchoOption = "none",
        kwargs: dict[str, Any] | None = None,
        **options: Any,
    ) -> AsyncIterator[Any]:
        """The async :meth:`stream`: ``async for chunk in await chat.stream_async(...)``."""
        run, opts = self._run(args, echo, content, True, kwargs, options)
        return drive_async(turn_loop(run, _prompt(args)), self.provider, *opts)

    # -- internals ---------------------------------------------------------------------------

    def _run(
        self,
        args: Sequence[Content | str],
        echo: str,
        content: str,
        stream: bool,
        kwargs: dict[str, Any] | None,
        overrides: CallOptions | dict[str, Any],
    ) -> tuple[Run, tuple[ToolContext, int]]:
        if content not in ("text", "all"):
            raise ValueError(f"content must be 'text' or 'all', got {content!r}")
        options = self.options.merged(overrides)
        echo_sink: Echo = make_echo(echo)
        run = Run(
            history=self._history,
            provider=self.provider,
            spec=RequestSpec(
                system_prompt=self.system_prompt,
                tools=list(self._tools.values()),
                stream=stream,
                params=dict(self._params),
                kwargs=dict(kwargs or {}),
            ),
            options=options,
            tools=dict(self._tools),
            echo=echo_sink,
            yield_content=content == "all",
            before_model_call=list(self._before_model_call),
            finalize=self._finalizer(options),
            record_usage=self._record_usage,
        )
        tools = ToolContext(
            tools=dict(self._tools),
            pool=self._pool,
            on_request=self._on_tool_request.copy(),
            on_result=self._on_tool_result.copy(),
            review=self._review,
            max_concurrency=options.max_concurrency,
            timeout=options.tool_timeout,
        )
        return run, (tools, options.max_retries)

    def _finalizer(self, options: ChatOptions) -> Finalizer:
        return Finalizer(
            history=self._history,
            tools=self._tools,
            max_result_bytes=options.max_result_bytes,
            hooks=list(self._result_hooks),
        )

    def _record_usage(self, tokens: TokenUsage) -> None:
        record_usage(self.provider.name, self.provider.model, tokens)

    def copy(self) -> Chat:
        """A copy with its own history (deep-copied); provider and tools are shared."""
        new = _copy.copy(self)
        new._history = History(_copy.deepcopy(self._history.turns))
        new._history.last_sequence = self._history.last_sequence
        new._tools = dict(self._tools)
        new._on_tool_request = self._on_tool_request.copy()
        new._on_tool_result = self._on_tool_result.copy()
        new._params = dict(self._params)
        new._result_hooks = list(self._result_hooks)
        new._before_model_call = list(self._before_model_call)
        return new

    def __repr__(self) -> str:
        turns = self._history.turns
        tokens = self.token_usage()
        return (
            f"<Chat {self.provider.name}/{self.provider.model} turns={len(turns)} "
            f"tokens={tokens.input + tokens.cache_read + tokens.cache_creation}/{tokens.output}>"
        )

    def app(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        launch_browser: bool = True,
        bg_thread: bool | None = None,
        **ui_kwargs: Any,
    ) -> Any:
        """Open a Shiny chat app for this conversation (needs the ``shiny`` extra).

        Each browser session talks to its own copy of this chat, starting from its
        history. Answers stream in, with tool calls shown as cards as they happen.

        Parameters
        ----------
        host
            The address to serve on; loopback by default.
        port
            The port; 0 picks a free one.
        launch_browser
            Open the app in a web browser.
        bg_thread
            Serve from a background thread and return at once; by default only in a
            notebook. Otherwise serve until Ctrl-C.
        **ui_kwargs
            Passed to :func:`chatlas_like.shiny.chat_ui` (``placeholder``...).

        Returns
        -------
        AppServer or None
            In a background thread: the running :class:`~chatlas_like.shiny.AppServer`
            (its ``url``, ``stop()``); otherwise None once the server stops.
        """
        from .shiny import serve_app

        return serve_app(
            self,
            host=host,
            port=port,
            launch_browser=launch_browser,
            bg_thread=bg_thread,
            **ui_kwargs,
        )

    def _repr_html_(self) -> str:
        from ._display import chat_html

        return chat_html(self)

    def _repr_markdown_(self) -> str:
        from ._display import chat_markdown

        return chat_markdown(self)


def _prompt(args: Sequence[Content | str]) -> Turn | None:
    if not args:
        return None
    return UserTurn(list(args))


def _answer_dangling(run: Run) -> None:
    """Before a model call: answer requests an abandoned stream or set_turns left open."""
    run.history.check(run.token)
    answer_dangling(run.history.turns, DANGLING, run.finalize)


class ChatResponse:
    """The answer of :meth:`Chat.chat`: ``str(response)`` is its text."""

    def __init__(self, chunks: Iterator[Any]) -> None:
        self._chunks = chunks
        self._parts: list[str] = []
        self.consumed = False

    def __iter__(self) -> Iterator[str]:
        for chunk in self._chunks:
            if isinstance(chunk, str):
                self._parts.append(chunk)
                yield chunk
        self.consumed = True

    def get_content(self) -> str:
        """The whole text (consuming the answer if needed)."""
        if not self.consumed:
            for _ in self:
                pass
        return "".join(self._parts)

    @property
    def content(self) -> str:
        """The text received so far."""
        return "".join(self._parts)

    def __str__(self) -> str:
        return self.get_content()

    def __repr__(self) -> str:
        return f"ChatResponse({self.content!r})"

    def _repr_markdown_(self) -> str:
        return self.get_content()


class ChatResponseAsync:
    """The answer of :meth:`Chat.chat_async`."""

    def __init__(self, chunks: AsyncIterator[Any]) -> None:
        self._chunks = chunks
        self._parts: list[str] = []
        self.consumed = False

    async def __aiter__(self) -> AsyncIterator[str]:
        async for chunk in self._chunks:
            if isinstance(chunk, str):
                self._parts.append(chunk)
                yield chunk
        self.consumed = True

    async def get_content(self) -> str:
        """The whole text (consuming the answer if needed)."""
        if not self.consumed:
            async for _ in self:
                pass
        return "".join(self._parts)

    @property
    def content(self) -> str:
        """The text received so far."""
        return "".join(self._parts)

    def __str__(self) -> str:
        return self.content

    def __repr__(self) -> str:
        return f"ChatResponseAsync({self.content!r})"


class ChatStream(Iterator[T]):
    """The chunks of :meth:`Chat.stream`; ``close()`` stops it and repairs the history."""

    def __init__(self, chunks: Iterator[Any]) -> None:
        self._chunks = chunks

    def __iter__(self) -> ChatStream[T]:
        return self

    def __next__(self) -> T:
        return next(self._chunks)

    def close(self) -> None:
        """Stop the answer; what arrived is kept and open tool calls are answered."""
        close = getattr(self._chunks, "close", None)
        if callable(close):
            close()
