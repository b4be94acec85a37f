"""Durable conversations: each turn a DBOS workflow that survives a crash (the ``durable`` extra).

::

    from dbos import DBOS
    from chatlas_like import ChatAnthropic
    from chatlas_like.durable import DurableChat

    chat = ChatAnthropic(model="claude-haiku-4-5", system_prompt="...")
    chat.register_tool(charge_card)
    billing = DurableChat(chat, name="billing")  # before DBOS.launch()
    DBOS(config={"name": "shop", "system_database_url": "sqlite:///shop.sqlite"})
    DBOS.launch()  # completes every turn a dead process left unfinished
    answer = billing.chat("Charge $5 to card 42", conversation_id="c-42")

Needs ``pip install 'chatlas_like[durable]'``; see ``docs/durable.md``.
"""

from ._chat import DurableChat
from ._engine import DurableError
from ._handle import DurableHandle, recover_executor
from ._parallel import parallel_chat
from ._round import INTERRUPTED_BY_CRASH, DurableWarning, safe_to_rerun
from ._sqlite import sqlite_engine

__all__ = [
    "INTERRUPTED_BY_CRASH",
    "DurableChat",
    "DurableError",
    "DurableHandle",
    "DurableWarning",
    "parallel_chat",
    "recover_executor",
    "safe_to_rerun",
    "sqlite_engine",
]
