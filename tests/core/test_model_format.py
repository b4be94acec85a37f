"""The ``model_format`` contract: what the model reads for every kind of value.

``MATRIX`` is the table: a value (built lazily, so a failing import names its row), what
``auto`` gives and what ``json`` gives (``ERROR`` where it must be a FormatError).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import json
import math
import subprocess
import sys
import uuid
from collections import UserString, deque
from collections.abc import Callable
from pathlib import Path, PureWindowsPath
from typing import Any

import attrs
import narwhals as nw
import numpy as np
import orjson
import pandas as pd
import polars as pl
import pyarrow as pa
import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatlas_like import ContentToolResult
from chatlas_like._core.model_format import CYCLE_MARKER, FormatError, format_value, iso_duration
from chatlas_like.testing import Reply

from ..conftest import make_chat

ERROR = object()


class Color(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Reading(pydantic.BaseModel):
    station: str
    at: dt.datetime
    value: decimal.Decimal


@dataclasses.dataclass
class Point:
    x: int
    when: dt.date
    tags: set[str]


@attrs.define
class Box:
    width: float
    color: Color


class HasToJson:
    def to_json(self) -> str:
        return '{"from": "to_json"}'


class HasToDict:
    def to_dict(self) -> dict[str, Any]:
        return {"from": "to_dict", "n": np.int64(1)}


class HasBrokenToJson:
    def to_json(self) -> str:
        raise RuntimeError("to_json broke")

    def __str__(self) -> str:
        raise RuntimeError("__str__ broke too")


class HasTextToJson:
    def to_json(self) -> str:
        return "not json at all"


class NoDataMethods:
    pass


class Described:
    def __str__(self) -> str:
        return "a described thing"


def _cycle() -> dict[str, Any]:
    value: dict[str, Any] = {"name": "loop"}
    value["self"] = value
    return value


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "n": [1, 2],
            "when": pd.to_datetime(["2024-01-02 03:04:05", None]),
            "x": [1.5, float("nan")],
            "name": ["a", None],
        }
    )


def _indexed_frame() -> pd.DataFrame:
    return pd.DataFrame({"sales": [10, 20]}, index=pd.Index(["north", "south"], name="region"))


MATRIX: list[tuple[str, Callable[[], Any], str | object, str | object]] = [
    # id, value, auto, json (None: same as auto)
    ("none", lambda: None, "null", None),
    ("bool", lambda: True, "true", None),
    ("int", lambda: 42, "42", None),
    ("float", lambda: 0.1 + 0.2, "0.30000000000000004", None),
    ("dict", lambda: {"a": [1, 2.5, None]}, '{"a":[1,2.5,null]}', None),
    ("tuple", lambda: (1, "two"), '[1,"two"]', None),
    ("set-sorted", lambda: {3, 1, 2}, "[1,2,3]", None),
    ("frozenset", lambda: frozenset({"b", "a"}), '["a","b"]', None),
    ("pydantic", lambda: Reading(station="S1", at=dt.datetime(2024, 1, 2, 3, 4), value=decimal.Decimal("1.50")), '{"station":"S1","at":"2024-01-02T03:04:00","value":"1.50"}', None),
    ("dataclass", lambda: Point(1, dt.date(2024, 1, 2), {"b", "a"}), '{"x":1,"when":"2024-01-02","tags":["a","b"]}', None),
    ("attrs", lambda: Box(2.5, Color.RED), '{"width":2.5,"color":"red"}', None),
    ("enum", lambda: Color.RED, '"red"', None),
    ("int-enum", lambda: {"level": Level.HIGH}, '{"level":3}', None),
    ("datetime-tz", lambda: dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC), '"2024-01-02T03:04:05+00:00"', None),
    ("date", lambda: dt.date(2024, 1, 2), '"2024-01-02"', None),
    ("time", lambda: dt.time(12, 30, 15), '"12:30:15"', None),
    ("timedelta", lambda: dt.timedelta(days=1, hours=2, minutes=3, seconds=4.5), '"P1DT2H3M4.5S"', None),
    ("uuid", lambda: uuid.UUID(int=1), '"00000000-0000-0000-0000-000000000001"', None),
    ("decimal-exact", lambda: {"price": decimal.Decimal("19.990")}, '{"price":19.990}', None),
    ("decimal-nan-nested", lambda: [decimal.Decimal("NaN")], "[null]", None),
    ("path", lambda: {"file": Path("data") / "x.csv"}, '{"file":"data/x.csv"}', None),
    ("windows-path", lambda: PureWindowsPath(r"C:\data\x.csv"), '"C:\\\\data\\\\x.csv"', None),
    ("complex", lambda: {"z": 1 + 2j}, '{"z":"1+2j"}', None),
    ("range", lambda: range(3), "[0,1,2]", None),
    ("deque", lambda: deque([1, 2]), "[1,2]", None),
    ("user-string", lambda: {"s": UserString("abc")}, '{"s":"abc"}', None),
    ("dict-view", lambda: {"a": 1, "b": 2}.keys(), '["a","b"]', None),
    ("numpy-int", lambda: {"count": np.int64(42)}, '{"count":42}', None),
    ("numpy-float32", lambda: np.float32(1.5), "1.5", None),
    ("numpy-bool", lambda: np.bool_(True), "true", None),
    ("numpy-array", lambda: np.arange(6).reshape(2, 3), "[[0,1,2],[3,4,5]]", None),
    ("numpy-non-contiguous", lambda: np.arange(12).reshape(3, 4)[:, ::2], "[[0,2],[4,6],[8,10]]", None),
    ("numpy-transposed", lambda: np.arange(4).reshape(2, 2).T, "[[0,2],[1,3]]", None),
    ("numpy-datetime64", lambda: np.array(["2024-01-02T03:04"], dtype="datetime64[m]"), '["2024-01-02T03:04:00"]', None),
    ("numpy-nat-days", lambda: {"when": np.array(["2024-01-01", "NaT"], dtype="datetime64[D]")}, '{"when":["2024-01-01T00:00:00",null]}', None),
    ("numpy-nat-seconds", lambda: np.array(["2024-01-01", "NaT"], dtype="datetime64[s]"), '["2024-01-01T00:00:00",null]', None),
    ("numpy-nat-ns", lambda: np.array(["NaT"], dtype="datetime64[ns]"), "[null]", None),
    ("numpy-nat-scalar", lambda: [np.datetime64("NaT")], "[null]", None),
    ("numpy-timedelta64", lambda: np.array([90, "NaT"], dtype="timedelta64[s]"), '["PT1M30S",null]', None),
    ("numpy-object", lambda: np.array([1, "a", None], dtype=object), '[1,"a",null]', None),
    ("numpy-str", lambda: np.array(["a", "b"]), '["a","b"]', None),
    ("numpy-nan-nested", lambda: np.array([1.0, np.nan, np.inf]), "[1.0,null,null]", None),
    ("pandas-frame", _frame, '[{"n":1,"when":"2024-01-02T03:04:05","x":1.5,"name":"a"},{"n":2,"when":null,"x":null,"name":null}]', None),
    ("pandas-index-kept", _indexed_frame, '[{"region":"north","sales":10},{"region":"south","sales":20}]', None),
    ("pandas-unnamed-index", lambda: pd.DataFrame({"v": [1]}, index=["k"]), '[{"index":"k","v":1}]', None),
    ("pandas-filtered-index", lambda: pd.DataFrame({"v": [1, 2, 3]})[lambda f: f.v > 1], '[{"index":1,"v":2},{"index":2,"v":3}]', None),
    ("pandas-multiindex", lambda: pd.DataFrame({"v": [1]}, index=pd.MultiIndex.from_tuples([("a", 1)], names=["k", None])), '[{"k":"a","level_1":1,"v":1}]', None),
    ("pandas-duplicate-columns", lambda: pd.DataFrame([[1, 2]], columns=["a", "a"]), '[{"a":1,"a.1":2}]', None),
    ("pandas-tz", lambda: pd.DataFrame({"t": pd.to_datetime(["2024-01-02 03:04"]).tz_localize("UTC")}), '[{"t":"2024-01-02T03:04:00+00:00"}]', None),
    ("pandas-nullable-int", lambda: pd.DataFrame({"n": pd.array([1, None], dtype="Int64")}), '[{"n":1},{"n":null}]', None),
    ("pandas-timedelta", lambda: pd.DataFrame({"d": pd.to_timedelta(["90s", None])}), '[{"d":"PT1M30S"},{"d":null}]', None),
    ("pandas-categorical", lambda: pd.DataFrame({"c": pd.Categorical(["x", None])}), '[{"c":"x"},{"c":null}]', None),
    ("pandas-series-labels", lambda: pd.Series([1, 2], index=["a", "b"]), '{"a":1,"b":2}', None),
    ("pandas-series-dates", lambda: pd.Series([1.5], index=pd.to_datetime(["2024-01-02"])), '{"2024-01-02T00:00:00":1.5}', None),
    ("pandas-series-range", lambda: pd.Series([1, 2]), "[1,2]", None),
    ("pandas-series-repeated", lambda: pd.Series([1, 2], index=["a", "a"], name="v"), '[{"index":"a","v":1},{"index":"a","v":2}]', None),
    ("pandas-timestamp", lambda: {"at": pd.Timestamp("2024-01-02 03:04")}, '{"at":"2024-01-02T03:04:00"}', None),
    ("pandas-nat-na", lambda: [pd.NaT, pd.NA], "[null,null]", None),
    ("polars-frame", lambda: pl.DataFrame({"n": [1, None], "d": [dt.date(2024, 1, 2), None]}), '[{"n":1,"d":"2024-01-02"},{"n":null,"d":null}]', None),
    ("polars-series", lambda: pl.Series("s", [1, 2]), "[1,2]", None),
    ("pyarrow-table", lambda: pa.table({"n": [1, 2], "s": ["a", None]}), '[{"n":1,"s":"a"},{"n":2,"s":null}]', None),
    ("pyarrow-array", lambda: pa.array([1, None]), "[1,null]", None),
    ("narwhals-frame", lambda: nw.from_native(pl.DataFrame({"n": [1, 2]})), '[{"n":1},{"n":2}]', None),
    ("narwhals-series", lambda: nw.from_native(pl.Series("s", [1]), series_only=True), "[1]", None),
    ("to_json", HasToJson, '{"from": "to_json"}', None),
    ("to_dict", HasToDict, '{"from":"to_dict","n":1}', None),
    ("to_json-not-json", HasTextToJson, "not json at all", ERROR),
    ("to_json-and-str-raise", HasBrokenToJson, ERROR, ERROR),
    ("no-data-methods", NoDataMethods, ERROR, ERROR),
    ("no-data-methods-nested", lambda: {"x": NoDataMethods()}, ERROR, ERROR),
    ("own-str", Described, "a described thing", ERROR),
    ("own-str-nested", lambda: {"x": Described()}, '{"x":"a described thing"}', ERROR),
    ("generator", lambda: (i for i in range(3)), ERROR, ERROR),
    ("cycle", _cycle, f'{{"name":"loop","self":"{CYCLE_MARKER}"}}', ERROR),
    ("cycle-in-list", lambda: [_cycle()], f'[{{"name":"loop","self":"{CYCLE_MARKER}"}}]', ERROR),
    ("bytes-text", lambda: b"caf\xc3\xa9", "café", '"café"'),
    ("bytes-binary", lambda: b"\xff\x00", "binary data (2 bytes), base64: /wA=", '"binary data (2 bytes), base64: /wA="'),
    ("bytes-nested", lambda: {"raw": b"ok"}, '{"raw":"ok"}', None),
    ("nan-top", lambda: float("nan"), "NaN", None),
    ("inf-top", lambda: math.inf, "Infinity", None),
    ("minus-inf-top", lambda: -math.inf, "-Infinity", None),
    ("numpy-nan-top", lambda: np.float32("nan"), "NaN", None),
    ("decimal-inf-top", lambda: decimal.Decimal("-Infinity"), "-Infinity", None),
    ("nan-nested", lambda: {"x": [math.nan, math.inf, -math.inf]}, '{"x":[null,null,null]}', None),
    ("int-beyond-64-bits", lambda: 2**70, "1180591620717411303424", None),
    ("negative-int-beyond-64-bits", lambda: {"n": [-(2**64)]}, '{"n":[-18446744073709551616]}', None),
    ("int-over-4300-digits", lambda: 10**5000, "1" + "0" * 5000, None),
    ("int-keys", lambda: {1: "a", 2: "b"}, '{"1":"a","2":"b"}', None),
    ("mixed-keys", lambda: {None: 1, True: 2, 1.5: 3, (1, 2): 4, dt.date(2024, 1, 2): 5}, '{"null":1,"true":2,"1.5":3,"[1,2]":4,"2024-01-02":5}', None),
    ("big-int-key-and-value", lambda: {2**70: 2**70}, '{"1180591620717411303424":1180591620717411303424}', None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("value", "auto"), [(m[1], m[2]) for m in MATRIX], ids=[m[0] for m in MATRIX]
)
def test_auto_gives_the_documented_form(value: Callable[[], Any], auto: Any) -> None:
    if auto is ERROR:
        with pytest.raises(FormatError):
            format_value(value(), "auto")
    else:
        assert format_value(value(), "auto") == auto


@pytest.mark.parametrize(
    ("value", "expected"),
    [(m[1], m[3] if m[3] is not None else m[2]) for m in MATRIX],
    ids=[m[0] for m in MATRIX],
)
def test_json_gives_json_or_a_format_error(value: Callable[[], Any], expected: Any) -> None:
    if expected is ERROR:
        with pytest.raises(FormatError):
            format_value(value(), "json")
    else:
        text = format_value(value(), "json")
        assert text == expected
        if text not in ("NaN", "Infinity", "-Infinity"):
            json.loads(text, parse_int=str)  # valid JSON; top-level NaN etc. are text by contract


def test_strings_pass_through_every_format() -> None:
    for model_format in ("auto", "json", "str", "as_is"):
        assert format_value('{"not": "re-encoded"}', model_format) == '{"not": "re-encoded"}'


def test_str_format_uses_str() -> None:
    assert format_value({"a": 1}, "str") == "{'a': 1}"


def test_as_is_passes_the_value_through() -> None:
    value = [{"type": "text", "text": "hi"}]
    assert format_value(value, "as_is") is value


def test_a_failure_says_what_the_value_was_and_what_failed() -> None:
    with pytest.raises(FormatError) as caught:
        format_value(HasBrokenToJson(), "auto")
    message = str(caught.value)
    assert "HasBrokenToJson` has no JSON form" in message
    assert "to_json() raised RuntimeError: to_json broke" in message
    assert "str() raised RuntimeError: __str__ broke too" in message


def test_a_default_repr_is_never_a_success() -> None:
    with pytest.raises(FormatError, match="default repr"):
        format_value(NoDataMethods(), "auto")


def test_iso_durations_cover_signs_and_zero() -> None:
    assert iso_duration(dt.timedelta(0)) == "PT0S"
    assert iso_duration(dt.timedelta(seconds=-1)) == "-PT1S"
    assert iso_duration(dt.timedelta(days=2)) == "P2D"
    assert iso_duration(dt.timedelta(microseconds=1500)) == "PT0.0015S"


def test_a_dataframe_keeps_full_float_precision_and_microseconds() -> None:
    frame = pd.DataFrame(
        {"x": [0.1 + 0.2, 1e-20], "t": pd.to_datetime(["2024-01-02 03:04:05.123456"] * 2)}
    )
    rows = json.loads(format_value(frame, "auto"))
    assert rows[0]["x"] == 0.1 + 0.2 and rows[1]["x"] == 1e-20
    assert rows[0]["t"] == "2024-01-02T03:04:05.123456"


def test_a_deeply_nested_value_falls_back_to_text_in_auto_and_fails_in_json() -> None:
    value: list[Any] = []
    for _ in range(300):
        value = [value]
    assert format_value(value, "auto") == repr(value)
    with pytest.raises(FormatError, match="nested too deeply"):
        format_value(value, "json")


# -- a property -------------------------------------------------------------------------------

JSON_DATA = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=30,
)


@given(JSON_DATA)
def test_auto_gives_json_that_parses_back_to_an_equal_value(value: Any) -> None:
    text = format_value(value, "auto")
    if isinstance(value, str):
        # The contract: a top-level string passes through unchanged, never JSON-quoted.
        assert text is value
        return
    assert json.loads(text) == value  # json.loads: ints of any size come back exact


# -- no foreign imports -------------------------------------------------------------------------


def _modules_loaded_after(code: str) -> set[str]:
    script = (
        "import sys\n"
        "import chatlas_like\n"
        "from chatlas_like._core.model_format import format_value\n"
        f"{code}\n"
        "print(','.join(sorted(m.split('.')[0] for m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True
    ).stdout
    return set(out.strip().split(","))


def test_formatting_plain_values_imports_no_data_library() -> None:
    loaded = _modules_loaded_after(
        "import dataclasses, datetime, decimal\n"
        "@dataclasses.dataclass\n"
        "class P:\n"
        "    x: int\n"
        "for fmt in ('auto', 'json'):\n"
        "    format_value({'a': [1, 2.5, None, {1, 2}, decimal.Decimal('1.5'), P(1),"
        " datetime.date(2024, 1, 2), float('nan'), 2**70, b'x']}, fmt)\n"
        "    format_value(float('nan'), fmt)\n"
        "    format_value(2**70, fmt)\n"
        "    format_value(object, 'auto') if False else None\n"
        "class Odd:\n"
        "    def __str__(self): return 'odd'\n"
        "format_value(Odd(), 'auto')"
    )
    assert not loaded & {"pandas", "numpy", "polars", "pyarrow", "narwhals", "pydantic"}


def test_formatting_a_polars_frame_imports_neither_pandas_nor_numpy() -> None:
    loaded = _modules_loaded_after(
        "import polars as pl\nformat_value(pl.DataFrame({'a': [1, 2]}), 'auto')"
    )
    assert "polars" in loaded
    assert not loaded & {"pandas", "numpy"}


# -- through a real chat --------------------------------------------------------------------------


def unserialisable() -> ContentToolResult:
    """Returns something JSON cannot hold."""
    return ContentToolResult(value={"handle": NoDataMethods()}, model_format="json")


def test_json_on_an_unserialisable_value_is_an_error_result_not_an_aborted_chat(
    serve: Any,
) -> None:
    server = serve([Reply.tool_call("unserialisable", {}), Reply.text("I see.")])
    chat = make_chat(server)
    chat.register_tool(unserialisable)
    assert str(chat.chat("Go", echo="none")) == "I see."
    result = chat.get_turns()[2].tool_results[0]
    assert result.outcome == "error"
    sent = server.message_requests()[1]["messages"][-1]["content"][0]
    assert sent["is_error"] is True
    assert sent["content"] == (
        "Tool call failed with error: 'The tool returned a value that cannot be sent to the "
        "model: `tests.core.test_model_format.NoDataMethods` has no JSON form. Return a str, a "
        "dict or list, a dataclass or pydantic model, or a data frame, or give the class "
        "to_dict() or __str__().'"
    )


def frame_tool() -> pd.DataFrame:
    """Returns a data frame."""
    return _indexed_frame()


def test_a_dataframe_reaches_the_model_as_records(serve: Any) -> None:
    server = serve([Reply.tool_call("frame_tool", {}), Reply.text("Ok.")])
    chat = make_chat(server)
    chat.register_tool(frame_tool)
    chat.chat("Go", echo="none")
    sent = server.message_requests()[1]["messages"][-1]["content"][0]
    assert orjson.loads(sent["content"]) == [
        {"region": "north", "sales": 10},
        {"region": "south", "sales": 20},
    ]
