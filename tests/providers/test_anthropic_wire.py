"""Translation on small fixtures: turns to request JSON, events to turns (no network)."""

from __future__ import annotations

from typing import Any

from chatlas_like import (
    AssistantTurn,
    ContentServerToolRequest,
    ContentServerToolResult,
    ContentText,
    ContentThinking,
    ContentToolRequest,
    ContentToolResult,
    ContentUnknown,
    UserTurn,
)
from chatlas_like.providers._anthropic.wire import (
    AnthropicAccumulator,
    build_request,
    message_events,
    parse_sse,
)
from chatlas_like.providers._base import RequestSpec

REQUEST = ContentToolRequest("toolu_1", "add", {"x": 1})


def body(turns: list[Any], **spec: Any) -> dict[str, Any]:
    return build_request(turns, RequestSpec(**spec), model="m", max_tokens=10, cache="none")


def turn_from(events: list[dict[str, Any]]) -> AssistantTurn:
    accumulator = AnthropicAccumulator()
    for event in events:
        accumulator.feed(event)
    return accumulator.turn()


def test_a_user_prompt_becomes_one_user_message() -> None:
    assert body([UserTurn("Hi")])["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Hi"}]}
    ]


def test_consecutive_user_turns_merge_with_tool_results_first() -> None:
    result = ContentToolResult(value="2", request=REQUEST)
    turns = [UserTurn("go"), AssistantTurn([REQUEST]), UserTurn([result]), UserTurn("next")]
    last = body(turns)["messages"][-1]
    assert [b["type"] for b in last["content"]] == ["tool_result", "text"]


def test_blank_text_is_dropped_and_an_empty_message_with_it() -> None:
    turns = [UserTurn("a"), AssistantTurn("\n\n"), UserTurn("b")]
    assert body(turns)["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    ]


def test_every_result_says_is_error_as_chatlas_sends_it() -> None:
    ok = ContentToolResult(value="fine", request=REQUEST)
    bad = ContentToolResult(error="nope", request=REQUEST)
    blocks = [body([UserTurn([r])])["messages"][0]["content"][0] for r in (ok, bad)]
    assert blocks[0]["is_error"] is False
    assert blocks[1]["is_error"] is True
    assert blocks[1]["content"] == "Tool call failed with error: 'nope'"


def test_a_request_without_tools_sends_an_empty_tool_list_as_chatlas_does() -> None:
    assert body([UserTurn(["hi"])])["tools"] == []


def test_result_options_land_on_the_tool_result_block() -> None:
    result = ContentToolResult(
        value="x", request=REQUEST, options={"cache_control": {"type": "ephemeral"}}
    )
    block = body([UserTurn([result])])["messages"][0]["content"][0]
    assert block["cache_control"] == {"type": "ephemeral"}


def test_cache_control_marks_the_last_user_block_and_the_system_prompt() -> None:
    request = build_request(
        [UserTurn(["a", "b"])],
        RequestSpec(system_prompt="sys"),
        model="m",
        max_tokens=1,
        cache="1h",
    )
    marker = {"type": "ephemeral", "ttl": "1h"}
    assert request["system"] == [{"type": "text", "text": "sys", "cache_control": marker}]
    assert request["messages"][0]["content"][-1]["cache_control"] == marker
    assert "cache_control" not in request["messages"][0]["content"][0]


def test_marking_the_cache_does_not_change_the_cached_translation_of_a_turn() -> None:
    turn = UserTurn("a")
    build_request([turn], RequestSpec(), model="m", max_tokens=1, cache="5m")
    assert body([turn])["messages"][0]["content"][0] == {"type": "text", "text": "a"}


def test_unknown_and_server_blocks_go_back_unchanged() -> None:
    block = {"type": "fancy_new_block", "data": {"k": [1, 2]}}
    server_use = {
        "type": "server_tool_use",
        "id": "srv_1",
        "name": "web_search",
        "input": {"q": "x"},
    }
    server_result = {"type": "web_search_tool_result", "tool_use_id": "srv_1", "content": []}
    turn = AssistantTurn(
        [
            ContentUnknown(block),
            ContentServerToolRequest("srv_1", "web_search", {"q": "x"}, server_use),
            ContentServerToolResult("srv_1", server_result),
        ]
    )
    assert body([UserTurn("q"), turn])["messages"][1]["content"] == [
        block,
        server_use,
        server_result,
    ]


def test_streamed_text_and_tool_arguments_become_a_turn() -> None:
    events = [
        {
            "type": "message_start",
            "message": {"id": "msg_1", "model": "m", "usage": {"input_tokens": 7}},
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi "}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "there"},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "t1", "name": "add", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"x": '},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": "1}"},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 12},
        },
        {"type": "message_stop"},
    ]
    turn = turn_from(events)
    assert turn.contents == [ContentText("Hi there"), ContentToolRequest("t1", "add", {"x": 1})]
    assert turn.finish_reason == "tool_use"
    assert turn.tokens == (7, 12, 0)
    assert turn.usage is not None and (turn.usage.input, turn.usage.output) == (7, 12)
    assert turn.completion_data is not None
    assert (turn.completion_data["id"], turn.completion_data["model"]) == ("msg_1", "m")


def test_a_non_streamed_message_takes_the_same_path() -> None:
    message = {
        "id": "msg_1",
        "model": "m",
        "content": [
            {"type": "text", "text": "Hi"},
            {"type": "tool_use", "id": "t1", "name": "add", "input": {"x": 1}},
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }
    turn = turn_from(list(message_events(message)))
    assert turn.contents[:2] == [ContentText("Hi"), ContentToolRequest("t1", "add", {"x": 1})]
    assert turn.contents[2] == ContentThinking(
        "hmm", {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    )


def test_tool_arguments_cut_off_mid_json_are_marked() -> None:
    accumulator = AnthropicAccumulator()
    for event in [
        {"type": "message_start", "message": {}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t1", "name": "add", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"x": '},
        },
    ]:
        accumulator.feed(event)
    partial = accumulator.partial_turn()
    assert partial is not None and partial.finish_reason is None
    request = partial.tool_requests[0]
    assert request.parse_error == "The arguments of `add` were cut off; send the call again."


def test_a_finished_tool_block_is_emitted_when_it_stops() -> None:
    accumulator = AnthropicAccumulator()
    accumulator.feed(
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
        }
    )
    emitted = accumulator.feed({"type": "content_block_stop", "index": 0})
    assert emitted == ContentToolRequest("t1", "f", {})


def test_server_sent_events_parse_with_spaces_and_multi_line_data() -> None:
    body = (
        b'event: ping\r\ndata: {"type": "ping"}  \r\n\r\ndata: {"type":\ndata: "message_stop"}\n\n'
    )
    chunks = [body[i : i + 7] for i in range(0, len(body), 7)]  # split anywhere
    assert list(parse_sse(chunks)) == [{"type": "ping"}, {"type": "message_stop"}]


def test_an_event_without_its_closing_blank_line_is_still_read() -> None:
    assert list(parse_sse([b'data: {"type": "ping"}'])) == [{"type": "ping"}]


def test_the_message_cache_translates_only_new_turns_and_rebuilds_on_any_other_change() -> None:
    from chatlas_like.providers._anthropic.wire import MessageCache

    cache = MessageCache()
    turns: list[Any] = [UserTurn("a"), AssistantTurn("b")]
    first = cache.messages(turns)
    turns.append(UserTurn("c"))
    grown = cache.messages(turns)
    assert grown[:2] == first and grown[2]["content"][0]["text"] == "c"
    turns.append(UserTurn("d"))  # merges into the last user message
    assert cache.messages(turns)[-1]["content"] == [
        {"type": "text", "text": "c"},
        {"type": "text", "text": "d"},
    ]
    turns[0] = UserTurn("changed")  # not a prefix any more
    assert cache.messages(turns)[0]["content"][0]["text"] == "changed"
    assert cache.messages(turns) == [
        m
        for m in build_request(turns, RequestSpec(), model="m", max_tokens=1, cache="none")[
            "messages"
        ]
    ]
