"""Server tools (web search, web fetch): definitions, blocks kept and sent back, pause_turn, echo."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from chatlas_like import (
    BadRequestError,
    ContentCitation,
    ContentText,
    ContentThinkingDelta,
    ContentToolRequestFetch,
    ContentToolRequestSearch,
    ContentToolResponseFetch,
    ContentToolResponseSearch,
    ToolBuiltIn,
    from_json,
    to_json,
    tool_web_fetch,
    tool_web_search,
)
from chatlas_like.testing import Reply

from ..conftest import make_chat

SEARCH_USE = {
    "type": "server_tool_use",
    "id": "srvtoolu_search1",
    "name": "web_search",
    "input": {"query": "ggplot2 release"},
}
SEARCH_RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_search1",
    "content": [
        {
            "type": "web_search_result",
            "title": "CRAN: Package ggplot2",
            "url": "https://cran.r-project.org/package=ggplot2",
            "encrypted_content": "EqQBCioIAhgBIiQ0",
            "page_age": None,
        },
        {
            "type": "web_search_result",
            "title": "ggplot2 - Wikipedia",
            "url": "https://en.wikipedia.org/wiki/Ggplot2",
            "encrypted_content": "EpoYCioICxgC",
            "page_age": "4 days ago",
        },
    ],
}
FETCH_USE = {
    "type": "server_tool_use",
    "id": "srvtoolu_fetch1",
    "name": "web_fetch",
    "input": {"url": "https://example.com/page"},
}
FETCH_RESULT = {
    "type": "web_fetch_tool_result",
    "tool_use_id": "srvtoolu_fetch1",
    "content": {
        "type": "web_fetch_result",
        "url": "https://example.com/page",
        "content": {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "Example Domain"},
            "title": "Example Domain",
        },
        "retrieved_at": "2025-08-25T10:30:00Z",
    },
}
CITATION = {
    "type": "char_location",
    "document_index": 0,
    "document_title": "Example Domain",
    "cited_text": "Example Domain",
    "start_char_index": 0,
    "end_char_index": 14,
}
CITED = {"type": "text", "text": "The page is called Example Domain.", "citations": [CITATION]}
THINKING = {"type": "thinking", "thinking": "Search, then read.", "signature": "sig-1"}


def fetch_reply() -> Reply:
    return Reply.blocks_of(FETCH_USE, FETCH_RESULT, CITED)


def test_web_search_options_make_the_tool_definition(serve: Any) -> None:
    server = serve([Reply.text("Ok")])
    chat = make_chat(server)
    chat.register_tool(
        tool_web_search(
            allowed_domains=["cran.r-project.org"],
            user_location={"country": "US", "city": "Boston"},
            max_uses=3,
        )
    )
    chat.chat("Search", echo="none")
    assert server.message_requests()[0]["tools"] == [
        {
            "name": "web_search",
            "type": "web_search_20250305",
            "max_uses": 3,
            "allowed_domains": ["cran.r-project.org"],
            "user_location": {"type": "approximate", "country": "US", "city": "Boston"},
        }
    ]


def test_web_fetch_options_make_the_tool_definition(serve: Any) -> None:
    server = serve([Reply.text("Ok")])
    chat = make_chat(server)
    chat.register_tool(
        tool_web_fetch(
            blocked_domains=["example.org"], max_uses=2, citations=True, max_content_tokens=5000
        )
    )
    chat.chat("Fetch", echo="none")
    assert server.message_requests()[0]["tools"] == [
        {
            "name": "web_fetch",
            "type": "web_fetch_20250910",
            "max_uses": 2,
            "blocked_domains": ["example.org"],
            "citations": {"enabled": True},
            "max_content_tokens": 5000,
        }
    ]


def test_allowed_and_blocked_domains_together_are_refused() -> None:
    with pytest.raises(ValueError, match="Use one or the other"):
        tool_web_search(allowed_domains=["a.com"], blocked_domains=["b.com"])
    with pytest.raises(ValueError, match="Use one or the other"):
        tool_web_fetch(allowed_domains=["a.com"], blocked_domains=["b.com"])


def test_the_server_refuses_a_tool_with_both_domain_lists(serve: Any) -> None:
    both = {"name": "web_search", "type": "web_search_20250305", "allowed_domains": ["a.com"]}
    server = serve([Reply.text("Ok")])
    chat = make_chat(server)
    chat.register_tool(ToolBuiltIn("web_search", {**both, "blocked_domains": ["b.com"]}))
    with pytest.raises(BadRequestError, match="both allowed_domains and blocked_domains"):
        chat.chat("Search", echo="none")


def test_a_web_fetch_is_kept_in_the_turn_with_typed_accessors(serve: Any) -> None:
    server = serve([fetch_reply()])
    chat = make_chat(server)
    chat.register_tool(tool_web_fetch())
    assert str(chat.chat("What is on example.com/page?", echo="none")) == CITED["text"]
    request, result, text, citation = chat.get_turns()[1].contents
    assert isinstance(citation, ContentCitation)
    assert isinstance(request, ContentToolRequestFetch)
    assert request.url == "https://example.com/page"
    assert isinstance(result, ContentToolResponseFetch)
    assert (result.status, result.url, result.title) == (
        "success",
        FETCH_USE["input"]["url"],
        "Example Domain",
    )
    assert isinstance(text, ContentText)
    assert text.citations[0].cited_quote == "Example Domain"
    assert text.citations[0].grounded_span == CITED["text"]


def test_web_fetch_blocks_and_citations_go_back_unchanged(serve: Any) -> None:
    server = serve([fetch_reply(), Reply.text("It is short.")])
    chat = make_chat(server)
    chat.register_tool(tool_web_fetch())
    chat.chat("What is on example.com/page?", echo="none")
    chat.chat("Is it long?", echo="none")
    assert server.message_requests()[1]["messages"][1]["content"] == [
        FETCH_USE,
        FETCH_RESULT,
        CITED,
    ]


def test_stream_content_all_yields_server_blocks_in_the_order_they_arrive(serve: Any) -> None:
    server = serve([fetch_reply()])
    chat = make_chat(server)
    chat.register_tool(tool_web_fetch())
    items = list(chat.stream("What is on example.com/page?", content="all"))
    assert [type(i) for i in items if not isinstance(i, str)] == [
        ContentToolRequestFetch,
        ContentToolResponseFetch,
        ContentCitation,  # with the text it grounds, once that text is complete
    ]
    assert isinstance(items[-1], ContentCitation)
    assert "".join(i for i in items if isinstance(i, str)) == CITED["text"]


def test_a_failed_fetch_reads_as_an_error(serve: Any) -> None:
    failed = {
        "type": "web_fetch_tool_result",
        "tool_use_id": "srvtoolu_fetch1",
        "content": {"type": "web_fetch_tool_result_error", "error_code": "url_not_accessible"},
    }
    server = serve([Reply.blocks_of(FETCH_USE, failed, {"type": "text", "text": "It failed."})])
    chat = make_chat(server)
    chat.register_tool(tool_web_fetch())
    chat.chat("Fetch", echo="none")
    result = chat.get_turns()[1].contents[1]
    assert isinstance(result, ContentToolResponseFetch)
    assert (result.status, result.error_code) == ("error", "url_not_accessible")


def test_a_pause_that_leaves_a_server_call_unanswered_is_resumed(serve: Any) -> None:
    # No new prompt may follow a server tool call without its result: the model
    # finishes it first (chatlas hands it back, and its next chat() fails).
    server = serve(
        [
            Reply.blocks_of(
                {"type": "text", "text": "Let me search."}, SEARCH_USE, stop_reason="pause_turn"
            ),
            Reply.blocks_of(SEARCH_RESULT, {"type": "text", "text": "May 2014."}),
        ]
    )
    chat = make_chat(server)
    chat.register_tool(tool_web_search())
    answer = chat.chat("When was ggplot2 1.0.0 released?", echo="none")
    assert str(answer) == "Let me search.\n\nMay 2014."
    assert len(server.message_requests()) == 2


def test_resume_paused_continues_the_turn_with_the_paused_content(serve: Any) -> None:
    server = serve(
        [
            Reply.blocks_of(SEARCH_USE, SEARCH_RESULT, stop_reason="pause_turn"),
            Reply.text("ggplot2 1.0.0 came out in May 2014."),
        ]
    )
    chat = make_chat(server, resume_paused=True)
    chat.register_tool(tool_web_search())
    answer = chat.chat("When was ggplot2 1.0.0 released?", echo="none")
    assert str(answer) == "ggplot2 1.0.0 came out in May 2014."
    second = server.message_requests()[1]["messages"]
    assert second[-1] == {"role": "assistant", "content": [SEARCH_USE, SEARCH_RESULT]}
    assert [t.finish_reason for t in chat.get_turns()[1:]] == ["pause_turn", "success"]


def test_echo_lists_the_sources_of_a_search_in_a_compact_panel(
    serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    server = serve(
        [Reply.blocks_of(SEARCH_USE, SEARCH_RESULT, {"type": "text", "text": "May 2014."})]
    )
    chat = make_chat(server)
    chat.register_tool(tool_web_search())
    chat.chat("When?")
    out = capsys.readouterr().out
    assert "Searched the web  (2 results)" in out  # chatlas's label
    assert "🔍 ggplot2 release" in out
    assert "CRAN: Package ggplot2" in out and "cran.r-project.org" in out
    assert out.rstrip().endswith("May 2014.")
    assert "EqQBCioIAhgBIiQ0" not in out  # the encrypted page content is never shown


def test_search_results_render_as_a_list_of_links() -> None:
    result = ContentToolResponseSearch("srvtoolu_search1", SEARCH_RESULT)
    assert (
        "<li>ggplot2 - Wikipedia — https://en.wikipedia.org/wiki/Ggplot2</li>"
        in result._repr_html_()
    )
    assert (
        "- CRAN: Package ggplot2 — https://cran.r-project.org/package=ggplot2"
        in result._repr_markdown_()
    )


def search_and_fetch_script() -> list[Reply]:
    return [
        Reply.blocks_of(THINKING, SEARCH_USE, SEARCH_RESULT, stop_reason="pause_turn"),
        Reply.blocks_of(FETCH_USE, FETCH_RESULT, CITED),
    ]


def run_verb(verb: str, serve: Any) -> str:
    server = serve(search_and_fetch_script())
    chat = make_chat(server, reasoning=2048, resume_paused=True)
    chat.register_tool(tool_web_search())
    chat.register_tool(tool_web_fetch())
    prompt = "Find ggplot2's page and read it."
    if verb == "chat":
        chat.chat(prompt, echo="none")
    elif verb == "stream":
        list(chat.stream(prompt, content="all"))
    elif verb == "chat_async":
        asyncio.run(chat.chat_async(prompt, echo="none"))
    else:

        async def consume() -> None:
            async for _ in await chat.stream_async(prompt, content="all"):
                pass

        asyncio.run(consume())
    return to_json(chat.get_turns())


def test_thinking_search_pause_and_fetch_give_the_same_history_through_the_four_verbs(
    serve: Any,
) -> None:
    histories = {v: run_verb(v, serve) for v in ("chat", "stream", "chat_async", "stream_async")}
    assert len(set(histories.values())) == 1


def test_server_blocks_survive_a_json_round_trip(serve: Any) -> None:
    server = serve(search_and_fetch_script())
    chat = make_chat(server, reasoning=2048, resume_paused=True)
    chat.register_tool(tool_web_search())
    chat.register_tool(tool_web_fetch())
    chat.chat("Find it.", echo="none")
    restored = from_json(to_json(chat.get_turns()))
    assert restored == chat.get_turns()
    assert [type(c) for c in restored[1].contents[1:]] == [
        ContentToolRequestSearch,
        ContentToolResponseSearch,
    ]


def test_stream_yields_thinking_then_search_then_fetch_in_arrival_order(serve: Any) -> None:
    server = serve(search_and_fetch_script())
    chat = make_chat(server, reasoning=2048, resume_paused=True)
    chat.register_tool(tool_web_search())
    chat.register_tool(tool_web_fetch())
    kinds = [type(i) for i in chat.stream("Find it.", content="all") if not isinstance(i, str)]
    assert kinds == [
        ContentThinkingDelta,
        ContentThinkingDelta,
        ContentThinkingDelta,
        ContentToolRequestSearch,
        ContentToolResponseSearch,
        ContentToolRequestFetch,
        ContentToolResponseFetch,
        ContentCitation,
    ]


def test_a_non_streamed_answer_gives_the_same_turn_as_a_streamed_one(serve: Any) -> None:
    def turn(stream: bool) -> str:
        server = serve([Reply.blocks_of(THINKING, FETCH_USE, FETCH_RESULT, CITED)])
        chat = make_chat(server, reasoning=2048)
        chat.register_tool(tool_web_fetch())
        chat.chat("Read it", echo="none", stream=stream)
        return to_json(chat.get_turns())

    assert turn(stream=False) == turn(stream=True)


def test_uploaded_files_and_citations_survive_a_json_round_trip() -> None:
    from chatlas_like import AssistantTurn, ContentUploaded, UserTurn

    turns = [
        UserTurn(["Read", ContentUploaded("file_1", "application/pdf", filename="a.pdf")]),
        AssistantTurn([ContentText(CITED["text"], {"citations": [CITATION]})]),
    ]
    assert from_json(to_json(turns)) == turns
