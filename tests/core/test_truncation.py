"""Truncation for the model: at the byte limit, on character boundaries, and at 50 MB."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatlas_like import ContentToolRequest, ContentToolResult, SqliteStore
from chatlas_like._core.utf8 import cut_to_bytes, utf8_length
from chatlas_like._tools.finalize import truncate
from chatlas_like.testing import Reply

from ..conftest import make_chat

CHILD = Path(__file__).parent.parent / "scripts" / "big_result_child.py"
MULTIBYTE = st.sampled_from(["a", "é", "€", "😀", "\u0301", "\n"])


@given(st.lists(MULTIBYTE, max_size=300).map("".join), st.integers(0, 1300))
def test_a_cut_is_the_longest_whole_character_prefix_within_the_limit(
    text: str, limit: int
) -> None:
    cut = cut_to_bytes(text, limit)
    assert text.startswith(cut) and utf8_length(cut) <= limit
    assert cut == text or utf8_length(text[: len(cut) + 1]) > limit


@given(st.lists(MULTIBYTE, min_size=1, max_size=400).map("".join), st.integers(150, 1200))
def test_a_truncated_value_stays_within_the_limit_and_records_its_lengths(
    text: str, limit: int
) -> None:
    size = utf8_length(text)
    result = ContentToolResult(value=text).with_model_value(text)
    cut = truncate(result, text, size, limit)
    value = cut.get_model_value()
    kept = value.rsplit("\n[truncated: ", 1)[0]
    assert text.startswith(kept)
    assert utf8_length(value) == cut.stored_length <= limit
    assert (cut.original_length, cut.is_truncated) == (size, True)


def fixed(text: str) -> Callable[[], str]:
    def answer() -> str:
        """Returns a fixed text."""
        return text

    return answer


def sent_result(serve: Callable[..., Any], text: str, **options: Any) -> tuple[str, Any]:
    """What the model received for a tool returning ``text``, and the result in history."""
    server = serve([Reply.tool_call("answer", {}), Reply.text("ok")])
    chat = make_chat(server, **options)
    chat.register_tool(fixed(text))
    chat.chat("Go", echo="none")
    block = server.message_requests()[1]["messages"][-1]["content"][0]
    result = chat.get_turns()[2].contents[0]
    return block["content"], result


def test_a_result_of_exactly_the_limit_is_sent_whole(serve: Callable[..., Any]) -> None:
    text = "€" * 333 + "a"  # 1,000 bytes
    content, result = sent_result(serve, text, max_result_bytes=1000)
    assert content == text
    assert (result.original_length, result.stored_length, result.is_truncated) == (
        1000,
        1000,
        False,
    )


def test_one_byte_over_the_limit_is_cut_with_a_notice(serve: Callable[..., Any]) -> None:
    text = "€" * 333 + "ab"  # 1,001 bytes
    content, result = sent_result(serve, text, max_result_bytes=1000)
    kept, notice = content.rsplit("\n", 1)
    assert text.startswith(kept) and len(content.encode()) <= 1000
    assert (
        notice
        == f"[truncated: showing the first {len(kept.encode()):,} of 1,001 bytes of this tool result]"
    )
    assert (result.original_length, result.stored_length, result.is_truncated) == (
        1001,
        len(content.encode()),
        True,
    )


@pytest.mark.parametrize("shift", [0, 1, 2, 3])
def test_a_four_byte_character_at_the_edge_is_never_split(
    serve: Callable[..., Any], shift: int
) -> None:
    text = "a" * shift + "😀" * 2000
    content, result = sent_result(serve, text, max_result_bytes=1000)
    kept = content.rsplit("\n", 1)[0]
    assert kept == text[: len(kept)] and kept.endswith("😀")
    assert len(content.encode()) == result.stored_length <= 1000


def test_a_tools_own_limit_overrides_the_chats(serve: Callable[..., Any]) -> None:
    server = serve([Reply.tool_call("answer", {}), Reply.text("ok")])
    chat = make_chat(server, max_result_bytes=100_000)
    chat.register_tool(fixed("é" * 5000), max_result_bytes=500)
    chat.chat("Go", echo="none")
    content = server.message_requests()[1]["messages"][-1]["content"][0]["content"]
    assert len(content.encode()) <= 500 and "of 10,000 bytes" in content


def test_an_as_is_list_is_measured_as_its_json() -> None:
    from chatlas_like._core.history import History
    from chatlas_like._tools.finalize import Finalizer

    value = [{"type": "text", "text": "é" * 400}]
    request = ContentToolRequest("toolu_1", "t", {})
    result = ContentToolResult(value=value, model_format="as_is", request=request)
    final = Finalizer(History(), {}, max_result_bytes=10_000)([result])[0]
    assert final.original_length == len(orjson.dumps(value)) and not final.is_truncated


@pytest.mark.parametrize("with_store", [False, True], ids=["plain", "sqlite-store-paging"])
def test_a_50_mb_result_sends_at_most_the_limit_and_rss_grows_at_most_twice(
    tmp_path: Path, with_store: bool
) -> None:
    command = [sys.executable, str(CHILD)]
    if with_store:
        command += ["--store", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    figures = orjson.loads(done.stdout.strip().splitlines()[-1])
    assert figures["tool_result_bytes"] <= figures["max_result_bytes"] == 100_000
    assert figures["request_bytes"] < 2 * figures["max_result_bytes"]
    assert figures["statuses"] == [200, 200, 200, 200]  # no 413, no other error
    assert figures["peak_rss_growth"] <= 2 * figures["result_bytes"]
    if with_store:
        record = SqliteStore(tmp_path / "r.db").list(None, _run_id(tmp_path))[-1]
        assert (record.stored_length, record.original_length) == (10_000_000, 50_000_000)


def _run_id(folder: Path) -> str:
    import sqlite3

    with sqlite3.connect(folder / "r.db") as conn:
        (run,) = conn.execute("SELECT DISTINCT interaction_process_id FROM tool_results").fetchone()
    conn.close()
    return str(run)


@pytest.mark.parametrize(
    "value",
    [["ab"] * 5000, [{"type": "text", "text": "x" * 50}] * 2000],
    ids=["many-strings", "many-text-blocks"],
)
def test_a_content_list_over_the_limit_is_cut_to_the_limit_as_sent(value: list[object]) -> None:
    from chatlas_like._core.history import History
    from chatlas_like._tools.finalize import Finalizer
    from chatlas_like.providers._anthropic.wire import content_block

    request = ContentToolRequest("toolu_1", "t", {})
    result = ContentToolResult(value=value, model_format="as_is", request=request)
    final = Finalizer(History(), {}, max_result_bytes=1000)([result])[0]
    block = content_block(final)
    assert block is not None
    sent = len(orjson.dumps(block["content"]))
    assert final.is_truncated and sent <= 1000
    assert final.stored_length == sent
