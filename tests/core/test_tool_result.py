"""ContentToolResult as a value: defaults, validation, immutability, copies, the cache."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from chatlas_like import ContentToolRequest, ContentToolResult, ExpansionError

REQUEST = ContentToolRequest("toolu_1", "t", {"a": 1})


def test_defaults_read_as_declared() -> None:
    result = ContentToolResult(value={"a": 1})
    assert (result.model_format, result.error, result.extra, result.request) == (
        "auto",
        None,
        None,
        None,
    )
    assert (result.options, result.exception, result.message_expansion) == (None, None, None)
    assert (result.original_length, result.stored_length, result.is_truncated) == (
        None,
        None,
        False,
    )
    assert result.outcome == "success"


def test_an_error_makes_the_outcome_error_unless_given() -> None:
    assert ContentToolResult(error="x").outcome == "error"
    assert ContentToolResult(error="x", outcome="refused").outcome == "refused"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"outcome": "maybe"},
        {"model_format": "yaml"},
        {"error": "x", "outcome": "success"},
    ],
)
def test_invalid_fields_are_rejected(kwargs: dict[str, str]) -> None:
    with pytest.raises(ValueError, match=r"must be one of|cannot have outcome"):
        ContentToolResult(**kwargs)  # pyright: ignore[reportArgumentType]


def test_only_a_success_may_carry_an_expansion() -> None:
    from chatlas_like._core.expansion import MessageExpansion

    with pytest.raises(ExpansionError):
        ContentToolResult(error="x", message_expansion=MessageExpansion([]))


def test_a_result_is_immutable() -> None:
    result = ContentToolResult(value=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.value = 2  # pyright: ignore[reportAttributeAccessIssue]


def test_equality_and_repr_ignore_the_exception_object() -> None:
    one = ContentToolResult(error="boom", outcome="exception", exception=ValueError("boom"))
    two = ContentToolResult(error="boom", outcome="exception", exception=ValueError("boom"))
    assert one == two
    assert "exception=" not in repr(one)


def test_replace_copy_and_pickle_keep_every_field() -> None:
    result = ContentToolResult(
        value=[1], model_format="json", extra={"k": 1}, request=REQUEST, options={"o": 1}
    )
    assert dataclasses.replace(result) == result
    assert dataclasses.replace(result, value=[2]).value == [2]
    assert copy.deepcopy(result) == result
    assert pickle.loads(pickle.dumps(result)) == result


def test_the_model_value_is_computed_once_and_kept_by_with_model_value() -> None:
    result = ContentToolResult(value={"a": 1}, request=REQUEST)
    assert not result.has_model_value()
    assert result.get_model_value() == '{"a":1}'
    assert result.has_model_value()
    fixed = result.with_model_value("cut", is_truncated=True)
    assert fixed.get_model_value() == "cut" and fixed.is_truncated
    assert result.get_model_value() == '{"a":1}'


def test_a_replaced_result_formats_its_new_value() -> None:
    result = ContentToolResult(value={"a": 1})
    result.get_model_value()
    assert dataclasses.replace(result, value={"b": 2}).get_model_value() == '{"b":2}'
