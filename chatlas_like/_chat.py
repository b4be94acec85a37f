"""Chat: a conversation with a model, its tools, and the four verbs.

The verbs (``chat``, ``stream``, ``chat_async``, ``stream_async``) are thin: each builds
one :class:`~chatlas_like._run.loop.Run` and hands the turn loop to a driver
(:mod:`chatlas_like._run.drive`). Everything else (echo, tool running, repair) happens
once, in the loop, for all four.
"""

from __future__ import annotations

import asyncio
import copy as _copy
import os
import sys
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar, cast, overload

from ._core.content import Content, ContentToolRequest
from ._core.errors import ToolFailureWarning  # chatlas keeps its warning in chatlas._chat
from ._core.history import History, answer_dangling
from ._core.missing import MISSING, MISSING_TYPE
from ._core.tool_result import ContentToolResult
from ._core.turn import AssistantTurn, SystemTurn, Turn, Usage, UserTurn
from ._display.echo_options import EchoOptions, echo_options
from ._display.render import chat_html, chat_markdown, chat_text
from ._display.sinks import CurrentDisplay, make_echo
from ._observe.telemetry import observe_call
from ._observe.tokens import (
    TokensDict,
    conversation_cost,
    record_usage,
    served_model,
    tokens_by_turn,
    usage_of,
)
from ._run.context import ContextView
from ._run.drive import PreparedCall, Sender, drive, drive_async, with_downloads
from ._run.echo import EchoSink
from ._run.expansion import apply_expansions
from ._run.limiter import Limiter
from ._run.loop import Run, turn_loop
from ._run.options import CallOptions, ChatOptions, with_model_params
from ._run.stream_controller import StreamController
from ._tools.callbacks import CallbackList
from ._tools.finalize import READ_MORE_TOOL, Finalizer
from ._tools.observer import QUIET, Observer
from ._tools.runner import ToolContext
from ._tools.structured import extract_value
from ._tools.tool import Rerun, Tool, ToolBuiltIn
from ._tools.workers import WorkerPool
from .providers._base import Provider
from .providers._types import ModelInfo, RequestSpec

if TYPE_CHECKING:
    from pathlib import Path

    from pydantic import BaseModel

    from ._mcp import McpTools
    from ._store import ToolResultStore
    from ._store._attach import StoreAttachment
    from .providers._files import FileManager

__all__ = ["Chat", "ChatResponse", "ChatResponseAsync", "ChatStream", "ToolFailureWarning"]

T = TypeVar("T")
ModelT = TypeVar("ModelT", bound="BaseModel")
EchoOption = Literal["none", "text", "output", "all"]
ContentOption = Literal["text", "all"]
DANGLING = "Not run: the conversation moved on before this call was answered."
_SETTLE_TURNS = 8  # event-loop turns an abandoned async stream gets to close

# Each running call's display by chat, for its tools' threads (which run in copies of
# the call's context): calls running at once on one chat, as a durable chat's
# conversations do, each see their own, where one attribute would mix them up.
_DISPLAYS: ContextVar[dict[int, CurrentDisplay]] = ContextVar("chatlas_like_displays")


def _show_in_this_context(chat: int, display: CurrentDisplay | None) -> None:
    shown = dict(_DISPLAYS.get({}))
    if display is None:
        shown.pop(chat, None)
    else:
        shown[chat] = display
    _DISPLAYS.set(shown)


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
    store
        A tool-result store (:class:`ToolResultStore`, or a URL or file path for
        :func:`open_store`) that keeps every tool result of this chat as it is made.
    tenant_id
        Whose results they are in the store (the read API serves a tenant only its
        own); None for none.
    paging
        Let the model read past the cut of a long result with the
        ``read_tool_result`` tool (needs a store).
    kwargs_chat
        Extra request parameters for every answer (per-call ``kwargs=`` win over
        them), as in chatlas; kept as :attr:`kwargs_chat`, never saved by :meth:`save`
        (they may hold headers): pass them to :meth:`load` again.
    **options
        Options from the table in :class:`ChatOptions` (``max_tool_rounds`` ...).
    """

    def __init__(
        self,
        provider: Provider,
        *,
        system_prompt: str | None = None,
        turns: Sequence[Turn] = (),
        store: ToolResultStore | str | os.PathLike[str] | None = None,
        tenant_id: str | None = None,
        paging: bool = False,
        kwargs_chat: dict[str, Any] | None = None,
        **options: Any,
    ) -> None:
        self.provider = provider
        self.system_prompt = system_prompt
        self.kwargs_chat: dict[str, Any] = dict(kwargs_chat or {})
        self._echo_options = EchoOptions()
        self._displays: list[CurrentDisplay] = []  # the calls running now, oldest first
        self.options = ChatOptions(**options)
        self._history = History()
        self._tools: dict[str, Tool | ToolBuiltIn] = {}
        self._on_tool_request: CallbackList[ContentToolRequest] = CallbackList()
        self._on_tool_result: CallbackList[ContentToolResult] = CallbackList()
        self._review: Callable[[ContentToolRequest], Any] | None = None
        self._params: dict[str, Any] = {}
        self._before_model_call: list[Callable[[Run], Sequence[Turn] | None]] = [
            _answer_dangling,
            apply_expansions,
        ]
        self._pool = WorkerPool(keep_idle=self.options.max_concurrency)
        self._limiter = Limiter()
        self._pager: Tool | None = None  # the store's paging tool, once installed
        self._context = ContextView(window=provider.context_window)
        self._store: StoreAttachment | None = None
        self._mcp_tools: McpTools | None = None  # MCP sessions, once a server is registered
        self._conversation_id: str | None = None
        if store is not None:
            self.attach_store(store, tenant_id=tenant_id, paging=paging)
        elif tenant_id is not None or paging:
            raise ValueError("tenant_id and paging need a store")
        if turns:
            self.set_turns(turns)

    # -- history -----------------------------------------------------------------------------

    @property
    def run_id(self) -> str:
        """The id of this conversation's run (keys its results in a tool-result store).

        Always this chat's own: a loaded or copied chat gets a new one, so two chats
        never write over each other's results (see :attr:`parent_runs`).
        """
        return self._history.run_id

    @property
    def parent_runs(self) -> tuple[str, ...]:
        """The runs this chat's earlier results were stored under, nearest first (the run
        of the chat it was loaded or copied from, then that one's parents)."""
        return self._history.parent_runs

    @property
    def system_prompt(self) -> str | None:
        """The system prompt (None for none); set it to change later requests."""
        return self._system_prompt

    @system_prompt.setter
    def system_prompt(self, value: str | None) -> None:
        if value is not None and not isinstance(value, str):
            raise TypeError(f"system_prompt must be a string or None, not {type(value).__name__}")
        self._system_prompt = value

    @property
    def conversation_id(self) -> str | None:
        """An id for this conversation, recorded as ``gen_ai.conversation.id`` on its spans.

        For applications that manage conversations (a Shiny session, a ticket): set it
        and every later span of this chat carries it; None (the default) records none.
        """
        return self._conversation_id

    @conversation_id.setter
    def conversation_id(self, value: str | None) -> None:
        if value is not None and not isinstance(value, str):
            raise TypeError(f"conversation_id must be a str or None, not {type(value).__name__}")
        self._conversation_id = value

    def get_turns(
        self,
        *,
        include_system_prompt: bool = False,
        tool_result_role: Literal["user", "assistant"] = "user",
    ) -> list[Turn]:
        """The conversation's turns, oldest first.

        Parameters
        ----------
        include_system_prompt
            Put the system prompt first, as a :class:`SystemTurn`.
        tool_result_role
            ``"user"`` (default): tool results are in user turns, as the model got
            them. ``"assistant"``: each tool loop reads as one assistant turn, its
            results merged in (for displays); the history itself is unchanged.
        """
        if tool_result_role not in ("user", "assistant"):
            raise ValueError(
                "Expected `tool_result_role` to be one of 'user' or 'assistant', "
                f"not {tool_result_role!r}"
            )
        turns = list(self._history.turns)
        if tool_result_role == "assistant":
            from ._core.turn_groups import tool_results_on_assistant_turns

            turns = tool_results_on_assistant_turns(turns)
        if include_system_prompt and self.system_prompt:
            turns.insert(0, SystemTurn(self.system_prompt))
        return turns

    def set_turns(self, turns: Sequence[Turn], *, include_system_prompt: bool = False) -> None:
        """Replace the conversation's turns.

        Tool requests left without a result are answered with refused results, so the
        next request is valid.

        Parameters
        ----------
        turns
            The turns. A :class:`SystemTurn` is a ``ValueError``, as in chatlas: set
            :attr:`system_prompt` instead.
        include_system_prompt
            Take a leading :class:`SystemTurn` as the system prompt (ours), so that
            ``chat.set_turns(chat.get_turns(include_system_prompt=True),
            include_system_prompt=True)`` gives the chat back as it was.
        """
        turns = list(turns)
        if include_system_prompt and turns and turns[0].role == "system":
            self.system_prompt = turns.pop(0).text
        for index, turn in enumerate(turns):
            if isinstance(turn, SystemTurn):  # chatlas checks the class, not the role
                raise ValueError(  # chatlas's words
                    f"Turn {index} has a role 'system', which is not allowed. The system "
                    "prompt must be set separately using the `.system_prompt` property. "
                    "Consider removing this turn and setting the `.system_prompt` "
                    "separately if you want to change the system prompt."
                )
        if turns and turns[0].role == "system":  # a plain Turn("system", ...): the prompt
            self.system_prompt = turns.pop(0).text
        if any(t.role == "system" for t in turns):
            raise ValueError("only the first turn may be a system turn")
        self._history.replace(turns)
        finalize = self._finalizer(self.options)
        answer_dangling(self._history.turns, DANGLING, finalize, everywhere=True)

    def add_turn(self, turn: Turn) -> None:
        """Append one turn to the conversation (a :class:`SystemTurn` is a ``ValueError``,
        as in chatlas: set :attr:`system_prompt` instead)."""
        if isinstance(turn, SystemTurn):
            raise ValueError(  # chatlas's words
                "Turns with the role 'system' are not allowed. The system prompt must be "
                "set separately using the `.system_prompt` property."
            )
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

    @property
    def model(self) -> str:
        """The model the chat talks to; set it to switch models for later calls.

        The provider is shared with :meth:`copy`'s copies, so they switch too.
        """
        return self.provider.model

    @model.setter
    def model(self, value: str) -> None:
        self.provider.model = value

    def list_models(self) -> list[ModelInfo]:
        """The models the provider offers, newest first (dicts: ``id``, ``name``, ``created_at``)."""
        return self.provider.list_models()

    @property
    def files(self) -> FileManager:
        """Files hosted by the provider: upload once, refer to them in any turn."""
        from .providers._files import FileManager

        return FileManager(self.provider)

    @property
    def history(self) -> History:
        """The conversation as the library keeps it: its turns, its run in the result
        store and the last sequence number (for drivers and features built on a chat;
        ordinary code reads :meth:`get_turns` and writes :meth:`set_turns`)."""
        return self._history

    @property
    def model_params(self) -> dict[str, Any]:
        """The parameters :meth:`set_model_params` set, as each request sends them."""
        return dict(self._params)

    @property
    def limiter(self) -> Limiter:
        """The gate every model request of this chat passes: a rate-limit pause one
        request hears holds the others (``parallel_chat`` gives its chats one of its own)."""
        return self._limiter

    @limiter.setter
    def limiter(self, value: Limiter) -> None:
        self._limiter = value

    def token_count(
        self,
        *args: Content | str,
        include: Literal["new", "complete"] = "new",
        data_model: type[BaseModel] | None = None,
    ) -> int:
        """Input tokens a request would use, counted by the provider's count endpoint.

        Parameters
        ----------
        *args
            The prospective message.
        include
            ``"new"`` counts the message and the registered tools; ``"complete"`` also
            the system prompt and the conversation so far: the next request as a whole.
        data_model
            The model of a :meth:`chat_structured` call, whose schema counts too.
        """
        if include not in ("new", "complete"):
            raise ValueError(f"include must be 'new' or 'complete', got {include!r}")
        turns = self.get_turns() if include == "complete" else []
        if args:
            turns.append(UserTurn(list(args)))
        spec = RequestSpec(
            system_prompt=self.system_prompt if include == "complete" else None,
            tools=list(self._tools.values()),
            stream=False,
            data_model=data_model,
        )
        body = self.provider.build_request(turns, with_downloads(self.provider, turns, spec))
        return self.provider.count_tokens(body)

    async def token_count_async(
        self,
        *args: Content | str,
        include: Literal["new", "complete"] = "new",
        data_model: type[BaseModel] | None = None,
    ) -> int:
        """:meth:`token_count` without blocking the event loop."""
        return await asyncio.to_thread(
            self.token_count, *args, include=include, data_model=data_model
        )

    def get_tokens(self) -> list[TokensDict]:
        """Tokens of each user and assistant turn, as chatlas reports them.

        One dict per turn (``role``, ``tokens``, ``tokens_cached``, ``tokens_total``):
        an assistant turn's output, and for the user turn before it the input that is
        new since the previous answer (its ``tokens_total`` is the whole input sent).
        Partial answers and the prompts they answer are left out.

        Raises
        ------
        ValueError
            The history does not alternate user and assistant turns with token counts
            (e.g. turns given to ``set_turns``); each turn's ``tokens`` still tells.
        """
        return tokens_by_turn(self._history.turns)

    def get_cost(
        self,
        include: Literal["all", "last"] = "all",
        token_price: tuple[float, float, float] | None = None,
    ) -> float:
        """What the conversation cost in USD, estimated from token counts and prices.

        Parameters
        ----------
        include
            ``"all"`` sums every answer; ``"last"`` gives the last one's cost.
        token_price
            ``(input, output, cached input)`` prices in USD per million tokens, for a
            model the price table lacks (or see :func:`~chatlas_like.set_token_price`).

        Raises
        ------
        KeyError
            No price is known for the model and ``token_price`` was not given.
        """
        return conversation_cost(
            self._history.turns, self.provider, include=include, token_price=token_price
        )

    def token_usage(self) -> Usage:
        """All four token counts of this conversation so far, summed."""
        return usage_of(self._history.turns)

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
        durable: Rerun | None = None,
    ) -> None:
        """Let the model call ``func``.

        Parameters
        ----------
        func
            A function (sync or async), a :class:`Tool` or a :class:`ToolBuiltIn`.
        force
            Replace a registered tool of the same name instead of raising.
        name, model, annotations, sequential, timeout, max_result_bytes
            As for :meth:`Tool.from_func`. With a :class:`Tool`, those given apply to a
            copy of it (``register_tool(tool, name="x")`` registers it as ``x``), and
            ``model`` rebuilds it from its function.
        durable
            Ours: in a durable conversation, whether a call a crash interrupted runs
            again on recovery (``"rerun"``) or is answered as interrupted (``"once"``);
            None decides from ``annotations`` (see :class:`Tool`).
        """
        if isinstance(func, ToolBuiltIn):
            tool: Tool | ToolBuiltIn = func
        elif isinstance(func, Tool):
            settings = _Settings(name, annotations, sequential, timeout, max_result_bytes, durable)
            tool = _tool_with(func, model, settings)
        else:
            tool = Tool.from_func(
                func,
                name=name,
                model=model,
                annotations=annotations,
                sequential=sequential,
                timeout=timeout,
                max_result_bytes=max_result_bytes,
                durable=durable,
            )
        if tool.name in self._tools and not force:
            raise ValueError(  # chatlas's words
                f"Tool with name '{tool.name}' is already registered. "
                "Set `force=True` to overwrite it."
            )
        self._tools[tool.name] = tool

    def get_tools(self) -> list[Tool | ToolBuiltIn]:
        """The registered tools."""
        self._sync_mcp_tools()
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

    @property
    def current_display(self) -> CurrentDisplay | None:
        """Where the running call shows its output; None outside a call (chatlas's).

        A tool calls ``chat.current_display.echo(...)`` to show its own content while it
        runs: a Markdown string, or a content object. With ``echo="none"`` there is still
        a display (``if chat.current_display:`` holds), and ``echo()`` shows nothing.
        """
        mine = _DISPLAYS.get({}).get(id(self))
        if mine is not None and any(d is mine for d in self._displays):
            return mine
        return self._displays[-1] if self._displays else None

    def on_tool_result(self, callback: Callable[[ContentToolResult], Any]) -> Callable[[], None]:
        """Call ``callback(result)`` for each tool result as its call finishes; returns a remover.

        Results come in completion order, not call order. A generator tool's yields come
        instead of its result, each as a :class:`ContentToolResultProgress`, as in chatlas.
        A result kept when the chat is stopped mid-round (it was ready but not yet
        delivered) is not passed to ``callback``.
        """
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

    # -- tools from MCP servers (see docs/mcp.md) --------------------------------------------

    async def register_mcp_tools_stdio_async(
        self,
        *,
        command: str,
        args: Sequence[str] = (),
        name: str | None = None,
        include_tools: Sequence[str] = (),
        exclude_tools: Sequence[str] = (),
        namespace: str | None = None,
        transport_kwargs: dict[str, Any] | None = None,
        force: bool = False,
        timeout: float | None = None,
    ) -> None:
        """Start an MCP server (``command args``) and register its tools; needs the ``mcp`` extra.

        The session belongs to this chat: :meth:`cleanup_mcp_tools`, :meth:`close` or
        leaving a ``with`` / ``async with`` block stops the server. A sync chat
        registers with ``asyncio.run(chat.register_mcp_tools_stdio_async(...))``: the
        session lives on the chat's private background loop, not the caller's.

        Parameters
        ----------
        command
            The program that runs the server, e.g. ``sys.executable`` or ``"npx"``.
        args
            Its arguments, e.g. ``["my_server.py"]``.
        name
            The session's name (for :meth:`cleanup_mcp_tools`); the server's own by default.
        include_tools
            Register only these of the server's tools (by their MCP names).
        exclude_tools
            Register all tools but these (not with ``include_tools``).
        namespace
            Put ``namespace_`` in front of each tool's name, to tell servers apart.
        transport_kwargs
            Options of the server process (``env``, ``cwd``, ``encoding``...),
            ``errlog`` (the file its standard error goes to), ``max_message_bytes``
            (the largest message read from it, 32 MiB by default) and
            ``register_timeout`` (seconds to start, initialise and list, 60 by default).
        force
            Replace registered tools of the same names instead of raising.
        timeout
            Seconds one call of these tools may take (else the chat's ``tool_timeout``).

        Raises
        ------
        McpServerError
            The server could not be started, initialised or listed.
        ValueError
            A session of that name exists, or tool names clash (see ``namespace``).
        """
        from ._mcp import ToolFilter, require_mcp, stdio_connection

        require_mcp()
        options = _mcp_filter(ToolFilter, include_tools, exclude_tools, namespace, timeout)
        connection = stdio_connection(command, args, name, transport_kwargs or {})
        await self._mcp().register(self._tools, connection, options, force)

    async def register_mcp_tools_http_stream_async(
        self,
        *,
        url: str,
        include_tools: Sequence[str] = (),
        exclude_tools: Sequence[str] = (),
        name: str | None = None,
        namespace: str | None = None,
        transport_kwargs: dict[str, Any] | None = None,
        force: bool = False,
        timeout: float | None = None,
    ) -> None:
        """Connect to a running MCP server over streamable HTTP and register its tools.

        As :meth:`register_mcp_tools_stdio_async`, for a server at ``url`` (e.g.
        ``"http://127.0.0.1:8000/mcp"``); ``transport_kwargs`` are ``headers``,
        ``auth`` and ``timeout`` for the HTTP client, or ``http_client`` (an
        ``httpx2.AsyncClient``) and the options of the ``mcp`` package's
        ``streamable_http_client``, and ``register_timeout`` as
        for stdio. Closing the session ends it on the server, which keeps running.
        """
        from ._mcp import ToolFilter, http_connection, require_mcp

        require_mcp()
        options = _mcp_filter(ToolFilter, include_tools, exclude_tools, namespace, timeout)
        connection = http_connection(url, name, transport_kwargs or {})
        await self._mcp().register(self._tools, connection, options, force)

    async def cleanup_mcp_tools(self, names: Sequence[str] | None = None) -> None:
        """Close MCP sessions and remove their tools.

        Parameters
        ----------
        names
            The sessions to close; all by default. A copy's sessions belong to the chat
            it was copied from: for a copy this removes the tools and closes nothing.
        """
        if self._mcp_tools is not None:
            await self._mcp_tools.cleanup(self._tools, names)

    def _mcp(self) -> McpTools:
        if self._mcp_tools is None:
            from ._mcp import McpTools

            self._mcp_tools = McpTools()
        return self._mcp_tools

    def _sync_mcp_tools(self) -> None:
        if self._mcp_tools is not None:  # a server's tools/list_changed, between calls
            self._mcp_tools.sync(self._tools)

    # -- the tool-result store and saving ----------------------------------------------------

    def attach_store(
        self,
        store: ToolResultStore | str | os.PathLike[str] | None,
        *,
        tenant_id: str | None = None,
        paging: bool = False,
    ) -> None:
        """Keep every tool result of this chat in ``store``, from the next result on.

        Parameters
        ----------
        store
            A :class:`ToolResultStore`, a URL or path for :func:`open_store`, or None
            to detach.
        tenant_id
            Whose results they are; None for none.
        paging
            Offer the model the ``read_tool_result`` tool to read past a cut.
        """
        if self._store is not None and self._store.paging:
            self._tools.pop(READ_MORE_TOOL, None)
        self._store = None if store is None else _attachment(store, tenant_id, paging)
        self._install_pager()

    @property
    def store(self) -> ToolResultStore | None:
        """The attached tool-result store, if any."""
        return self._store.store if self._store is not None else None

    def save(self, path: str | os.PathLike[str]) -> None:
        """Save the conversation to ``path``, atomically (see :mod:`chatlas_like._persist.chat_file`).

        Saved: provider, model, max_tokens, sampling parameters, options, ``run_id``,
        system prompt, tool schemas (once) and turns. Never saved: the API key, the
        endpoint and client settings, exception objects, pending message expansions,
        callbacks, the store.
        """
        from ._persist.chat_file import ChatFile, save_chat

        saved = ChatFile(
            provider=self.provider,
            system_prompt=self.system_prompt,
            run_id=self.run_id,
            turns=self.get_turns(),
            tools=self.get_tools(),
            params=dict(self._params),
            options=asdict(self.options),
            parent_runs=self.parent_runs,
            last_sequence=self._history.last_sequence,
        )
        save_chat(saved, path)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        tools: Sequence[Callable[..., Any] | Tool | ToolBuiltIn] = (),
        *,
        provider: Provider | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        store: ToolResultStore | str | os.PathLike[str] | None = None,
        tenant_id: str | None = None,
        paging: bool = False,
        **options: Any,
    ) -> Chat:
        """A chat saved by :meth:`save`, ready to continue.

        Parameters
        ----------
        path
            The saved file.
        tools
            The tools again (functions are not data); one warning names tools the
            history calls that are missing here.
        provider
            A provider to use instead of the one rebuilt from the file.
        api_key
            The API key (never saved); the provider's environment variable otherwise.
        base_url
            The endpoint (never taken from the file, which cannot redirect your key);
            ``ANTHROPIC_BASE_URL`` or the provider's default otherwise.
        store, tenant_id, paging
            As for :class:`Chat` (a store is not saved with the chat).
        **options
            Options that replace the saved ones.

        Raises
        ------
        PersistenceError
            For a file that is empty, truncated, corrupt, not a saved chat, or of a
            newer format version (the message names the version needed).
        """
        from ._persist.chat_file import in_saved_order, load_chat, warn_missing_tools

        saved = load_chat(path, provider=provider, api_key=api_key, base_url=base_url)
        chat = cls(
            saved.provider,
            system_prompt=saved.system_prompt,
            store=store,
            tenant_id=tenant_id,
            paging=paging,
            **{**saved.options, **options},
        )
        chat.set_tools(in_saved_order(saved.tool_order, [*tools, *chat._tools.values()]))
        chat._params = saved.params
        # What this chat adds goes under its own new run (History made one), linked to the
        # saved run: two chats continuing one file never write over each other's results.
        chat._history.parent_runs = (saved.run_id, *saved.parent_runs)
        chat._history.last_sequence = saved.last_sequence
        chat.set_turns(saved.turns)
        warn_missing_tools(saved.turns, chat._tools, os.fspath(path))
        return chat

    # -- options -----------------------------------------------------------------------------

    def set_echo_options(
        self,
        rich_markdown: dict[str, Any] | None = None,
        rich_console: dict[str, Any] | None = None,
        css_styles: dict[str, str] | None = None,
        tool_result_max_lines: int | MISSING_TYPE | None = MISSING,
        tool_result_max_height: str | MISSING_TYPE | None = MISSING,
        thinking_max_lines: int | MISSING_TYPE | None = MISSING,
        web_activity_max_sources: int | MISSING_TYPE | None = MISSING,
        image_max_lines: int | MISSING_TYPE | None = MISSING,
    ) -> None:
        """Set how echoed output looks (chatlas's options; each call replaces them all).

        Parameters
        ----------
        rich_markdown
            Options for ``rich.markdown.Markdown`` (terminal Markdown rendering).
        rich_console
            Arguments for the terminal's ``rich.console.Console``.
        css_styles
            CSS declarations for the answer's text in a notebook.
        tool_result_max_lines
            Lines of a tool result shown in the terminal (None: the whole preview).
        tool_result_max_height
            A CSS length bounding each tool card in a notebook (None: no bound).
        thinking_max_lines
            Lines of each thinking block shown in the terminal (the first ones).
        web_activity_max_sources
            Sources listed for a web search in the terminal (None: all).
        image_max_lines
            Rows of a terminal image thumbnail (kept; images are named, not drawn).
        """
        self._echo_options = echo_options(
            rich_markdown,
            rich_console,
            css_styles,
            tool_result_max_lines,
            tool_result_max_height,
            thinking_max_lines,
            web_activity_max_sources,
            image_max_lines,
        )

    def set_options(self, **options: Any) -> None:
        """Change chat options (see :class:`ChatOptions`)."""
        self.options = self.options.merged(options)

    def set_model_params(
        self,
        *,
        temperature: float | MISSING_TYPE | None = MISSING,
        top_p: float | MISSING_TYPE | None = MISSING,
        top_k: int | MISSING_TYPE | None = MISSING,
        frequency_penalty: float | MISSING_TYPE | None = MISSING,
        presence_penalty: float | MISSING_TYPE | None = MISSING,
        seed: int | MISSING_TYPE | None = MISSING,
        max_tokens: int | MISSING_TYPE | None = MISSING,
        log_probs: bool | MISSING_TYPE | None = MISSING,
        stop_sequences: list[str] | MISSING_TYPE | None = MISSING,
        stop: str | list[str] | MISSING_TYPE | None = MISSING,
    ) -> None:
        """Set sampling parameters for this chat's later requests (not its copies').

        A parameter left out keeps its value; None resets it to the provider's default.
        ``stop`` is an alias of ``stop_sequences`` (a string or a list). Parameters the
        provider has not got (Anthropic: penalties, seed, log_probs) are dropped with a
        warning.
        """
        given: dict[str, Any] = {
            "temperature": temperature,
            "top_p": top_p,
            "top_k": top_k,
            "frequency_penalty": frequency_penalty,
            "presence_penalty": presence_penalty,
            "seed": seed,
            "max_tokens": max_tokens,
            "log_probs": log_probs,
            "stop_sequences": stop_sequences,
        }
        if not isinstance(stop, MISSING_TYPE):
            given["stop_sequences"] = [stop] if isinstance(stop, str) else stop
        given = {k: v for k, v in given.items() if not isinstance(v, MISSING_TYPE)}
        self._params = with_model_params(self._params, given, self.provider)

    # -- the verbs ---------------------------------------------------------------------------

    def chat(
        self,
        *args: Content | str,
        echo: EchoOption | EchoSink = "output",
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
            or ``"none"``; or an :class:`EchoSink` of your own, which receives
            everything as it happens.
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
        call = self.prepare_call(args, echo, "text", stream, kwargs, options)
        response = ChatResponse(drive(call.steps, call.sender), echoed=_shows(echo))
        response.get_content()
        return response

    @overload
    def stream(
        self,
        *args: Content | str,
        content: Literal["text"] = "text",
        echo: EchoOption | EchoSink = "none",
        data_model: type[BaseModel] | None = None,
        kwargs: dict[str, Any] | None = None,
        controller: StreamController | None = None,
        **options: Any,
    ) -> ChatStream[str]: ...
    @overload
    def stream(
        self,
        *args: Content | str,
        content: Literal["all"],
        echo: EchoOption | EchoSink = "none",
        data_model: type[BaseModel] | None = None,
        kwargs: dict[str, Any] | None = None,
        controller: StreamController | None = None,
        **options: Any,
    ) -> ChatStream[str | Content]: ...

    def stream(
        self,
        *args: Content | str,
        content: ContentOption = "text",
        echo: EchoOption | EchoSink = "none",
        data_model: type[BaseModel] | None = None,
        kwargs: dict[str, Any] | None = None,
        controller: StreamController | None = None,
        **options: Any,
    ) -> ChatStream[Any]:
        """Send a message and iterate over the answer as it arrives.

        Parameters
        ----------
        *args
            The message.
        content
            ``"text"`` yields text chunks; ``"all"`` also yields tool requests and
            results, server tool blocks, citations and thinking deltas as they happen.
        echo
            As for :meth:`chat`; ``"none"`` by default.
        data_model
            A pydantic model: the answer is JSON in its shape, streamed as text chunks
            (``data_model.model_validate_json("".join(chunks))``) and kept in the
            history as a ``ContentJson``.
        kwargs
            Extra request parameters for this call.
        controller
            A :class:`StreamController` whose ``cancel()`` stops the stream cleanly.
        **options
            Per-call :class:`ChatOptions` overrides.
        """
        call = self.prepare_call(args, echo, content, True, kwargs, options, data_model, controller)
        return ChatStream(drive(call.steps, call.sender))

    async def chat_async(
        self,
        *args: Content | str,
        echo: EchoOption | EchoSink = "output",
        stream: bool = True,
        kwargs: dict[str, Any] | None = None,
        **options: Any,
    ) -> ChatResponseAsync:
        """The async :meth:`chat`: tools run without blocking the event loop."""
        await self._after_abandoned_streams()
        call = self.prepare_call(args, echo, "text", stream, kwargs, options)
        response = ChatResponseAsync(drive_async(call.steps, call.sender), echoed=_shows(echo))
        await response.get_content()
        return response

    async def stream_async(
        self,
        *args: Content | str,
        content: ContentOption = "text",
        echo: EchoOption | EchoSink = "none",
        data_model: type[BaseModel] | None = None,
        kwargs: dict[str, Any] | None = None,
        controller: StreamController | None = None,
        **options: Any,
    ) -> AsyncIterator[Any]:
        """The async :meth:`stream`: ``async for chunk in await chat.stream_async(...)``."""
        await self._after_abandoned_streams()
        call = self.prepare_call(args, echo, content, True, kwargs, options, data_model, controller)
        return drive_async(call.steps, call.sender)

    def chat_structured(
        self,
        *args: Content | str,
        data_model: type[ModelT],
        echo: EchoOption | EchoSink = "none",
        stream: bool = False,
        kwargs: dict[str, Any] | None = None,
        **options: Any,
    ) -> ModelT:
        """Ask for data in the shape of ``data_model``; returns a validated instance.

        Anthropic's structured outputs constrain the answer to the model's JSON Schema
        (every object closed with ``additionalProperties: false``); models without them
        answer through a forced tool instead (see ``structured_output_mode`` of
        :func:`ChatAnthropic`). The JSON stays in the history as a ``ContentJson``.

        Parameters
        ----------
        *args
            The message, e.g. the text to extract from; may be empty when the data is
            in the conversation already.
        data_model
            A pydantic model; nested models and lists of models work.
        echo
            As for :meth:`chat`; ``"none"`` by default.
        stream
            Stream the answer (the JSON arrives as text chunks) or ask for one response.
        kwargs
            Extra request parameters for this call.
        **options
            Per-call :class:`ChatOptions` overrides.

        Raises
        ------
        ValueError
            The answer held no structured data (e.g. cut off at ``max_tokens``).
        pydantic.ValidationError
            The data does not validate against ``data_model``.
        """
        call = self.prepare_call(args, echo, "text", stream, kwargs, options, data_model)
        for _ in drive(call.steps, call.sender):
            pass
        return data_model.model_validate(extract_value(self.get_last_turn()))

    async def chat_structured_async(
        self,
        *args: Content | str,
        data_model: type[ModelT],
        echo: EchoOption | EchoSink = "none",
        stream: bool = False,
        kwargs: dict[str, Any] | None = None,
        **options: Any,
    ) -> ModelT:
        """The async :meth:`chat_structured`."""
        await self._after_abandoned_streams()
        call = self.prepare_call(args, echo, "text", stream, kwargs, options, data_model)
        async for _ in drive_async(call.steps, call.sender):
            pass
        return data_model.model_validate(extract_value(self.get_last_turn()))

    # -- internals ---------------------------------------------------------------------------

    async def _after_abandoned_streams(self) -> None:
        """Let an async stream the caller broke out of close first, keeping its partial
        answer: the event loop closes it a few turns after the ``break`` (its finaliser),
        after a call that starts at once would have claimed the history."""
        for _ in range(_SETTLE_TURNS):
            if not self._history.busy:
                return
            await asyncio.sleep(0)

    def prepare_call(
        self,
        args: Sequence[Content | str],
        echo: EchoOption | EchoSink = "none",
        content: str = "text",
        stream: bool = False,
        kwargs: dict[str, Any] | None = None,
        overrides: CallOptions | dict[str, Any] | None = None,
        data_model: type[Any] | None = None,
        controller: StreamController | None = None,
        *,
        shown_by: Chat | None = None,
    ) -> PreparedCall:
        """One call of a chat verb, ready for a driver: the seam of the verbs, of the
        durable driver and of a driver of your own.

        Parameters
        ----------
        args, echo, content, stream, kwargs, data_model, controller
            As the verbs take them.
        overrides
            Per-call :class:`ChatOptions` overrides.
        shown_by
            The chat whose ``current_display`` shows the call while it runs (this one by
            default; the durable driver runs a copy and shows the chat it wraps).

        Returns
        -------
        PreparedCall
            Its run, the sender that performs its steps and its prompt; ``steps`` is the
            turn loop (:mod:`chatlas_like._run.loop`), for ``drive``, ``drive_async`` or
            a driver of your own.
        """
        run, prompt = self._run(
            args, echo, content, stream, kwargs, overrides or {}, data_model, controller
        )
        sender = self._sender(run.options, run.observer, run.stop_requested)
        steps = (shown_by or self)._shown(turn_loop(run, prompt), run.echo)
        return PreparedCall(run=run, sender=sender, prompt=prompt, steps=steps)

    def _run(
        self,
        args: Sequence[Content | str],
        echo: EchoOption | EchoSink,
        content: str,
        stream: bool,
        kwargs: dict[str, Any] | None,
        overrides: CallOptions | dict[str, Any],
        data_model: type[Any] | None,
        controller: StreamController | None,
    ) -> tuple[Run, Turn | None]:
        if content not in ("text", "all"):
            raise ValueError(f"content must be 'text' or 'all', got {content!r}")
        self._sync_mcp_tools()
        options = self.options.merged(overrides)
        if options.context_budget is not None:
            self._page_elided_results()
        spec = self._spec(stream, kwargs, data_model)
        prompt = _prompt(args)  # content the provider cannot take: the loop takes it back out
        if controller is not None:
            controller._start()
        echo_sink = CurrentDisplay(
            make_echo(echo, thinking=options.echo_thinking, options=self._echo_options)
        )
        observer = self._observer(options)
        run = Run(
            history=self._history,
            provider=self.provider,
            spec=spec,
            options=options,
            tools=dict(self._tools),
            echo=echo_sink,
            yield_content=content == "all",
            before_model_call=list(self._before_model_call),
            finalize=self._finalizer(options, observer),
            view=self._view(options),
            record_usage=self._record_usage,
            stop_requested=(lambda: controller.cancelled) if controller is not None else None,
            stop_reason=(lambda: controller.reason) if controller is not None else None,
            observer=observer,
        )
        return run, prompt

    def _shown(
        self, steps: Generator[Any, Any, None], echo: EchoSink | None
    ) -> Generator[Any, Any, None]:
        """``steps``, with ``current_display`` set while they run (from the first step,
        as chatlas sets it when the call starts, to the end)."""
        display = echo if isinstance(echo, CurrentDisplay) else None
        if display is None:
            yield from steps
            return
        self._displays.append(display)
        _show_in_this_context(id(self), display)
        try:
            yield from steps
        finally:
            self._displays[:] = [d for d in self._displays if d is not display]
            _show_in_this_context(id(self), None)

    def _spec(
        self, stream: bool, kwargs: dict[str, Any] | None, data_model: type[Any] | None
    ) -> RequestSpec:
        return RequestSpec(
            system_prompt=self.system_prompt,
            tools=list(self._tools.values()),
            stream=stream,
            params=dict(self._params),
            kwargs={**self.kwargs_chat, **(kwargs or {})},
            data_model=data_model,
        )

    def _sender(
        self, options: ChatOptions, observer: Observer, stop: Callable[[], bool] | None
    ) -> Sender:
        """What performs a run's model calls and tool rounds (see :mod:`._run.drive`)."""
        tools = ToolContext(
            tools=dict(self._tools),
            pool=self._pool,
            on_request=self._on_tool_request.copy(),
            on_result=self._on_tool_result.copy(),
            review=self._review,
            max_concurrency=options.max_concurrency,
            timeout=options.tool_timeout,
            observer=observer,
            stop_requested=stop,
        )
        return Sender(
            self.provider,
            tools,
            options.max_retries,
            self._limiter,
            blocking_results=self._store is not None,
            observer=observer,
        )

    def _observer(self, options: ChatOptions) -> Observer:
        return observe_call(
            self.provider,
            tools=self._tools,
            max_result_bytes=options.max_result_bytes,
            max_retries=options.max_retries,
            conversation_id=self._conversation_id,
            has_store=self._store is not None,
        )

    def _finalizer(self, options: ChatOptions, observer: Observer = QUIET) -> Finalizer:
        return Finalizer(
            history=self._history,
            tools=self._tools,
            max_result_bytes=options.max_result_bytes,
            keeper=self._store,
            store_max_bytes=options.store_max_bytes,
            tool_timeout=options.tool_timeout,
            observer=observer,
        )

    def _view(self, options: ChatOptions) -> ContextView:
        """What requests send of the history (see :mod:`._run.context`)."""
        view = self._context
        view.budget = options.context_budget
        view.sequences = self._stored_sequences if self._store is not None else None
        return view

    def _stored_sequences(self) -> dict[str, int]:
        """The sequence number of each of this run's stored results, by tool call id."""
        assert self._store is not None
        records = self._store.store.list_page(
            self._store.tenant_id, self.run_id, limit=2**31 - 1, with_result=False
        )
        return {r.tool_call_id: r.sequence for r in records if r.tool_call_id}

    def _page_elided_results(self) -> None:
        """A context budget sends old results as references to read back: that needs a
        store to read from (in memory when none is attached) and the paging tool."""
        if self._store is None:
            from ._store.memory import MemoryStore

            self.attach_store(MemoryStore(), paging=True)
        elif not self._store.paging:
            self.attach_store(self._store.store, tenant_id=self._store.tenant_id, paging=True)

    def _install_pager(self) -> None:
        if self._store is not None and self._store.paging:
            tool = self._store.paging_tool(
                lambda: (self._history.run_id, *self._history.parent_runs),
                lambda: self._history.answered_ids(),
                lambda: self.options.max_result_bytes,
            )
            mine = self._tools.get(tool.name)
            if mine is not None and mine is not self._pager:
                raise ValueError(
                    f"your tool '{tool.name}' has the name of the result store's paging "
                    "tool, which a context budget or paging=True offers the model to read "
                    "cut results with: register yours under another name"
                )
            self._tools[tool.name] = self._pager = tool

    def _record_usage(self, turn: AssistantTurn) -> None:
        if turn.usage is not None and turn.tokens is not None:
            model = served_model(turn, self.provider)
            record_usage(self.provider.name, model, turn.usage, turn.tokens, turn.cost)

    def close(self) -> None:
        """Release the provider's pooled connections (also done when the chat is collected)
        and close the MCP sessions this chat registered (their tools are removed)."""
        if self._mcp_tools is not None:
            self._mcp_tools.close(self._tools)
        self.provider.close()

    async def close_async(self) -> None:
        """:meth:`close` from async code: the MCP sessions close without blocking the
        event loop, and the running loop's client connections close too."""
        await self.cleanup_mcp_tools()
        await self.provider.close_async()

    def __enter__(self) -> Chat:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Chat:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close_async()

    async def get_state(self) -> dict[str, Any]:
        """The history as JSON-ready data, for shinychat's bookmarks.

        With ``chat.enable_bookmarking(client)`` in a Shiny app, shinychat keeps it in
        the bookmark (the page's URL, or the server) and restores it with
        :meth:`set_state` when the bookmarked page is opened again.
        """
        from ._persist.bookmark import chat_state

        return chat_state(self)

    async def set_state(self, state: Any) -> None:
        """Restore the history :meth:`get_state` returned (tool results included)."""
        from ._persist.bookmark import restore_chat_state

        restore_chat_state(self, state)

    def export(
        self,
        filename: str | os.PathLike[str],
        *,
        turns: Sequence[Turn] | None = None,
        title: str | None = None,
        content: ContentOption = "text",
        include_system_prompt: bool = True,
        overwrite: bool = False,
    ) -> Path:
        """Write the conversation to a Markdown (``.md``) or HTML (``.html``) transcript.

        Everything in it is escaped: opening it runs and fetches nothing (the HTML
        file is self-contained).

        Parameters
        ----------
        filename
            Where to write; its extension picks the format.
        turns
            The turns to write; this chat's by default.
        title
            A heading for the transcript.
        content
            ``"text"`` (default) writes the text; ``"all"`` also tool calls, results
            and other content.
        include_system_prompt
            Add the system prompt at the end, in a collapsed block.
        overwrite
            Replace an existing file instead of raising ``ValueError``.

        Returns
        -------
        Path
            The file written.
        """
        from ._display.export import export_chat

        return export_chat(
            self,
            filename,
            turns=turns,
            title=title,
            content=content,
            include_system_prompt=include_system_prompt,
            overwrite=overwrite,
        )

    def console(
        self,
        *,
        echo: EchoOption = "output",
        stream: bool = True,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        """Chat with this conversation in the terminal, with its tools, until Ctrl-D or
        ``exit``; Ctrl-C stops an answer, not the session.

        Parameters
        ----------
        echo
            What is shown of each answer (``"text"``, ``"output"``, ``"all"``,
            ``"none"``); progress lines show while tools run.
        stream
            Accepted as in chatlas; answers always stream here, so that progress and
            Ctrl-C work while they arrive.
        kwargs
            Extra request parameters for every answer.
        """
        from ._display.console import run_chat

        del stream  # see the docstring
        run_chat(self, echo=echo, kwargs=kwargs, options=self._echo_options)

    def copy(self, *, history: History | None = None) -> Chat:
        """A copy with its own history (deep-copied) and its own run; provider and tools
        are shared. The copy's tool results go under its new run, numbered on from this
        chat's last, so a sequence number the model was given still names one result.
        With ``history``, the copy holds that conversation instead (a durable turn's,
        with its own run and numbering).

        MCP sessions stay this chat's: the copy calls the same servers but owns none of
        them (its ``cleanup_mcp_tools()`` and ``close()`` leave them open); once this
        chat closes a session, the copy's calls to it answer with an error."""
        new = _copy.copy(self)
        new.kwargs_chat = dict(self.kwargs_chat)
        if history is None:
            history = History(
                _copy.deepcopy(self._history.turns),
                parent_runs=(self.run_id, *self._history.parent_runs),
            )
            history.last_sequence = self._history.last_sequence
        new._history = history
        new._tools = dict(self._tools)
        new._on_tool_request = self._on_tool_request.copy()
        new._on_tool_result = self._on_tool_result.copy()
        new._params = dict(self._params)
        new._before_model_call = list(self._before_model_call)
        new._mcp_tools = self._mcp_tools.copy() if self._mcp_tools is not None else None
        new._displays = []  # a copy made during a call is not in that call
        new._context = ContextView(window=self.provider.context_window)
        new._install_pager()  # the copy pages through its own run
        return new

    def __deepcopy__(self, memo: dict[int, Any]) -> Chat:
        """``copy.deepcopy(chat)`` is :meth:`copy`: the provider (its connection pool),
        worker pool and rate limiter hold threads and locks, so they are shared."""
        return self.copy()

    def __str__(self) -> str:
        """The conversation as chatlas prints it: a summary line, then each turn."""
        return chat_text(
            self.provider.label, self.model, self.get_turns(include_system_prompt=True)
        )

    def __repr__(self) -> str:
        turns = self._history.turns
        tokens = self.token_usage()
        return (
            f"<Chat {self.provider.label}/{self.provider.model} turns={len(turns)} "
            f"tokens={tokens.input + tokens.cache_read + tokens.cache_creation}/{tokens.output}>"
        )

    def app(
        self,
        *,
        stream: bool = True,
        port: int = 0,
        host: str = "127.0.0.1",
        launch_browser: bool = True,
        bookmark_store: Literal["url", "server", "disable"] = "url",
        bookmark_dir: str | os.PathLike[str] | None = None,
        bg_thread: bool | None = None,
        echo: EchoOption | None = None,
        content: ContentOption = "all",
        kwargs: dict[str, Any] | None = None,
        **ui_kwargs: Any,
    ) -> Any:
        """Open a Shiny chat app for this conversation (needs the ``shiny`` extra).

        Each browser session talks to its own copy of this chat, starting from its
        history. Answers stream in, with tool calls shown as cards as they happen.

        Parameters
        ----------
        stream
            Show each answer as it arrives (default), or whole once it is complete.
        port
            The port; 0 picks a free one.
        host
            The address to serve on; loopback by default.
        launch_browser
            Open the app in a web browser.
        bookmark_store
            Where each session's conversation is bookmarked after every answer:
            ``"url"`` (default, as in chatlas) in the page's URL, so that reloading or
            sharing it brings the conversation back; ``"server"`` on the server;
            ``"disable"`` nowhere (a reloaded page starts again from this chat's
            history). The conversation itself is kept on the server and the
            bookmark holds its key, so the URL stays short however long the chat.
        bookmark_dir
            Where bookmarked conversations are kept, for 30 days after their last
            answer (default: ``~/.local/state/chatlas_like/shiny-bookmarks``).
        bg_thread
            Serve from a background thread and return at once; by default only in a
            notebook. Otherwise serve until Ctrl-C.
        echo
            Also echo each answer in the console the app runs in (``"text"``,
            ``"output"``, ``"all"`` or ``"none"``); None is ``"none"`` when streaming
            and ``"text"`` otherwise.
        content
            ``"all"`` (default) shows tool calls and results as cards; ``"text"``
            shows the answers' text only.
        kwargs
            Extra request parameters for every answer of every session.
        **ui_kwargs
            Passed to :func:`chatlas_like.shiny.chat_ui` (``placeholder``...).

        Returns
        -------
        AppServer or None
            In a background thread: the running :class:`~chatlas_like.shiny.AppServer`
            (its ``url``, ``app``, ``stop()``); otherwise None once the server stops.
        """
        from .shiny import serve_app

        return serve_app(
            self,
            host=host,
            port=port,
            launch_browser=launch_browser,
            bg_thread=bg_thread,
            stream=stream,
            echo=echo,
            content=content,
            kwargs=kwargs,
            bookmark_store=bookmark_store,
            bookmark_dir=bookmark_dir,
            **ui_kwargs,
        )

    def _repr_html_(self) -> str:

        return chat_html(self)

    def _repr_markdown_(self) -> str:

        return chat_markdown(self)


class _Settings(NamedTuple):
    """What ``register_tool`` was given for a :class:`Tool`; None where not given."""

    name: str | None
    annotations: dict[str, Any] | None
    sequential: bool
    timeout: float | None
    max_result_bytes: int | None
    durable: Rerun | None


def _tool_with(tool: Tool, model: Any, given: _Settings) -> Tool:
    """``tool`` with the settings ``register_tool`` was given; itself when none were."""
    if model is not None:
        return Tool.from_func(
            tool.func,
            name=given.name or tool.name,
            model=model,
            annotations=given.annotations or tool.annotations,
            sequential=given.sequential or tool.sequential,
            timeout=given.timeout if given.timeout is not None else tool.timeout,
            max_result_bytes=given.max_result_bytes or tool.max_result_bytes,
            durable=given.durable or tool.durable,
        )
    changes = {
        key: value
        for key, value in given._replace(sequential=given.sequential or None)._asdict().items()
        if value is not None
    }
    return tool.with_settings(**changes) if changes else tool


def _attachment(
    store: ToolResultStore | str | os.PathLike[str], tenant_id: str | None, paging: bool
) -> StoreAttachment:
    from ._store import open_store
    from ._store._attach import StoreAttachment

    return StoreAttachment(open_store(store), tenant_id, paging)


def _mcp_filter(
    make: Callable[..., T],
    include: Sequence[str] | str,
    exclude: Sequence[str] | str,
    namespace: str | None,
    timeout: float | None,
) -> T:
    """The ToolFilter of a registration (a single name may be given as a string)."""
    included = (include,) if isinstance(include, str) else tuple(include)
    excluded = (exclude,) if isinstance(exclude, str) else tuple(exclude)
    return make(included, excluded, namespace, timeout)


def _shows(echo: EchoOption | EchoSink) -> bool:
    """Whether ``echo`` shows the answer where the caller is (a sink of the caller's own
    may send it anywhere: its answer still displays)."""
    return isinstance(echo, str) and echo != "none"


def _prompt(args: Sequence[Content | str]) -> Turn | None:
    """The user turn of a verb's arguments: a list or tuple among them gives each of its
    items as content of its own (chatlas's RAG article passes the retrieved texts so)."""
    if not args:
        return None
    contents: list[Content | str] = []
    for arg in args:
        given: object = arg
        items = cast("Sequence[object]", given) if isinstance(given, (list, tuple)) else (given,)
        for item in items:
            if not isinstance(item, (str, Content)):
                raise TypeError(
                    "a prompt is strings and content objects (or lists of them), not "
                    f"{type(item).__name__}: pass str(...) of it, or content_*() for a file"
                )
            contents.append(item)
    return UserTurn(contents)


def _answer_dangling(run: Run) -> None:
    """Before a model call: answer requests an abandoned stream or set_turns left open."""
    run.history.check(run.token)
    answer_dangling(run.history.turns, DANGLING, run.finalize)


class _Answer:
    """What both kinds of answer share: the text kept as it arrives, and its display."""

    def __init__(self, echoed: bool) -> None:
        self._parts: list[str] = []
        self.consumed = False
        self._echoed_in = _ipython_cell() if echoed else None

    def _kept(self, chunk: Any) -> bool:
        """Whether ``chunk`` is text of the answer (then kept); other items pass over."""
        if isinstance(chunk, str):
            self._parts.append(chunk)
            return True
        return False

    @property
    def content(self) -> str:
        """The text received so far."""
        return "".join(self._parts)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.content!r})"

    @staticmethod
    def _markdown(text: str) -> str:
        from ._display.safe_markdown import safe_markdown

        return safe_markdown(text)  # no raw HTML or remote image in a notebook

    @property
    def _ipython_display_(self) -> Callable[[], None] | None:
        return _shown_already(self._echoed_in)


class ChatResponse(_Answer):
    """The answer of :meth:`Chat.chat`: ``str(response)`` is its text.

    In IPython (a notebook, a Jupyter console) a response displays as Markdown, except
    in the cell whose echo already showed it: there it shows nothing more, so a chat
    call as a cell's last expression shows its answer once. Displayed in a later cell,
    or after ``echo="none"``, it shows as Markdown.

    Parameters
    ----------
    chunks
        The answer's chunks (text chunks are kept; other items are passed over).
    echoed
        Whether the echo shows the answer as it arrives.
    """

    def __init__(self, chunks: Iterator[Any], *, echoed: bool = False) -> None:
        super().__init__(echoed)
        self._text = self._texts(chunks)

    def _texts(self, chunks: Iterator[Any]) -> Iterator[str]:
        yield from (chunk for chunk in chunks if self._kept(chunk))
        self.consumed = True

    def __iter__(self) -> ChatResponse:
        return self  # an iterator, as chatlas's: next(response) works

    def __next__(self) -> str:
        return next(self._text)

    def get_content(self) -> str:
        """The whole text (consuming the answer if needed)."""
        if not self.consumed:
            for _ in self:
                pass
        return self.content

    def __str__(self) -> str:
        return self.get_content()

    def _repr_markdown_(self) -> str:
        return self._markdown(self.get_content())


class ChatResponseAsync(_Answer):
    """The answer of :meth:`Chat.chat_async`; it displays as :class:`ChatResponse` does.

    Parameters
    ----------
    chunks
        The answer's chunks (text chunks are kept; other items are passed over).
    echoed
        Whether the echo shows the answer as it arrives.
    """

    def __init__(self, chunks: AsyncIterator[Any], *, echoed: bool = False) -> None:
        super().__init__(echoed)
        self._text = self._texts(chunks)

    async def _texts(self, chunks: AsyncIterator[Any]) -> AsyncIterator[str]:
        async for chunk in chunks:
            if self._kept(chunk):
                yield chunk
        self.consumed = True

    def __aiter__(self) -> ChatResponseAsync:
        return self  # an async iterator, as chatlas's

    async def __anext__(self) -> str:
        return await anext(self._text)

    async def get_content(self) -> str:
        """The whole text (consuming the answer if needed)."""
        if not self.consumed:
            async for _ in self:
                pass
        return self.content

    def __str__(self) -> str:
        return self.content

    def _repr_markdown_(self) -> str:
        return self._markdown(self.content)


def _ipython_cell() -> int | None:
    """The number of the IPython cell running now; None outside IPython."""
    ipython = sys.modules.get("IPython")  # not imported here: IPython runs only if loaded
    shell = ipython.get_ipython() if ipython is not None else None
    count = getattr(shell, "execution_count", None)
    return count if isinstance(count, int) else None


def _shown_already(echoed_in: int | None) -> Callable[[], None] | None:
    """A response's ``_ipython_display_``: in the cell whose echo showed the answer, a
    display that shows nothing (IPython then writes no ``Out``); elsewhere None, which
    IPython ignores (it calls only a callable), so the Markdown repr shows."""
    if echoed_in is not None and echoed_in == _ipython_cell():
        return _show_nothing
    return None


def _show_nothing() -> None:
    return None


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
