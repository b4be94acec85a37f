"""What the model reads of a tool: names, descriptions and schemas, as chatlas users write them."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from chatlas_like import ChatAnthropic, Tool, tool_web_fetch, tool_web_search
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat


def get_current_weather(lat: float, lng: float) -> str:
    """
    Get the current weather given a latitude and longitude.

    Parameters
    ----------
    lat: The latitude of the location.
    lng: The longitude of the location.
    """
    return f"{lat},{lng}"


def described_everywhere(city: str) -> str:
    """Gets the forecast.

    Parameters
    ----------
    city : str
        The city.

    Returns
    -------
    str
        The forecast, in Celsius.
    """
    return city


def test_the_description_is_the_docstring_as_written_as_chatlas_sends_it() -> None:
    tool = Tool.from_func(get_current_weather)
    assert tool.description == get_current_weather.__doc__
    assert all("description" not in p for p in tool.parameters["properties"].values())


def test_colon_lines_under_a_parameters_heading_describe_the_parameters() -> None:
    tool = Tool.from_func(get_current_weather, parse_docstring=True)
    assert tool.description == "Get the current weather given a latitude and longitude."
    properties = tool.parameters["properties"]
    assert properties["lat"]["description"] == "The latitude of the location."
    assert properties["lng"]["description"] == "The longitude of the location."


def test_sections_other_than_the_parameters_stay_in_the_description() -> None:
    tool = Tool.from_func(described_everywhere, parse_docstring=True)
    assert tool.description.startswith("Gets the forecast.")
    assert "The forecast, in Celsius." in tool.description
    assert "The city." not in tool.description
    assert tool.parameters["properties"]["city"]["description"] == "The city."


def test_epydoc_parameters_are_read() -> None:
    def add(a: int, b: int) -> int:
        """Adds two numbers.

        @param a: The first number.
        @param b: The second number.
        """
        return a + b

    tool = Tool.from_func(add, parse_docstring=True)
    assert tool.description == "Adds two numbers."
    assert tool.parameters["properties"]["b"]["description"] == "The second number."


def test_a_docstring_without_a_readable_parameter_section_goes_whole_to_the_model() -> None:
    def add(a: int, b: int) -> int:
        """Adds two numbers.

        Inputs: `a` is the first number and `b` the second; both are integers.
        """
        return a + b

    tool = Tool.from_func(add, parse_docstring=True)
    assert tool.description == (
        "Adds two numbers.\n\nInputs: `a` is the first number and `b` the second; "
        "both are integers."
    )
    assert "description" not in tool.parameters["properties"]["a"]


def test_no_parameter_schema_carries_an_empty_description() -> None:
    def undocumented(a: Annotated[int, Field(description="")]) -> int:
        return a

    tool = Tool.from_func(undocumented)
    assert tool.description == ""
    assert tool.parameters["properties"]["a"] == {"type": "integer"}
    assert tool.schema["function"]["description"] == ""  # as chatlas shows it


def test_an_empty_description_is_not_sent_to_the_api() -> None:
    def undocumented(a: int) -> int:
        return a

    with LoopbackServer([Reply.text("ok")]) as server:
        chat = make_chat(server)
        chat.register_tool(undocumented)
        chat.chat("hi", echo="none")
        (sent,) = server.message_requests()[0]["tools"]
    assert sent == {"name": "undocumented", "input_schema": Tool.from_func(undocumented).parameters}


def test_documentation_of_a_parameter_the_function_lacks_is_named_in_a_warning() -> None:
    def search(query: str) -> str:
        """Searches.

        Parameters
        ----------
        query
            What to look for.
        limit
            How many results (no longer a parameter).
        """
        return query

    with pytest.warns(UserWarning, match="documents 'limit', which is not a parameter"):
        tool = Tool.from_func(search, parse_docstring=True)
    assert tool.parameters["properties"]["query"]["description"] == "What to look for."


class GetWeatherParams(BaseModel):
    """Get the weather at a place."""

    lat: float = Field(description="The latitude.")
    lng: float = Field(description="The longitude.")


def weather(lat: float, lng: float) -> str:
    return f"{lat},{lng}"


def test_register_tool_with_a_model_names_the_tool_after_the_model() -> None:
    chat = ChatAnthropic(api_key="test")
    chat.register_tool(weather, model=GetWeatherParams)
    (tool,) = chat.get_tools()
    assert tool.name == "GetWeatherParams"
    assert isinstance(tool, Tool)
    assert tool.description == "Get the weather at a place."
    assert tool.parameters["properties"]["lat"]["description"] == "The latitude."


def test_a_model_whose_fields_are_not_the_parameters_is_refused() -> None:
    class Wrong(BaseModel):
        latitude: float

    with pytest.raises(ValueError, match=r"`latitude`.* has no corresponding function parameter"):
        Tool.from_func(weather, model=Wrong)


def test_a_model_with_another_default_is_refused() -> None:
    class Params(BaseModel):
        city: str
        days: int = 5

    def forecast(city: str, days: int = 3) -> str:
        return city

    with pytest.raises(ValueError, match="`days` has default `3`, but model field `days` has 5"):
        Tool.from_func(forecast, model=Params)


def test_register_tool_renames_a_tool_without_changing_the_original() -> None:
    original = Tool.from_func(get_current_weather)
    chat = ChatAnthropic(api_key="test")
    chat.register_tool(original, name="weather_now")
    (tool,) = chat.get_tools()
    assert tool.name == "weather_now"
    assert original.name == "get_current_weather"
    assert tool.parameters == original.parameters
    assert tool.validate_arguments({"lat": "1.5", "lng": 2}) == {"lat": 1.5, "lng": 2.0}


def test_register_tool_gives_a_copy_of_a_tool_its_durable_setting() -> None:
    original = Tool.from_func(get_current_weather)
    chat = ChatAnthropic(api_key="test")
    chat.register_tool(original, durable="rerun")
    (tool,) = chat.get_tools()
    assert (tool.durable, original.durable) == ("rerun", None)


def test_a_durable_setting_other_than_rerun_or_once_is_refused() -> None:
    with pytest.raises(ValueError, match="durable must be 'rerun', 'once' or None, not 'yes'"):
        Tool.from_func(get_current_weather, durable="yes")  # pyright: ignore[reportArgumentType]


def test_tool_schema_has_chatlas_shape() -> None:
    tool = Tool.from_func(get_current_weather)
    assert tool.schema == {
        "type": "function",
        "function": {
            "name": "get_current_weather",
            "description": get_current_weather.__doc__,
            "parameters": tool.parameters,
        },
    }


def test_built_in_tools_expose_their_settings_as_attributes() -> None:
    search = tool_web_search(allowed_domains=["example.org"], max_uses=2)
    assert search.allowed_domains == ["example.org"]
    assert search.blocked_domains is None
    assert search.max_uses == 2
    assert search.user_location is None
    fetch = tool_web_fetch(blocked_domains=["example.com"], max_content_tokens=500)
    assert fetch.blocked_domains == ["example.com"]
    assert fetch.max_content_tokens == 500
    assert fetch.citations is False


def test_get_definition_gives_the_anthropic_definition_as_chatlas_does() -> None:
    search = tool_web_search(user_location={"country": "US"}, max_uses=10)
    definition = search.get_definition("anthropic")
    assert definition["type"] == "web_search_20250305" and definition["max_uses"] == 10
    assert definition["user_location"] == {"type": "approximate", "country": "US"}
    cached = tool_web_fetch().get_definition("anthropic", cache_control={"type": "ephemeral"})
    assert cached["cache_control"] == {"type": "ephemeral"}


def test_get_definition_for_another_provider_says_only_anthropic_is_here() -> None:
    with pytest.raises(ValueError, match="only to Anthropic"):
        tool_web_search().get_definition("openai")


def test_a_changed_built_in_setting_is_what_is_sent() -> None:
    search = tool_web_search()
    search.max_uses = 3
    assert search.definition == {"name": "web_search", "type": "web_search_20250305", "max_uses": 3}
