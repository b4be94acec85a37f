"""Previews of tool results are cut between values, and say in words what was left out."""

from __future__ import annotations

import io
from typing import Any

import orjson
from rich.console import Console

from chatlas_like import ContentToolRequest, ContentToolResult
from chatlas_like._display.render import PREVIEW_CHARS, PREVIEW_LINES, preview

REQUEST = ContentToolRequest(id="toolu_1", name="lookup", arguments={})


def shown(value: Any, **kwargs: Any) -> str:
    return preview(ContentToolResult(value=value, request=REQUEST), **kwargs)


def rows(count: int) -> list[dict[str, Any]]:
    return [{"id": i, "region": f"region {i}", "sales": 100 + i} for i in range(count)]


def test_a_few_records_are_shown_whole_one_to_a_line() -> None:
    assert shown(rows(3)).splitlines() == [
        '[{"id":0,"region":"region 0","sales":100},',
        ' {"id":1,"region":"region 1","sales":101},',
        ' {"id":2,"region":"region 2","sales":102}]',
    ]


def test_records_past_the_line_limit_are_counted_in_words() -> None:
    lines = shown(rows(40), lines=5).splitlines()
    assert lines[4] == ' {"id":4,"region":"region 4","sales":104},'
    assert lines[5].startswith("… 35 more records (")
    assert len(lines) == 6


def test_records_past_the_character_limit_are_never_cut_inside_one() -> None:
    text = shown(rows(1_000))
    body, tail = text.rsplit("\n", 1)
    assert len(body) <= PREVIEW_CHARS + 200  # whole records up to the limit
    for line in body.splitlines():
        assert line.rstrip(",").lstrip(" [").endswith("}")
    assert tail.startswith("… ") and "more records" in tail


def test_brackets_and_commas_inside_strings_do_not_split_a_record() -> None:
    tricky = [{"note": 'he said "[,{"', "n": [1, {"m": 2}]}, {"note": "}, {"}]
    lines = shown(tricky).splitlines()
    assert lines == ['[{"note":"he said \\"[,{\\"","n":[1,{"m":2}]},', ' {"note":"}, {"}]']


def test_a_list_of_plain_values_reads_as_the_model_read_it() -> None:
    assert shown([1, 2, 3]) == "[1,2,3]"


def test_lines_past_the_limit_are_counted_in_words() -> None:
    text = shown("".join(f"line {i}\n" for i in range(100)), lines=PREVIEW_LINES)
    lines = text.splitlines()
    assert lines[:PREVIEW_LINES] == [f"line {i}" for i in range(PREVIEW_LINES)]
    assert lines[PREVIEW_LINES].startswith(f"… {100 - PREVIEW_LINES} more lines (")


def test_a_long_line_is_cut_at_a_space_never_inside_a_word() -> None:
    text = shown("alpha beta " * 1_000)
    body, tail = text.rsplit("\n", 1)
    assert body.endswith(("alpha ", "beta "))
    assert tail == f"… {11_000 - len(body):,} more characters"


def test_a_long_object_is_cut_after_a_comma_between_values() -> None:
    body, _ = shown({"numbers": list(range(10_000))}).rsplit("\n", 1)
    assert body.endswith(",")
    assert body.rstrip(",").rsplit(",", 1)[-1].isdigit()


def test_only_an_unbroken_token_longer_than_the_limit_is_cut_inside() -> None:
    text = shown("x" * 10_000)
    assert text == "x" * PREVIEW_CHARS + f"\n… {10_000 - PREVIEW_CHARS:,} more characters"


def test_the_terminal_card_ends_with_what_was_left_out() -> None:
    out = io.StringIO()
    result = ContentToolResult(value=rows(50), request=REQUEST)
    Console(file=out, width=200).print(result)
    lines = out.getvalue().splitlines()
    assert lines[0] == "✔ result lookup()"
    assert len(lines) == 1 + PREVIEW_LINES + 1
    assert lines[-1].startswith(f"… {50 - PREVIEW_LINES} more records (")


SALES = [
    {"region": region, "q1": 120, "q2": 135, "q3": 150, "updated": "2024-10-01T00:00:00"}
    for region in ("Northeast", "Southwest", "Midwest", "Pacific")
]


def terminal_rows(value: Any, width: int) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=width).print(ContentToolResult(value=value, request=REQUEST))
    return out.getvalue().splitlines()[1:]  # after the head


def test_records_wider_than_80_columns_wrap_between_fields_and_no_value_is_cut() -> None:
    rows_shown = terminal_rows(SALES, 80)
    assert all(len(row) <= 80 for row in rows_shown)
    assert "…" not in "".join(rows_shown)
    assert "".join(row.strip() for row in rows_shown) == orjson.dumps(SALES).decode()
    assert rows_shown[1] == '   "updated":"2024-10-01T00:00:00"},'  # a field moved whole


def test_a_field_wider_than_the_terminal_gets_rows_of_its_own_and_is_shown_whole() -> None:
    wide = [{"id": i, "note": "x" * 100, "n": i} for i in range(2)]
    rows_shown = terminal_rows(wide, 60)
    assert all(len(row) <= 60 for row in rows_shown)
    assert "".join(row.strip() for row in rows_shown) == orjson.dumps(wide).decode()
    assert rows_shown[0] == '[{"id":0,'


def test_prose_in_a_preview_wraps_between_words() -> None:
    out = io.StringIO()
    result = ContentToolResult(value="some prose " * 20, request=REQUEST)
    Console(file=out, width=60).print(result)
    lines = out.getvalue().splitlines()[1:]
    assert len(lines) > 1
    assert all(line.rstrip().endswith(("some", "prose")) for line in lines)
