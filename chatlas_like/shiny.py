"""Shiny: a chat app for a conversation, and a chat to embed in your own app.

``chat.app()`` opens a ready-made app on 127.0.0.1. To put a chat into your own app,
pair :func:`chat_ui` with :func:`chat_server` (a function taking a :class:`Chat`)::

    from shiny import App, ui
    from chatlas_like import ChatAnthropic
    from chatlas_like.shiny import chat_server, chat_ui

    chat = ChatAnthropic(system_prompt="Be terse.")
    chat.register_tool(get_weather)

    app_ui = ui.page_fillable(ui.h3("Weather desk"), chat_ui("chat"))


    def server(input, output, session):
        session_chat = chat_server("chat", chat)  # this session's own copy


    app = App(app_ui, server)

Each browser session gets its own copy of the chat, so histories never mix. Answers
are rendered by :class:`ShinyEcho`, the echo sink Shiny's display implements (the same
interface as the terminal's and the notebook's, see :class:`~chatlas_like.EchoSink`):
text as it arrives, and one card per tool call that goes from running (its latest
progress shown) to its outcome (rendered by the result's ``tagify()``, everything
escaped), while other calls still run. A streamed message cannot be changed once sent,
so each newer card of a call carries a one-rule stylesheet that hides the card it
supersedes, and a small page script shows it in the place of the call's first card, so
cards stay in call order however the calls finish
(:mod:`chatlas_like._display.live_cards`); a replayed history shows one card per call
the same way. Sync tools run in worker threads, so a slow tool in one session never
freezes another. A failed answer is shown in the chat as a marked box; the history is
repaired and the session goes on.

shinychat displays objects through its documented registration hooks,
``shinychat.message_content`` and ``shinychat.message_content_chunk``;
:func:`register_shinychat` registers this library's content types and turns there
(``chat_server`` calls it). Nothing is patched, and chatlas is not needed.

Needs the ``shiny`` extra: ``pip install 'chatlas_like[shiny]'``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
import webbrowser
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Literal

from ._core.content import (
    Content,
    ContentCitation,
    ContentText,
    ContentThinking,
    ContentThinkingDelta,
    ContentToolRequest,
)
from ._core.tool_result import ContentToolResult, ContentToolResultProgress
from ._core.turn import Turn
from ._display.live_cards import (
    CARD_PLACE_JS,
    LiveCall,
    call_key,
    in_place,
    running_card_html,
    superseding_style,
)
from ._display.render import content_html, error_html, inserted_html, request_html
from ._display.sinks import make_echo, tee
from ._persist.bookmark_store import BookmarkStore
from ._run.echo import EchoSink
from ._run.loop import TURN_SEPARATOR

if TYPE_CHECKING:
    from ._chat import Chat, ContentOption, EchoOption

__all__ = [
    "AppServer",
    "SessionServer",
    "ShinyEcho",
    "chat_app",
    "chat_server",
    "chat_ui",
    "register_shinychat",
    "serve_app",
]

INSTALL_HINT = "Shiny support needs the `shiny` extra: pip install 'chatlas_like[shiny]'"
_registered = False
_register_lock = threading.Lock()
_OPEN_CALLS_KEPT = 10_000  # progress counts of calls whose result has not come yet


def _shinychat() -> Any:
    try:
        import shinychat
    except ImportError as e:
        raise ImportError(INSTALL_HINT) from e
    return shinychat


def register_shinychat() -> None:
    """Teach shinychat to display this library's content and turns (once per process).

    Uses shinychat's registration hooks ``message_content`` (whole messages, e.g. a
    restored turn) and ``message_content_chunk`` (pieces of a streamed answer).
    """
    global _registered
    with _register_lock:
        if _registered:
            return
        shinychat = _shinychat()
        from htmltools import HTML
        from shinychat.types import ChatMessage

        def text(item: ContentText) -> Any:
            return ChatMessage(content=item.text)  # Markdown, sanitised by shinychat

        steps = _ProgressSteps()

        def tool_card(item: ContentToolRequest | ContentToolResult) -> Any:
            return ChatMessage(content=_live_card(item, steps))

        def other(item: Content) -> Any:
            return ChatMessage(content=HTML(content_html(item)))

        def whole_turn(turn: Turn) -> Any:
            role = "user" if turn.role == "user" and not turn.tool_results else "assistant"
            if all(isinstance(c, ContentText) for c in turn.contents):
                return ChatMessage(content=turn.text, role=role)
            return ChatMessage(content=_turn_body(turn), role=role)

        def inserted_turn(turn: Turn) -> Any:
            return ChatMessage(content=HTML(inserted_html(turn)))

        for hook in (shinychat.message_content, shinychat.message_content_chunk):
            hook.register(Content, other)
            hook.register(ContentText, text)
            hook.register(ContentToolRequest, tool_card)
            hook.register(ContentToolResult, tool_card)
        shinychat.message_content.register(Turn, whole_turn)
        shinychat.message_content_chunk.register(Turn, inserted_turn)  # a stream's inserted turn
        _registered = True


def _turn_body(turn: Turn) -> Any:
    """A whole turn as tags: tool calls through their own ``tagify()`` (a result
    subclass's custom display too), everything else as escaped HTML."""
    from htmltools import HTML, TagList

    from ._display.render import prose_html

    pieces: list[Any] = []
    for c in turn.contents:
        if isinstance(c, ContentText):
            pieces.append(HTML(prose_html(c.text)))
        elif isinstance(c, ContentToolRequest):
            pieces.append(HTML(_replayed_request(c)))
        elif isinstance(c, ContentToolResult):
            pieces.append(_result_card(c))
        else:
            pieces.append(HTML(content_html(c)))
    return TagList(*pieces)


class _ProgressSteps:
    """How many progress cards each open call has shown (its cards' step numbers)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._steps: dict[str, int] = {}

    def request(self, call_id: str) -> None:
        with self._lock:
            self._steps[call_id] = 0
            if len(self._steps) > _OPEN_CALLS_KEPT:  # calls whose result never came
                del self._steps[next(iter(self._steps))]

    def progress(self, call_id: str) -> int:
        with self._lock:
            step = self._steps[call_id] = self._steps.get(call_id, 0) + 1
            return step

    def result(self, call_id: str) -> None:
        with self._lock:
            self._steps.pop(call_id, None)


def _live_card(item: ContentToolRequest | ContentToolResult, steps: _ProgressSteps) -> Any:
    """A streamed tool item as its call's one visible card (running, progressed, done),
    kept in the place of the call's first card (:data:`CARD_PLACE_JS`): cards stay in
    call order however the calls finish."""
    from htmltools import HTML, TagList

    if isinstance(item, ContentToolRequest):
        steps.request(item.id)
        card = in_place(item.id, 0, running_card_html(LiveCall(item, 0.0)))
        return TagList(_card_place_script(), HTML(card))
    if isinstance(item, ContentToolResultProgress) and item.request is not None:
        step = steps.progress(item.request.id)
        call = LiveCall(item.request, 0.0, progress=item, steps=step)
        card = superseding_style(item.request.id, step - 1) + running_card_html(call)
        return TagList(_card_place_script(), HTML(in_place(item.request.id, step, card)))
    if item.request is None:
        return item.tagify()
    steps.result(item.request.id)
    from htmltools import tags

    return TagList(
        _card_place_script(),
        tags.div(
            _result_card(item),
            class_="chatlas-like-call",
            data_chatlas_like_call=call_key(item.request.id),
            data_chatlas_like_step="end",
        ),
    )


def _card_place_script() -> Any:
    """The page script keeping cards in call order, as a dependency (loaded once)."""
    from htmltools import HTML, HTMLDependency, tags

    return HTMLDependency("chatlas-like-cards", "1.0.0", head=tags.script(HTML(CARD_PLACE_JS)))


def _result_card(result: ContentToolResult) -> Any:
    """A result's own ``tagify()`` (a subclass's custom display too), hiding the cards
    its call showed while it ran."""
    if result.request is None:
        return result.tagify()
    from htmltools import HTML, TagList

    return TagList(HTML(superseding_style(result.request.id)), result.tagify())


def _replayed(turns: list[Turn]) -> list[Turn]:
    """The turns a replayed history shows: not an assistant turn holding only tool
    calls (their results' cards show them), which would be an empty message."""
    from ._display.render import answered_ids, shown_contents

    answered = answered_ids(turns)
    return [t for t in turns if shown_contents(t, answered)]


def _replayed_request(request: ContentToolRequest) -> str:
    """A request in a replayed history: its card, hidden by its result's card."""
    return (
        f"<div class='chatlas-like-live' data-call='{call_key(request.id)}' data-step='0'>"
        f"{request_html(request)}</div>"
    )


def chat_ui(id: str, **kwargs: Any) -> Any:
    """The chat component's UI; place it in your page. ``kwargs`` go to shinychat's."""
    return _shinychat().chat_ui(id, **kwargs)


async def answer_stream(
    chat: Chat,
    prompt: str,
    kwargs: Mapping[str, Any] | None = None,
    *,
    stream: bool = True,
    echo: EchoOption = "none",
    content: ContentOption = "all",
) -> AsyncIterator[Any]:
    """The pieces of ``chat``'s answer to ``prompt``, ready for shinychat.

    Text chunks, tool requests and results as they happen; a failure ends the answer
    with an error box instead of an exception (the history is already repaired). A
    thinking block is gathered from its deltas and shown once, collapsed, when it ends;
    citations are left out (the text already shows them), as is redacted thinking.
    ``stream=False`` holds the pieces back until the answer is complete; ``echo`` is
    where the app runs (its console); ``content="text"`` shows the text alone.
    """
    pieces = _answer_pieces(chat, prompt, kwargs, echo, content)
    if stream:
        async for piece in pieces:
            yield piece
        return
    whole: list[Any] = []
    async for piece in pieces:
        if whole and isinstance(piece, str) and isinstance(whole[-1], str):
            whole[-1] += piece
        else:
            whole.append(piece)
    for piece in whole:
        yield piece


async def _answer_pieces(
    chat: Chat,
    prompt: str,
    kwargs: Mapping[str, Any] | None,
    echo: EchoOption,
    content: ContentOption,
) -> AsyncIterator[Any]:
    shown = ShinyEcho(content)
    sink: EchoSink = shown if echo == "none" else tee(shown, make_echo(echo))
    call = asyncio.ensure_future(chat.chat_async(prompt, echo=sink, kwargs=dict(kwargs or {})))
    call.add_done_callback(lambda _: shown.finish())  # also when it failed before its loop ran
    try:
        async for piece in shown.pieces():
            yield piece
        await call
    except Exception as e:  # shown in the chat; the history is repaired, the session goes on
        from htmltools import HTML

        yield HTML(error_html(e))
    finally:
        if not call.done():  # the page went away: stop the answer (the loop repairs it)
            call.cancel()
            with contextlib.suppress(BaseException):
                await call


class ShinyEcho(EchoSink):
    """Shiny's rendering of one answer: an :class:`~chatlas_like.EchoSink` whose pieces
    shinychat streams (``component.append_message_stream(echo.pieces())``).

    Text as it arrives; one card per tool call, from running (its latest progress) to
    its outcome; a thinking block gathered from its deltas and shown once, when it
    ends; messages a result inserted. Citations are left out (the text shows them), as
    is redacted thinking. ``content="text"`` shows the text alone. Pass it as ``echo=``
    to :meth:`~chatlas_like.Chat.chat_async` and read :meth:`pieces` meanwhile, on the
    same event loop.
    """

    def __init__(self, content: ContentOption = "all") -> None:
        self.tool_cards = content == "all"
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._thinking: list[str] | None = None
        self._text_shown = False
        self._separate = False  # text after a tool round is set apart, as a stream sets it

    def text(self, delta: str) -> None:
        if not delta:
            return
        if self._separate:
            self._separate = False
            self._put(TURN_SEPARATOR)
        self._text_shown = True
        self._put(delta)

    def content(self, item: Content) -> None:
        if isinstance(item, ContentText):
            self.text(item.text)
        elif isinstance(item, ContentThinkingDelta):
            self._think(item)
        elif isinstance(item, (ContentToolRequest, ContentToolResult)):
            self._separate = self._text_shown
            if self.tool_cards:
                self._put(item)
        elif self.tool_cards and not isinstance(item, (ContentCitation, ContentThinking)):
            self._put(item)

    def inserted_turn(self, turn: Turn) -> None:
        if self.tool_cards:
            self._put(turn)

    def finish(self) -> None:
        self._put(_END)

    async def pieces(self) -> AsyncIterator[Any]:
        """What to show, as it happens, until the answer is over."""
        while (piece := await self._queue.get()) is not _END:
            yield piece

    def _think(self, delta: ContentThinkingDelta) -> None:
        if not self.tool_cards:
            return
        if delta.phase != "end":
            self._thinking = [*(self._thinking or []), delta.thinking]
        elif self._thinking:
            self._put(ContentThinking("".join(self._thinking)))
            self._thinking = None

    def _put(self, piece: Any) -> None:
        # The loop may finalise results in a worker thread (a store write): hand over there.
        if threading.get_ident() == self._thread:
            self._queue.put_nowait(piece)
        else:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, piece)


_END = object()


def chat_server(
    id: str,
    chat: Chat,
    *,
    kwargs: Mapping[str, Any] | None = None,
    stream: bool = True,
    echo: EchoOption | None = None,
    content: ContentOption = "all",
    bookmark: bool = False,
    bookmark_dir: str | os.PathLike[str] | None = None,
) -> Chat:
    """Serve the chat component ``id`` for the current Shiny session.

    Call it inside your app's server function. The session talks to its own copy of
    ``chat`` (history included), returned so the app can read it.

    Parameters
    ----------
    id
        The id given to :func:`chat_ui`.
    chat
        The chat to copy for this session: provider, tools, callbacks and history.
    kwargs
        Extra request parameters for every answer.
    stream
        Show answers as they arrive (default), or each one whole once complete.
    echo
        Echo answers in the console the app runs in as well (``"text"``, ``"output"``,
        ``"all"``); None is ``"none"`` when streaming and ``"text"`` otherwise, as in
        chatlas.
    content
        ``"all"`` (default) shows tool calls and results as cards; ``"text"`` only text.
    bookmark
        Keep the conversation in the app's bookmarks (the app needs a
        ``bookmark_store``): a bookmarked page opens with its messages shown as they
        were and the history back in the session's chat. The conversation is kept on
        the server, in ``bookmark_dir``; the bookmark holds only its key, so a URL
        bookmark stays short however long the chat (see ``docs/shiny.md``).
    bookmark_dir
        Where bookmarked conversations are kept, for 30 days after their last answer
        (default: ``~/.local/state/chatlas_like/shiny-bookmarks``).

    Returns
    -------
    Chat
        This session's chat.
    """
    echo = _checked(stream, echo, content)
    shinychat = _shinychat()
    from shiny import reactive

    register_shinychat()
    session_chat = chat.copy()
    component = shinychat.Chat(id)
    earlier = session_chat.get_turns()
    bookmarked = (
        _Bookmarks(id, component, session_chat, BookmarkStore(bookmark_dir)) if bookmark else None
    )

    if earlier:

        @reactive.effect
        async def _replay() -> None:  # pyright: ignore[reportUnusedFunction]
            # A restored bookmark brings its own messages (restore runs first).
            if bookmarked is None or not bookmarked.restored:
                for turn in _replayed(earlier):
                    await component.append_message(turn)
            _replay.destroy()

    @component.on_user_submit
    async def _answer(user_input: str) -> None:  # pyright: ignore[reportUnusedFunction]
        pieces = answer_stream(
            session_chat, user_input, kwargs, stream=stream, echo=echo, content=content
        )
        await component.append_message_stream(pieces)

    return session_chat


class _Bookmarks:
    """A session's bookmarks: the conversation kept on the server, its key in the bookmark.

    Each answer writes the conversation under this session's own key and bookmarks the
    page (as shinychat's ``enable_bookmarking`` does after a response, URL updated);
    opening a bookmarked page reads the conversation by the key and shows its messages
    from the history, cards included. A restored session writes under a new key, so
    the page a bookmark was shared from stays as it was.
    """

    _NOT_KEPT = ("_user_input", "_cancel", "_slash_command", "_greeting_requested")

    def __init__(self, id: str, component: Any, chat: Chat, store: BookmarkStore) -> None:
        from shiny import reactive
        from shiny.session import get_current_session

        self.restored = False
        self._id, self._component, self._chat, self._store = id, component, chat, store
        self._key = store.new_key()
        session = get_current_session()
        if session is None or session.is_stub_session():
            return
        root = session.root_scope()
        root.bookmark.exclude.extend(component.id + suffix for suffix in self._NOT_KEPT)

        async def show_url(url: str) -> None:
            await session.bookmark.update_query_string(url)

        root.bookmark.on_bookmarked(show_url)
        root.bookmark.on_bookmark(self._write)
        root.bookmark.on_restore(self._read)

        @reactive.effect
        @reactive.event(component.messages, ignore_init=True)
        async def _after_an_answer() -> None:  # pyright: ignore[reportUnusedFunction]
            messages = component.messages()
            if messages and messages[-1].get("role") == "assistant":
                await session.bookmark()

    async def _write(self, state: Any) -> None:
        from ._persist.bookmark import chat_state

        data = chat_state(self._chat)
        await asyncio.to_thread(self._store.save, self._key, data)
        state.values[self._id] = {"conversation": self._key}

    async def _read(self, state: Any) -> None:
        from ._persist.bookmark import restore_chat_state

        data = await asyncio.to_thread(self._store.load, _key_of(state.values.get(self._id)))
        if data is None:
            return  # unknown or expired: the page opens as a new conversation
        restore_chat_state(self._chat, data)
        self.restored = True
        for turn in _replayed(self._chat.get_turns()):
            await self._component.append_message(turn)


def _key_of(value: object) -> object:
    """The conversation key a bookmark holds (anything: the URL is untrusted input)."""
    if isinstance(value, dict):
        found: dict[str, object] = value  # pyright: ignore[reportUnknownVariableType]
        return found.get("conversation")
    return None


def _checked(stream: bool, echo: EchoOption | None, content: ContentOption) -> EchoOption:
    """``echo`` with chatlas's default filled in; bad values fail when the app is built."""
    from ._display.terminal import ECHO_MODES

    if content not in ("text", "all"):
        raise ValueError(f"content must be 'text' or 'all', got {content!r}")
    if echo is None:
        return "none" if stream else "text"
    if echo not in ECHO_MODES:
        raise ValueError(f"echo must be one of {', '.join(ECHO_MODES)}; got {echo!r}")
    return echo


class SessionServer:
    """The server function of :func:`chat_app`: each session serves its own copy of
    ``chat`` with these answer settings (see :func:`chat_server`)."""

    def __init__(
        self,
        chat: Chat,
        *,
        kwargs: Mapping[str, Any] | None = None,
        stream: bool = True,
        echo: EchoOption | None = None,
        content: ContentOption = "all",
        bookmark: bool = False,
        bookmark_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.chat = chat
        self.bookmark = bookmark
        self.bookmark_dir = bookmark_dir
        self.kwargs = dict(kwargs or {})
        self.stream = stream
        self.echo: EchoOption = _checked(stream, echo, content)
        self.content: ContentOption = content

    def __call__(self, input: Any, output: Any, session: Any) -> None:
        chat_server(
            "chat",
            self.chat,
            kwargs=self.kwargs,
            stream=self.stream,
            echo=self.echo,
            content=self.content,
            bookmark=self.bookmark,
            bookmark_dir=self.bookmark_dir,
        )


def chat_app(
    chat: Chat,
    *,
    title: str | None = None,
    stream: bool = True,
    echo: EchoOption | None = None,
    content: ContentOption = "all",
    kwargs: Mapping[str, Any] | None = None,
    bookmark_store: Literal["url", "server", "disable"] = "disable",
    bookmark_dir: str | os.PathLike[str] | None = None,
    **ui_kwargs: Any,
) -> Any:
    """A Shiny app (``shiny.App``) with one chat; each session gets a copy of ``chat``.

    Parameters
    ----------
    chat
        The conversation to serve.
    title
        The page's title.
    stream, echo, content, kwargs
        How each answer is asked for and shown (see :func:`chat_server`).
    bookmark_store
        ``"url"`` bookmarks each conversation in the page's URL after every answer,
        ``"server"`` in Shiny's bookmark directory, ``"disable"`` (default) not at
        all. Either way the conversation itself is kept on the server, in
        ``bookmark_dir``, and the bookmark holds its key: a URL stays short.
    bookmark_dir
        Where bookmarked conversations are kept (see :func:`chat_server`).
    **ui_kwargs
        Passed to :func:`chat_ui` (``placeholder``, ``greeting``...).
    """
    try:
        from shiny import App, ui
    except ImportError as e:
        raise ImportError(INSTALL_HINT) from e
    if bookmark_store not in ("url", "server", "disable"):
        raise ValueError(
            f"bookmark_store must be 'url', 'server' or 'disable', got {bookmark_store!r}"
        )
    bookmark = bookmark_store != "disable"
    server = SessionServer(
        chat,
        kwargs=kwargs,
        stream=stream,
        echo=echo,
        content=content,
        bookmark=bookmark,
        bookmark_dir=bookmark_dir,
    )
    ui_kwargs.setdefault("placeholder", "Ask something…")
    page = ui.page_fillable(
        chat_ui("chat", **ui_kwargs),
        fillable_mobile=True,
        title=title or f"chatlas_like · {chat.provider.model}",
    )
    if not bookmark:
        return App(page, server)

    def page_for(request: Any) -> Any:  # Shiny restores bookmarks into a UI function
        return page

    return App(page_for, server, bookmark_store=bookmark_store)


class AppServer:
    """A Shiny app served by uvicorn on a loopback port; ``stop()`` ends it.

    The socket is bound and listening before the server starts, so :attr:`url`
    accepts connections at once.
    """

    def __init__(self, app: Any, *, host: str = "127.0.0.1", port: int = 0) -> None:
        import uvicorn

        self.app = app
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        self._socket.listen(128)
        self.host = host
        self.port: int = self._socket.getsockname()[1]
        # The sans-I/O websockets protocol: the legacy one is deprecated in websockets 14+.
        config = uvicorn.Config(app, log_level="warning", lifespan="on", ws="websockets-sansio")
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Where the app is served."""
        return f"http://{self.host}:{self.port}/"

    def serve(self) -> None:
        """Serve in this thread until stopped (Ctrl-C in the main thread)."""
        try:
            self._server.run(sockets=[self._socket])
        finally:
            self._socket.close()

    def start(self) -> AppServer:
        """Serve in a background (daemon) thread."""
        self._thread = threading.Thread(target=self.serve, name="chatlas-like-shiny", daemon=True)
        self._thread.start()
        return self

    def wait(self) -> None:
        """Block until the server stops (Ctrl-C still reaches the calling thread)."""
        thread = self._thread
        while thread is not None and thread.is_alive():
            thread.join(0.2)  # short waits: signals are handled between them

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving (open sessions are closed) and wait for the thread."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():  # a connection that will not close
                self._server.force_exit = True
                self._thread.join(timeout)

    def __enter__(self) -> AppServer:
        return self if self._thread is not None else self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<AppServer {self.url}>"


def serve_app(
    chat: Chat,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    launch_browser: bool = True,
    bg_thread: bool | None = None,
    **app_kwargs: Any,
) -> AppServer | None:
    """Serve :func:`chat_app` for ``chat`` (``app_kwargs`` go to it); see :meth:`Chat.app`."""
    from ._display.sinks import in_notebook

    server = AppServer(chat_app(chat, **app_kwargs), host=host, port=port)
    background = in_notebook() if bg_thread is None else bg_thread
    if background:
        server.start()
        print(f"chatlas_like: the chat app is at {server.url}", flush=True)
        if launch_browser:
            webbrowser.open(server.url)
        return server
    # Blocking: the server runs in its thread too, and this one only waits, so a Ctrl-C
    # at any moment (even while the server's event loop is being made) stops it cleanly.
    try:
        server.start()
        print(f"chatlas_like: the chat app is at {server.url}", flush=True)
        if launch_browser:
            webbrowser.open(server.url)
        server.wait()
    except KeyboardInterrupt:  # Ctrl-C is how a blocking app is stopped: no traceback
        server.stop()
        print("chatlas_like: the chat app stopped.", flush=True)
    return None
