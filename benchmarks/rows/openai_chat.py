"""Row 12: ChatOpenAI (the Responses API) and ChatOpenAICompletions against the raw
``openai`` SDK doing the same exchange by hand, and chatlas 0.23.0's constructors.

Two measurements on each API: one tool round (user, function call, its output, text;
JSON responses, the history cleared first), and the last 50 of 300 tool rounds in one
``chat()``, per round (as row 5 measures it on Anthropic). The floor keeps the history
as plain dicts, calls ``responses.create`` / ``chat.completions.create`` without
streaming, runs the tool by hand and JSON-encodes its result with the standard library.

Most of the floor's time in a long chat is the SDK's own: ``create`` walks every
parameter through its typed transform before sending (95% of its CPU at 60 rounds,
under cProfile). Ours sends the body it built through the same SDK client's ``post``
(the same authentication, headers, connection pool and error classes) without it.
"""

from __future__ import annotations

import json
import time
from typing import Any

from .._context import Context
from .._harness import API_KEY, Line, Metrics, Sampler
from .._server import model_name
from .long_chat import Recorder, _window  # pyright: ignore[reportPrivateUsage]
from .tool_round import PROMPT, lookup

ROW = "12"
NAME = "openai_chat"
LONG_PROMPT = "Process every item, one tool call per item."
PROFILE_PARAMS: dict[str, Any] = {"api": "responses", "rounds": 1}
PROFILE_SAMPLES = 100
TARGET = 1.05
PARAMETERS = {
    "lookup": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
    "step": {"type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"]},
}


def _model(params: dict[str, Any]) -> str:
    rounds = params["rounds"]
    return model_name("tool_round") if rounds == 1 else model_name("rounds", rounds)


def _tools(params: dict[str, Any], recorder: Recorder) -> dict[str, Any]:
    return {"lookup": lookup} if params["rounds"] == 1 else {"step": recorder.step}


def _measure(params: dict[str, Any], recorder: Recorder, run: Any) -> Metrics:
    started, cpu = time.perf_counter(), time.process_time()
    run()
    m: Metrics = {"wall": time.perf_counter() - started, "cpu": time.process_time() - cpu}
    if params["rounds"] > 1:
        m.update(recorder.metrics(params["rounds"], _window(params["rounds"])))
    return m


def ours(url: str, params: dict[str, Any]) -> Sampler:
    from chatlas_like import ChatOpenAI, ChatOpenAICompletions

    make = ChatOpenAI if params["api"] == "responses" else ChatOpenAICompletions
    recorder = Recorder()
    chat = make(model=_model(params), api_key=API_KEY, base_url=url + "/v1")
    for name, fn in _tools(params, recorder).items():
        chat.register_tool(fn, name=name)
    prompt = PROMPT if params["rounds"] == 1 else LONG_PROMPT

    def once() -> None:
        chat.set_turns([])
        chat.chat(prompt, echo="none", stream=False, max_tool_rounds=None)

    return lambda: _measure(params, recorder, once)


profile = ours


def chatlas(url: str, params: dict[str, Any]) -> Sampler:
    from chatlas import ChatOpenAI, ChatOpenAICompletions  # pyright: ignore[reportMissingImports, reportUnknownVariableType]

    make: Any = ChatOpenAI if params["api"] == "responses" else ChatOpenAICompletions
    recorder = Recorder()
    chat = make(model=_model(params), api_key=API_KEY, base_url=url + "/v1")
    for name, fn in _tools(params, recorder).items():
        chat.register_tool(fn, name=name)
    prompt = PROMPT if params["rounds"] == 1 else LONG_PROMPT

    def once() -> None:
        chat.set_turns([])
        chat.chat(prompt, echo="none", stream=False)

    return lambda: _measure(params, recorder, once)


def floor(url: str, params: dict[str, Any]) -> Sampler:
    import openai

    sdk = openai.OpenAI(api_key=API_KEY, base_url=url + "/v1", max_retries=0)
    recorder = Recorder()
    tools = _tools(params, recorder)
    model = _model(params)
    prompt = PROMPT if params["rounds"] == 1 else LONG_PROMPT
    loop = _responses_loop if params["api"] == "responses" else _completions_loop
    return lambda: _measure(params, recorder, lambda: loop(sdk, model, prompt, tools))


def floor_post(url: str, params: dict[str, Any]) -> Sampler:
    """The same hand loop, each request sent through the SDK client's ``post`` (no
    typed transform), as ours sends it: the floor of what the client must do."""
    import openai

    sdk = openai.OpenAI(api_key=API_KEY, base_url=url + "/v1", max_retries=0)
    recorder = Recorder()
    tools = _tools(params, recorder)
    model = _model(params)
    prompt = PROMPT if params["rounds"] == 1 else LONG_PROMPT
    loop = _responses_loop if params["api"] == "responses" else _completions_loop
    posting = _Posting(sdk)
    return lambda: _measure(params, recorder, lambda: loop(posting, model, prompt, tools))


class _Posting:
    """``responses.create`` and ``chat.completions.create`` as plain posts of the body,
    answered by the SDK's own parsed objects."""

    def __init__(self, sdk: Any) -> None:
        import openai.types.chat as chat_types
        import openai.types.responses as response_types

        def create(path: str, cast: Any) -> Any:
            return lambda **body: sdk.post(path, body=body, cast_to=cast)

        self.responses = _Resource(create("/responses", response_types.Response))
        completions = _Resource(create("/chat/completions", chat_types.ChatCompletion))
        self.chat = _Resource(None)
        self.chat.completions = completions


class _Resource:
    def __init__(self, create: Any) -> None:
        self.create = create
        self.completions: Any = None


def _responses_loop(sdk: Any, model: str, prompt: str, tools: dict[str, Any]) -> None:
    schemas = [
        {"type": "function", "name": n, "parameters": PARAMETERS[n], "strict": True} for n in tools
    ]
    items: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "input_text", "text": prompt}]}
    ]
    while True:
        response = sdk.responses.create(model=model, input=items, tools=schemas, store=False)
        calls = [o for o in response.output if o.type == "function_call"]
        for o in response.output:
            if o.type == "message":
                text = "".join(p.text for p in o.content if p.type == "output_text")
                items.append(
                    {"role": "assistant", "content": [{"type": "output_text", "text": text}]}
                )
        if not calls:
            return
        for call in calls:
            items.append(
                {
                    "type": "function_call",
                    "call_id": call.call_id,
                    "name": call.name,
                    "arguments": call.arguments,
                }
            )
            value = tools[call.name](**json.loads(call.arguments))
            output = value if isinstance(value, str) else json.dumps(value)
            items.append(
                {"type": "function_call_output", "call_id": call.call_id, "output": output}
            )


def _completions_loop(sdk: Any, model: str, prompt: str, tools: dict[str, Any]) -> None:
    schemas = [
        {"type": "function", "function": {"name": n, "parameters": PARAMETERS[n]}} for n in tools
    ]
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    while True:
        completion = sdk.chat.completions.create(model=model, messages=messages, tools=schemas)
        message = completion.choices[0].message
        calls = message.tool_calls or []
        entry: dict[str, Any] = {"role": "assistant", "content": message.content}
        if calls:
            entry["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.function.name, "arguments": c.function.arguments},
                }
                for c in calls
            ]
        messages.append(entry)
        if not calls:
            return
        for c in calls:
            value = tools[c.function.name](**json.loads(c.function.arguments))
            output = value if isinstance(value, str) else json.dumps(value)
            messages.append({"role": "tool", "tool_call_id": c.id, "content": output})


def _against_post(label: str, what: str, samples: Any, key: str) -> Line:
    """Ours against the hand loop posting its bodies through the SDK client (no typed
    transform): what the client itself adds."""
    return Line(
        ROW,
        f"{label}: {what}, per round, against the SDK's post() by hand (wall)",
        "ms",
        ours=samples.median("ours", key, 1e3),
        floor=samples.median("post", key, 1e3),
        chatlas=None,
        target=f"<= {TARGET}x the SDK's post() by hand",
        target_ratio=TARGET,
        note="",
        data={},
    )


def run(ctx: Context) -> list[Line]:
    lines: list[Line] = []
    rounds = ctx.size(300, 30)
    window = _window(rounds)
    # (rounds, what the line says, the metric, samples, warm-up rounds)
    shapes = [
        (1, "one tool round", "one tool round", "wall", ctx.n(100, 8), 3),
        (
            rounds,
            f"last {window} of {rounds} rounds",
            f"last {window} of {rounds} tool rounds",
            "last_wall",
            ctx.n(3, 1),
            0,
        ),
    ]
    for api, label in (("responses", "ChatOpenAI"), ("completions", "ChatOpenAICompletions")):
        for count, short, what, key, n, warmup in shapes:
            params = {"api": api, "rounds": count}
            samples = ctx.interleave(
                {
                    "ours": ctx.side(NAME, "ours", ours, params),
                    "floor": ctx.side(NAME, "floor", floor, params),
                    "post": ctx.side(NAME, "floor_post", floor_post, params),
                    "chatlas": ctx.remote(NAME, params),
                },
                n,
                warmup=warmup,
            )
            lines.append(_against_post(label, short, samples, key))
            lines.append(
                Line(
                    ROW,
                    f"{label}: {what}, per round (wall)",
                    "ms",
                    ours=samples.median("ours", key, 1e3),
                    floor=samples.median("floor", key, 1e3),
                    chatlas=samples.median("chatlas", key, 1e3),
                    target=f"<= {TARGET}x raw openai SDK",
                    target_ratio=TARGET,
                    note=samples.note(),
                    data=samples.to_json(),
                )
            )
    return lines
