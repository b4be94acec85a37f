"""The fast paths of formatting give what the full path gives, the first time and later.

A result keeps its fields behind read-only properties and formats plain dicts and
lists inline; ``format_value`` remembers, per type, which conversions can apply and
converts plain objects (``to_dict()``, ``to_json()``) directly. None of that may change
what the model reads, whether a type is seen for the first time or the hundredth.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import numpy as np
import pytest

from chatlas_like import ContentToolResult
from chatlas_like._core.model_format import FormatError, format_value


class Report:
    def __init__(self, city: str) -> None:
        self.city = city

    def to_dict(self) -> dict[str, Any]:
        return {"city": self.city, "nested": Inner()}


class Inner:
    def to_dict(self) -> dict[str, Any]:
        return {"inner": True}


class TextOnly:
    def to_json(self) -> str:
        return "not json at all"


class Broken:
    def to_dict(self) -> dict[str, Any]:
        raise RuntimeError("no dict today")


class NoneDict:
    def to_dict(self) -> None:
        return None


class Opaque:
    pass


def formatted_twice(value_factory: Any, model_format: str = "auto") -> list[Any]:
    outcomes: list[Any] = []
    for _ in range(3):  # the first call makes the type's plan; later calls use it
        try:
            outcomes.append(format_value(value_factory(), model_format))
        except FormatError as e:
            outcomes.append(("FormatError", str(e)))
    return outcomes


@pytest.mark.parametrize("model_format", ["auto", "json"])
def test_an_object_with_to_dict_formats_the_same_every_time(model_format: str) -> None:
    outcomes = formatted_twice(lambda: Report("Oslo"), model_format)
    assert outcomes == ['{"city":"Oslo","nested":{"inner":true}}'] * 3


def test_an_object_whose_to_json_is_not_json_falls_back_to_that_text_every_time() -> None:
    assert formatted_twice(TextOnly) == ["not json at all"] * 3


@pytest.mark.parametrize("model_format", ["auto", "json"])
def test_a_to_dict_that_raises_is_explained_the_same_every_time(model_format: str) -> None:
    outcomes = formatted_twice(Broken, model_format)
    assert outcomes[0] == outcomes[1] == outcomes[2]
    assert isinstance(outcomes[0], tuple) and "no dict today" in outcomes[0][1]


def test_a_to_dict_that_gives_none_formats_the_same_every_time() -> None:
    outcomes = formatted_twice(NoneDict)
    assert outcomes[0] == outcomes[1] == outcomes[2]


def test_an_object_with_no_form_is_refused_the_same_every_time() -> None:
    outcomes = formatted_twice(Opaque)
    assert outcomes[0] == outcomes[1] == outcomes[2]
    assert outcomes[0][0] == "FormatError"


def test_a_result_formats_a_plain_object_as_format_value_does() -> None:
    for _ in range(3):
        result = ContentToolResult(value=Report("Lima"))
        assert result.get_model_value() == format_value(Report("Lima"), "auto")


def test_a_result_field_cannot_be_deleted() -> None:
    result = ContentToolResult(value=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        del result.value  # pyright: ignore[reportAttributeAccessIssue]


def test_a_copied_or_pickled_result_keeps_its_model_value() -> None:
    result = ContentToolResult(value={"a": 1}).with_model_value("what the model read")
    assert copy.deepcopy(result).get_model_value() == "what the model read"
    assert pickle.loads(pickle.dumps(result)).get_model_value() == "what the model read"


def test_fields_left_at_their_default_read_as_the_default() -> None:
    result = ContentToolResult(value=[1])
    assert (result.model_format, result.error, result.extra, result.is_truncated) == (
        "auto",
        None,
        None,
        False,
    )
    assert result.outcome == "success"
    assert ContentToolResult(error="boom").outcome == "error"


@pytest.mark.parametrize(
    ("scalar", "expected"),
    [
        (np.int64(-(2**63)), "-9223372036854775808"),
        (np.uint64(2**64 - 1), "18446744073709551615"),
        (np.int8(-7), "-7"),
        (np.bool_(True), "true"),
        (np.float64(0.1), "0.1"),
        (np.float64("nan"), "null"),
        (np.float32(0.1), "0.1"),
        (np.float16(2.5), "2.5"),
    ],
)
def test_a_numpy_scalar_inside_a_dict_formats_the_same_every_time(
    scalar: Any, expected: str
) -> None:
    value = {"v": scalar}
    assert [format_value(value, "auto") for _ in range(3)] == [f'{{"v":{expected}}}'] * 3
