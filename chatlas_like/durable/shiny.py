"""Shiny with durable conversations: a reloaded page, even after a restart, finds its chat.

Each browser session talks on a durable conversation whose id is in the page's URL
(``?c=...``; a page without one gets a new id). When the page loads, the conversation's
finished turns are shown, and a turn still running (one the app's restarted process is
completing after a crash) is followed from its DBOS stream until it ends::

    from dbos import DBOS
    from chatlas_like.durable import DurableChat
    from chatlas_like.durable.shiny import chat_app
    from chatlas_like.shiny import AppServer

    desk = DurableChat(chat, name="desk")  # before DBOS.launch()
    DBOS(config={"name": "desk-app", "system_database_url": "sqlite:///desk.sqlite"})
    DBOS.launch()  # completes the turns a dead app process left unfinished
    AppServer(chat_app(desk), port=8000).serve()

Needs the ``shiny`` and ``durable`` extras.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, Literal
from urllib.parse import parse_qs, quote

from .._core.turn import UserTurn
from ..shiny import INSTALL_HINT, ShinyEcho, chat_ui, register_shinychat
from ._chat import DurableChat
from ._codec import decode_prompt
from ._engine import in_thread
from ._history import load_history

__all__ = ["chat_app", "chat_server"]


def chat_server(
    id: str,
    durable: DurableChat,
    *,
    query_key: str = "c",
    content: Literal["text", "all"] = "all",
) -> None:
    """Serve the chat component ``id`` for this Shiny session on a durable conversation.

    Call it in your app's server function. The conversation id is the page URL's
    ``query_key`` parameter; a page without one gets a new id, written into its URL
    so that a reload comes back to the same conversation.

    Parameters
    ----------
    id
        The id given to :func:`chatlas_like.shiny.chat_ui`.
    durable
        The durable chat (created before ``DBOS.launch()``).
    query_key
        The URL parameter holding the conversation id.
    content
        ``"all"`` shows tool calls and results as cards; ``"text"`` only text.
    """
    try:
        import shinychat
        from shiny import reactive
        from shiny.session import require_active_session
    except ImportError as e:
        raise ImportError(INSTALL_HINT) from e
    register_shinychat()
    session = require_active_session(None)
    component = shinychat.Chat(id)
    conversation: dict[str, str] = {}

    @reactive.effect
    async def _restore() -> None:  # pyright: ignore[reportUnusedFunction]
        search: str = session.clientdata.url_search()
        found = parse_qs(search.lstrip("?")).get(query_key)
        conversation_id = found[0] if found else uuid.uuid4().hex
        conversation["id"] = conversation_id
        if not found:
            await session.bookmark.update_query_string(
                f"?{query_key}={quote(conversation_id, safe='')}", mode="replace"
            )
        _restore.destroy()
        await _show(component, durable, conversation_id)

    @component.on_user_submit
    async def _answer(user_input: str) -> None:  # pyright: ignore[reportUnusedFunction]
        echo = ShinyEcho(content)
        turn = asyncio.ensure_future(
            durable.chat_async(user_input, conversation_id=conversation["id"], echo=echo)
        )
        turn.add_done_callback(lambda _: echo.finish())
        await component.append_message_stream(echo.pieces())
        await turn


async def _show(component: Any, durable: DurableChat, conversation_id: str) -> None:
    """The finished turns, then the running turn's prompt and answer as it comes."""
    recorded = await in_thread(lambda: load_history(durable.name, conversation_id))
    for turn in recorded.turns:
        await component.append_message(turn)
    if not recorded.running:
        return
    prompt = await in_thread(lambda: _prompt_of(recorded.running[-1]))
    if prompt is not None:
        await component.append_message(prompt)
    await component.append_message_stream(durable.follow_async(conversation_id))


def _prompt_of(workflow_id: str) -> UserTurn | None:
    """The prompt a running turn was started with (its workflow's recorded input)."""
    from dbos import DBOS

    [status] = DBOS.list_workflows(workflow_ids=[workflow_id], load_output=False)
    args: Any = status.input["args"] if status.input else ()
    return UserTurn(decode_prompt(args[2])) if len(args) > 2 and args[2] else None


def chat_app(
    durable: DurableChat,
    *,
    title: str | None = None,
    query_key: str = "c",
    content: Literal["text", "all"] = "all",
    **ui_kwargs: Any,
) -> Any:
    """A Shiny app (``shiny.App``) with one durable chat; see :func:`chat_server`.

    ``ui_kwargs`` go to :func:`chatlas_like.shiny.chat_ui` (``placeholder``...).
    """
    try:
        from shiny import App, ui
    except ImportError as e:
        raise ImportError(INSTALL_HINT) from e
    ui_kwargs.setdefault("placeholder", "Ask something…")
    page = ui.page_fillable(
        chat_ui("chat", **ui_kwargs),
        fillable_mobile=True,
        title=title or f"chatlas_like · {durable.name}",
    )

    def server(input: Any, output: Any, session: Any) -> None:
        chat_server("chat", durable, query_key=query_key, content=content)

    return App(page, server)
