"""Hostile input, model text: an enormous answer cannot make every later request too large.

A broken or hostile endpoint can stream a 34 MB answer; kept whole and sent back whole,
it would make every later request fail with a 413. What is sent back of a model's text
is cut, on a character boundary, with a notice (as tool results are); the history keeps
the answer whole.
"""

from __future__ import annotations

from collections.abc import Callable

from chatlas_like.providers._anthropic.wire import MAX_SENT_TEXT_BYTES
from chatlas_like.testing import LoopbackServer, Reply

from ..conftest import make_chat

HUGE = ("ü" + "x" * 99) * 340_000  # 34.3 MB of UTF-8: past the API's 32 MiB request limit


def test_a_huge_answer_does_not_break_the_next_request(
    serve: Callable[..., LoopbackServer],
) -> None:
    server = serve([Reply.text(HUGE, chunks=50), Reply.text("Short now.")])
    chat = make_chat(server)
    chat.chat("Say a lot", echo="none")
    assert str(chat.chat("And now?", echo="none")) == "Short now."
    assert [r.response_status for r in server.requests if r.path == "/v1/messages"] == [200, 200]


def test_what_is_sent_back_is_cut_with_a_notice_and_the_history_keeps_it_whole(
    serve: Callable[..., LoopbackServer],
) -> None:
    server = serve([Reply.text(HUGE, chunks=50), Reply.text("Short now.")])
    chat = make_chat(server)
    chat.chat("Say a lot", echo="none")
    chat.chat("And now?", echo="none")
    sent = server.message_requests()[1]["messages"][1]["content"][0]["text"]
    kept, _, notice = sent.rpartition("\n")
    assert len(sent.encode()) <= MAX_SENT_TEXT_BYTES and HUGE.startswith(kept)
    assert "34,340,000 bytes" in notice and "cut" in notice
    assert chat.get_turns()[1].text == HUGE


def test_an_ordinary_answer_is_sent_back_unchanged(serve: Callable[..., LoopbackServer]) -> None:
    long_answer = "word " * 50_000
    server = serve([Reply.text(long_answer, chunks=10), Reply.text("ok")])
    chat = make_chat(server)
    chat.chat("Go", echo="none")
    chat.chat("Again", echo="none")
    assert server.message_requests()[1]["messages"][1]["content"][0]["text"] == long_answer
