"""From a tool's return value to what the model reads.

``format_value(value, model_format)`` implements the ``model_format`` contract:

* strings always pass through unchanged;
* ``"json"``: JSON text, or :class:`FormatError` saying what the value was;
* ``"str"``: ``str(value)``;
* ``"as_is"``: the value itself (e.g. a list of content blocks);
* ``"auto"``: JSON where the value has a JSON form, otherwise a text form; it never
  raises, except for values with no faithful form at all (see below).

JSON forms, encoded by orjson without a round trip through ``json``:

* dicts, lists, tuples, numbers, bools, None; dataclasses, ``Enum``, ``datetime``,
  ``date``, ``time`` (ISO 8601) and ``UUID`` natively; sets as lists (sorted when
  their items sort); ``Decimal`` and ``Path`` as strings;
* pydantic models (``model_dump(mode="json")``) and attrs classes;
* numpy arrays and scalars (never imported for other values);
* pandas DataFrames as records, ISO 8601 dates, NaN/NaT as null, a meaningful index
  kept as a column; a Series as ``{label: value}``; polars, pyarrow and
  narwhals-compatible frames as records;
* objects with ``to_json()`` (its text) or ``to_dict()`` (its value);
* integers beyond 64 bits and dicts with non-string keys (keys become strings).

Non-finite floats: a top-level NaN or infinity is the text ``NaN``, ``Infinity`` or
``-Infinity``; inside a container it becomes null (JSON has no such numbers).

``auto`` falls back to text when there is no JSON form: bytes as UTF-8 text (or a
base64 note for binary data), a dict with a cycle as its ``repr``, objects whose own
``__str__`` says something. An object with no data methods and only the default
``<X object at 0x...>`` repr, or one whose every form raises, becomes a
:class:`FormatError`; the Chat turns it into an error result naming the type.
"""

from __future__ import annotations

import base64
import dataclasses
import importlib
import math
from collections.abc import Callable
from decimal import Decimal
from pathlib import PurePath
from typing import Any, cast

import orjson

__all__ = ["FormatError", "format_value", "to_json_text"]

_OPTS = orjson.OPT_SERIALIZE_NUMPY
_NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


class FormatError(ValueError):
    """A tool's value has no form the model can be sent in ``model_format``."""


def format_value(value: Any, model_format: str) -> Any:
    """What the model reads for ``value`` under ``model_format``."""
    if isinstance(value, str):
        return value
    if model_format == "as_is":
        return value
    if model_format == "str":
        return _str_or_raise(value)
    if model_format == "json":
        return to_json_text(value)
    return _auto(value)


def _auto(value: Any) -> str:
    try:
        return to_json_text(value)
    except FormatError as json_error:
        return _text_fallback(value, json_error)


def _text_fallback(value: Any, json_error: FormatError) -> str:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _bytes_text(bytes(cast(bytes, value)))
    if not _has_own_str(value):
        raise json_error
    try:
        return str(value)
    except Exception as e:
        raise FormatError(
            f"{_type_name(value)} has no JSON form ({json_error}) and str() raised "
            f"{type(e).__name__}: {e}"
        ) from e


def _bytes_text(data: bytes) -> str:
    try:
        return data.decode()
    except UnicodeDecodeError:
        return f"binary data ({len(data)} bytes), base64: {base64.b64encode(data).decode()}"


def _has_own_str(value: object) -> bool:
    cls = type(value)
    return cls.__str__ is not object.__str__ or cls.__repr__ is not object.__repr__


def _str_or_raise(value: Any) -> str:
    try:
        return str(value)
    except Exception as e:
        raise FormatError(f"str() of {_type_name(value)} raised {type(e).__name__}: {e}") from e


def _type_name(value: object) -> str:
    cls = type(value)
    module = cls.__module__
    name = cls.__qualname__
    return f"`{name}`" if module == "builtins" else f"`{module}.{name}`"


# -- JSON --------------------------------------------------------------------------------


def to_json_text(value: Any) -> str:
    """JSON text for ``value``, or :class:`FormatError` saying why there is none."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else _NON_FINITE[value]
    frame = _frame_json(value)
    if frame is not None:
        return frame
    try:
        return orjson.dumps(value, default=_default, option=_OPTS).decode()
    except orjson.JSONEncodeError as e:
        return _retry_json(value, e)


def _retry_json(value: Any, error: orjson.JSONEncodeError) -> str:
    message = str(error)
    if "Recursion limit" in message:
        raise FormatError(
            f"{_type_name(value)} contains a cycle or is nested too deeply"
        ) from error
    if "64-bit" in message or "Dict key must be" in message:
        try:
            normalised = _normalise(value, set())
            return orjson.dumps(normalised, default=_default, option=_OPTS).decode()
        except (orjson.JSONEncodeError, RecursionError, _Cycle) as e:
            raise FormatError(f"{_type_name(value)} could not be encoded as JSON: {e}") from e
    cause = error.__cause__ or error
    if isinstance(cause, FormatError):
        raise cause
    raise FormatError(f"{_type_name(value)} could not be encoded as JSON: {cause}") from error


class _Cycle(Exception):
    pass


def _normalise(value: Any, seen: set[int]) -> Any:
    """Make integers beyond 64 bits and non-string dict keys encodable."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        if -(2**63) <= value < 2**64:
            return value
        return orjson.Fragment(str(int(value)).encode())
    if isinstance(value, (dict, list, tuple)):
        container = cast(Any, value)
        marker = id(container)
        if marker in seen:
            raise _Cycle("a container contains itself")
        seen.add(marker)
        try:
            if isinstance(container, dict):
                mapping = cast(dict[Any, Any], container)
                return {_key(k): _normalise(v, seen) for k, v in mapping.items()}
            items: list[Any] = list(container)
            return [_normalise(v, seen) for v in items]
        finally:
            seen.discard(marker)
    return value


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return orjson.dumps(key).decode()
    if isinstance(key, (int, float)):
        return repr(key) if isinstance(key, float) else str(key)
    try:
        text = orjson.dumps(key, default=_default, option=_OPTS).decode()
    except orjson.JSONEncodeError:
        return str(key)
    return text[1:-1] if text.startswith('"') else text


def _default(value: Any) -> Any:
    """orjson's hook for types it does not encode itself."""
    for handler in _HANDLERS:
        converted = handler(value)
        if converted is not _NO:
            return converted
    raise FormatError(f"{_type_name(value)} has no JSON form")


class _NoConversion:
    __slots__ = ()


_NO: Any = _NoConversion()


def _plain(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        items = list(value)  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
        try:
            return sorted(items)  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
        except TypeError:
            return items  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, Decimal):
        return str(value) if value.is_finite() else None
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _bytes_text(bytes(cast(bytes, value)))
    return _NO


def _model(value: object) -> Any:
    cls = type(value)
    if hasattr(cls, "model_fields") and hasattr(value, "model_dump"):
        dump: Any = getattr(value, "model_dump")  # noqa: B009  # keeps pyright from narrowing
        return dump(mode="json")
    if hasattr(cls, "__attrs_attrs__"):
        as_dict: Any = getattr(importlib.import_module("attrs"), "asdict")  # noqa: B009
        return as_dict(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return _NO


def _numpy(value: Any) -> Any:
    if type(value).__module__.split(".", 1)[0] != "numpy":
        return _NO
    tolist = getattr(value, "tolist", None)
    return tolist() if callable(tolist) else _NO


def _frame_like(value: Any) -> Any:
    text = _frame_json(value)
    return orjson.Fragment(text) if text is not None else _NO


def _data_methods(value: Any) -> Any:
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        try:
            text = to_json()
        except Exception:
            text = None
        if isinstance(text, (str, bytes)):
            try:
                orjson.loads(text)
            except orjson.JSONDecodeError:
                pass
            else:
                return orjson.Fragment(text)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        try:
            return to_dict()
        except Exception as e:
            raise FormatError(
                f"{_type_name(value)}.to_dict() raised {type(e).__name__}: {e}"
            ) from e
    return _NO


_HANDLERS: tuple[Callable[[Any], Any], ...] = (_plain, _model, _numpy, _frame_like, _data_methods)


# -- data frames -------------------------------------------------------------------------


def _frame_json(value: Any) -> str | None:
    """Records JSON for a data frame (or a Series' labelled values), else None."""
    module = type(value).__module__.split(".", 1)[0]
    if module == "pandas":
        return _pandas_json(value)
    if module == "polars":
        return _rows_json(value, "to_dicts")
    if module == "pyarrow":
        return _rows_json(value, "to_pylist")
    if hasattr(value, "__narwhals_dataframe__"):
        return _narwhals_json(value)
    return None


def _pandas_json(value: Any) -> str | None:
    import pandas as pd

    if isinstance(value, pd.DataFrame):
        frame = value
        if not _default_index(frame.index):
            frame = frame.reset_index()
        if not frame.columns.is_unique:
            raise FormatError("a DataFrame with duplicate column names has no records form")
        return frame.to_json(orient="records", date_format="iso", double_precision=15)
    if isinstance(value, pd.Series):
        series = cast("pd.Series[Any]", value)
        if not series.index.is_unique:
            return series.reset_index().to_json(
                orient="records", date_format="iso", double_precision=15
            )
        return series.to_json(orient="index", date_format="iso", double_precision=15)
    return None


def _default_index(index: Any) -> bool:
    import pandas as pd

    return (
        isinstance(index, pd.RangeIndex)
        and index.name is None
        and index.start == 0
        and index.step == 1
    )


def _rows_json(value: Any, method: str) -> str | None:
    rows: Any = getattr(value, method, None)
    if not callable(rows):
        return None
    return orjson.dumps(rows(), default=_default, option=_OPTS).decode()


def _narwhals_json(value: Any) -> str | None:
    try:
        narwhals = importlib.import_module("narwhals")
    except ImportError:
        return None
    frame: Any = narwhals.from_native(value, eager_only=True)
    rows: Any = frame.rows(named=True)
    return orjson.dumps(rows, default=_default, option=_OPTS).decode()
