"""ToolInfo: each request of a registered tool says what it calls, before any hook sees it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from chatlas_like import Allow, Chat, ContentToolRequest, Deny, Tool, from_json, to_json
from chatlas_like.testing import LoopbackServer
from chatlas_like.types import ToolInfo

from ..conftest import TEST_KEY, Reply, make_chat


def delete_file(path: str) -> str:
    """Deletes a file."""
    return f"deleted {path}"


def read_file(path: str) -> str:
    """Reads a file."""
    return f"contents of {path}"


DESTRUCTIVE = {"title": "Delete a file", "destructiveHint": True}


def tools() -> list[Tool]:
    return [
        Tool.from_func(delete_file, annotations=DESTRUCTIVE),
        Tool.from_func(read_file, annotations={"readOnlyHint": True}),
    ]


def chat_calling(serve: Callable[..., LoopbackServer], *calls: tuple[str, str]) -> Chat:
    script = [Reply.tool_calls([(name, {"path": path}) for name, path in calls]), Reply.text("ok")]
    chat = make_chat(serve(script))
    chat.set_tools(tools())
    return chat


def requests_of(chat: Chat) -> list[ContentToolRequest]:
    return [r for turn in chat.get_turns() for r in turn.tool_requests]


def test_a_review_hook_reads_the_requested_tools_annotations(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = chat_calling(serve, ("delete_file", "a.txt"), ("read_file", "b.txt"))

    def review(request: ContentToolRequest) -> Any:
        assert request.tool is not None
        if (request.tool.annotations or {}).get("destructiveHint"):
            return Deny("destructive tools need a person's approval")
        return Allow()

    chat.on_tool_review(review)
    chat.chat("Tidy up", echo="none")
    results = chat.get_turns()[2].tool_results
    assert [r.outcome for r in results] == ["denied", "success"]


def test_on_tool_request_sees_the_tools_name_description_and_schema(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = chat_calling(serve, ("read_file", "b.txt"))
    seen: list[ToolInfo | None] = []
    chat.on_tool_request(lambda request: seen.append(request.tool))
    chat.chat("Read it", echo="none")
    assert seen == [
        ToolInfo(
            name="read_file",
            description="Reads a file.",
            parameters=chat.get_tools()[1].parameters,  # type: ignore[union-attr]
            annotations={"readOnlyHint": True},
        )
    ]


def test_the_history_keeps_the_tool_info_and_the_streamed_request_is_the_same_object(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = chat_calling(serve, ("read_file", "b.txt"))
    items = list(chat.stream("Read it", content="all"))
    yielded = [c for c in items if isinstance(c, ContentToolRequest)]
    [request] = requests_of(chat)[:1]
    assert request.tool is not None and request.tool.name == "read_file"
    assert yielded[0] is request
    assert chat.get_turns()[2].tool_results[0].request is request


def test_a_request_for_an_unknown_tool_has_no_tool_info(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = chat_calling(serve, ("format_disk", "/"))
    chat.chat("Go", echo="none")
    [request] = requests_of(chat)
    assert request.tool is None
    assert chat.get_turns()[2].tool_results[0].outcome == "refused"


def test_tool_info_is_not_part_of_a_requests_equality() -> None:
    bare = ContentToolRequest("id1", "read_file", {"path": "b"})
    described = ContentToolRequest(
        "id1", "read_file", {"path": "b"}, tool=ToolInfo("read_file", "Reads.", {})
    )
    assert bare == described


def test_tool_info_survives_to_json_and_back_written_once(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = chat_calling(serve, ("read_file", "a"), ("read_file", "b"), ("delete_file", "c"))
    chat.chat("Go", echo="none")
    text = to_json(chat.get_turns())
    assert text.count("Reads a file.") == 1  # one table entry for the two calls
    restored = [r for turn in from_json(text) for r in turn.tool_requests]
    assert [r.tool for r in restored] == [r.tool for r in requests_of(chat)]
    assert restored[2].tool is not None and restored[2].tool.annotations == DESTRUCTIVE


def test_a_saved_chat_keeps_tool_info_without_repeating_the_schema(
    serve: Callable[..., LoopbackServer], tmp_path: Path
) -> None:
    chat = chat_calling(serve, ("delete_file", "a"), ("delete_file", "b"))
    chat.chat("Go", echo="none")
    chat.save(tmp_path / "chat.json")
    raw = (tmp_path / "chat.json").read_bytes()
    assert raw.count(b"Deletes a file.") == 1
    with pytest.warns(UserWarning, match="calls tools not given"):  # no tools given
        loaded = Chat.load(tmp_path / "chat.json", api_key=TEST_KEY)
    restored = [r for turn in loaded.get_turns() for r in turn.tool_requests]
    assert [r.tool for r in restored] == [r.tool for r in requests_of(chat)]


def test_tool_info_of_a_tool_since_changed_is_kept_as_it_was_called(
    serve: Callable[..., LoopbackServer], tmp_path: Path
) -> None:
    chat = chat_calling(serve, ("read_file", "a"))
    chat.chat("Go", echo="none")
    chat.register_tool(Tool.from_func(read_file, annotations={"title": "Read v2"}), force=True)
    chat.save(tmp_path / "chat.json")
    loaded = Chat.load(tmp_path / "chat.json", tools(), api_key=TEST_KEY)
    [request] = [r for turn in loaded.get_turns() for r in turn.tool_requests]
    assert request.tool is not None and request.tool.annotations == {"readOnlyHint": True}


def test_a_reference_to_a_missing_tool_info_is_dropped_not_an_error() -> None:
    document = {
        "format": "chatlas_like.turns",
        "version": 1,
        "turns": [
            {
                "role": "assistant",
                "contents": [{"type": "tool_request", "id": "t1", "name": "x", "tool": 7}],
            }
        ],
    }
    [turn] = from_json(orjson.dumps(document))
    assert turn.tool_requests[0].tool is None


def test_a_builtin_tool_is_described_by_its_name() -> None:
    from chatlas_like import ToolBuiltIn

    info = ToolInfo.from_tool(ToolBuiltIn("web_search", {"type": "web_search_20250305"}))
    assert info == ToolInfo(name="web_search", description="web_search", parameters={})


@pytest.mark.parametrize("annotations", [None, {"openWorldHint": False}])
def test_tool_info_round_trips_through_plain_data(annotations: dict[str, Any] | None) -> None:
    info = ToolInfo("t", "Does t.", {"type": "object"}, annotations)
    assert ToolInfo.from_dict(orjson.loads(orjson.dumps(info.to_dict()))) == info
