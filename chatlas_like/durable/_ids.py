"""The names a conversation's turns are recorded under.

Turn ``n`` of conversation ``c`` of the durable chat ``name`` is the DBOS workflow
``chatlas_like/{name}/{c}/{n:08d}``, ``c`` percent-encoded so that no conversation's
prefix is another's. The turns of a conversation are the workflows with its prefix;
the fixed-width number sorts them.
"""

from __future__ import annotations

import re
import uuid
from urllib.parse import quote

__all__ = [
    "check_conversation_id",
    "check_name",
    "conversation_prefix",
    "run_id",
    "turn_index",
    "turn_workflow_id",
    "workflow_name",
]

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
_PREFIX = "chatlas_like"


def check_name(name: object) -> str:
    """``name`` if it can name a durable chat, else a clear error."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, not {type(name).__name__}")
    if not _NAME.match(name):
        raise ValueError(
            f"name {name!r} must be 1-100 characters of letters, digits, '_', '.' or '-'"
        )
    return name


def check_conversation_id(conversation_id: object) -> str:
    """``conversation_id`` if it is a non-empty string, else a clear error."""
    if not isinstance(conversation_id, str):
        raise TypeError(
            f"conversation_id must be a string, not {type(conversation_id).__name__} "
            f"({conversation_id!r}): pass str(...) of your id"
        )
    if not conversation_id:
        raise ValueError("conversation_id must not be empty")
    quoted = len(quote(conversation_id, safe=""))
    if quoted > MAX_CONVERSATION_ID:
        raise ValueError(
            f"conversation_id is too long: at most {MAX_CONVERSATION_ID:,} characters once "
            f"URL-quoted (a character outside A-Z, a-z, 0-9 and _.-~ counts 3 to 12), got "
            f"{quoted:,}; use a hash of a longer key"
        )
    return conversation_id


# It is part of each turn's workflow id, a primary key: PostgreSQL indexes at most about
# 2.7 KB of one, and the rest of the id (the chat's name, the turn) needs room too.
MAX_CONVERSATION_ID = 1_000


def workflow_name(name: str) -> str:
    """The DBOS workflow name of a durable chat's turns (the key recovery looks up)."""
    return f"{_PREFIX}.durable.turn:{name}"


def conversation_prefix(name: str, conversation_id: str) -> str:
    return f"{_PREFIX}/{name}/{quote(conversation_id, safe='')}/"


def turn_workflow_id(name: str, conversation_id: str, index: int) -> str:
    return f"{conversation_prefix(name, conversation_id)}{index:08d}"


def turn_index(workflow_id: str) -> int:
    """The turn number at the end of a turn's workflow id."""
    return int(workflow_id.rsplit("/", 1)[1])


def run_id(name: str, conversation_id: str) -> str:
    """The conversation's run in a tool-result store: the same in every process."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, conversation_prefix(name, conversation_id)))
