"""chatlas's documented examples, with only the import changed, on the loopback server.

Written from chatlas 0.23.0's documentation (README, get-started, tool-calling,
structured-data pages): each example runs as a chatlas user writes it, with
``import chatlas_like as ctl`` for ``import chatlas as ctl`` and ``ChatAnthropic`` for
the page's provider, and asserts what the page shows. The model is scripted: the
``ANTHROPIC_BASE_URL`` the SDK reads points at a loopback server, so
``ctl.ChatAnthropic()`` is written as in the docs.
"""

from __future__ import annotations

import asyncio
import copy
import subprocess
import sys
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

import chatlas_like as ctl
from chatlas_like import ContentToolResult, Turn
from chatlas_like.testing import LoopbackServer, Reply
from chatlas_like.types import ToolFailureWarning

from ..conftest import run_in_child


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``serve(replies)``: the scripted model every ``ctl.ChatAnthropic()`` talks to."""
    servers: list[LoopbackServer] = []
    made: weakref.WeakSet[ctl.Chat] = weakref.WeakSet()  # every chat the test makes
    init = ctl.Chat.__init__

    def tracked(self: ctl.Chat, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        made.add(self)

    monkeypatch.setattr(ctl.Chat, "__init__", tracked)

    def serve(replies: Any) -> LoopbackServer:
        server = LoopbackServer(replies).start()
        servers.append(server)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        return server

    yield serve
    # The examples never close their chats: their pools close here. (A gc.collect() did
    # it by collecting them, at half a second or more per test in a full run's heap.)
    for chat in list(made):
        chat.provider.close()
    for server in servers:
        server.stop()


def last_messages(server: LoopbackServer) -> list[dict[str, Any]]:
    return server.message_requests()[-1]["messages"]


def texts(message: dict[str, Any]) -> list[str]:
    return [b["text"] for b in message["content"] if b["type"] == "text"]


# -- get-started/chat ------------------------------------------------------------------------


def test_chat_returns_a_response_whose_str_is_the_answer(api: Any) -> None:
    server = api([Reply.text("Your name is not known to me.")])
    chat = ctl.ChatAnthropic(system_prompt="You are a helpful assistant.")
    response = chat.chat("What's my name?")
    assert str(response) == "Your name is not known to me."
    assert server.message_requests()[0]["system"][0]["text"] == "You are a helpful assistant."


def test_a_response_is_an_iterator_as_chatlas_s_is(api: Any) -> None:
    api([Reply.text("Hello there.")])
    response = ctl.ChatAnthropic().chat("Hi", echo="none")
    assert iter(response) is response
    with pytest.raises(StopIteration):  # chat() has read the whole answer
        next(response)


def test_echo_text_echoes_only_the_answer(api: Any, capsys: pytest.CaptureFixture[str]) -> None:
    api([Reply.tool_call("get_date", {}), Reply.text("It is 2024-01-01.")])
    chat = ctl.ChatAnthropic()

    def get_date() -> str:
        "Get the date"
        return "2024-01-01"

    chat.register_tool(get_date)
    chat.chat("What's the date?", echo="text")
    shown = capsys.readouterr().out
    assert "It is 2024-01-01." in shown and "get_date" not in shown


def test_chat_history_is_sent_with_each_new_message(api: Any) -> None:
    server = api([Reply.text("Hello Chatlas."), Reply.text("Your name is Chatlas.")])
    chat = ctl.ChatAnthropic()
    chat.chat("My name is Chatlas.")
    assert str(chat.chat("What's my name?")) == "Your name is Chatlas."
    assert [m["role"] for m in last_messages(server)] == ["user", "assistant", "user"]


def test_reset_history_with_set_turns(api: Any) -> None:
    server = api([Reply.text("Hello."), Reply.text("I don't know your name.")])
    chat = ctl.ChatAnthropic()
    chat.chat("My name is Chatlas.")
    chat.set_turns([])
    chat.chat("What's my name?")
    assert len(last_messages(server)) == 1


def test_fork_history_with_deepcopy(api: Any) -> None:
    server = api([Reply.text("Hi."), Reply.text("Chatlas."), Reply.text("I don't know.")])
    chat = ctl.ChatAnthropic()
    chat_fork = copy.deepcopy(chat)
    chat_fork.chat("My name is Chatlas.")
    chat_fork.chat("What's my name?")
    chat.chat("What's my name?")
    assert len(last_messages(server)) == 1  # the original never heard the name
    assert len(chat_fork.get_turns()) == 4


def test_condense_history_to_the_last_turn(api: Any) -> None:
    server = api([Reply.text("Hi."), Reply.text("You told me your name."), Reply.text("Ok.")])
    chat = ctl.ChatAnthropic()
    chat.chat("My name is Chatlas.")
    chat.chat("Can you summarize our conversation so far?")
    chat.set_turns([chat.get_last_turn()])  # pyright: ignore[reportArgumentType]
    chat.chat("Thanks")
    sent = last_messages(server)
    assert [(m["role"], texts(m)) for m in sent] == [
        ("assistant", ["You told me your name."]),
        ("user", ["Thanks"]),
    ]


def test_export_the_history_to_html(
    api: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api([Reply.text("Hello **Chatlas**.")])
    monkeypatch.chdir(tmp_path)
    chat = ctl.ChatAnthropic()
    chat.chat("My name is Chatlas.")
    chat.export("chat.html")
    html = (tmp_path / "chat.html").read_text()
    assert "<strong>Chatlas</strong>" in html and "My name is Chatlas." in html


def test_multi_modal_input_sends_an_image_by_url(api: Any) -> None:
    server = api([Reply.text("The Python logo.")])
    chat = ctl.ChatAnthropic()
    chat.chat(
        ctl.content_image_url("https://www.python.org/static/img/python-logo.png"),
        "Can you explain this logo?",
    )
    (message,) = last_messages(server)
    assert message["content"][0] == {
        "type": "image",
        "source": {"type": "url", "url": "https://www.python.org/static/img/python-logo.png"},
    }


def test_multi_modal_input_sends_a_document_file(api: Any, tmp_path: Path) -> None:
    server = api([Reply.text("Sales rose.")])
    report = tmp_path / "quarterly-report.csv"
    report.write_text("quarter,sales\nQ1,10\nQ2,12\n")
    chat = ctl.ChatAnthropic()
    chat.chat(ctl.content_document_file(report), "Summarize the trends in this data.")
    (message,) = last_messages(server)
    assert message["content"][0]["type"] == "document"
    assert message["content"][0]["title"] == "quarterly-report.csv"


# -- get-started/stream and async -------------------------------------------------------------


def test_stream_yields_text_chunks_and_keeps_the_turns(api: Any) -> None:
    api([Reply.text("Hello Chatlas. How can I help?", chunks=4)])
    chat = ctl.ChatAnthropic(system_prompt="You are a helpful assistant.")
    chunks = list(chat.stream("My name is Chatlas."))
    assert len(chunks) > 1 and "".join(chunks) == "Hello Chatlas. How can I help?"
    assert len(chat.get_turns()) == 2


def test_stream_content_all_yields_tool_requests_and_results(api: Any) -> None:
    api(
        [Reply.tool_call("get_current_weather", {"lat": 37.7, "lng": -122.4}), Reply.text("Sunny.")]
    )
    chat = ctl.ChatAnthropic()

    def get_current_weather(lat: float, lng: float):
        "Get the current weather for a given location."
        return "sunny"

    chat.register_tool(get_current_weather)
    kinds = [
        type(chunk) for chunk in chat.stream("How's the weather in San Francisco?", content="all")
    ]
    assert ctl.ContentToolRequest in kinds and ctl.ContentToolResult in kinds


def test_a_cancelled_stream_keeps_the_partial_answer(api: Any) -> None:
    api([Reply.text("Once upon a time there was a very long story indeed.", chunks=10)])
    chat = ctl.ChatAnthropic()
    ctrl = ctl.StreamController()
    chunks = []
    for chunk in chat.stream("Write a long story", controller=ctrl):
        chunks.append(chunk)
        if len(chunks) >= 5:
            ctrl.cancel()
    last_turn = chat.get_last_turn()
    assert last_turn is not None and last_turn.text == "".join(chunks)


def test_a_cancelled_answer_is_partial_with_no_finish_reason(api: Any) -> None:
    api([Reply.text("Once upon a time there was a very long story indeed.", chunks=10)])
    chat = ctl.ChatAnthropic()
    ctrl = ctl.StreamController()
    for i, _ in enumerate(chat.stream("Write a long story", controller=ctrl)):
        if i == 2:
            ctrl.cancel()
    last_turn = chat.get_last_turn()
    assert last_turn is not None and last_turn.is_partial
    assert (last_turn.finish_reason, last_turn.partial_reason) == (None, "cancelled")


def test_stream_async(api: Any) -> None:
    api([Reply.text("Hello Chatlas.", chunks=3)])
    chat = ctl.ChatAnthropic(system_prompt="You are a helpful assistant.")
    received: list[str] = []

    async def do_stream(prompt: str) -> None:
        stream = await chat.stream_async(prompt)
        async for chunk in stream:
            received.append(chunk)

    asyncio.run(do_stream("My name is Chatlas."))
    assert "".join(received) == "Hello Chatlas."


# -- get-started/structured-data -------------------------------------------------------------


class Person(BaseModel):
    name: str
    age: int


def test_chat_structured_returns_the_model(api: Any) -> None:
    api([Reply.text('{"name": "Susan", "age": 13}')])
    chat = ctl.ChatAnthropic()
    person = chat.chat_structured("My name is Susan and I'm 13 years old", data_model=Person)
    assert repr(person) == "Person(name='Susan', age=13)"


def test_chat_structured_takes_an_image(api: Any) -> None:
    class Image(BaseModel):
        primary_shape: str
        primary_colour: str

    server = api([Reply.text('{"primary_shape": "rectangle", "primary_colour": "blue"}')])
    chat = ctl.ChatAnthropic()
    image = chat.chat_structured(
        ctl.content_image_url("https://www.r-project.org/Rlogo.png"), data_model=Image
    )
    assert str(image) == "primary_shape='rectangle' primary_colour='blue'"
    assert last_messages(server)[0]["content"][0]["type"] == "image"


def test_field_descriptions_and_docstrings_reach_the_model(api: Any) -> None:
    class Person(BaseModel):
        """A person"""

        name: str = Field(description="Name")
        age: int = Field(description="Age, in years")
        hobbies: list[str] = Field(description="List of hobbies. Should be exclusive and brief.")

    server = api([Reply.text('{"name": "Ada", "age": 36, "hobbies": ["maths"]}')])
    ctl.ChatAnthropic().chat_structured("Ada, 36, loves maths", data_model=Person)
    schema = server.message_requests()[0]["output_config"]["format"]["schema"]
    assert schema["description"] == "A person"
    assert schema["properties"]["age"]["description"] == "Age, in years"


# -- get-started/tools -----------------------------------------------------------------------


def get_current_weather(lat: float, lng: float):
    """
    Get the current weather given a latitude and longitude.

    Parameters
    ----------
    lat: The latitude of the location.
    lng: The longitude of the location.
    """
    return {"time": "2025-05-30T22:00", "temperature_2m": 23.3, "wind_speed_10m": 23.6}


WEATHER = [
    Reply.tool_call("get_current_weather", {"lat": 37.7749, "lng": -122.4194}),
    Reply.text("The current weather in San Francisco is 23.3°C."),
]


def test_a_registered_tool_is_called_and_its_result_answered(
    api: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    server = api(WEATHER)
    chat = ctl.ChatAnthropic()
    chat.register_tool(get_current_weather)
    chat.chat("How's the weather in San Francisco?")
    shown = capsys.readouterr().out
    assert "get_current_weather(lat=37.7749, lng=-122.4194)" in shown
    assert "23.3°C" in shown
    (tool,) = server.message_requests()[0]["tools"]
    assert tool["description"] == get_current_weather.__doc__  # the docstring as written
    assert "description" not in tool["input_schema"]["properties"]["lat"]
    result = last_messages(server)[-1]["content"][0]
    assert result["type"] == "tool_result" and '"temperature_2m":23.3' in result["content"]


def test_a_tool_that_raises_tells_the_model_and_the_chat_goes_on(api: Any) -> None:
    server = api(WEATHER)
    chat = ctl.ChatAnthropic()

    def get_current_weather(lat: float, lng: float):
        "Get the current weather"
        raise ValueError("Failed to get current temperature")

    chat.register_tool(get_current_weather)
    with pytest.warns(ToolFailureWarning):
        chat.chat("How's the weather in San Francisco?")
    result = last_messages(server)[-1]["content"][0]
    assert result["is_error"] is True
    assert result["content"] == "Tool call failed with error: 'Failed to get current temperature'"


def test_a_tool_that_raises_warns_tool_failure_warning_in_chatlas_words(api: Any) -> None:
    api(WEATHER)
    chat = ctl.ChatAnthropic()

    def get_current_weather(lat: float, lng: float):
        "Get the current weather"
        raise ValueError("Failed to get current temperature")

    chat.register_tool(get_current_weather)
    with pytest.warns(ToolFailureWarning) as warned:
        chat.chat("How's the weather in San Francisco?", echo="none")
    assert [str(w.message) for w in warned] == [
        "Calling tool 'get_current_weather' led to an error: Failed to get current temperature"
    ]
    assert issubclass(ToolFailureWarning, RuntimeWarning)


def test_a_tool_can_return_an_image(api: Any) -> None:
    server = api([Reply.tool_call("get_cat_image", {}), Reply.text("A cat.")])
    chat = ctl.ChatAnthropic()

    def get_cat_image():
        """Get a random cat image from an API."""
        return ctl.content_image_url("https://cdn2.thecatapi.com/images/DFHMMPNcD.jpg")

    chat.register_tool(get_cat_image)
    chat.chat("Get a cat image and describe what you see")
    result = last_messages(server)[-1]["content"][0]
    assert result["content"] == [
        {
            "type": "image",
            "source": {"type": "url", "url": "https://cdn2.thecatapi.com/images/DFHMMPNcD.jpg"},
        }
    ]


def test_built_in_web_search_is_declared_to_the_api(api: Any) -> None:
    server = api([Reply.text("Top stories...")])
    chat = ctl.ChatAnthropic()
    chat.register_tool(ctl.tool_web_search())
    chat.chat("What are the top news stories today?")
    assert server.message_requests()[0]["tools"] == [
        {"name": "web_search", "type": "web_search_20250305"}
    ]


class AddParams(BaseModel):
    """Add two numbers together."""

    a: int = Field(description="The first number to add.")

    b: int = Field(description="The second number to add.")


def test_register_tool_with_a_pydantic_model(api: Any) -> None:
    server = api([Reply.tool_call("AddParams", {"a": 2, "b": 2}), Reply.text("4")])

    def add(a: int, b: int) -> int:
        return a + b

    chat = ctl.ChatAnthropic()
    chat.register_tool(add, model=AddParams)
    chat.chat("What is 2 + 2?")
    (tool,) = server.message_requests()[0]["tools"]
    assert (tool["name"], tool["description"]) == ("AddParams", "Add two numbers together.")
    assert last_messages(server)[-1]["content"][0]["content"] == "4"


def test_register_tool_with_a_numpy_docstring(api: Any) -> None:
    server = api([Reply.tool_call("add", {"a": 2, "b": 2}), Reply.text("4")])

    def add(a: int, b: int) -> int:
        """
        Add two numbers together.

        Parameters
        ----------
        a : int
            The first number to add.
        b : int
            The second number to add.
        """
        return a + b

    chat = ctl.ChatAnthropic()
    chat.register_tool(add)
    chat.chat("What is 2 + 2?")
    (tool,) = server.message_requests()[0]["tools"]
    # chatlas sends the docstring as written, parameter section and indentation included.
    assert tool["description"] == add.__doc__
    assert "The second number to add." in tool["description"]
    assert "description" not in tool["input_schema"]["properties"]["b"]


# -- tool-calling/approval -------------------------------------------------------------------


def test_a_request_callback_can_reject_a_call(api: Any) -> None:
    server = api([Reply.tool_call("list_files", {}), Reply.text("I cannot see your files.")])
    chat = ctl.ChatAnthropic()
    ran: list[str] = []

    def list_files():
        "List files in the user's current directory"
        ran.append("list_files")
        return ["a.txt"]

    chat.register_tool(list_files)

    def on_request(req: ctl.ContentToolRequest):
        "Request callback to approve or deny tool calls"
        raise ctl.ToolRejectError(f"The user has chosen to disallow the tool call '{req.name}'.")

    chat.on_tool_request(on_request)
    with pytest.warns(ToolFailureWarning, match="led to an error: Tool call rejected. "):
        chat.chat("What files are available in my current directory?")
    assert ran == []
    result = last_messages(server)[-1]["content"][0]
    assert result["is_error"] is True
    assert result["content"] == (
        "Tool call failed with error: 'Tool call rejected. "
        "The user has chosen to disallow the tool call 'list_files'.'"
    )


def test_a_tool_can_reject_its_own_call(api: Any) -> None:
    server = api([Reply.tool_call("list_files", {}), Reply.text("I cannot see your files.")])
    chat = ctl.ChatAnthropic()

    def list_files():
        "List files in the user's current directory"
        raise ctl.ToolRejectError("The user has chosen to disallow the tool call.")

    chat.register_tool(list_files)
    with pytest.warns(ToolFailureWarning):
        chat.chat("What files are available in my current directory?")
    result = last_messages(server)[-1]["content"][0]
    assert "The user has chosen to disallow the tool call." in str(result["content"])


# -- tool-calling/displays -------------------------------------------------------------------


class WeatherToolResult(ContentToolResult):
    def tagify(self) -> Any:
        if self.error:
            return super().tagify()
        from htmltools import HTML

        return HTML(f"<h6>Current weather</h6>Temperature: {self.value['temperature_2m']}°C")


def weather_with_display(lat: float, lng: float):
    """Get the current temperature given a latitude and longitude."""
    return WeatherToolResult(value={"temperature_2m": 23.3})


def test_a_custom_display_result_is_kept_and_answered(api: Any) -> None:
    server = api(
        [Reply.tool_call("weather_with_display", {"lat": 1, "lng": 2}), Reply.text("23.3")]
    )
    chat = ctl.ChatAnthropic()
    chat.register_tool(weather_with_display)
    chat.chat("Weather?")
    (result,) = chat.get_turns()[2].tool_results
    assert isinstance(result, WeatherToolResult)
    assert "Current weather" in str(result.tagify())
    assert last_messages(server)[-1]["content"][0].get("is_error") is not True


def test_a_result_passed_to_the_model_as_is(api: Any) -> None:
    server = api([Reply.tool_call("get_picture", {}), Reply.text("Four dice.")])
    picture = [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
        }
    ]

    def get_picture():
        "Returns an image"
        return ctl.ContentToolResult(value=picture, model_format="as_is")

    chat = ctl.ChatAnthropic()
    chat.register_tool(get_picture)
    res = chat.chat(
        "You have a tool called 'get_picture' available to you. "
        "When called, it returns an image. Tell me what you see in the image.",
        echo="text",
    )
    assert str(res) == "Four dice."
    assert last_messages(server)[-1]["content"][0]["content"] == picture


def test_progressive_results_from_a_generator_tool(api: Any) -> None:
    server = api([Reply.tool_call("summarize_files", {"paths": ["a", "b"]}), Reply.text("Done.")])

    def summarize_files(paths: list[str]):
        """Summarize each file, reporting progress along the way."""
        for path in paths:
            yield f"Read {path}"

    chat = ctl.ChatAnthropic()
    chat.register_tool(summarize_files)
    chat.chat("Summarize a and b")
    assert last_messages(server)[-1]["content"][0]["content"] == "Read a\nRead b"


def test_each_yield_is_a_tool_result_for_stream_and_callbacks_and_nothing_more(api: Any) -> None:
    api([Reply.tool_call("summarize_files", {"paths": ["a", "b"]}), Reply.text("Done.")])

    def summarize_files(paths: list[str]):
        """Summarize each file, reporting progress along the way."""
        for path in paths:
            yield f"Read {path}"

    chat = ctl.ChatAnthropic()
    chat.register_tool(summarize_files)
    seen: list[Any] = []
    chat.on_tool_result(lambda result: seen.append(result.value))
    streamed = [
        x.value
        for x in chat.stream("Summarize a and b", content="all")
        if isinstance(x, ctl.ContentToolResult)
    ]
    assert streamed == seen == ["Read a", "Read b"]
    (kept,) = chat.get_turns()[2].tool_results
    assert kept.value == "Read a\nRead b"


# -- the Chat API reference ------------------------------------------------------------------


def test_get_turns_with_tool_results_on_the_assistant_side(api: Any) -> None:
    api(WEATHER)
    chat = ctl.ChatAnthropic()
    chat.register_tool(get_current_weather)
    chat.chat("How's the weather in San Francisco?")
    turns = chat.get_turns(tool_result_role="assistant")
    assert [t.role for t in turns] == ["user", "assistant"]
    assert isinstance(turns[-1], Turn)


def test_the_system_prompt_property(api: Any) -> None:
    server = api([Reply.text("Bonjour.")])
    chat = ctl.ChatAnthropic()
    chat.system_prompt = "Answer in French."
    chat.chat("Hello")
    assert server.message_requests()[0]["system"][0]["text"] == "Answer in French."
    assert chat.get_turns(include_system_prompt=True)[0].role == "system"


def test_other_providers_say_what_to_use_instead() -> None:
    with pytest.raises(ImportError, match="ChatAnthropic"):
        ctl.ChatGoogle()  # pyright: ignore[reportAttributeAccessIssue]


# -- get-started/chat: save history, print, tokens and cost ------------------------------------

# Two answers with known usage. The figures each test expects (the printed chat, the
# ``get_tokens()`` dicts, the costs) are what chatlas 0.23.0 gives for this same script.
NAMED = [
    Reply.text("Hello Chatlas.").with_usage(input_tokens=20, output_tokens=5),
    Reply.text("Your name is Chatlas.").with_usage(
        input_tokens=40, output_tokens=7, cache_read_input_tokens=10
    ),
]


def named_chat() -> Any:
    chat = ctl.ChatAnthropic(model="claude-haiku-4-5", system_prompt="Be terse.")
    chat.chat("My name is Chatlas.", echo="none")
    chat.chat("What's my name?", echo="none")
    return chat


def test_history_saved_with_model_dump_json_restores_with_turn_model_validate_json(
    api: Any,
) -> None:
    api([*NAMED, Reply.text("Still Chatlas.")])
    chat = named_chat()
    turns = chat.get_turns()
    turns_json = [x.model_dump_json() for x in turns]
    turns_restored = [Turn.model_validate_json(x) for x in turns_json]
    assert [(t.role, t.text, t.tokens) for t in turns_restored] == [
        (t.role, t.text, t.tokens) for t in turns
    ]


def test_a_restored_history_is_what_the_next_chat_sends(api: Any) -> None:
    server = api([*NAMED, Reply.text("Still Chatlas.")])
    turns_json = [x.model_dump_json() for x in named_chat().get_turns()]
    chat = ctl.ChatAnthropic(model="claude-haiku-4-5", system_prompt="Be terse.")
    chat.set_turns([Turn.model_validate_json(x) for x in turns_json])
    chat.chat("And now?", echo="none")
    assert [(m["role"], texts(m)) for m in last_messages(server)] == [
        ("user", ["My name is Chatlas."]),
        ("assistant", ["Hello Chatlas."]),
        ("user", ["What's my name?"]),
        ("assistant", ["Your name is Chatlas."]),
        ("user", ["And now?"]),
    ]


def test_print_chat_shows_the_conversation_with_tokens_and_cost(
    api: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    api(NAMED)
    print(named_chat())
    # Character for character what chatlas prints.
    assert capsys.readouterr().out == (
        "<Chat Anthropic/claude-haiku-4-5 turns=5 input=60+10 output=12 cost=$0.0001>\n\n"
        "## System\n\nBe terse.\n\n"
        "## User\n\nMy name is Chatlas.\n\n"
        "## Assistant [input=20 output=5 cost=$0.0000]\n\nHello Chatlas.\n\n"
        "## User\n\nWhat's my name?\n\n"
        "## Assistant [input=40+10 output=7 cost=$0.0001]\n\nYour name is Chatlas.\n\n"
    )


def test_get_tokens_gives_chatlas_dicts_per_turn(api: Any) -> None:
    api(NAMED)
    assert named_chat().get_tokens() == [
        {"role": "user", "tokens": 20, "tokens_cached": 0, "tokens_total": 20},
        {"role": "assistant", "tokens": 5, "tokens_cached": 0, "tokens_total": 5},
        {"role": "user", "tokens": 15, "tokens_cached": 10, "tokens_total": 40},
        {"role": "assistant", "tokens": 7, "tokens_cached": 0, "tokens_total": 7},
    ]


def test_turn_tokens_are_input_output_cached(api: Any) -> None:
    api(NAMED)
    answers = [t for t in named_chat().get_turns() if t.role == "assistant"]
    assert [t.tokens for t in answers] == [(20, 5, 0), (40, 7, 10)]


def test_get_cost_prices_the_chat_from_the_table(api: Any) -> None:
    api(NAMED)
    chat = named_chat()
    # claude-haiku-4-5: $1 input, $5 output, $0.10 cached, per million tokens
    assert chat.get_cost() == pytest.approx(0.000121)
    assert chat.get_cost(include="last") == pytest.approx(0.000076)


def test_get_cost_with_your_own_token_price(api: Any) -> None:
    api(NAMED)
    # (60 input x $3 + 12 output x $15 + 10 cached x $0.3) per million tokens
    assert named_chat().get_cost(token_price=(3.0, 15.0, 0.3)) == pytest.approx(0.000363)


# -- tool-calling: annotations seen by a request callback ---------------------------------------


def test_a_request_callback_reads_the_tool_annotations(api: Any) -> None:
    api([Reply.tool_call("list_files", {}), Reply.text("a.txt")])
    chat = ctl.ChatAnthropic()

    def list_files():
        "List files in the user's current directory"
        return ["a.txt"]

    chat.register_tool(list_files, annotations={"title": "List files", "readOnlyHint": True})
    seen: list[tuple[str, Any]] = []
    chat.on_tool_request(lambda request: seen.append((request.tool.name, request.tool.annotations)))
    chat.chat("What files are there?", echo="none")
    assert seen == [("list_files", {"title": "List files", "readOnlyHint": True})]


def test_a_request_callback_rejects_a_tool_that_is_not_read_only(api: Any) -> None:
    server = api([Reply.tool_call("delete_file", {"path": "a.txt"}), Reply.text("Not allowed.")])
    chat = ctl.ChatAnthropic()
    deleted: list[str] = []

    def delete_file(path: str):
        "Delete a file"
        deleted.append(path)

    chat.register_tool(delete_file, annotations={"destructiveHint": True})

    def on_request(request: ctl.ContentToolRequest):
        annotations = request.tool.annotations if request.tool else None
        if not (annotations or {}).get("readOnlyHint"):
            raise ctl.ToolRejectError(f"'{request.name}' changes files: not allowed.")

    chat.on_tool_request(on_request)
    with pytest.warns(ToolFailureWarning):
        chat.chat("Delete a.txt", echo="none")
    assert deleted == []
    result = last_messages(server)[-1]["content"][0]
    assert result["is_error"] is True and "changes files: not allowed." in str(result["content"])


# -- built-in tools: a long server-tool turn -----------------------------------------------------


def test_a_turn_paused_by_a_server_tool_is_handed_back(api: Any) -> None:
    search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"}
    found = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
    server = api(
        [
            Reply.blocks_of(
                {**search, "input": {"query": "ggplot2 1.0.0"}}, found, stop_reason="pause_turn"
            )
        ]
    )
    chat = ctl.ChatAnthropic()
    chat.register_tool(ctl.tool_web_search())
    chat.chat("When was ggplot2 1.0.0 released to CRAN?", echo="none")
    assert chat.get_last_turn().finish_reason == "pause_turn"  # pyright: ignore[reportOptionalMemberAccess]
    assert len(server.message_requests()) == 1


def test_a_fetch_result_has_chatlas_status_and_a_failed_one_reads_failed(api: Any) -> None:
    fetch = {"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_fetch"}
    failed = {
        "type": "web_fetch_tool_result",
        "tool_use_id": "srvtoolu_2",
        "content": {"type": "web_fetch_tool_result_error", "error_code": "url_not_allowed"},
    }
    api(
        [
            Reply.blocks_of(
                {**fetch, "input": {"url": "https://bad.example"}},
                failed,
                {"type": "text", "text": "I could not read it."},
            )
        ]
    )
    chat = ctl.ChatAnthropic()
    chat.register_tool(ctl.tool_web_fetch())
    chat.chat("Read https://bad.example", echo="none")
    result = chat.get_last_turn().contents[1]  # pyright: ignore[reportOptionalMemberAccess]
    assert isinstance(result, ctl.ContentToolResponseFetch)
    assert (result.url, result.status) == ("failed", "error")
    assert str(result) == "**web fetch result**: failed"
    assert ctl.ContentToolResponseFetch(url="https://x.com").status is None
    assert ctl.ContentToolResponseFetch(url="https://x.com", status="success").status == "success"


# -- ChatAnthropic(kwargs=): the http client ----------------------------------------------------


def test_a_legacy_httpx_client_is_refused_when_the_chat_is_made() -> None:
    # chatlas's test passes httpx.AsyncClient(); httpx is not installed here, so a class
    # from its module stands in (the SDK refuses by the module, as it would the real one).
    legacy = type("AsyncClient", (), {"__module__": "httpx._client"})
    with pytest.raises(TypeError, match="httpx2"):
        ctl.ChatAnthropic(kwargs={"http_client": legacy()})


def test_a_sync_http_client_leaves_chat_async_working(api: Any) -> None:
    import httpx2

    api([Reply.text("sync"), Reply.text("async")])
    chat = ctl.ChatAnthropic(kwargs={"http_client": httpx2.Client()})
    assert str(chat.chat("Hi", echo="none")) == "sync"
    assert str(asyncio.run(chat.chat_async("Hi", echo="none"))) == "async"


# -- tool results: data frames of other libraries ----------------------------------------------


def test_an_object_with_to_pandas_is_sent_as_that_frames_records(api: Any) -> None:
    import pandas as pd

    class LazyFrame:  # a polars/pyarrow-like object with every conversion method
        def to_pandas(self) -> Any:
            return pd.DataFrame({"x": [1, 2], "y": ["a", "b"]})

        def to_dict(self) -> dict[str, Any]:
            return {"not": "this"}

    server = api([Reply.tool_call("get_frame", {}), Reply.text("Two rows.")])
    chat = ctl.ChatAnthropic()

    def get_frame():
        "Get the data"
        return LazyFrame()

    chat.register_tool(get_frame)
    chat.chat("How many rows?", echo="none")
    sent = last_messages(server)[-1]["content"][0]["content"]
    assert sent == '[{"x":1,"y":"a"},{"x":2,"y":"b"}]'


def test_the_web_tools_carry_chatlas_annotations_and_definitions() -> None:
    search, fetch = ctl.tool_web_search(), ctl.tool_web_fetch()
    assert search.annotations == {
        "title": "Web search",
        "readOnlyHint": True,
        "openWorldHint": True,
    }
    assert fetch.annotations == {"title": "Web fetch", "readOnlyHint": True, "openWorldHint": True}
    definition = fetch.get_definition(
        "anthropic", cache_control={"type": "ephemeral"}, max_content_tokens=1000
    )
    assert definition["cache_control"] == {"type": "ephemeral"}
    assert definition["max_content_tokens"] == 1000
    with pytest.raises(ValueError, match="Web search is not supported"):
        search.get_definition("unsupported_provider")
    with pytest.raises(ValueError, match="Use one or the other"):
        ctl.tool_web_search(allowed_domains=["a.com"], blocked_domains=["b.com"])


# -- Tool.from_func and register_tool: what chatlas code matches on ---------------------------


def test_a_model_whose_fields_are_not_the_parameters_fails_in_chatlas_words() -> None:
    class WrongParams(BaseModel):
        a: int
        b: int

    def add(x: int, y: int) -> int:
        return x + y

    with pytest.raises(ValueError, match="has no corresponding"):
        ctl.Tool.from_func(add, model=WrongParams)


def test_a_model_with_another_default_fails_in_chatlas_words() -> None:
    class AddParams(BaseModel):
        """Add two numbers together."""

        a: int = Field(description="The first number to add.")
        b: int = Field(default=99, description="The second number to add.")

    def add(a: int, b: int = 1) -> int:
        return a + b

    with pytest.raises(ValueError, match="These must match"):
        ctl.Tool.from_func(add, model=AddParams)


def test_a_function_without_a_docstring_has_an_empty_description() -> None:
    def no_doc(x: int) -> int:
        return x

    assert ctl.Tool.from_func(no_doc).schema["function"].get("description") == ""


def test_a_parameter_without_a_type_hint_warns_as_chatlas_does() -> None:
    def echo(x):  # pyright: ignore[reportMissingParameterType]
        "Echo"
        return x

    with pytest.warns(UserWarning, match=r"has no type hint\. Using `Any` as a fallback\."):
        ctl.Tool.from_func(echo)  # pyright: ignore[reportUnknownArgumentType]


def test_registering_a_name_twice_fails_in_chatlas_words() -> None:
    def add(a: int, b: int) -> int:
        "Add"
        return a + b

    chat = ctl.ChatAnthropic(api_key="test")
    chat.register_tool(add)
    with pytest.raises(
        ValueError, match=r"already registered\. Set `force=True` to overwrite it\."
    ):
        chat.register_tool(add)


# -- Chat.current_display ---------------------------------------------------------------------


def test_a_tool_shows_its_own_content_through_the_current_display(
    api: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    api(
        [
            Reply.tool_call("get_current_weather", {"latitude": 46.8, "longitude": -92.1}),
            Reply.text("It is 12°C in Duluth."),
        ]
    )
    chat = ctl.ChatAnthropic()

    def get_current_weather(latitude: float, longitude: float):
        "Get the current weather given a latitude and longitude."
        if chat.current_display:
            chat.current_display.echo("My custom tool display!!!")
        return {"temperature_2m": 12}

    chat.register_tool(get_current_weather)
    chat.chat("What's the current temperature in Duluth, MN?", echo="text")
    assert "My custom tool display!!!" in capsys.readouterr().out
    assert chat.current_display is None


def test_the_current_display_is_there_during_a_call_with_echo_none(
    api: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    api([Reply.tool_call("show", {}), Reply.text("Done.")])
    chat = ctl.ChatAnthropic()
    seen: list[bool] = []

    def show():
        "Show something"
        seen.append(bool(chat.current_display))
        chat.current_display.echo("not shown")  # pyright: ignore[reportOptionalMemberAccess]

    chat.register_tool(show)
    assert chat.current_display is None
    chat.chat("Show it", echo="none")
    assert seen == [True]
    assert "not shown" not in capsys.readouterr().out


# -- Tool.from_mcp: a tool of an MCP session you hold -------------------------------------------

KITCHEN = Path(__file__).parent.parent / "mcp_servers" / "kitchen.py"


def run_with_mcp_session(tool_names: list[str], prompt: str) -> Any:
    """``chat_async(prompt)`` with ``Tool.from_mcp`` tools of a stdio session held here."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main() -> Any:
        params = StdioServerParameters(command=sys.executable, args=[str(KITCHEN)])
        async with (
            stdio_client(params, errlog=subprocess.DEVNULL) as (read, write),  # pyright: ignore[reportArgumentType]
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = {t.name: t for t in (await session.list_tools()).tools}
            chat = ctl.ChatAnthropic()
            for name in tool_names:
                chat.register_tool(ctl.Tool.from_mcp(session, listed[name]))
            await chat.chat_async(prompt, echo="none")
            return chat

    return asyncio.run(main())


def test_tool_from_mcp_calls_the_tool_through_the_session(api: Any) -> None:
    server = api([Reply.tool_call("echo", {"text": "hi"}), Reply.text("It said hi.")])
    chat = run_with_mcp_session(["echo"], "Say hi through the tool")
    (tool,) = server.message_requests()[0]["tools"]
    assert (tool["name"], tool["description"]) == ("echo", "Says the text back.")
    assert tool["input_schema"]["additionalProperties"] is False
    assert last_messages(server)[-1]["content"][0]["content"] == "hi"
    assert chat.get_turns()[2].tool_results[0].value == "hi"


def test_tool_from_mcp_turns_a_server_error_into_an_error_result(api: Any) -> None:
    server = api([Reply.tool_call("refuse", {"reason": "no way"}), Reply.text("It failed.")])
    with pytest.warns(ToolFailureWarning):
        chat = run_with_mcp_session(["refuse"], "Try it")
    (result,) = chat.get_turns()[2].tool_results
    assert isinstance(result.error, RuntimeError) and "no way" in str(result.error)
    sent = last_messages(server)[-1]["content"][0]
    assert sent["is_error"] is True
    assert sent["content"] == f"Tool call failed with error: '{result.error}'"


def test_texts_and_thinkings_add_up_as_in_chatlas() -> None:
    assert (ctl.ContentText("foo") + ctl.ContentText("bar")).text == "foobar"
    merged = ctl.ContentThinking("a", extra={"k": 1}) + ctl.ContentThinking("b", extra={"k": 2})
    assert (merged.thinking, merged.extra) == ("ab", {"k": 2})


def test_a_system_turn_in_set_turns_or_add_turn_is_a_value_error() -> None:
    chat = ctl.ChatAnthropic(api_key="test")
    with pytest.raises(ValueError, match="Turn 0 has a role 'system', which is not allowed"):
        chat.set_turns([ctl.SystemTurn("foo"), ctl.UserTurn("hello")])
    with pytest.raises(ValueError, match="Turns with the role 'system' are not allowed"):
        chat.add_turn(ctl.SystemTurn("foo"))


def test_set_turns_can_take_a_leading_system_turn_as_the_prompt() -> None:
    chat = ctl.ChatAnthropic(api_key="test", system_prompt="Be terse.")
    chat.set_turns([ctl.UserTurn("hello"), ctl.AssistantTurn("hi")])
    turns = chat.get_turns(include_system_prompt=True)
    copy_of = ctl.ChatAnthropic(api_key="test")
    copy_of.set_turns(turns, include_system_prompt=True)
    assert copy_of.system_prompt == "Be terse."
    assert copy_of.get_turns() == chat.get_turns()


def test_the_repr_of_a_turn_is_its_text() -> None:
    turn = ctl.AssistantTurn("The answer is 42.", tokens=(100, 50, 20))
    assert repr(turn) == str(turn) == "The answer is 42."


# -- MCP: what the model reads of a server's answer ----------------------------------------------

# The server of chatlas's register_mcp_tools_stdio_async reference example.
MY_MCP_SERVER = """
from mcp.server.mcpserver import MCPServer

app = MCPServer("my_server")

@app.tool(description="Add two numbers.")
def add(y: int, z: int) -> int:
    return y - z

app.run(transport="stdio")
"""


def chat_with_my_mcp_server(tmp_path: Path, prompt: str) -> Any:
    (tmp_path / "my_mcp_server.py").write_text(MY_MCP_SERVER)

    async def main() -> Any:
        chat = ctl.ChatAnthropic()
        await chat.register_mcp_tools_stdio_async(
            command=sys.executable, args=[str(tmp_path / "my_mcp_server.py")]
        )
        try:
            await chat.chat_async(prompt, echo="none")
        finally:
            await chat.cleanup_mcp_tools()
        return chat

    return asyncio.run(main())


def test_an_mcp_tool_that_returns_2_reads_as_2_and_its_structured_content_stays_in_extra(
    api: Any, tmp_path: Path
) -> None:
    server = api([Reply.tool_call("add", {"y": 5, "z": 3}), Reply.text("It is 2.")])
    chat = chat_with_my_mcp_server(tmp_path, "Add 5 and 3")
    assert last_messages(server)[-1]["content"][0]["content"] == "2"
    (result,) = chat.get_turns()[2].tool_results
    assert result.value == "2"
    assert result.extra["structured_content"] == {"result": 2}


# -- CHATLAS_LOG ----------------------------------------------------------------------------------


def test_chatlas_log_debug_shows_the_http_exchange_without_the_key(api: Any) -> None:
    api([Reply.text("Hello.")])
    key = "sk-ant-api03-DebugKeyOfThisChat0123456789"
    child = run_in_child(
        "import chatlas_like as ctl\n"
        f"chat = ctl.ChatAnthropic(model='claude-haiku-4-5', api_key={key!r})\n"
        "chat.chat('Hi', echo='none')\n",
        CHATLAS_LOG="debug",
    )
    assert child.returncode == 0, child.stderr
    log = child.stderr
    assert "POST" in log and "/v1/messages" in log and "200 OK" in log
    assert key not in log and key[-12:] not in log


def test_chatlas_log_info_has_chatlas_token_and_tool_error_lines(
    api: Any, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    caplog.set_level(logging.INFO, logger="chatlas_like")
    api(
        [
            Reply.tool_call("get_current_weather", {"lat": 37.7, "lng": -122.4}).with_usage(
                input_tokens=30, output_tokens=8
            ),
            Reply.text("No weather today.").with_usage(input_tokens=50, output_tokens=4),
        ]
    )
    chat = ctl.ChatAnthropic()

    def get_current_weather(lat: float, lng: float):
        "Get the current weather"
        raise ValueError("Failed to get current temperature")

    chat.register_tool(get_current_weather)
    with pytest.warns(ToolFailureWarning):
        chat.chat("How's the weather in San Francisco?", echo="none")
    lines = [r.getMessage() for r in caplog.records]
    assert (
        "Provider 'Anthropic' generated a response of 8 tokens from an input of 30 tokens "
        "and 0 cached input tokens." in lines
    )
    assert (
        "Error invoking tool function 'get_current_weather' with arguments: "
        "{'lat': 37.7, 'lng': -122.4}. The error message is: 'Failed to get current temperature'"
    ) in lines


# -- images ---------------------------------------------------------------------------------------


def test_an_image_file_without_resize_warns_that_it_was_resized(tmp_path: Path) -> None:
    from PIL import Image

    from chatlas_like._core.content_files import MissingResizeWarning

    Image.new("RGB", (60, 30), color="red").save(tmp_path / "test.png")
    with pytest.warns(MissingResizeWarning, match=r"The `resize` parameter is missing\."):
        assert ctl.content_image_file(str(tmp_path / "test.png")) is not None
    assert issubclass(MissingResizeWarning, RuntimeWarning)


def test_content_image_plot_without_a_figure_says_so_in_chatlas_words() -> None:
    import matplotlib.pyplot as plt

    plt.close("all")
    with pytest.raises(RuntimeError, match="No matplotlib figure to save"):
        ctl.content_image_plot()


# -- the provider ---------------------------------------------------------------------------------


def test_the_providers_name_is_anthropic() -> None:
    assert ctl.ChatAnthropic(api_key="test").provider.name == "Anthropic"


def test_a_rate_limit_is_the_sdks_rate_limit_error_with_its_status_code(api: Any) -> None:
    import anthropic

    wait = {"retry-after-ms": "5"}
    api([Reply.error(429, "rate_limit_error", "Number of requests exceeded", headers=wait)] * 4)
    chat = ctl.ChatAnthropic()
    with pytest.raises(anthropic.RateLimitError) as caught:
        chat.chat("Hi", echo="none")
    error = caught.value
    assert isinstance(error, anthropic.APIStatusError) and isinstance(error, ctl.RateLimitError)
    assert error.status_code == 429 and error.response.status_code == 429
    assert error.body["error"]["type"] == "rate_limit_error"


def test_reasoning_is_kept_in_kwargs_chat_as_chatlas_keeps_it() -> None:
    budget = ctl.ChatAnthropic(model="claude-sonnet-4-5", api_key="k", reasoning=2048)
    assert budget.kwargs_chat == {"thinking": {"type": "enabled", "budget_tokens": 2048}}
    effort = ctl.ChatAnthropic(model="claude-sonnet-4-5", api_key="k", reasoning="high")
    assert effort.kwargs_chat == {
        "thinking": {"type": "adaptive"},
        "output_config": {"effort": "high"},
    }
    assert ctl.ChatAnthropic(model="claude-sonnet-4-5", api_key="k").kwargs_chat == {}
