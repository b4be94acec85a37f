"""Saving a chat to a file and loading it back.

One JSON document (orjson), versioned::

    {"format": "chatlas_like.chat", "version": 1,
     "provider": {"name": "anthropic", "model": ..., "max_tokens": ...,
                  "cache": ..., "prefill": ..., "structured_output_mode": ...,
                  "reasoning": ...},
     "params": {...}, "options": {...}, "run_id": "...", "parent_runs": ["..."],
     "last_sequence": 3,
     "system_prompt": "...", "tools": [{"name": ..., "description": ...,
     "input_schema": {...}}], "turns": {... the turns document of _serialize ...}}

Each tool's schema is stored once, here, never with its results. What is never saved
(the API key, exception objects, pending message expansions, callbacks, the store) is
decided in :mod:`chatlas_like._persist.serialize` and by what this module leaves out.

A chat file is data that may come from someone else. Loading one never takes
connection settings from it: the endpoint (``base_url``), headers, client arguments and
proxies come from the code that loads it (``Chat.load(path, base_url=...)``) or the
environment (``ANTHROPIC_BASE_URL``), so a file cannot send your API key elsewhere; a
file that carries such settings loads with one warning naming what was ignored. Only
sampling parameters (``temperature``, ``top_p``, ``top_k``, ``max_tokens``,
``stop_sequences``) are taken from ``params``. Every field is checked as it is read: a
malformed one raises :class:`PersistenceError` naming it.

Nor does a file choose the loader's limits (``max_result_bytes``, ``max_retries``,
``max_tool_rounds``... see :data:`LIMITS`): a saved limit is taken only when it is at
least as tight as the default; one that would loosen it (``max_result_bytes=2**40``,
``max_retries=10**6``, ``max_tool_rounds=None``) is ignored with one warning. The code
that loads raises limits: ``Chat.load(path, max_result_bytes=...)``.

A loaded chat continues under a new ``run_id`` of its own: ``parent_runs`` lists the
runs its earlier results were stored under (nearest first), which it may page through
but never writes; sequence numbers carry on from ``last_sequence``.

Writes are atomic: the document goes to a temporary file in the same folder, which is
flushed and fsynced, then renamed over the target, and the folder is fsynced; a process
killed at any point leaves either the previous file or the new one, never a mix. A
killed save may leave its temporary file (``.NAME.*.tmp``) beside the target.
"""

from __future__ import annotations

import os
import stat
import tempfile
import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import orjson

from .._core.errors import PersistenceError
from .._core.terminal_safe import strip_controls
from .._core.tool_info import ToolInfo
from .._run.options import ChatOptions
from .._tools.tool import Tool, ToolBuiltIn
from ..providers._registry import saved_provider
from .serialize import TURNS_FORMAT, turns_from_data, turns_to_data
from .shape import mismatch

if TYPE_CHECKING:
    from .._core.turn import Turn
    from ..providers._base import Provider

__all__ = [
    "CHAT_FORMAT",
    "CHAT_VERSION",
    "LIMITS",
    "ChatFile",
    "in_saved_order",
    "load_chat",
    "save_chat",
    "warn_missing_tools",
    "write_atomic",
]

CHAT_FORMAT = "chatlas_like.chat"
CHAT_VERSION = 1
_PARAM_FIELDS = {
    "temperature": "float",
    "top_p": "float",
    "top_k": "int",
    "max_tokens": "int",
    "stop_sequences": "list[str]",
}
_TOP_FIELDS = {
    "system_prompt": "str | None",
    "params": "dict[str, Any] | None",
    "options": "dict[str, Any] | None",
    "tools": "list[Any] | None",
    "provider": "dict[str, Any]",
    "run_id": "str",
    "parent_runs": "list[str]",
    "last_sequence": "int | None",
}
_REQUIRED = ("provider", "run_id", "turns")
# Options that bound what a chat may spend or keep: smaller (or a number rather than
# None) is tighter. A file may tighten them, never loosen them.
LIMITS = frozenset(
    {
        "max_tool_rounds",
        "max_tokens_per_chat",
        "max_concurrency",
        "tool_timeout",
        "max_result_bytes",
        "store_max_bytes",
        "max_retries",
    }
)

# Called with the temporary file's path after it is written and fsynced, before the
# rename: a seam for tests that kill the process mid-save.
before_replace: Callable[[Path], None] | None = None


# -- saving ------------------------------------------------------------------------------------


@dataclass(slots=True)
class ChatFile:
    """What a chat file holds: the parts a chat is saved from and rebuilt from.

    ``Chat.save`` fills one and ``Chat.load`` builds a chat from the one
    :func:`load_chat` read, so this module never needs the chat itself.
    """

    provider: Provider
    system_prompt: str | None
    run_id: str
    turns: list[Turn]
    tools: list[Tool | ToolBuiltIn] = field(default_factory=lambda: [])
    params: dict[str, Any] = field(default_factory=lambda: {})
    options: dict[str, Any] = field(default_factory=lambda: {})
    parent_runs: tuple[str, ...] = ()
    last_sequence: int = 0
    tool_order: list[str] = field(default_factory=lambda: [])  # as saved (loading only)


def save_chat(chat: ChatFile, path: str | os.PathLike[str]) -> None:
    """Write ``chat`` to ``path`` atomically."""
    try:
        document = orjson.dumps(chat_document(chat))
    except (orjson.JSONEncodeError, TypeError) as e:
        raise PersistenceError(f"the chat cannot be saved: {e}") from e
    write_atomic(Path(path), document)


def chat_document(chat: ChatFile) -> dict[str, Any]:
    """The document :func:`save_chat` writes."""
    settings: dict[str, Any] = {"name": chat.provider.key, **chat.provider.saved_settings()}
    return {
        "format": CHAT_FORMAT,
        "version": CHAT_VERSION,
        "provider": settings,
        "params": dict(chat.params),
        "options": dict(chat.options),
        "run_id": chat.run_id,
        "parent_runs": list(chat.parent_runs),
        "last_sequence": chat.last_sequence,
        "system_prompt": chat.system_prompt,
        "tools": [_tool_data(t) for t in chat.tools],
        "turns": turns_to_data(chat.turns, _tool_infos(chat.tools)),
    }


def _tool_data(tool: Tool | ToolBuiltIn) -> dict[str, Any]:
    if isinstance(tool, ToolBuiltIn):
        return {"name": tool.name, "builtin": tool.definition}
    data = {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}
    if tool.annotations:
        data["annotations"] = tool.annotations
    return data


def _tool_infos(tools: Sequence[Tool | ToolBuiltIn]) -> dict[str, ToolInfo]:
    """What requests of the saved tools know of them: written once, with the tools."""
    return {t.name: ToolInfo.from_tool(t) for t in tools if isinstance(t, Tool)}


def _saved_tool_infos(saved: Any) -> dict[str, ToolInfo]:
    infos: dict[str, ToolInfo] = {}
    for index, item in enumerate(cast(list[Any], saved) if isinstance(saved, list) else []):
        data = cast(dict[str, Any], item) if isinstance(item, dict) else {}
        if "input_schema" in data and isinstance(data.get("name"), str):
            if not isinstance(data["input_schema"], dict):
                raise PersistenceError(f"tools[{index}].input_schema: must be an object")
            infos[data["name"]] = ToolInfo.from_dict({**data, "parameters": data["input_schema"]})
    return infos


def _check_turns(turns: Sequence[Turn]) -> None:
    """What the API would refuse on every later request: fail at load instead."""
    seen: set[str] = set()
    for index, turn in enumerate(turns):
        if turn.role == "system":
            raise PersistenceError(
                f"turns[{index}]: a system turn (a saved chat keeps its system prompt apart)"
            )
        for request in turn.tool_requests:
            if request.id in seen:
                raise PersistenceError(
                    f"turns[{index}]: the tool call id {strip_controls(request.id)!r} "
                    "appears twice (each call needs its own)"
                )
            seen.add(request.id)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` so that a crash leaves the old file or the new one."""
    directory = path.parent
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        with suppress(FileNotFoundError):  # keep the permissions of the file replaced
            os.chmod(temp, stat.S_IMODE(path.stat().st_mode))
        if before_replace is not None:
            before_replace(temp)
        os.replace(temp, path)
    except BaseException:
        with suppress(OSError):
            temp.unlink()
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (where the platform allows opening a folder)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# -- loading -----------------------------------------------------------------------------------


def load_chat(
    path: str | os.PathLike[str],
    *,
    provider: Provider | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
) -> ChatFile:
    """What the file written by :func:`save_chat` at ``path`` holds, every field checked
    (see the module docstring); ``provider`` replaces the one the file describes."""
    where = os.fspath(path)
    document = read_document(Path(path))
    _check_fields(document, where)
    try:
        turns = turns_from_data(
            document["turns"], _saved_tool_infos(document.get("tools")), at="turns"
        )
        _check_turns(turns)
    except PersistenceError as e:
        raise PersistenceError(f"{where}: {e}") from None
    options = _saved_options(document.get("options"), where)
    ignored: list[str] = []
    params = _saved_params(document.get("params"), where, ignored)
    rebuilt = provider or _provider(document["provider"], api_key, base_url, where, ignored)
    if ignored:
        warnings.warn(
            f"{where}: ignored connection settings in the file: "
            f"{strip_controls(', '.join(ignored))}. A chat "
            "file never chooses the endpoint, headers or client: pass Chat.load(..., "
            "base_url=...) or set ANTHROPIC_BASE_URL",
            UserWarning,
            stacklevel=3,
        )
    listed: list[Any] = document.get("tools") or []
    saved_tools = [cast(dict[str, Any], t) for t in listed if isinstance(t, dict)]
    return ChatFile(
        provider=rebuilt,
        system_prompt=document.get("system_prompt"),
        run_id=document["run_id"],
        turns=turns,
        params=params,
        options=options,
        parent_runs=tuple(document.get("parent_runs", ())),
        last_sequence=document.get("last_sequence") or 0,
        tool_order=[str(t.get("name")) for t in saved_tools],
    )


def read_document(path: Path) -> dict[str, Any]:
    """The saved document, or a :class:`PersistenceError` that names what is wrong."""
    raw = path.read_bytes()
    if not raw.strip():
        raise PersistenceError(f"{path}: the file is empty, not a saved chat")
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        if str(e).startswith("unexpected end of data"):
            raise PersistenceError(
                f"{path}: the file is truncated: the JSON document ends after {len(raw)} "
                "bytes before it is complete"
            ) from None
        raise PersistenceError(f"{path}: the file is corrupt: not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise PersistenceError(f"{path}: not a saved chat (the JSON is not an object)")
    document = cast(dict[str, Any], data)
    kind = document.get("format")
    if kind == TURNS_FORMAT:
        raise PersistenceError(
            f"{path}: holds turns only (from to_json), not a saved chat: read it with "
            "from_json() and chat.set_turns()"
        )
    if kind != CHAT_FORMAT:
        found = f"format {kind!r}" if kind is not None else "no 'format' field"
        raise PersistenceError(
            f"{path}: not a saved chatlas_like chat ({found}; expected {CHAT_FORMAT!r})"
        )
    _check_version(document.get("version"), path)
    missing = [name for name in _REQUIRED if name not in document]
    if missing:
        raise PersistenceError(f"{path}: the saved chat lacks {', '.join(missing)}")
    return document


def _check_version(version: Any, path: Path) -> None:
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise PersistenceError(f"{path}: the saved chat has no valid format version ({version!r})")
    if version > CHAT_VERSION:
        raise PersistenceError(
            f"{path} was saved in format version {version}; this chatlas_like reads up to "
            f"version {CHAT_VERSION}: upgrade to a chatlas_like that reads version {version}"
        )


def _check_fields(document: dict[str, Any], where: str) -> None:
    """Refuse a top-level field of the wrong type, naming it."""
    for name, annotation in _TOP_FIELDS.items():
        if name not in document:
            continue
        problem = mismatch(document[name], annotation)
        if problem is not None:
            raise PersistenceError(f"{where}: {name}: {problem}")
    for name, run_id in [
        ("run_id", document["run_id"]),
        *(("parent_runs", run) for run in document.get("parent_runs", ())),
    ]:
        if not _canonical_uuid(run_id):
            raise PersistenceError(f"{where}: {name}: must hold UUIDs like {uuid.uuid4()}")
    last = document.get("last_sequence")
    if last is not None and last < 0:
        raise PersistenceError(f"{where}: last_sequence: must be 0 or more, got {last}")


def _canonical_uuid(text: str) -> bool:
    try:
        return str(uuid.UUID(text)) == text
    except ValueError:
        return False


def _saved_options(data: dict[str, Any] | None, where: str) -> dict[str, Any]:
    """The saved options this chatlas_like knows, each checked on its own."""
    if not data:
        return {}
    annotations = {f.name: str(f.type) for f in fields(ChatOptions)}
    known = {k: v for k, v in data.items() if k in annotations}
    for name, value in known.items():
        problem = mismatch(value, annotations[name])
        if problem is None:
            try:
                ChatOptions(**{name: value})
            except (TypeError, ValueError) as e:
                problem = str(e)
        if problem is not None:
            raise PersistenceError(f"{where}: options.{name}: {problem}")
    return _within_limits(known, where)


def _within_limits(options: dict[str, Any], where: str) -> dict[str, Any]:
    """``options`` without the limits that are looser than the defaults (one warning)."""
    defaults = ChatOptions()
    looser = {
        name: value
        for name, value in options.items()
        if name in LIMITS and _looser(value, getattr(defaults, name))
    }
    if looser:
        shown = ", ".join(f"{name}={value!r}" for name, value in looser.items())
        warnings.warn(
            f"{where}: ignored limits looser than the defaults: {shown}. A chat file never "
            "raises the limits of the code that loads it: pass them to Chat.load(path, "
            "...) to raise them",
            UserWarning,
            stacklevel=5,  # Chat.load's caller
        )
    return {name: value for name, value in options.items() if name not in looser}


def _looser(value: Any, default: Any) -> bool:
    if value is None:
        return default is not None  # None is no limit at all
    return default is not None and value > default


def _saved_params(data: dict[str, Any] | None, where: str, ignored: list[str]) -> dict[str, Any]:
    """The saved sampling parameters; any other request setting is ignored."""
    params: dict[str, Any] = {}
    for name, value in (data or {}).items():
        annotation = _PARAM_FIELDS.get(name)
        if annotation is None:
            ignored.append(f"params.{name}")
            continue
        problem = mismatch(value, annotation)
        if problem is not None:
            raise PersistenceError(f"{where}: params.{name}: {problem}")
        params[name] = value
    return params


def _provider(
    settings: dict[str, Any],
    api_key: str | None,
    base_url: str | None,
    where: str,
    ignored: list[str],
) -> Provider:
    values = dict(settings)
    name = values.pop("name", None)
    provider_class = saved_provider(name)
    if provider_class is None:
        raise PersistenceError(
            f"{where}: saved with provider {name!r}, which this chatlas_like cannot rebuild: "
            "pass provider= to Chat.load"
        )
    kept: dict[str, Any] = {}
    for key, value in values.items():
        annotation = provider_class.saved_fields.get(key)
        if annotation is None:
            ignored.append(f"provider.{key}")
            continue
        problem = mismatch(value, annotation)
        if problem is not None:
            raise PersistenceError(f"{where}: provider.{key}: {problem}")
        kept[key] = value
    if "model" not in kept:
        raise PersistenceError(f"{where}: provider.model: missing")
    try:
        return provider_class.from_saved(kept, api_key=api_key, base_url=base_url)
    except (TypeError, ValueError) as e:
        field = _field_named(e, kept)
        raise PersistenceError(f"{where}: {field}: {e}") from None


def _field_named(error: Exception, settings: Mapping[str, Any]) -> str:
    """``provider.<key>`` when the provider's message names one of the settings."""
    text = str(error)
    named = [key for key in settings if key != "model" and key in text]
    return f"provider.{named[0]}" if len(named) == 1 else "provider"


def in_saved_order(
    order: Sequence[str], tools: Sequence[Callable[..., Any] | Tool | ToolBuiltIn]
) -> list[Callable[..., Any] | Tool | ToolBuiltIn]:
    """``tools`` in the order the chat had them when saved (their order is in requests)."""
    position = {name: i for i, name in enumerate(order)}

    def key(tool: Callable[..., Any] | Tool | ToolBuiltIn) -> int:
        name = tool.name if isinstance(tool, (Tool, ToolBuiltIn)) else getattr(tool, "__name__", "")
        return position.get(name, len(position))

    return sorted(tools, key=key)


def warn_missing_tools(turns: Sequence[Turn], tools: Iterable[str], where: str) -> None:
    """One warning naming the tools ``turns`` call that are not among ``tools``."""
    called = {request.name for turn in turns for request in turn.tool_requests}
    missing = sorted(called - set(tools))
    if missing:
        warnings.warn(
            f"{where}: the history calls tools not given to Chat.load: "
            f"{strip_controls(', '.join(missing))}; "
            "if the model calls them again they are refused",
            UserWarning,
            stacklevel=3,
        )
