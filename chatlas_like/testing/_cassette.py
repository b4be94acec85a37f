"""Replaying recorded Anthropic exchanges (VCR cassettes) through the loopback server.

The recorded responses are served in order, byte for byte, to whatever the client sends
on the same method and path; each request the client sent is kept beside the recorded
one, so a test can check the client asked for the same thing (see :func:`comparable`).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson

from ._requests import RecordedRequest
from ._scripted import Counters, Response

__all__ = ["CassetteReplay", "comparable", "default_fixtures_dir"]

PLACEHOLDER = "[empty string]"


@dataclass(slots=True)
class Interaction:
    """One recorded request and its response."""

    method: str
    path: str
    body: Any
    status: int
    content_type: str
    response: bytes


# The environment variable naming each provider's folder (Anthropic's came first).
_VARIABLES = {"anthropic": "CHATLAS_LIKE_FIXTURES"}


def default_fixtures_dir(provider: str = "anthropic") -> Path | None:
    """The recorded exchanges of ``provider`` (``"anthropic"`` or ``"openai"``):
    ``$CHATLAS_LIKE_FIXTURES`` (Anthropic's) or ``$CHATLAS_LIKE_OPENAI_FIXTURES``, else
    ``../shared/fixtures/<provider>-recorded`` beside the project checkout; None when
    neither exists."""
    variable = _VARIABLES.get(provider, f"CHATLAS_LIKE_{provider.upper()}_FIXTURES")
    configured = os.environ.get(variable)
    if configured:
        path = Path(configured)
        return path if path.is_dir() else None
    root = Path(__file__).resolve().parents[2]
    candidate = root.parent / "shared" / "fixtures" / f"{provider}-recorded"
    return candidate if candidate.is_dir() else None


class CassetteReplay:
    """Serves a cassette's recorded responses in order.

    Parameters
    ----------
    path
        The cassette file (YAML, as written by vcrpy).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        import yaml

        with open(path, encoding="utf-8") as f:
            data = yaml.safe_load(f)
        self.path = Path(path)
        self.interactions = [_interaction(i) for i in data["interactions"]]
        self.sent: list[Any] = []
        self._next = 0
        self._lock = threading.Lock()

    @classmethod
    def named(cls, name: str, directory: str | os.PathLike[str] | None = None) -> CassetteReplay:
        """The cassette ``name`` (without ``.yaml``) from the fixtures directory."""
        base = Path(directory) if directory is not None else default_fixtures_dir()
        if base is None:
            raise FileNotFoundError(
                "no recorded fixtures: set CHATLAS_LIKE_FIXTURES or put ../shared beside the checkout"
            )
        return cls(base / f"{name}.yaml")

    @property
    def exhausted(self) -> bool:
        """Whether every recorded interaction was served."""
        return self._next >= len(self.interactions)

    def pairs(self) -> list[tuple[Any, Any]]:
        """(recorded request body, request body the client sent), in order."""
        return [(self.interactions[i].body, sent) for i, sent in enumerate(self.sent)]

    def handle(self, request: RecordedRequest, counters: Counters) -> Response | None:
        with self._lock:
            if self._next >= len(self.interactions):
                return _error(500, f"the cassette {self.path.name} has no interaction left")
            interaction = self.interactions[self._next]
            if (interaction.method, interaction.path) != (request.method, request.path):
                return _error(
                    500,
                    f"the cassette expected {interaction.method} {interaction.path}, "
                    f"got {request.method} {request.path}",
                )
            self._next += 1
            self.sent.append(request.body)
        return Response(
            status=interaction.status,
            raw=interaction.response,
            content_type=interaction.content_type,
        )


def _interaction(data: dict[str, Any]) -> Interaction:
    request: dict[str, Any] = data["request"]
    response: dict[str, Any] = data["response"]
    raw_body = request.get("body")
    recorded: dict[str, list[str]] = response.get("headers") or {}
    headers = {k.lower(): v for k, v in recorded.items()}
    content_type = headers.get("content-type", ["application/json"])[0]
    body = response["body"]["string"]
    uri: str = request["uri"]
    return Interaction(
        method=request["method"],
        path=urlsplit(uri).path,
        body=orjson.loads(raw_body) if raw_body else None,
        status=int(response["status"]["code"]),
        content_type=content_type,
        response=body.encode() if isinstance(body, str) else bytes(body),
    )


def _error(status: int, message: str) -> Response:
    return Response(
        status=status, json={"type": "error", "error": {"type": "api_error", "message": message}}
    )


def comparable(body: Any) -> Any:
    """A request body with the differences that carry no meaning taken out.

    Removed: ``cache_control`` markers (where caching breakpoints go is a client
    choice), ``is_error: false`` (the API's default), chatlas's ``"[empty string]"``
    placeholder for blank text (blank text is dropped instead), an empty ``tools`` list
    and the placeholder system prompt; then consecutive messages of one role are merged
    (as the API merges them) with tool results first. Key order never matters.
    """
    if not isinstance(body, dict):
        return body
    data = _strip(body)
    system = data.get("system")
    if isinstance(system, list) and all(b.get("text") == PLACEHOLDER for b in system):  # pyright: ignore
        data.pop("system")
    if data.get("tools") == []:
        data.pop("tools")
    if "messages" in data:
        data["messages"] = _merge(data["messages"])
    return orjson.loads(orjson.dumps(data, option=orjson.OPT_SORT_KEYS))


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _strip(v)
            for k, v in value.items()  # pyright: ignore[reportUnknownVariableType]
            if k != "cache_control" and not (k == "is_error" and v is False)
        }
    if isinstance(value, list):
        return [_strip(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def _merge(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    merged: list[dict[str, Any]] = []
    for message in messages:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        blocks = [
            b
            for b in blocks
            if not (
                b.get("type") == "text"
                and (b.get("text") == PLACEHOLDER or not b.get("text", "").strip())
            )
        ]
        if not blocks:
            continue
        if merged and merged[-1]["role"] == message["role"]:
            combined = merged[-1]["content"] + blocks
            results = [b for b in combined if b.get("type") == "tool_result"]
            merged[-1]["content"] = results + [
                b for b in combined if b.get("type") != "tool_result"
            ]
        else:
            merged.append({"role": message["role"], "content": list(blocks)})
    return merged
