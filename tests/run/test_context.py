"""What a long conversation sends: old results as references within a budget, elided in
steps, read back on demand, and prompt-cache breakpoints that let each round read the
last one's prefix. Real SDK, loopback server."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from chatlas_like import ChatAnthropic, ContentToolRequest
from chatlas_like.testing import LoopbackServer, Reply
from chatlas_like.testing._billing import PromptCacheMeter

from ..conftest import make_chat

PAGE = 8_000  # bytes each page returns: about 2,000 tokens


def page(n: int) -> str:
    """Read page n of the report."""
    return f"page {n} says the code is {1000 + n}. " + "filler text " * (PAGE // 12)


def paged_chat(serve: Callable[..., LoopbackServer], rounds: int, **options: Any) -> Any:
    script = [Reply.tool_call("page", {"n": i}) for i in range(rounds)] + [Reply.text("Done.")]
    server = serve(script)
    chat = make_chat(server, system_prompt="You read reports. " * 20, **options)
    chat.register_tool(page)
    chat.chat("Read the report.", echo="none")
    return chat, server


def sent_results(body: dict[str, Any]) -> list[str]:
    """The text of every tool result a request carries, oldest first."""
    found: list[str] = []
    for message in body["messages"]:
        content = message["content"]
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result":
                inner = block.get("content")
                found.append(inner if isinstance(inner, str) else orjson.dumps(inner).decode())
    return found


def test_without_a_budget_every_result_is_sent_whole_as_chatlas_sends_it(serve: Any) -> None:
    _, server = paged_chat(serve, rounds=6)
    last = server.message_requests()[-1]
    assert [r.startswith("page ") for r in sent_results(last)] == [True] * 6


def test_over_the_budget_old_results_are_sent_as_references_the_history_keeps_whole(
    serve: Any,
) -> None:
    chat, server = paged_chat(serve, rounds=8, context_budget=6_000)
    last = sent_results(server.message_requests()[-1])
    assert last[-1].startswith("page 7 says")  # the newest result is never elided
    references = [r for r in last if r.startswith("[Result elided")]
    assert references, last
    first = references[0]
    assert "`page` call toolu_0001, success," in first
    assert "Preview: page 0 says the code is 1000." in first
    assert "read_tool_result(sequence=1)" in first
    kept = [r.value for t in chat.get_turns() for r in t.tool_results]
    assert all(str(v).startswith("page ") for v in kept)


def test_elision_goes_in_one_step_and_then_leaves_the_prefix_alone(serve: Any) -> None:
    # Pages under a tenth of the budget: kept until a step elides them.
    _, server = paged_chat(serve, rounds=20, context_budget=30_000)
    counts = [
        sum(r.startswith("[Result elided") for r in sent_results(body))
        for body in server.message_requests()
    ]
    steps = [b - a for a, b in itertools.pairwise(counts) if b != a]
    assert steps and all(step >= 2 for step in steps)  # several at once, not one per round
    # Between steps, each request starts with the previous one's messages, byte for byte.
    bodies = server.message_requests()
    for before, after, n_before, n_after in zip(
        bodies, bodies[1:], counts, counts[1:], strict=False
    ):
        if n_before == n_after:
            old = [_plain(m) for m in before["messages"]]
            assert [_plain(m) for m in after["messages"][: len(old)]] == old


def test_a_result_of_a_tenth_of_the_budget_or_more_is_sent_once(serve: Any) -> None:
    chat, server = paged_chat(serve, rounds=6, context_budget=8_000)  # pages: 2,000 tokens
    for n, body in enumerate(server.message_requests()[1:]):
        sent = sent_results(body)
        assert sent[-1].startswith(f"page {n} says")  # whole in the request after its call
        assert all(r.startswith("[Result elided") for r in sent[:-1])  # then a reference
    kept = [r.value for t in chat.get_turns() for r in t.tool_results]
    assert all(str(v).startswith("page ") for v in kept)


def test_the_cache_ends_before_a_result_sent_for_the_last_time(serve: Any) -> None:
    _, server = paged_chat(serve, rounds=6, context_budget=8_000)
    body = server.message_requests()[-1]
    *_, asked, answered = body["messages"]
    assert "cache_control" not in answered["content"][-1]
    assert asked["content"][-1]["type"] == "tool_use"
    assert "cache_control" in asked["content"][-1]
    meter = PromptCacheMeter(minimum_tokens=100)  # this chat's prefix is short
    billed = [meter.bill(body) for body in server.message_requests()]
    page_tokens = PAGE // 4
    assert all(b.cache_write < page_tokens / 4 for b in billed[2:])  # no page written
    assert all(b.cache_read > 0 for b in billed[2:])  # the prefix before it is read


def _plain(message: dict[str, Any]) -> bytes:
    """A message without its cache breakpoints (which move every round)."""
    content = message["content"]
    if isinstance(content, list):
        content = [{k: v for k, v in b.items() if k != "cache_control"} for b in content]
    return orjson.dumps({**message, "content": content}, option=orjson.OPT_SORT_KEYS)


def test_the_model_reads_an_elided_result_back_from_memory_when_no_store_is_set(
    serve: Any,
) -> None:
    rounds = 8
    script = [Reply.tool_call("page", {"n": i}) for i in range(rounds)]
    script += [Reply.tool_call("read_tool_result", {"sequence": 1}), Reply.text("1000.")]
    server = serve(script)
    chat = make_chat(server, context_budget=6_000)
    chat.register_tool(page)
    chat.chat("What is the code on page 0?", echo="none")
    assert chat.store is not None  # an in-memory store was attached for the read-back
    [read_back] = chat.get_turns()[-2].tool_results
    assert read_back.outcome == "success"
    assert "page 0 says the code is 1000." in str(read_back.value)


def test_failures_and_small_results_are_elided_last(serve: Any) -> None:
    def small(n: int) -> str:
        """A short answer."""
        return f"small {n}"

    def broken(n: int) -> str:
        """Always fails."""
        raise ValueError("no such page " + "x" * PAGE)

    script = [
        Reply.tool_call("small", {"n": 0}),
        Reply.tool_call("broken", {"n": 0}),
        *[Reply.tool_call("page", {"n": i}) for i in range(6)],
        Reply.text("Done."),
    ]
    server = serve(script)
    chat = make_chat(server, context_budget=6_000)
    for tool in (small, broken, page):
        chat.register_tool(tool)
    chat.chat("Go.", echo="none")
    last = sent_results(server.message_requests()[-1])
    assert last[0] == "small 0"  # kept: eliding it saves nothing
    assert "no such page" in last[1]  # a failure is kept while large successes remain
    assert any(r.startswith("[Result elided") for r in last[2:])


def test_a_result_elided_at_a_later_prompt_is_sent_as_its_reference(serve: Any) -> None:
    script: list[Reply] = []
    for n in range(3):
        script += [Reply.tool_call("page", {"n": n}), Reply.text(f"Read page {n}.")]
    server = serve(script)
    chat = make_chat(server, context_budget=4_000)
    chat.register_tool(page)
    for n in range(3):  # each prompt a chat() of its own
        chat.chat(f"Read page {n}.", echo="none")
    last = sent_results(server.message_requests()[-1])
    assert last[0].startswith("[Result elided"), last[0][:80]


def test_a_result_shorter_than_its_reference_is_never_elided(serve: Any) -> None:
    def ok() -> str:
        """Says ok."""
        return "ok"

    script = [
        *[Reply.tool_call("ok", {}) for _ in range(6)],
        Reply.tool_call("page", {"n": 0}),
        Reply.tool_call("page", {"n": 1}),
        Reply.text("Done."),
    ]
    server = serve(script)
    chat = make_chat(server, context_budget=1_500)
    for tool in (ok, page):
        chat.register_tool(tool)
    chat.chat("Go.", echo="none")
    bodies = server.message_requests()
    assert any(r.startswith("[Result elided") for r in sent_results(bodies[-1]))  # over it
    for body in bodies:
        first = sent_results(body)[:6]
        assert first == ["ok"] * len(first)


def test_a_request_over_the_models_window_is_cut_down_without_a_budget(serve: Any) -> None:
    from chatlas_like._run.context import ContextView

    chat, _ = paged_chat(serve, rounds=5)
    turns = chat.get_turns()
    view = ContextView(window=lambda: 8_000)  # a small window, reached by five pages
    sent = view(turns).turns
    results = [str(r.get_model_value()) for t in sent for r in t.tool_results]
    assert any(r.startswith("[Result elided") for r in results)
    assert all("read_tool_result" not in r for r in results)  # no store: nothing to read back
    assert ContextView(window=lambda: 200_000)(turns).turns is turns  # far from it: all sent


def test_a_page_read_back_in_the_last_round_is_kept(serve: Any) -> None:
    rounds = 6
    script = [Reply.tool_call("page", {"n": i}) for i in range(rounds)]
    script += [Reply.tool_call("read_tool_result", {"sequence": 1})]
    script += [Reply.tool_call("page", {"n": 99}), Reply.text("Done.")]
    server = serve(script)
    chat = make_chat(server, context_budget=6_000)
    chat.register_tool(page)
    chat.chat("Go.", echo="none")
    last = sent_results(server.message_requests()[-1])
    read_back = next(r for r in last if "page 0 says" in r and not r.startswith("[Result"))
    assert read_back


def test_breakpoints_sit_on_the_system_prompt_and_the_last_two_user_messages(
    serve: Any,
) -> None:
    _, server = paged_chat(serve, rounds=3)
    body = server.message_requests()[-1]
    assert "cache_control" in body["system"][-1]
    marked = [
        i
        for i, m in enumerate(body["messages"])
        if isinstance(m["content"], list) and "cache_control" in m["content"][-1]
    ]
    users = [i for i, m in enumerate(body["messages"]) if m["role"] == "user"]
    assert marked == users[-2:]


def test_each_round_reads_the_previous_rounds_prefix_from_the_cache(serve: Any) -> None:
    _, server = paged_chat(serve, rounds=6)
    meter = PromptCacheMeter()
    billed = [meter.bill(body) for body in server.message_requests()]
    assert all(b.cache_read > 0 for b in billed[2:])
    assert all(b.uncached < 50 for b in billed[2:])  # all but the newest tail is cached


def test_a_tool_request_id_in_a_reference_is_the_calls_own() -> None:
    from chatlas_like._run.context import reference_text
    from chatlas_like.types import ContentToolResult

    request = ContentToolRequest(id="call_7", name="lookup", arguments={})
    result = ContentToolResult(value="x" * 500, request=request)
    text = reference_text(result, 500, 4)
    assert "`lookup` call call_7, success, 500 bytes" in text
    assert text.endswith("read it with read_tool_result(sequence=4) (offset= for later parts).]")


def test_chat_anthropic_takes_the_budget_as_an_option() -> None:
    chat = ChatAnthropic(model="claude-haiku-4-5", api_key="k", context_budget=50_000)
    assert chat.options.context_budget == 50_000


def test_a_users_tool_named_like_the_paging_tool_is_refused_not_replaced(
    serve: Callable[..., LoopbackServer],
) -> None:
    ran: list[int] = []

    def read_tool_result(sequence: int) -> str:
        """The user's own reader."""
        ran.append(sequence)
        return "mine"

    server = serve(lambda body: Reply.text("ok"))
    chat = make_chat(server, context_budget=6_000)
    chat.register_tool(read_tool_result)
    with pytest.raises(ValueError, match="your tool 'read_tool_result' has the name"):
        chat.chat("hi", echo="none")
    assert server.message_requests() == []  # refused before anything was sent
    assert chat.get_tools()[0].func is read_tool_result  # yours is kept


def _openai_results(body: dict[str, Any]) -> list[str]:
    """The tool results an OpenAI request carries: function_call_output items or tool
    messages, oldest first."""
    items = body.get("input") or body.get("messages") or []
    return [
        str(i.get("output") if i.get("type") == "function_call_output" else i.get("content"))
        for i in items
        if i.get("type") == "function_call_output" or i.get("role") == "tool"
    ]


@pytest.mark.parametrize("api", ["responses", "completions"])
def test_the_budget_elides_and_reads_back_the_same_on_openais_apis(serve: Any, api: str) -> None:
    from chatlas_like import ChatOpenAI, ChatOpenAICompletions

    rounds = 8
    script = [Reply.tool_call("page", {"n": i}) for i in range(rounds)]
    script += [Reply.tool_call("read_tool_result", {"sequence": 1}), Reply.text("1000.")]
    server = serve(script)
    make = ChatOpenAI if api == "responses" else ChatOpenAICompletions
    chat = make(base_url=server.openai_url, api_key="test", model="gpt-4.1", context_budget=6_000)
    chat.register_tool(page)
    chat.chat("What is the code on page 0?", echo="none")
    sent = _openai_results(server.message_requests()[-2])
    assert sent[-1].startswith("page 7 says")  # the newest result is never elided
    assert any(r.startswith("[Result elided") and "read_tool_result(sequence=1)" in r for r in sent)
    [read_back] = chat.get_turns()[-2].tool_results
    assert read_back.outcome == "success"
    assert "page 0 says the code is 1000." in str(read_back.value)


def test_without_a_budget_the_view_never_reads_the_store(serve: Any) -> None:
    from chatlas_like._run.context import ContextView

    chat, _ = paged_chat(serve, rounds=3)
    turns = chat.get_turns()

    def unreachable() -> dict[str, int]:
        raise AssertionError("the store was read")

    view = ContextView(window=lambda: 200_000, sequences=unreachable)
    assert view(turns).turns is turns
