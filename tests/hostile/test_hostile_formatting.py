"""Hostile input, formatting: a tool value cannot make formatting run away in size or time.

A custom collection that iterates forever once grew a process to 24 GB. Formatting
stops taking items at the result's budget (``max_result_bytes``: no more could be sent
anyway), and a tool's timeout (``tool_timeout`` or its own ``timeout``) covers the
formatting of its value too.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any

from chatlas_like import ContentToolResult
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat

RUNAWAY = 200_000  # a safety stop for the unfixed library: it would otherwise never end


class Endless(Collection[int]):
    """Says it has three items, then iterates forever (until the safety stop)."""

    def __len__(self) -> int:
        return 3

    def __contains__(self, item: object) -> bool:
        return False

    def __iter__(self) -> Iterator[int]:
        for n in itertools.count():
            if n >= RUNAWAY:
                raise RuntimeError("ran away: formatting took every item it was given")
            yield n


class EndlessMapping(Mapping[str, int]):
    def __len__(self) -> int:
        return 1

    def __getitem__(self, key: str) -> int:
        return 0

    def __iter__(self) -> Iterator[str]:
        return (str(n) for n in Endless())


class Slow(Collection[int]):
    """Each item takes a while; together, longer than the tool may take."""

    def __len__(self) -> int:
        return 1_000

    def __contains__(self, item: object) -> bool:
        return False

    def __iter__(self) -> Iterator[int]:
        for n in range(200):
            time.sleep(0.1)
            yield n


def endless() -> Any:
    """Returns a collection that never ends."""
    return Endless()


def endless_mapping() -> Any:
    """Returns a mapping that never ends."""
    return EndlessMapping()


def slow() -> Any:
    """Returns a collection that is slow to go through."""
    return Slow()


def one_result(
    serve: Callable[..., LoopbackServer], tool: Callable[..., Any], **options: Any
) -> ContentToolResult:
    server = serve([Reply.tool_call(tool.__name__, {}), Reply.text("ok")])
    chat = make_chat(server, **options)
    chat.register_tool(tool)
    chat.chat("Go", echo="none")
    (result,) = chat.get_turns()[2].tool_results
    return result


def test_an_endless_collection_is_formatted_up_to_the_budget(
    serve: Callable[..., LoopbackServer],
) -> None:
    result = one_result(serve, endless, max_result_bytes=2_000)
    assert result.outcome == "success" and result.is_truncated
    assert result.get_model_value().startswith("[0,1,2,3,")
    assert len(result.get_model_value().encode()) <= 2_000


def test_an_endless_mapping_is_formatted_up_to_the_budget(
    serve: Callable[..., LoopbackServer],
) -> None:
    result = one_result(serve, endless_mapping, max_result_bytes=2_000)
    assert result.outcome == "success" and result.is_truncated
    assert result.get_model_value().startswith('{"0":0,"1":0,')


def test_the_tool_timeout_covers_formatting(serve: Callable[..., LoopbackServer]) -> None:
    result = one_result(serve, slow, tool_timeout=0.5)
    assert result.outcome == "error"
    assert "timed out" in result.get_model_value() and "formatting" in result.get_model_value()


def test_a_value_that_formats_in_time_is_unaffected_by_the_timeout(
    serve: Callable[..., LoopbackServer],
) -> None:
    def table() -> list[dict[str, int]]:
        """Returns a small table."""
        return [{"a": 1}, {"a": 2}]

    result = one_result(serve, table, tool_timeout=30)
    assert result.outcome == "success" and result.get_model_value() == '[{"a":1},{"a":2}]'
