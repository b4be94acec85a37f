"""Tool results as chatlas code builds, returns, subclasses and reads them."""

from __future__ import annotations

from typing import Any

import pytest

from chatlas_like import (
    Chat,
    ContentToolRequest,
    ContentToolRequestFetch,
    ContentToolRequestSearch,
    ContentToolResponseFetch,
    ContentToolResponseSearch,
    ContentToolResult,
    ToolRejectError,
)
from chatlas_like.testing import LoopbackServer, Reply
from chatlas_like.types import WebSource

from ..conftest import make_chat


class FancyResult(ContentToolResult):
    """A custom display, the way chatlas's docs show it: override ``tagify()``."""

    def tagify(self) -> Any:
        from htmltools import tags

        return tags.div(f"{self.value['temperature']} degrees", class_="fancy-weather")


def fancy_weather(city: str) -> FancyResult:
    """The weather in a city, with a custom display."""
    return FancyResult(value={"city": city, "temperature": 21})


def tool_result_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]


def run_weather(server: LoopbackServer) -> Chat:
    chat = make_chat(server)
    chat.register_tool(fancy_weather)
    chat.chat("Weather in Oslo?", echo="none")
    return chat


WEATHER_SCRIPT = [Reply.tool_call("fancy_weather", {"city": "Oslo"}), Reply.text("21 degrees.")]


def test_a_result_takes_chatlas_id_name_and_arguments() -> None:
    result = ContentToolResult(id="call_1", name="add", arguments={"x": 1, "y": 2}, value=3)
    assert (result.id, result.name, result.arguments) == ("call_1", "add", {"x": 1, "y": 2})


def test_id_name_and_arguments_beside_the_same_request_are_accepted() -> None:
    request = ContentToolRequest(id="call_1", name="add", arguments={"x": 1})
    result = ContentToolResult(
        id="call_1", name="add", arguments={"x": 1}, value=1, request=request
    )
    assert result.request is request


def test_an_id_that_disagrees_with_the_request_is_an_error() -> None:
    request = ContentToolRequest(id="call_1", name="add", arguments={})
    with pytest.raises(ValueError, match="id='call_2' disagrees"):
        ContentToolResult(id="call_2", value=1, request=request)


def test_to_html_is_an_escaped_card() -> None:
    request = ContentToolRequest(id="call_1", name="look<up>", arguments={"q": "<b>"})
    html = ContentToolResult(value="<script>x</script>", request=request).to_html()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "look&lt;up&gt;" in html


def test_an_object_with_only_to_pandas_reaches_the_model_as_records() -> None:
    import pandas as pd

    class Frame:
        def to_pandas(self) -> pd.DataFrame:
            return pd.DataFrame({"city": ["Oslo"], "temp": [21]})

    assert ContentToolResult(value=Frame()).get_model_value() == '[{"city":"Oslo","temp":21}]'


def test_server_tool_contents_construct_as_in_chatlas() -> None:
    search = ContentToolRequestSearch(query="ggplot2 release")
    assert search.query == "ggplot2 release"
    found = ContentToolResponseSearch(sources=[WebSource(url="https://cran.r-project.org")])
    assert [s.url for s in found.sources] == ["https://cran.r-project.org"]
    fetch = ContentToolRequestFetch(url="https://example.org/a")
    assert fetch.url == "https://example.org/a"
    page = ContentToolResponseFetch(url="https://example.org/a", status="success")
    assert (page.url, page.status) == ("https://example.org/a", "success")
    assert ContentToolResponseFetch(url="https://example.org/a", status="error").status == "error"


def test_a_returned_subclass_is_a_successful_result_sent_to_the_model() -> None:
    with LoopbackServer(WEATHER_SCRIPT) as server:
        run_weather(server)
        (block,) = tool_result_blocks(server.message_requests()[1])
    assert block.get("is_error") is not True
    assert block["content"] == '{"city":"Oslo","temperature":21}'


def test_a_returned_subclass_stays_in_the_history_as_returned() -> None:
    with LoopbackServer(WEATHER_SCRIPT) as server:
        chat = run_weather(server)
    (result,) = chat.get_turns()[2].tool_results
    assert type(result) is FancyResult
    assert result.outcome == "success"
    assert result.name == "fancy_weather"


def test_a_returned_subclass_keeps_its_display_when_the_history_is_shown_again() -> None:
    import shinychat

    from chatlas_like.shiny import register_shinychat

    with LoopbackServer(WEATHER_SCRIPT) as server:
        chat = run_weather(server)
    register_shinychat()
    message = shinychat.message_content(chat.get_turns()[2])
    html = "".join(b["content"] for b in message.blocks if b["type"] == "html_block")
    assert "fancy-weather" in f"{message.content}{html}"


def reject(request: ContentToolRequest) -> None:
    raise ToolRejectError("The user said no.")


def test_a_rejected_call_keeps_the_exception_in_its_error_during_the_run() -> None:
    seen: list[ContentToolResult] = []
    with LoopbackServer(WEATHER_SCRIPT) as server:
        chat = make_chat(server)
        chat.register_tool(fancy_weather)
        chat.on_tool_request(reject)
        chat.on_tool_result(seen.append)
        chat.chat("Weather in Oslo?", echo="none")
        (block,) = tool_result_blocks(server.message_requests()[1])
    assert isinstance(seen[0].error, ToolRejectError)
    (result,) = chat.get_turns()[2].tool_results
    assert isinstance(result.error, ToolRejectError) and result.is_refusal
    assert block["is_error"] is True
    assert (
        block["content"] == "Tool call failed with error: 'Tool call rejected. The user said no.'"
    )


def test_a_rejection_reads_as_chatlas_words_it_and_keeps_the_reason_apart() -> None:
    error = ToolRejectError("The user said no.")
    assert str(error) == error.message == "Tool call rejected. The user said no."
    assert error.reason == "The user said no."


def test_a_saved_rejection_keeps_its_message(tmp_path: Any) -> None:
    with LoopbackServer(WEATHER_SCRIPT) as server:
        chat = make_chat(server)
        chat.register_tool(fancy_weather)
        chat.on_tool_request(reject)
        chat.chat("Weather in Oslo?", echo="none")
        chat.save(tmp_path / "chat.json")
    loaded = Chat.load(tmp_path / "chat.json", [fancy_weather], api_key="test")
    (result,) = loaded.get_turns()[2].tool_results
    assert result.error == "The user said no."
    assert result.get_model_value() == (
        "Tool call failed with error: 'Tool call rejected. The user said no.'"
    )
