"""Assistant turns as chatlas users read them: finish_reason, warnings for unfinished answers,
partial turns, str()/print(), .completion as the SDK's Message, and citation items."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pydantic import BaseModel

from chatlas_like import (
    AssistantTurn,
    ContentCitation,
    ContentDocument,
    ContentPDF,
    ContentText,
    ContentToolRequest,
    ContentToolRequestFetch,
    ContentToolRequestSearch,
    ContentUploaded,
    StreamController,
    StreamInterruptedError,
    UserTurn,
    from_json,
    to_json,
    tool_web_search,
)
from chatlas_like.testing import LoopbackServer, Reply
from chatlas_like.types import WebSource

from ..conftest import make_chat

CITATION = {
    "type": "web_search_result_location",
    "cited_text": "ggplot2 1.0.0 (2014-05-21)",
    "url": "https://cran.r-project.org/package=ggplot2",
    "title": "CRAN: Package ggplot2",
    "encrypted_index": "Eo8B",
}
CITED = {"type": "text", "text": "It came out on 2014-05-21", "citations": [CITATION]}


class Person(BaseModel):
    name: str
    age: int


# -- finish_reason ---------------------------------------------------------------------------


def test_an_answer_that_ends_normally_finishes_with_success(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([Reply.text("Hi")]))
    chat.chat("Hi", echo="none")
    last = chat.get_last_turn()
    assert last is not None
    assert (last.finish_reason, last.stop_reason) == ("success", "end_turn")


def test_a_refusal_finishes_with_content_filter_and_warns(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([Reply.text("I can't help.", stop_reason="refusal")]))
    with pytest.warns(UserWarning, match="declined to answer"):
        chat.chat("Something bad", echo="none")
    last = chat.get_last_turn()
    assert last is not None
    assert (last.finish_reason, last.stop_reason) == ("content_filter", "refusal")


def test_a_full_context_window_finishes_with_context_window_and_warns(
    serve: Callable[..., LoopbackServer],
) -> None:
    reply = Reply.text("Partly", stop_reason="model_context_window_exceeded")
    chat = make_chat(serve([reply]))
    with pytest.warns(UserWarning, match="context window"):
        chat.chat("Go on", echo="none")
    last = chat.get_last_turn()
    assert last is not None and last.finish_reason == "context_window"


def test_an_answer_cut_at_max_tokens_warns_at_the_callers_line(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([Reply.text("This is cut", stop_reason="max_tokens")]))
    with pytest.warns(UserWarning, match="max_tokens") as caught:
        chat.chat("Tell me", echo="none")
    assert caught[0].filename == __file__
    last = chat.get_last_turn()
    assert last is not None and last.finish_reason == "max_tokens"


def test_a_streamed_answer_cut_at_max_tokens_warns_too(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([Reply.text("This is cut", stop_reason="max_tokens")]))
    with pytest.warns(UserWarning, match="max_tokens") as caught:
        assert "".join(chat.stream("Tell me")) == "This is cut"
    assert caught[0].filename == __file__


def test_a_stop_sequence_finishes_with_stop_sequence_and_no_warning(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([Reply.text("1, 2,", stop_reason="stop_sequence")]))
    chat.chat("Count", echo="none")
    last = chat.get_last_turn()
    assert last is not None and last.finish_reason == "stop_sequence"


def test_structured_data_cut_at_max_tokens_raises_the_cause_not_a_parse_error(
    serve: Callable[..., LoopbackServer],
) -> None:
    server = serve([Reply.text('{"name": "An', stop_reason="max_tokens"), Reply.text("ok")])
    chat = make_chat(server)
    with pytest.raises(ValueError, match=r"Data extraction failed: .*`max_tokens` limit"):
        chat.chat_structured("Ann is 3", data_model=Person)
    assert str(chat.chat("Thanks", echo="none")) == "ok"  # the history stays valid


def test_structured_data_by_tool_cut_at_max_tokens_raises_the_cause(
    serve: Callable[..., LoopbackServer],
) -> None:
    cut = Reply.blocks_of(
        {"type": "tool_use", "name": "_structured_tool_call", "input": '{"name": "An'},
        stop_reason="max_tokens",
    )
    server = serve([cut, Reply.text("ok")])
    chat = make_chat(server, structured_output_mode="tool")
    with pytest.raises(ValueError, match=r"Data extraction failed: .*`max_tokens` limit"):
        chat.chat_structured("Ann is 3", data_model=Person)
    assert str(chat.chat("Thanks", echo="none")) == "ok"
    assert len(server.message_requests()) == 2  # the cut call was not run as a tool


def test_a_stream_cut_off_is_an_incomplete_partial_turn(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([Reply.text("one two three four").cut(after=5)]))
    with pytest.raises(StreamInterruptedError):
        chat.chat("Count", echo="none")
    last = chat.get_last_turn()
    assert last is not None
    assert (last.finish_reason, last.partial_reason, last.is_partial) == (
        None,  # as chatlas's: the partial_reason says why
        "interrupted",
        True,
    )


# -- partial turns -----------------------------------------------------------------------------


def test_a_stopped_stream_keeps_a_partial_turn_with_the_reason_given(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([Reply.text("Once upon a time there was a fox")]))
    controller = StreamController()
    for i, _ in enumerate(chat.stream("Tell a story", controller=controller)):
        if i == 1:
            controller.cancel("user stopped")
    last = chat.get_last_turn()
    assert last is not None and last.partial_reason == "user stopped"


def test_an_assistant_turn_built_with_partial_reason_is_partial() -> None:
    assert AssistantTurn("Once upon a", partial_reason="cancelled").is_partial
    assert not AssistantTurn("The end.").is_partial


def test_a_partial_answer_and_its_prompt_are_left_out_of_get_tokens_and_get_cost(
    serve: Callable[..., LoopbackServer],
) -> None:
    server = serve([Reply.text("Hi").with_usage(input_tokens=10, output_tokens=2)])
    chat = make_chat(server, model="claude-haiku-4-5")
    chat.chat("Hi", echo="none")
    chat.set_turns([*chat.get_turns(), UserTurn("More"), AssistantTurn("Once", partial_reason="x")])
    assert [t["role"] for t in chat.get_tokens()] == ["user", "assistant"]
    assert chat.get_cost() == pytest.approx((10 * 1 + 2 * 5) / 1e6)


# -- str and print ------------------------------------------------------------------------------


def test_str_of_a_turn_is_its_contents_one_per_line() -> None:
    turn = AssistantTurn(["First.", "Second."])
    assert str(turn) == "First.\nSecond."


def test_str_of_a_pdf_names_it_with_its_size_or_url_as_chatlas_does() -> None:
    inline = ContentPDF(data=b"x" * 224_256, filename="report.pdf")
    remote = ContentPDF(url="https://example.com/r.pdf", filename="r.pdf")
    assert str(inline) == "`[PDF report.pdf · 219 KB]`"
    assert str(remote) == "`[PDF r.pdf · https://example.com/r.pdf]`"


def test_str_of_a_document_and_an_upload_name_their_media_type_as_chatlas_does() -> None:
    document = ContentDocument(data=b"a,b", filename="data.csv", mime_type="text/csv")
    assert str(document) == "`[document data.csv · text/csv]`"
    assert str(ContentUploaded(id="file-abc", mime_type="image/png")) == (
        "`[uploaded file-abc · image/png]`"
    )


def test_a_file_name_with_backticks_and_newlines_stays_inside_one_code_span() -> None:
    assert str(ContentPDF(data=b"1", filename="x`\n# heading")) == "``[PDF x`\\n# heading · 1 B]``"


def test_str_of_a_web_search_or_fetch_request_is_chatlas_s_bold_label() -> None:
    assert str(ContentToolRequestSearch(query="ggplot2 release")) == (
        "**web search request**: 'ggplot2 release'"
    )
    assert str(ContentToolRequestFetch(url="https://example.com/page")) == (
        "**web fetch request**: https://example.com/page"
    )


def test_printing_a_chat_shows_the_conversation_as_chatlas_does(
    serve: Callable[..., LoopbackServer],
) -> None:
    server = serve([Reply.text("Hello there.").with_usage(input_tokens=12, output_tokens=5)])
    chat = make_chat(server, model="claude-haiku-4-5", system_prompt="Be terse.")
    chat.chat("Say hi", echo="none")
    assert str(chat) == (
        "<Chat Anthropic/claude-haiku-4-5 turns=3 input=12 output=5 cost=$0.0000>\n\n"
        "## System\n\nBe terse.\n\n"
        "## User\n\nSay hi\n\n"
        "## Assistant [input=12 output=5 cost=$0.0000]\n\nHello there.\n"
    )


def test_printing_a_chat_marks_a_partial_answer_with_its_reason(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([]))
    chat.set_turns([UserTurn("Tell a story"), AssistantTurn("Once", partial_reason="cancelled")])
    assert str(chat).endswith("## Assistant [cancelled]\n\nOnce\n")


def test_repr_of_a_chat_stays_one_line(serve: Callable[..., LoopbackServer]) -> None:
    chat = make_chat(serve([Reply.text("Hi")]))
    chat.chat("Hi", echo="none")
    assert "\n" not in repr(chat)


# -- completion ----------------------------------------------------------------------------------


def test_completion_is_the_sdks_message(serve: Callable[..., LoopbackServer]) -> None:
    from anthropic.types import Message

    chat = make_chat(serve([Reply.tool_call("add", {"x": 1}, text="Adding."), Reply.text("1")]))
    chat.register_tool(lambda x: x, name="add")
    chat.chat("Add", echo="none")
    message = chat.get_turns()[1].completion
    assert isinstance(message, Message)
    assert (message.id, message.stop_reason) == ("msg_0001", "tool_use")
    assert [block.type for block in message.content] == ["text", "tool_use"]
    assert message.content[1].input == {"x": 1}  # pyright: ignore[reportAttributeAccessIssue]
    assert message.usage.output_tokens > 0


def test_completion_is_built_on_first_access_and_kept(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([Reply.text("Hi")]))
    chat.chat("Hi", echo="none")
    last = chat.get_last_turn()
    assert last is not None
    assert last._completion_factory is not None  # pyright: ignore[reportPrivateUsage]  # not built yet
    assert last.completion is last.completion


def test_a_turn_read_from_json_has_no_completion_but_keeps_what_the_response_said(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([Reply.text("Hi")]))
    chat.chat("Hi", echo="none")
    loaded = from_json(to_json(chat.get_turns()))[1]
    assert loaded.completion is None
    assert loaded.completion_data is not None and loaded.completion_data["id"] == "msg_0001"


# -- citations -----------------------------------------------------------------------------------


def test_citations_stream_after_the_text_they_ground_with_the_span_filled(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([Reply.blocks_of(CITED, {"type": "text", "text": "."})]))
    chat.register_tool(tool_web_search())
    items = list(chat.stream("When?", content="all"))
    at = next(i for i, item in enumerate(items) if isinstance(item, ContentCitation))
    assert "".join(i for i in items[:at] if isinstance(i, str)) == CITED["text"]
    citation = items[at]
    assert isinstance(citation, ContentCitation)
    assert citation.grounded_span == CITED["text"]
    assert citation.cited_quote == CITATION["cited_text"]
    assert citation.source == WebSource(url=CITATION["url"], title=CITATION["title"])


def test_a_cited_answer_holds_each_citation_right_after_its_text(
    serve: Callable[..., LoopbackServer],
) -> None:
    chat = make_chat(serve([Reply.blocks_of(CITED, {"type": "text", "text": "."})]))
    chat.chat("When?", echo="none")
    last = chat.get_last_turn()
    assert last is not None
    assert [type(c) for c in last.contents] == [ContentText, ContentCitation, ContentText]
    assert last.text == CITED["text"] + "."


def test_citations_go_back_to_the_api_with_their_text_only(
    serve: Callable[..., LoopbackServer],
) -> None:
    server = serve([Reply.blocks_of(CITED), Reply.text("In May.")])
    chat = make_chat(server)
    chat.chat("When?", echo="none")
    chat.chat("Which month?", echo="none")
    assert server.message_requests()[1]["messages"][1]["content"] == [CITED]


def test_citation_items_survive_a_json_round_trip(serve: Callable[..., LoopbackServer]) -> None:
    chat = make_chat(serve([Reply.blocks_of(CITED)]))
    chat.chat("When?", echo="none")
    turns = chat.get_turns()
    assert from_json(to_json(turns)) == turns


def test_a_tool_request_keeps_its_place_among_citations(
    serve: Callable[..., LoopbackServer],
) -> None:
    reply = Reply.blocks_of(CITED, {"type": "tool_use", "name": "add", "input": {"x": 1}})
    chat = make_chat(serve([reply, Reply.text("ok")]))
    chat.register_tool(lambda x: x, name="add")
    chat.chat("When?", echo="none")
    kinds = [type(c) for c in chat.get_turns()[1].contents]
    assert kinds == [ContentText, ContentCitation, ContentToolRequest]
