"""From a function to the JSON Schema the model reads, and back to validated arguments."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from chatlas_like import Tool
from chatlas_like._tools.tool import ArgumentError
from chatlas_like.testing import Reply
from chatlas_like.types import ToolFailureWarning

from ..conftest import make_chat


def numpy_style(city: str, days: int = 3) -> str:
    """Gets the forecast.

    Parameters
    ----------
    city
        The city to forecast.
    days : int
        How many days ahead.
    """
    return city


def google_style(city: str, units: Literal["c", "f"] = "c") -> str:
    """Gets the weather.

    Args:
        city (str): The city.
        units: Celsius or Fahrenheit.
    """
    return city


def rest_style(city: str) -> str:
    """Gets the weather.

    :param city: The city.
    """
    return city


def test_a_plain_function_gives_a_closed_object_schema() -> None:
    tool = Tool.from_func(numpy_style)
    assert tool.name == "numpy_style"
    assert tool.parameters["type"] == "object"
    assert tool.parameters["additionalProperties"] is False
    assert tool.parameters["required"] == ["city"]


def test_numpy_docstring_gives_description_and_parameter_descriptions() -> None:
    tool = Tool.from_func(numpy_style, parse_docstring=True)
    assert tool.description == "Gets the forecast."
    properties = tool.parameters["properties"]
    assert properties["city"] == {"type": "string", "description": "The city to forecast."}
    assert properties["days"]["description"] == "How many days ahead."
    assert properties["days"]["default"] == 3


def test_google_docstring_gives_parameter_descriptions() -> None:
    tool = Tool.from_func(google_style, parse_docstring=True)
    properties = tool.parameters["properties"]
    assert tool.description == "Gets the weather."
    assert properties["city"]["description"] == "The city."
    assert properties["units"]["description"] == "Celsius or Fahrenheit."
    assert properties["units"]["enum"] == ["c", "f"]


def test_rest_docstring_gives_parameter_descriptions() -> None:
    tool = Tool.from_func(rest_style, parse_docstring=True)
    assert tool.description == "Gets the weather."
    assert tool.parameters["properties"]["city"]["description"] == "The city."


def test_annotated_field_description_wins_over_the_docstring() -> None:
    def f(city: Annotated[str, Field(description="From Field")]) -> str:
        """Doc.

        Parameters
        ----------
        city
            From the docstring.
        """
        return city

    with pytest.warns(UserWarning, match="Field description of 'city' is sent"):
        tool = Tool.from_func(f, parse_docstring=True)
    assert tool.parameters["properties"]["city"]["description"] == "From Field"


def test_a_leading_underscore_name_keeps_its_name_in_schema_and_validation() -> None:
    def favorite_color(_person: str) -> str:
        """Returns a person's favourite colour"""
        return _person

    tool = Tool.from_func(favorite_color)
    assert tool.parameters["properties"] == {"_person": {"type": "string"}}
    assert tool.parameters["required"] == ["_person"]
    assert tool.validate_arguments({"_person": "Joe"}) == {"_person": "Joe"}


def test_no_generated_titles_remain_but_a_property_named_title_does() -> None:
    def book(title: str) -> str:
        """Finds a book."""
        return title

    schema = Tool.from_func(book).parameters
    assert "title" not in schema
    assert schema["properties"] == {"title": {"type": "string"}}


class Point(BaseModel):
    x: float
    y: float


def test_nested_pydantic_models_are_described_and_validated() -> None:
    def distance(a: Point, b: Point) -> float:
        """Distance between two points."""
        return abs(a.x - b.x) + abs(a.y - b.y)

    tool = Tool.from_func(distance)
    assert "$defs" in tool.parameters
    args = tool.validate_arguments({"a": {"x": 0, "y": 0}, "b": {"x": "1", "y": 2}})
    assert args["b"] == {"x": 1.0, "y": 2.0}  # validated, passed as chatlas passes it: a dict


def test_arguments_are_coerced_to_the_declared_types() -> None:
    def add(x: int, y: int) -> int:
        """Adds."""
        return x + y

    assert Tool.from_func(add).validate_arguments({"x": "1", "y": "2"}) == {"x": 1, "y": 2}


def test_defaults_fill_missing_optional_arguments() -> None:
    assert Tool.from_func(numpy_style).validate_arguments({"city": "Oslo"}) == {
        "city": "Oslo",
        "days": 3,
    }


def test_an_invalid_value_names_the_argument_and_the_accepted_names() -> None:
    with pytest.raises(ArgumentError) as caught:
        Tool.from_func(numpy_style).validate_arguments({"city": "Oslo", "days": "soon"})
    message = str(caught.value)
    assert message.startswith("argument `days`: input should be a valid integer")
    assert message.endswith("; accepted: city, days")


def test_arguments_that_are_not_an_object_are_refused() -> None:
    with pytest.raises(ArgumentError, match="must be a JSON object"):
        Tool.from_func(numpy_style).validate_arguments(["Oslo"])


def test_var_keyword_parameters_accept_extra_arguments() -> None:
    def log(message: str, **fields: str) -> str:
        """Logs."""
        return message

    tool = Tool.from_func(log)
    assert tool.parameters["additionalProperties"] is True
    assert tool.validate_arguments({"message": "m", "user": "u"}) == {"message": "m", "user": "u"}


def test_var_positional_parameters_cannot_be_a_tool() -> None:
    def spread(*items: str) -> str:
        """Spreads."""
        return ""

    with pytest.raises(TypeError, match="cannot be filled by a model"):
        Tool.from_func(spread)


def test_a_pydantic_model_can_describe_the_arguments() -> None:
    class Args(BaseModel):
        """Search arguments."""

        query: str
        limit: int = 10

    def search(query: str, limit: int = 10) -> str:
        return query

    tool = Tool.from_func(search, model=Args)
    assert tool.description == "Search arguments."
    assert tool.validate_arguments({"query": "x"}) == {"query": "x", "limit": 10}


def test_a_model_describing_the_arguments_refuses_an_unexpected_one() -> None:
    class Args(BaseModel):
        a: int

    def add(a: int) -> int:
        return a

    with pytest.raises(ArgumentError, match="unexpected argument `c`; accepted: a"):
        Tool.from_func(add, model=Args).validate_arguments({"a": 1, "c": 2})


def test_nested_models_are_closed_in_the_schema_as_chatlas_closes_them() -> None:
    def distance(a: Point, b: Point) -> float:
        """Distance between two points."""
        return 0.0

    assert Tool.from_func(distance).parameters["$defs"]["Point"]["additionalProperties"] is False


def test_a_parameter_named_like_a_pydantic_attribute_is_filled() -> None:
    def configure(model_config: str, copy: int) -> str:
        """Configures."""
        return model_config

    tool = Tool.from_func(configure)
    assert set(tool.parameters["properties"]) == {"model_config", "copy"}
    assert tool.validate_arguments({"model_config": "x", "copy": 1}) == {
        "model_config": "x",
        "copy": 1,
    }


def test_an_object_with_an_async_call_is_an_async_tool() -> None:
    class Doubler:
        async def __call__(self, a: int) -> int:
            return 2 * a

    tool = Tool(Doubler(), "double", "Doubles.", {"type": "object", "properties": {}})
    assert tool.is_async


def test_a_google_note_after_the_arguments_stays_in_the_description() -> None:
    def forecast(city: str) -> str:
        """Get the forecast.

        Args:
            city: The city.

        Note:
            Never call it for Paris.
        """
        return city

    tool = Tool.from_func(forecast, parse_docstring=True)
    assert "Never call it for Paris." in tool.description
    assert "city: The city." not in tool.description


def test_a_tool_from_a_bare_schema_checks_required_and_unexpected_names() -> None:
    tool = Tool(
        lambda **kw: kw,
        "echo",
        "Echoes.",
        {
            "type": "object",
            "properties": {"a": {}},
            "required": ["a"],
            "additionalProperties": False,
        },
    )
    with pytest.raises(
        ArgumentError, match="missing required argument `a`; unexpected argument `b`"
    ):
        tool.validate_arguments({"b": 1})


def test_an_unresolvable_type_hint_is_a_clear_error_at_registration() -> None:
    class Local(BaseModel):
        x: int

    def use(value: Local) -> int:
        """Uses a class defined in a function."""
        return value.x

    with pytest.raises(TypeError, match="the type hint 'Local' cannot be resolved"):
        Tool.from_func(use)


def test_async_functions_are_marked_async() -> None:
    async def fetch(url: str) -> str:
        """Fetches."""
        return url

    assert Tool.from_func(fetch).is_async


def test_a_bad_tool_name_is_refused() -> None:
    with pytest.raises(ValueError, match="tool name"):
        Tool(lambda: None, "has space", "", {"type": "object"})


def _boom(x: int) -> str:
    """Fail."""
    raise ValueError("nope")


def test_a_tool_failure_warning_points_at_the_users_call_not_the_library(serve: Any) -> None:
    server = serve([Reply.tool_call("_boom", {"x": 1}), Reply.text("ok")] * 2)
    chat = make_chat(server)
    chat.register_tool(_boom)
    with pytest.warns(ToolFailureWarning) as sync:
        chat.chat("go", echo="none")

    async def call() -> None:
        await chat.chat_async("go", echo="none")

    with pytest.warns(ToolFailureWarning) as awaited:
        asyncio.run(call())
    assert [w.filename for w in (*sync, *awaited)] == [__file__, __file__]


class _Customer(BaseModel):
    name: str
    vip: bool = False


def _order(customer: _Customer, items: list[_Customer]) -> str:
    """Place an order."""
    return f"{customer['name']}:{len(items)}"  # pyright: ignore[reportIndexIssue]


def test_a_pydantic_model_parameter_receives_the_data_as_chatlas_passes_it() -> None:
    tool = Tool.from_func(_order)
    arguments = {"customer": {"name": "Ada"}, "items": [{"name": "Bob", "vip": True}]}
    values = tool.validate_arguments(arguments)
    assert values == {  # plain dicts, as chatlas passes them, with the defaults filled
        "customer": {"name": "Ada", "vip": False},
        "items": [{"name": "Bob", "vip": True}],
    }
    with pytest.raises(ArgumentError, match="customer"):
        tool.validate_arguments({"customer": {"vip": True}, "items": []})  # still validated


def test_model_instances_gives_a_pydantic_model_parameter_the_validated_instance() -> None:
    tool = Tool.from_func(_order, model_instances=True)
    values = tool.validate_arguments({"customer": {"name": "Ada"}, "items": []})
    assert values["customer"] == _Customer(name="Ada")
