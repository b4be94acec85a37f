"""From a tool's return value to what the model reads.

``format_value(value, model_format)`` implements the ``model_format`` contract:

* strings always pass through unchanged;
* ``"json"``: JSON text, or :class:`FormatError` saying what the value was;
* ``"str"``: ``str(value)``;
* ``"as_is"``: the value itself (e.g. a list of content blocks);
* ``"auto"``: JSON where the value has a JSON form, otherwise a text form (below).

Images and documents (:class:`~chatlas_like.ContentImageInline`,
:class:`~chatlas_like.ContentImageRemote`, :class:`~chatlas_like.ContentPDF`,
:class:`~chatlas_like.ContentDocument`) go to the model natively under ``"auto"``,
``"json"`` and ``"as_is"``: a media value becomes a one-item content list; a list or
tuple holding media becomes a content list in which strings and ``ContentText`` are
text, media stay media and every other item is formatted on its own; media nested
deeper (in a dict, say) are replaced in the JSON by ``[image 1]``, ``[document 2]``...
and appended after it.

JSON forms, encoded by orjson (never through the ``json`` module):

* dicts, lists, tuples, numbers, bools, None; ``Enum`` (its value), ``datetime``,
  ``date``, ``time`` (ISO 8601, subclasses such as ``pandas.Timestamp`` too),
  ``timedelta`` (ISO 8601 duration, ``P1DT2H3M4.5S``) and ``UUID``; sets as lists
  (sorted when their items sort); ``Decimal`` as an exact JSON number; ``Path`` as a
  string; ``complex`` as its text; other mappings as objects; other sized collections
  (``range``, ``deque``, dict views) as lists. Iterators and generators are never
  consumed. A collection or mapping of another type is read up to the item budget
  (:data:`ITEM_BUDGET`, set by the caller to the result's ``max_result_bytes``: no more
  items could be sent), so one that iterates forever ends in a marker item,
  ``"[... stopped after N items]"``, not in a process that never stops growing.
* dataclasses, pydantic models (``model_dump(mode="json")``) and attrs classes;
* numpy arrays (any dtype, any layout) and scalars, a missing date (NaT) as null;
* pandas DataFrames as records (ISO 8601 dates, NaN/NaT/NA as null, a meaningful index
  kept as leading column(s), a default ``RangeIndex`` dropped, duplicate column names
  suffixed ``.1``, ``.2``); a Series as ``{label: value}``, or a list when its index is
  the default ``RangeIndex``; polars and pyarrow frames as records, their series and
  arrays as lists; narwhals frames as records;
* objects with ``to_pandas()`` (as that DataFrame; asked first, as chatlas asks), then
  objects with ``to_json()`` (its text, when it is JSON; ``orient="records"`` when it
  takes one, as chatlas passes it) or ``to_dict()`` (its value);
* integers beyond 64 bits (exact), and dicts with non-string keys (keys become text:
  ``1`` -> ``"1"``, a date -> its ISO form, a tuple -> its JSON).

pandas, numpy, polars, pyarrow and narwhals are never imported to format a value: a
value can only be one of theirs when its library is loaded already.

Non-finite floats: a top-level NaN or infinity is the text ``NaN``, ``Infinity`` or
``-Infinity``; inside a container it becomes null (JSON has no such numbers).

``"auto"`` falls back to text, at the top level or for one item inside a container,
when there is no JSON form: top-level bytes as their UTF-8 text (nested: a JSON string;
binary data: a base64 note), a container with a cycle as JSON with the back-reference
replaced by ``"[circular reference]"``, an object whose ``to_json()`` returns non-JSON
text as that text, an object whose own ``__str__`` says something as that text. An
object whose only text is the default ``<X object at 0x...>`` repr, or whose every form
raises, is a :class:`FormatError` naming its type and what failed; the Chat turns it
into an ``error`` result, so the model never reads a bare repr as a success.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import inspect
import math
import re
import sys
from collections import UserString
from collections.abc import Callable, Collection, Iterator, Mapping
from contextvars import ContextVar
from enum import Enum
from functools import lru_cache
from itertools import islice
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, cast

import orjson

if TYPE_CHECKING:
    from decimal import Decimal

from .content import (
    Content,
    ContentDocument,
    ContentImageInline,
    ContentImageRemote,
    ContentJson,
    ContentPDF,
    ContentText,
)
from .utf8 import replace_surrogates, replacement_note

__all__ = [
    "CYCLE_MARKER",
    "ITEM_BUDGET",
    "FormatError",
    "format_value",
    "is_media",
    "to_json_text",
]

CYCLE_MARKER = "[circular reference]"
# The most items read from a collection or mapping of a type not known here.
ITEM_BUDGET: ContextVar[int] = ContextVar("ITEM_BUDGET", default=1_000_000)
MEDIA_TYPES = (ContentImageInline, ContentImageRemote, ContentPDF, ContentDocument)

_dumps = orjson.dumps
_JSONEncodeError = orjson.JSONEncodeError
_Fragment = orjson.Fragment
_PLAIN_OPTS = orjson.OPT_PASSTHROUGH_DATACLASS
# numpy values always reach the default hook (see _numpy_value), never orjson's own
# numpy support, which writes a missing date (NaT) as a real one or fails.
_NUMPY_NATIVE = orjson.OPT_SERIALIZE_NUMPY
_modules = sys.modules
_MIN_INT, _MAX_INT = -(2**63), 2**64 - 1
_DEFAULT_REPR = re.compile(r"\bat 0x[0-9A-Fa-f]{4,}>")
_SEQUENCES = (list, tuple)
_STRICT, _AUTO = False, True


class FormatError(ValueError):
    """A tool's value has no form the model can be sent in ``model_format``."""


def is_media(value: object) -> bool:
    """Whether ``value`` is an image or document that the model can read natively."""
    return isinstance(value, MEDIA_TYPES)


def format_value(value: Any, model_format: str) -> Any:
    """What the model reads for ``value`` under ``model_format``."""
    kind = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is str:
        return value
    if (kind is dict or kind is list) and (model_format == "auto" or model_format == "json"):
        # The common case, straight to orjson (inlined: this runs for every tool call).
        auto = model_format == "auto"
        try:
            return _dumps(value, default=_DEFAULTS[auto], option=_PLAIN_OPTS).decode()
        except _JSONEncodeError as e:
            return _recover(value, auto, e)
    if kind in _OBJECTS and (model_format == "auto" or model_format == "json"):
        text = _object_json(value, model_format == "auto")
        if text is not None:
            return text
    if isinstance(value, str):
        return value
    if model_format == "auto":
        return _format(value, _AUTO)
    if model_format == "json":
        return _format(value, _STRICT)
    if model_format == "as_is":
        return value
    return _str_or_raise(value)


def to_json_text(value: Any) -> str:
    """JSON text for ``value`` (top-level non-finite numbers as text), or FormatError."""
    result = _format(value, _STRICT)
    if not isinstance(result, str):
        raise FormatError(f"{_type_name(value)} holds images or documents, which are not JSON")
    return result


def _format(value: Any, auto: bool) -> Any:
    kind = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is dict or kind is list:  # the common case, straight to orjson
        try:
            return _dumps(value, default=_DEFAULTS[auto], option=_PLAIN_OPTS).decode()
        except _JSONEncodeError as e:
            return _recover(value, auto, e)
    if kind is float or kind is bool or kind is int or value is None:
        if kind is float and not math.isfinite(cast(float, value)):
            return _non_finite_text(value)
        return _encode(value, auto)
    if is_media(value):
        return [value]
    if auto and isinstance(value, (bytes, bytearray, memoryview)):
        return _bytes_text(bytes(cast(bytes, value)))
    if isinstance(value, (ContentText, ContentJson)):
        return value.text if isinstance(value, ContentText) else _encode(value.value, auto)
    text = _encode_top(value) if auto else _encode(value, auto)
    if text == "null" and value is not None:
        return _non_finite_text(value) or text
    return text


def _encode(value: Any, auto: bool) -> Any:
    try:
        return _dumps(value, default=_DEFAULTS[auto], option=_PLAIN_OPTS).decode()
    except _JSONEncodeError as e:
        return _recover(value, auto, e)


def _encode_top(value: Any) -> Any:
    """``auto`` for a value that is not plain data: strict for the value itself, so that
    its text fallback is the text unquoted; ``auto`` for what it holds."""

    def hook(item: Any) -> Any:
        return _default_strict(item) if item is value else _default_auto(item)

    try:
        return _dumps(value, default=hook, option=_PLAIN_OPTS).decode()
    except _JSONEncodeError as e:
        return _recover(value, True, e)


def _object_json(value: Any, auto: bool) -> str | None:
    """JSON of an object of a type in ``_OBJECTS`` (its ``to_json()``/``to_dict()``...).

    What :func:`_format` gives when the object converts cleanly, without orjson's
    first attempt and its call back; None when it does not (the full path then runs
    again and explains).
    """
    try:
        for handler in _PLANS[type(value)]:  # _convert, for a type with a plan
            converted = handler(value)
            if converted is not _NO:
                text = _dumps(converted, default=_DEFAULTS[auto], option=_PLAIN_OPTS).decode()
                return None if text == "null" else text
    except Exception:
        return None
    return None


def _non_finite_text(value: Any) -> str | None:
    """``NaN``/``Infinity``/``-Infinity`` for a top-level non-finite number, else None."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return None


# -- when orjson refuses ------------------------------------------------------------------


class _MediaFound(Exception):
    """Raised by the default hook on the first image or document inside a value."""


def _recover(value: Any, auto: bool, error: _JSONEncodeError) -> Any:
    """Retry after orjson refused: media, big ints, non-str keys, cycles, text fallback."""
    cause = error.__cause__
    if isinstance(cause, _MediaFound):
        if isinstance(value, _SEQUENCES):
            return _media_list(cast(Any, value), auto)
        return _with_media(value, auto)
    if isinstance(cause, _NoForm):
        if cause.value is value:
            raise cause from None
        raise FormatError(f"{_type_name(value)} holds a value with no form: {cause}") from None
    message = str(error)
    if isinstance(cause, FormatError):
        failure = cause
    elif any(sign in message for sign in _NORMALISABLE):
        try:
            return _normalised_json(value, auto)
        except _NoForm as e:
            raise FormatError(f"{_type_name(value)} holds a value with no form: {e}") from None
        except FormatError as e:
            failure = e
    else:
        failure = FormatError(f"{_type_name(value)} could not be encoded as JSON: {message}")
    if auto:
        return _text_or_fail(value, str(failure))
    raise failure from None


# What orjson says of a value that _Normaliser makes encodable: too deep (a cycle), an
# int beyond 64 bits, a key that is not a string, text UTF-8 cannot encode.
_NORMALISABLE = ("Recursion limit", "64-bit", "Dict key must be", "surrogates not allowed")


def _normalised_json(value: Any, auto: bool) -> str:
    normaliser = _Normaliser(auto)
    try:
        normalised = normaliser.walk(value)
        text = _dumps(normalised, default=normaliser.default, option=_PLAIN_OPTS).decode()
        return text + replacement_note(normaliser.replaced) if normaliser.replaced else text
    except _JSONEncodeError as e:
        if isinstance(e.__cause__, FormatError):
            raise e.__cause__ from None
        if "Recursion limit" in str(e):
            raise FormatError(
                f"{_type_name(value)} is nested too deeply for JSON (over 254 levels)"
            ) from None
        raise FormatError(f"{_type_name(value)} could not be encoded as JSON: {e}") from None
    except RecursionError:
        raise FormatError(f"{_type_name(value)} is nested too deeply for JSON") from None


class _Normaliser:
    """Makes big ints, non-str keys and text with lone surrogates encodable (counting the
    characters replaced); in ``auto``, marks cycles."""

    def __init__(self, auto: bool) -> None:
        self.auto = auto
        self.active: set[int] = set()
        self.replaced = 0

    def default(self, value: Any) -> Any:
        return self.walk(_DEFAULTS[self.auto](value))

    def text(self, value: str) -> str:
        clean, count = replace_surrogates(value)
        self.replaced += count
        return clean

    def walk(self, value: Any) -> Any:
        kind: Any = cast(Any, type(value))
        if kind is str:
            return self.text(value)
        if kind is int:
            return value if _MIN_INT <= value <= _MAX_INT else _big_int(value)
        if kind is not dict and kind is not list and kind is not tuple:
            if isinstance(value, int) and not isinstance(value, (bool, Enum)):
                return self.walk(int(value))
            return value
        marker = id(value)
        if marker in self.active:
            if self.auto:
                return CYCLE_MARKER
            raise FormatError(f"{_type_name(value)} contains itself (a cycle)")
        self.active.add(marker)
        try:
            if kind is dict:
                items = cast(dict[Any, Any], value).items()
                return {self.text(_key(k)): self.walk(v) for k, v in items}
            return [self.walk(v) for v in value]
        finally:
            self.active.discard(marker)


def _big_int(value: int) -> orjson.Fragment:
    return _Fragment(_int_text(value))


def _int_text(value: int) -> str:
    try:
        return str(value)
    except ValueError:  # over 4,300 digits (CVE-2020-10735 guard); Decimal has no limit
        from decimal import Decimal

        return str(Decimal(value))


def _key(key: Any) -> str:
    if type(key) is str:
        return key
    if isinstance(key, str):
        return str.__str__(key)
    if isinstance(key, bool) or key is None:
        return "true" if key is True else "false" if key is False else "null"
    if isinstance(key, int) and not isinstance(key, Enum):
        return _int_text(int(key))
    if isinstance(key, float):
        return repr(key)
    try:
        text = _dumps(key, default=_default_strict, option=_PLAIN_OPTS).decode()
    except _JSONEncodeError:
        return str(key)
    return orjson.loads(text) if text.startswith('"') else text


# -- media --------------------------------------------------------------------------------


def _media_list(items: list[Any] | tuple[Any, ...], auto: bool) -> list[Any]:
    """A content list: text as text, media as media, anything else formatted alone."""
    out: list[Any] = []
    for item in items:
        if is_media(item) or isinstance(item, ContentText):
            out.append(item)
        elif isinstance(item, str):
            out.append(ContentText(item))
        else:
            formatted = _format(item, auto)
            if isinstance(formatted, list):
                out.extend(cast(list[Any], formatted))
            else:
                out.append(ContentText(formatted))
    return out


def _with_media(value: Any, auto: bool) -> list[Any]:
    """JSON of ``value`` with its media replaced by ``[image 1]``..., then the media."""
    collector = _MediaCollector(auto)
    try:
        text = _dumps(value, default=collector.default, option=_PLAIN_OPTS).decode()
    except _JSONEncodeError as e:
        if isinstance(e.__cause__, FormatError):
            raise e.__cause__ from None
        raise FormatError(f"{_type_name(value)} could not be encoded as JSON: {e}") from None
    return [ContentText(text), *collector.media]


class _MediaCollector:
    def __init__(self, auto: bool) -> None:
        self.auto = auto
        self.media: list[Content] = []

    def default(self, value: Any) -> Any:
        if is_media(value):
            self.media.append(value)
            kind = (
                "image"
                if isinstance(value, (ContentImageInline, ContentImageRemote))
                else "document"
            )
            return f"[{kind} {len(self.media)}]"
        return _DEFAULTS[self.auto](value)


# -- the default hook: types orjson does not encode itself ---------------------------------


def _default_strict(value: Any) -> Any:
    converted = _convert(value)
    if converted is _NO:
        raise FormatError(_no_json_form(value))
    return converted


def _default_auto(value: Any) -> Any:
    # a type known to convert cleanly (numpy values, sets...) skips the plan
    kind: Any = type(value)  # pyright: ignore[reportUnknownVariableType]
    exact = _EXACT.get(kind)
    if exact is not None:
        return exact(value)
    try:
        converted = _convert(value)
    except _NoForm:
        raise
    except FormatError as e:  # e.g. its to_dict() raised: fall back to its text
        return _text_or_fail(value, str(e))
    if converted is _NO:
        return _text_or_fail(value, None)
    return converted


class _NoConversion:
    __slots__ = ()


_NO: Any = _NoConversion()


def _convert(value: Any) -> Any:
    """A JSON-encodable stand-in for ``value``, or ``_NO``."""
    kind: Any = type(value)  # pyright: ignore[reportUnknownVariableType]
    exact = _EXACT.get(kind)
    if exact is not None:
        return exact(value)
    handlers = _PLANS.get(kind)
    if handlers is None:
        handlers = _plan(kind)
    for handler in handlers:
        converted = handler(value)
        if converted is not _NO:
            return converted
    return _NO


_PLANS: dict[type, tuple[Callable[[Any], Any], ...]] = {}
# Types of plain objects (no standard, library or model type, nothing orjson encodes
# itself) whose plan is made: format_value converts them directly (_object_json).
_OBJECTS: dict[type, bool] = {}
_MAX_PLANS = 1024


def _plan(kind: type) -> tuple[Callable[[Any], Any], ...]:
    """The handlers that may convert a value of type ``kind``, in order (cached).

    Most handlers say from the type alone whether they apply (a subclass of a standard
    type, a numpy, pandas, polars, pyarrow or narwhals type, a model class): those that
    cannot apply are left out once, instead of being asked for every value. A
    library's types exist only once it is loaded, so a plan made before the library is
    imported stays right. Handlers that look at the value itself (``to_json()``,
    ``to_dict()``...) are always asked.
    """
    plan: list[Callable[[Any], Any]] = []
    for handler in _HANDLERS:
        may_apply = _STATIC.get(handler)
        try:
            if may_apply is None or may_apply(kind):
                plan.append(handler)
        except Exception:  # an odd type (a metaclass that refuses issubclass): ask anyway
            plan.append(handler)
    if len(_PLANS) >= _MAX_PLANS:  # classes made on the fly must not grow this forever
        _PLANS.clear()
        _OBJECTS.clear()
    _PLANS[kind] = handlers = tuple(plan)
    if len(plan) == len(_HANDLERS) - len(_STATIC) and not _native(kind):
        _OBJECTS[kind] = True
    return handlers


def _native(kind: type) -> bool:
    """Whether orjson may encode values of ``kind`` itself (or ``_EXACT`` has it)."""
    try:
        return issubclass(kind, _NATIVE_BASES) or kind in _EXACT
    except Exception:
        return True


def _module_of(kind: type) -> str:
    module = getattr(kind, "__module__", None)
    return module if isinstance(module, str) else ""


def _may_be_standard(kind: type) -> bool:
    if issubclass(kind, _STANDARD_BASES):
        return True
    decimal = _modules.get("decimal")
    uuid = _modules.get("uuid")
    return (decimal is not None and issubclass(kind, decimal.Decimal)) or (
        uuid is not None and issubclass(kind, uuid.UUID)
    )


def _may_be_numpy(kind: type) -> bool:
    np = _modules.get("numpy")
    return np is not None and issubclass(kind, (np.ndarray, np.generic))


def _may_be_pandas(kind: type) -> bool:
    pd = _modules.get("pandas")
    return pd is not None and (
        _module_of(kind).startswith("pandas")
        or issubclass(kind, (pd.DataFrame, pd.Series, pd.Index))
    )


def _may_be_arrow_or_polars(kind: type) -> bool:
    return _module_of(kind).startswith(("polars", "pyarrow", "narwhals"))


def _may_be_model(kind: type) -> bool:
    return (
        hasattr(kind, "model_fields")
        or hasattr(kind, "__attrs_attrs__")
        or dataclasses.is_dataclass(kind)
    )


def _sorted_set(value: Any) -> Any:
    items = list(value)
    try:
        return sorted(items)
    except TypeError:
        return items


def _decimal(value: Decimal) -> Any:
    return _Fragment(str(value)) if value.is_finite() else None


def _bytes(value: Any) -> str:
    return _bytes_text(bytes(value))


def _bytes_text(data: bytes) -> str:
    try:
        return data.decode()
    except UnicodeDecodeError:
        from base64 import b64encode

        return f"binary data ({len(data):,} bytes), base64: {b64encode(data).decode()}"


def _complex(value: complex) -> str:
    return str(value).strip("()")


def iso_duration(value: _dt.timedelta) -> str:
    """``timedelta`` as an ISO 8601 duration, e.g. ``P1DT2H3M4.5S`` or ``-PT1S``."""
    micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    sign = "-" if micros < 0 else ""
    seconds, micros = divmod(abs(micros), 1_000_000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    second_text = f"{seconds}.{micros:06d}".rstrip("0").rstrip(".") if micros else str(seconds)
    date_part = f"{days}D" if days else ""
    time_part = "".join(f"{n}{unit}" for n, unit in ((hours, "H"), (minutes, "M")) if n) + (
        f"{second_text}S" if seconds or micros else ""
    )
    if not date_part and not time_part:
        return "PT0S"
    return f"{sign}P{date_part}{'T' + time_part if time_part else ''}"


_EXACT: dict[type, Callable[[Any], Any]] = {
    set: _sorted_set,
    frozenset: _sorted_set,
    bytes: _bytes,
    bytearray: _bytes,
    memoryview: _bytes,
    complex: _complex,
    _dt.timedelta: iso_duration,
}


def _standard(value: Any) -> Any:
    """Subclasses of standard types (``pandas.Timestamp``, ``PosixPath``...)."""
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, (_dt.date, _dt.time)):
        if value != value:  # pandas.NaT is a datetime that is not itself
            return None
        return value.isoformat()
    if isinstance(value, _dt.timedelta):
        return None if value != value else iso_duration(value)
    if isinstance(value, (set, frozenset)):
        return _sorted_set(value)
    # decimal and uuid are imported lazily: a value can only be one of theirs once loaded
    decimal = _modules.get("decimal")
    if decimal is not None and isinstance(value, decimal.Decimal):
        return _decimal(value)
    uuid = _modules.get("uuid")
    if uuid is not None and isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return _bytes_text(bytes(value))
    return _NO


def _numpy(value: Any) -> Any:
    np = sys.modules.get("numpy")
    if np is None or not isinstance(value, (np.ndarray, np.generic)):
        return _NO
    if type(value) is np.ndarray or isinstance(value, np.generic):
        # later values of this type go straight to their converter
        _EXACT[type(value)] = convert = _numpy_converter(value)
        return convert(value)
    return value.tolist()  # a subclass (a masked array): its own idea of its values


def _numpy_converter(value: Any) -> Callable[[Any], Any]:
    """The converter for every value of ``type(value)``: an integer, boolean or float64
    scalar as its Python value (the same JSON, without a second encoder call; ``int()``
    is several times cheaper than ``.item()``), else :func:`_numpy_value`. A float32
    keeps orjson's shortest text for its own width."""
    dtype = value.dtype
    if type(value) is _modules["numpy"].ndarray:
        return _numpy_value
    if dtype.kind == "b":
        return bool
    if dtype.kind in "iu":
        return int
    if dtype.kind == "f" and dtype.itemsize == 8:
        return float
    return _numpy_value


def _numpy_value(value: Any) -> Any:
    """A numpy array or scalar: numbers as orjson writes them, dates by us (orjson writes
    a missing date, NaT, as a real one or fails), the rest as Python values."""
    kind = value.dtype.kind
    if kind == "M":
        return value.astype("datetime64[us]").tolist()
    if kind == "m":  # as datetime.timedelta (ISO 8601 durations), not counts of a unit
        return value.astype("timedelta64[us]").tolist()
    if kind in "biuf":
        try:
            return _Fragment(_dumps(value, option=_NUMPY_NATIVE))
        except _JSONEncodeError:  # e.g. an array that is not C-contiguous
            pass
    return value.tolist()


def _pandas(value: Any) -> Any:
    pd = sys.modules.get("pandas")
    if pd is None:
        return _NO
    if isinstance(value, pd.DataFrame):
        return _frame_records(value)
    if isinstance(value, pd.Series):
        return _series_json(value)
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, pd.Index):
        return _column_values(value)
    if type(value).__module__.startswith("pandas"):
        tolist = getattr(value, "tolist", None)
        return tolist() if callable(tolist) else str(value)
    return _NO


def _arrow_and_polars(value: Any) -> Any:
    module = type(value).__module__
    if module.startswith("polars"):
        for method in ("to_dicts", "to_list"):
            rows = getattr(value, method, None)
            if callable(rows):
                return rows()
        return _NO
    if module.startswith("pyarrow"):
        for method in ("to_pylist", "as_py"):
            rows = getattr(value, method, None)
            if callable(rows):
                return rows()
        return _NO
    if module.startswith("narwhals"):
        to_native = getattr(value, "to_native", None)
        return to_native() if callable(to_native) else _NO
    return _NO


def _models(value: Any) -> Any:
    cls: Any = cast(Any, type(value))
    if hasattr(cls, "model_fields") and hasattr(value, "model_dump"):
        dump: Any = getattr(value, "model_dump")  # noqa: B009  # keeps pyright from narrowing
        return dump(mode="json")
    if hasattr(cls, "__attrs_attrs__"):
        return {a.name: getattr(value, a.name) for a in cls.__attrs_attrs__}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if isinstance(value, Content):
            return _content_json(value)
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return _NO


def _content_json(value: Content) -> Any:
    if is_media(value):
        raise _MediaFound
    if isinstance(value, ContentText):
        return value.text
    if isinstance(value, ContentJson):
        return value.value
    return str(value)


def _data_methods(value: Any) -> Any:
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        text = _call_to_json(value, to_json)
        if text is not None and _is_json(text):
            return _Fragment(text)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        try:
            return to_dict()
        except Exception as e:
            raise FormatError(
                f"{_type_name(value)}.to_dict() raised {type(e).__name__}: {e}"
            ) from e
    return _NO


def _call_to_json(value: Any, to_json: Callable[..., Any]) -> str | bytes | None:
    try:
        text = to_json(orient="records") if _takes_orient(to_json) else to_json()
    except Exception:
        return None
    return text if isinstance(text, (str, bytes)) else None


def _takes_orient(to_json: Callable[..., Any]) -> bool:
    """Whether ``to_json`` has pandas's ``orient`` (records suit a model best)."""
    try:
        return "orient" in inspect.signature(to_json).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False


def _is_json(text: str | bytes) -> bool:
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


def _via_pandas(value: Any) -> Any:
    """A frame of another library that converts itself (``to_pandas()``), as a pandas one."""
    to_pandas = getattr(value, "to_pandas", None)
    if not callable(to_pandas):
        return _NO
    try:
        return to_pandas()
    except Exception as e:
        raise FormatError(f"{_type_name(value)}.to_pandas() raised {type(e).__name__}: {e}") from e


def _narwhals(value: Any) -> Any:
    if not hasattr(value, "__narwhals_dataframe__") and not hasattr(value, "__dataframe__"):
        return _NO
    try:
        import narwhals
    except ImportError:
        return _NO
    try:
        frame: Any = narwhals.from_native(value, eager_only=True)
    except TypeError:
        return _NO
    return frame.rows(named=True)


def _collections(value: Any) -> Any:
    if isinstance(value, UserString):
        return str(value)
    budget = ITEM_BUDGET.get()
    if isinstance(value, Mapping):
        pairs = list(islice(cast(Mapping[Any, Any], value).items(), budget + 1))
        if len(pairs) > budget:
            pairs[budget:] = [("...", _stopped(budget))]
        return dict(pairs)
    if isinstance(value, Collection) and not isinstance(value, (str, Iterator)):
        items = list(islice(cast(Collection[Any], value), budget + 1))
        if len(items) > budget:
            items[budget:] = [_stopped(budget)]
        return items
    return _NO


def _stopped(budget: int) -> str:
    return f"[... stopped after {budget:,} items]"


_HANDLERS: tuple[Callable[[Any], Any], ...] = (
    _standard,
    _numpy,
    _pandas,
    _arrow_and_polars,
    _models,
    _via_pandas,
    _data_methods,
    _narwhals,
    _collections,
)
_DEFAULTS: tuple[Callable[[Any], Any], Callable[[Any], Any]] = (_default_strict, _default_auto)
# Whether a handler may convert values of a type, from the type alone (see _plan).
_STATIC: dict[Callable[[Any], Any], Callable[[type], bool]] = {
    _standard: _may_be_standard,
    _numpy: _may_be_numpy,
    _pandas: _may_be_pandas,
    _arrow_and_polars: _may_be_arrow_or_polars,
    _models: _may_be_model,
}
_STANDARD_BASES = (PurePath, _dt.date, _dt.time, _dt.timedelta, set, frozenset, bytes, bytearray)
_NATIVE_BASES = (str, int, float, complex, dict, list, tuple, Enum, memoryview, _Fragment)


# -- pandas frames -------------------------------------------------------------------------


def _frame_records(frame: Any) -> list[dict[str, Any]]:
    """A DataFrame's rows as dicts, built column by column (faster than ``to_json``)."""
    names: list[str] = []
    columns: list[list[Any]] = []
    index = frame.index
    if not _default_index(index):
        levels = getattr(index, "nlevels", 1)
        for level in range(levels):
            values = index if levels == 1 else index.get_level_values(level)
            name = index.names[level]
            names.append(
                _key(name) if name is not None else ("index" if levels == 1 else f"level_{level}")
            )
            columns.append(_column_values(values))
    for name, column in frame.items():
        names.append(_key(name))
        columns.append(_column_values(column))
    if not columns:
        return [{} for _ in range(len(frame))]
    return _row_builder(len(columns))(*_unique(names), columns)


@lru_cache(maxsize=64)
def _row_builder(width: int) -> Callable[..., list[dict[str, Any]]]:
    """``build(k0, ..., columns)``: the rows as dict displays, ``{k0: v0, k1: v1, ...}``.

    A dict display is built in one step, about 2.5 times faster than ``dict(zip(keys,
    row))`` per row, which was most of the cost of a frame. The generated source holds
    only generated names; the column names are passed in as arguments.
    """
    keys = ", ".join(f"k{i}" for i in range(width))
    values = "".join(f"v{i}, " for i in range(width))
    pairs = ", ".join(f"k{i}: v{i}" for i in range(width))
    source = f"def build({keys}, columns):\n    return [{{{pairs}}} for {values}in zip(*columns)]\n"
    namespace: dict[str, Any] = {}
    exec(source, namespace)  # generated from `width` alone
    return namespace["build"]


def _series_json(series: Any) -> Any:
    values = _column_values(series)
    index = series.index
    if _default_index(index):
        return values
    labels = [_key(label) for label in _column_values(index)]
    if len(set(labels)) == len(labels):
        return dict(zip(labels, values, strict=True))
    name = _key(series.name) if series.name is not None else "value"
    return [{"index": label, name: value} for label, value in zip(labels, values, strict=True)]


def _column_values(column: Any) -> list[Any]:
    """A Series' or Index's values as plain Python objects orjson encodes fast."""
    dtype = column.dtype
    kind = getattr(dtype, "kind", "O")
    if kind == "M" and getattr(dtype, "tz", None) is None:
        return column.to_numpy().astype("datetime64[us]").tolist()
    if kind == "m":
        return column.to_numpy().astype("timedelta64[us]").tolist()
    return column.tolist()


def _default_index(index: Any) -> bool:
    pd = sys.modules["pandas"]
    return (
        isinstance(index, pd.RangeIndex)
        and index.name is None
        and index.start == 0
        and index.step == 1
    )


def _unique(names: list[str]) -> list[str]:
    if len(set(names)) == len(names):
        return names
    seen: dict[str, int] = {}
    out: list[str] = []
    taken = set(names)
    for name in names:
        count = seen.get(name, 0)
        seen[name] = count + 1
        if count == 0:
            out.append(name)
            continue
        candidate = f"{name}.{count}"
        while candidate in taken:
            count += 1
            candidate = f"{name}.{count}"
        taken.add(candidate)
        out.append(candidate)
    return out


# -- text ----------------------------------------------------------------------------------


class _NoForm(FormatError):
    """``auto`` found neither a JSON form nor a readable text for ``value``."""

    def __init__(self, value: Any, message: str) -> None:
        super().__init__(message)
        self.value = value


def _text_or_fail(value: Any, reason: str | None) -> str:
    """``auto``'s text form for a value with no JSON form, or :class:`_NoForm`, explained."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _bytes_text(bytes(cast(bytes, value)))
    problems = [reason or _no_json_form(value)]
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        try:
            text = to_json()
        except Exception as e:
            problems.append(f"to_json() raised {type(e).__name__}: {e}")
        else:
            if isinstance(text, (str, bytes)) and text:
                return text if isinstance(text, str) else _bytes_text(text)
    try:
        text = str(value)
    except Exception as e:
        problems.append(f"str() raised {type(e).__name__}: {e}")
    else:
        if not _DEFAULT_REPR.search(text):
            return text
        problems.append("its only text is a default repr (`<... at 0x...>`)")
    raise _NoForm(value, "; ".join(problems))


def _no_json_form(value: object) -> str:
    name = _type_name(value)
    if isinstance(value, Iterator):
        return f"{name} is an iterator, which is never consumed: return a list"
    return f"{name} has no JSON form"


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
