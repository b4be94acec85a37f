"""Bad input from the model becomes a result the model can act on; the history stays valid."""

from __future__ import annotations

from typing import Any

import pytest

from chatlas_like import ContentToolResult, ProviderError
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat


def weather(city: str, units: str = "celsius") -> str:
    """Gets the weather for a city."""
    return f"sunny in {city} ({units})"


def explode(path: str) -> str:
    """Always fails."""
    raise FileNotFoundError(f"/home/alice/secret/{path} does not exist")


def _converse(serve: Any, first: Reply) -> tuple[ContentToolResult, LoopbackServer]:
    server = serve([first, Reply.text("Sorry about that."), Reply.text("Still here.")])
    chat = make_chat(server)
    chat.register_tool(weather)
    chat.register_tool(explode)
    chat.chat("Go", echo="none")
    chat.chat("And now?", echo="none")  # the next turn works on the repaired history
    result = chat.get_turns()[2].tool_results[0]
    return result, server


def _sent_result(server: LoopbackServer) -> dict[str, Any]:
    return server.message_requests()[1]["messages"][-1]["content"][0]


def test_unknown_tool_is_refused_and_names_the_available_tools(serve: Any) -> None:
    result, server = _converse(serve, Reply.tool_call("forecast", {"city": "Paris"}))
    assert result.outcome == "refused"
    sent = _sent_result(server)
    assert sent["is_error"] is True
    assert sent["content"] == (
        "Tool call failed with error: 'Unknown tool `forecast`. Available tools: explode, weather.'"
    )


def test_arguments_that_are_not_json_are_refused(serve: Any) -> None:
    result, server = _converse(serve, Reply.tool_call("weather", '{"city": Paris}'))
    assert result.is_refusal
    assert "not valid JSON" in _sent_result(server)["content"]


def test_missing_argument_is_refused_naming_it_and_the_accepted_names(serve: Any) -> None:
    result, server = _converse(serve, Reply.tool_call("weather", {"units": "kelvin"}))
    assert result.is_refusal
    assert _sent_result(server)["content"] == (
        "Tool call failed with error: 'Invalid arguments for `weather`: "
        "missing required argument `city`; accepted: city, units'"
    )


def test_wrong_typed_argument_is_refused_naming_it(serve: Any) -> None:
    result, server = _converse(serve, Reply.tool_call("weather", {"city": ["Paris", "Rome"]}))
    assert result.is_refusal
    content = _sent_result(server)["content"]
    assert content.startswith(
        "Tool call failed with error: 'Invalid arguments for `weather`: argument `city`: "
        "input should be a valid string"
    )


def test_unexpected_argument_is_refused(serve: Any) -> None:
    result, server = _converse(serve, Reply.tool_call("weather", {"city": "Oslo", "days": 3}))
    assert result.is_refusal
    assert "unexpected argument `days`" in _sent_result(server)["content"]


def test_a_raising_tool_becomes_an_exception_result_without_paths(serve: Any) -> None:
    result, server = _converse(serve, Reply.tool_call("explode", {"path": "notes.txt"}))
    assert result.outcome == "exception" and result.is_exception and result.is_error
    assert isinstance(result.exception, FileNotFoundError)
    assert result.exception.__traceback__ is not None
    assert _sent_result(server)["content"] == (
        "Tool call failed with error: 'notes.txt does not exist'"
    )


def test_history_after_each_failure_is_accepted_by_the_validator(serve: Any) -> None:
    for first in (
        Reply.tool_call("forecast", {}),
        Reply.tool_call("weather", "{broken"),
        Reply.tool_call("explode", {"path": "x"}),
    ):
        _, server = _converse(serve, first)
        assert [r.response_status for r in server.requests] == [200, 200, 200]


def test_server_error_on_the_first_call_leaves_no_trace_in_history(serve: Any) -> None:
    server = serve([Reply.error(400, "invalid_request_error", "bad thing"), Reply.text("ok")])
    chat = make_chat(server)
    with pytest.raises(ProviderError, match="400 invalid_request_error: bad thing"):
        chat.chat("Hi", echo="none")
    assert chat.get_turns() == []
    assert str(chat.chat("Hi", echo="none")) == "ok"


def test_a_result_the_provider_cannot_take_is_sent_as_an_error_and_the_chat_goes_on(
    serve: Any,
) -> None:
    from chatlas_like import ContentImageInline

    def snapshot() -> ContentToolResult:
        """Takes a picture in a format the API does not take."""
        return ContentToolResult(
            value=[ContentImageInline("image/bmp", "Qk0=")], model_format="as_is"
        )  # type: ignore[arg-type]

    server = serve(
        [Reply.tool_call("snapshot", {}), Reply.text("No picture then."), Reply.text("ok")]
    )
    chat = make_chat(server)
    chat.register_tool(snapshot)
    chat.chat("Look", echo="none")
    chat.chat("Again?", echo="none")
    sent = server.message_requests()[1]["messages"][-1]["content"][0]
    assert sent["is_error"] is True
    assert "could not be sent to the model" in sent["content"] and "image/bmp" in sent["content"]
    assert [t.role for t in chat.get_turns()] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]


def test_a_prompt_that_cannot_be_sent_leaves_no_trace(serve: Any) -> None:
    from chatlas_like import ContentImageInline

    server = serve([Reply.text("ok")])
    chat = make_chat(server)
    with pytest.raises(ValueError, match="image/bmp"):
        chat.chat("Look", ContentImageInline("image/bmp", "Qk0="), echo="none")  # type: ignore[arg-type]
    assert chat.get_turns() == []
    assert str(chat.chat("Hi", echo="none")) == "ok"
