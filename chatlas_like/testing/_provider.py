"""An in-process scripted provider: a model with no network, written against the provider
interface alone.

It is both a tool for tests that need no HTTP at all and the proof of the provider seam:
this file imports nothing but the public provider interface (:mod:`chatlas_like.providers`)
and the public types, and a :class:`~chatlas_like.Chat` runs the same tool-calling
conversation on it as on Anthropic's provider against the loopback server.

The script is a list of the library's own assistant turns, answered in order (or a
function of the conversation so far)::

    from chatlas_like import AssistantTurn, Chat, ContentToolRequest
    from chatlas_like.testing import ScriptedProvider

    provider = ScriptedProvider([
        AssistantTurn([ContentToolRequest(id="c1", name="get_weather", arguments={"city": "Paris"})]),
        AssistantTurn("Sunny in Paris."),
    ])
    chat = Chat(provider)
    chat.register_tool(get_weather)
    chat.chat("Weather in Paris?")

Text streams word by word; tool requests arrive whole. ``provider.requests`` records
what each request held (the turns sent, the tools offered, the system prompt).
"""

from __future__ import annotations

import re
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import AssistantTurn, Content, ContentText, ContentToolRequest, Turn
from ..providers import Capabilities, Provider, RequestSpec

__all__ = ["ScriptedProvider", "ScriptedRequest"]

Script = Sequence[AssistantTurn] | Callable[[list[Turn]], AssistantTurn]
_WORDS = re.compile(r"\S+\s*|\s+")


@dataclass(frozen=True, slots=True)
class ScriptedRequest:
    """What one request to a :class:`ScriptedProvider` held."""

    turns: list[Turn]
    tools: list[str]
    system_prompt: str | None
    stream: bool


class ScriptedProvider(Provider):
    """A provider that answers from a script, in process: no HTTP, no SDK.

    Parameters
    ----------
    script
        The assistant turns to answer with, in order, or a function from the turns of
        a request to its answer.
    model
        The model name it reports.
    """

    name = "scripted"
    label = "Scripted"
    capabilities = Capabilities()

    def __init__(self, script: Script, *, model: str = "scripted-model") -> None:
        self.model = model
        self._script = script
        self._next = 0
        self._lock = threading.Lock()
        self.requests: list[ScriptedRequest] = []

    def build_request(self, turns: Sequence[Turn], spec: RequestSpec) -> dict[str, Any]:
        return {
            "model": self.model,
            "system": spec.system_prompt,
            "tools": [tool.name for tool in spec.tools],
            "turns": list(turns),
            "stream": spec.stream,
        }

    def accumulator(self, spec: RequestSpec | None = None) -> _Accumulator:
        return _Accumulator()

    def open(self, body: dict[str, Any]) -> _Events:
        return _Events(_events(self._answer(body)))

    async def open_async(self, body: dict[str, Any]) -> _AsyncEvents:
        return _AsyncEvents(_events(self._answer(body)))

    def _answer(self, body: dict[str, Any]) -> AssistantTurn:
        turns: list[Turn] = body["turns"]
        with self._lock:
            self.requests.append(
                ScriptedRequest(turns, body["tools"], body["system"], bool(body["stream"]))
            )
            if callable(self._script):
                return self._script(turns)
            if self._next >= len(self._script):
                raise RuntimeError(f"the script has no answer left for request {self._next + 1}")
            answer = self._script[self._next]
            self._next += 1
            return answer


def _events(answer: AssistantTurn) -> Iterator[dict[str, Any]]:
    """The answer as events: text word by word, every other content whole, then the end."""
    for content in answer.contents:
        if isinstance(content, ContentText):
            for word in _WORDS.findall(content.text):
                yield {"text": word}
        else:
            yield {"content": content}
    yield {"end": answer.finish_reason}


@dataclass(slots=True)
class _Accumulator:
    """Builds the assistant turn from the events of :func:`_events`."""

    complete: bool = False
    contents: list[Content] = field(default_factory=lambda: [])
    text: list[str] = field(default_factory=lambda: [])
    finish_reason: str | None = None

    def feed(self, event: dict[str, Any]) -> str | Content | None:
        if "text" in event:
            self.text.append(event["text"])
            return str(event["text"])
        self._close_text()
        if "content" in event:
            content: Content = event["content"]
            self.contents.append(content)
            return content
        self.complete = True
        self.finish_reason = event.get("end")
        return None

    def _close_text(self) -> None:
        if self.text:
            self.contents.append(ContentText("".join(self.text)))
            self.text.clear()

    def turn(self) -> AssistantTurn:
        self._close_text()
        asked = any(isinstance(c, ContentToolRequest) for c in self.contents)
        reason = self.finish_reason or ("tool_use" if asked else "success")
        return AssistantTurn(list(self.contents), finish_reason=reason, tokens=(0, 0, 0))

    def partial_turn(self, reason: str = "interrupted") -> AssistantTurn | None:
        self._close_text()
        if not self.contents:
            return None
        return AssistantTurn(list(self.contents), partial_reason=reason)


class _Events:
    """A scripted response, read one event at a time."""

    def __init__(self, source: Iterator[dict[str, Any]]) -> None:
        self._source = source

    def __iter__(self) -> _Events:
        return self

    def __next__(self) -> dict[str, Any]:
        return next(self._source)

    def close(self) -> None:
        return None


class _AsyncEvents:
    """The async twin of :class:`_Events`."""

    def __init__(self, source: Iterator[dict[str, Any]]) -> None:
        self._source = source

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self

    async def __anext__(self) -> dict[str, Any]:
        try:
            return next(self._source)
        except StopIteration:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        return None
