"""The benchmark's loopback server: one ``LoopbackServer`` in its own process.

Every side of every row (ours, the raw SDK, chatlas in its venv) talks to this one
server, so they pay the same server costs, and the client's CPU time can be measured
in the client's process without the server's work mixed in.

The scripted model is stateless: the request's ``model`` field names the script
(``bench:rounds:300``) and the reply depends only on the request body, so any number
of clients and processes can share the server. ``GET /bench/log`` returns (and
forgets) the size and status of each ``/v1/messages`` request since the last call;
the server keeps nothing else, so long runs do not grow its memory.

Run as ``python -m benchmarks._server``: prints the URL, serves until stdin closes.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import urllib.request
from collections.abc import Mapping
from typing import Any

from ._harness import end_process

__all__ = ["ServerProcess", "fetch_log", "model_name"]

ECHO_STEP_TEXT = "Step {k}: checking the **next item** in the list before I call the tool again."
ECHO_FINAL_TEXT = (
    "All done. Here is what I found:\n\n"
    "- every item was **checked** once, in order;\n"
    "- none of them needed a *second* look;\n"
    "- the totals agree with the `ledger`.\n\n"
    "The work took one tool call per item, and the results are in the history above. "
    "Ask again if you want the details of any single step, or a summary table."
)


def model_name(script: str, *args: object) -> str:
    """The model name that selects ``script`` (with its arguments) on the bench server."""
    return ":".join(["bench", script, *(str(a) for a in args)])


def _tool_results(messages: list[dict[str, Any]]) -> int:
    count = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            count += sum(
                1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
            )  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
    return count


def _last_is_tool_result(messages: list[dict[str, Any]]) -> bool:
    content = messages[-1].get("content") if messages else None
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result"  # pyright: ignore[reportUnknownMemberType]
        for b in content  # pyright: ignore[reportUnknownVariableType]
    )


def _tool_result_bytes(body: Any) -> int:
    """UTF-8 bytes of the text in the request's tool results."""
    total = 0
    messages: Any = body.get("messages") if isinstance(body, dict) else None  # pyright: ignore[reportUnknownMemberType]
    for message in messages or []:
        content = message.get("content") if isinstance(message, dict) else None  # pyright: ignore[reportUnknownMemberType]
        for block in content if isinstance(content, list) else []:  # pyright: ignore[reportUnknownVariableType]
            if not (isinstance(block, dict) and block.get("type") == "tool_result"):  # pyright: ignore[reportUnknownMemberType]
                continue
            inner: Any = block.get("content")  # pyright: ignore[reportUnknownMemberType]
            parts = (
                [inner]
                if isinstance(inner, str)
                else [
                    b.get("text", "")
                    for b in inner or []
                    if isinstance(b, dict)  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
                ]
            )
            total += sum(len(str(p).encode()) for p in parts)  # pyright: ignore[reportUnknownArgumentType]
    return total


def _openai_results(body: Mapping[str, Any]) -> tuple[int, bool]:
    """(tool results in the conversation, whether it ends with one) of an OpenAI request:
    ``function_call_output`` items (Responses) or ``tool`` messages (Chat Completions)."""
    items: list[Any] = list(body.get("input") or body.get("messages") or [])
    flags = [
        isinstance(i, dict) and (i.get("type") == "function_call_output" or i.get("role") == "tool")  # pyright: ignore[reportUnknownMemberType]
        for i in items
    ]
    return sum(flags), bool(flags) and flags[-1]


def reply_for(body: Mapping[str, Any], api: str = "anthropic") -> Any:
    """The scripted reply to ``body``, chosen by its model name."""
    from chatlas_like.testing import Reply

    parts = str(body.get("model", "")).split(":")
    script, args = (parts[1], parts[2:]) if len(parts) > 1 and parts[0] == "bench" else ("", [])
    messages: list[dict[str, Any]] = list(body.get("messages") or [])
    if api == "anthropic":
        done, answered = _tool_results(messages), _last_is_tool_result(messages)
    else:
        done, answered = _openai_results(body)
    if script == "hello":
        return Reply.text("Hello! How can I help you today?")
    if script in ("tool_round", "big"):
        if answered:
            return Reply.text("Done: the value is in the tool result.")
        return Reply.tool_call("lookup" if script == "tool_round" else "big", {"key": "alpha"})
    if script == "stream":
        return Reply.text("word " * int(args[0]), chunks=int(args[0]))
    if script in ("rounds", "echo"):
        total = int(args[0])
        if done >= total:
            return Reply.text(ECHO_FINAL_TEXT if script == "echo" else "Finished all rounds.")
        text = ECHO_STEP_TEXT.format(k=done + 1) if script == "echo" else None
        return Reply.tool_call("step", {"i": done + 1}, text=text)
    if script == "parallel":
        name, count = args[0], int(args[1])
        if answered:
            return Reply.text("All calls are done.")
        return Reply.tool_calls([(name, {"i": i}) for i in range(count)])
    return Reply.error(400, "invalid_request_error", f"unknown bench script {body.get('model')!r}")


# OpenAI's two routes, by the API each speaks.
_OPENAI = {"/v1/responses": "responses", "/v1/chat/completions": "completions"}


class _BenchBackend:
    """Scripted replies; identical streamed replies rendered once and served as bytes."""

    def __init__(self) -> None:
        self.server: Any = None
        self.log: list[dict[str, Any]] = []
        self._cache: dict[str, Any] = {}
        self._lock = threading.Lock()

    def handle(self, request: Any, counters: Any) -> Any:
        from chatlas_like.testing import Response
        from chatlas_like.testing._scripted import render_reply

        self._summarise(keep=request)
        if request.method == "GET" and request.path == "/bench/log":
            self._summarise(keep=None)
            with self._lock:
                log, self.log = self.log, []
            return Response(json=log)
        if request.method != "POST":
            return None
        body = request.body or {}
        if request.path in _OPENAI:
            from chatlas_like.testing._openai import render_completion, render_response

            api = _OPENAI[request.path]
            render = render_response if api == "responses" else render_completion
            return render(reply_for(body, api), body, counters)
        if request.path != "/v1/messages":
            return None
        model = str(body.get("model", ""))
        if model.startswith("bench:stream:") and body.get("stream"):
            return self._cached_stream(model, body, counters)
        return render_reply(reply_for(body), body, counters)

    def _cached_stream(self, model: str, body: Mapping[str, Any], counters: Any) -> Any:
        import orjson

        from chatlas_like.testing import Response
        from chatlas_like.testing._scripted import render_reply

        raw = self._cache.get(model)
        if raw is None:
            events = render_reply(reply_for(body), body, counters).events or []
            raw = b"".join(
                b"event: " + e["type"].encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n"
                for e in events
            )
            self._cache[model] = raw
        return Response(raw=raw, content_type="text/event-stream; charset=utf-8")

    def _summarise(self, keep: Any) -> None:
        """Replace logged requests (but ``keep``) by their size and status."""
        requests: list[Any] = self.server.requests
        with self._lock:
            for r in list(requests):
                if r is keep:
                    continue
                if r.path in ("/v1/messages", *_OPENAI):
                    model = r.body.get("model") if isinstance(r.body, dict) else None  # pyright: ignore[reportUnknownMemberType]
                    self.log.append(
                        {
                            "model": model,
                            "bytes": len(r.raw),
                            "status": r.response_status,
                            "tool_result_bytes": _tool_result_bytes(r.body),
                        }
                    )
                requests.remove(r)


def serve() -> None:
    from chatlas_like.testing import LoopbackServer, _server

    # The library's handler leaves Nagle's algorithm on: headers and body go out in
    # two writes, and the second waits for a delayed ACK (~40 ms per request on
    # Linux loopback). That stall would swamp every client cost measured here.
    _server._Handler.disable_nagle_algorithm = True  # pyright: ignore[reportAttributeAccessIssue]
    backend = _BenchBackend()
    server = LoopbackServer(backend)
    backend.server = server
    with server:
        print(server.url, flush=True)
        sys.stdin.read()


class ServerProcess:
    """``with ServerProcess() as url:`` the bench server running in a child process."""

    def __init__(self, python: str = sys.executable) -> None:
        self._python = python
        self._proc: subprocess.Popen[str] | None = None
        self.url = ""

    def __enter__(self) -> str:
        self._proc = subprocess.Popen(
            [self._python, "-m", "benchmarks._server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._proc.stdout is not None
        self.url = self._proc.stdout.readline().strip()
        if not self.url.startswith("http://127.0.0.1:"):
            self.__exit__()
            raise RuntimeError("the bench server did not start")
        return self.url

    def __exit__(self, *exc: object) -> None:
        proc = self._proc
        if proc is None:
            return
        self._proc = None
        if proc.stdin is not None:
            proc.stdin.close()
        end_process(proc, 10)


def fetch_log(url: str) -> list[dict[str, Any]]:
    """Size and status of each model request since the last call (then forgotten)."""
    import json

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, never a proxy
    with opener.open(f"{url}/bench/log", timeout=30) as response:
        return json.loads(response.read())


if __name__ == "__main__":
    serve()
