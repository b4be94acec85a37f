"""A tool round replayed from its records (``chatlas_like.durable._round``): what each
recorded step hands the turn loop, whichever version of the records it reads."""

from __future__ import annotations

from typing import Any

import pytest

from chatlas_like import ContentToolRequest, ContentToolResult

pytest.importorskip("dbos")

from chatlas_like._tools.runner import Delivery, Finished, Started, ToolContext
from chatlas_like._tools.workers import WorkerPool
from chatlas_like.durable._codec import encode_result
from chatlas_like.durable._round import DurableRound

REQUEST = ContentToolRequest("toolu_1", "charge", {"card": 42})


def _result() -> dict[str, Any]:
    return encode_result(ContentToolResult(value="charged", request=REQUEST))


def replayed(records: list[dict[str, Any]]) -> list[Delivery]:
    """The deliveries of a round whose every step is already recorded."""

    def never(what: str) -> Any:
        def fail(*_: Any) -> Any:
            raise AssertionError(f"a replayed round {what}")

        return fail

    steps = iter(records)
    round_ = DurableRound(
        [REQUEST],
        ToolContext(tools={}, pool=WorkerPool(0)),
        lambda fn: next(steps),  # each step's record, never run
        recovered=True,
        where="test",
        deliver=never("delivered live"),
        record_start=never("recorded a start"),
        written_starts=never("read the stream"),
    )
    deliveries = [round_.next()]
    while not deliveries[-1].done:
        deliveries.append(round_.next())
    return deliveries


def kinds(delivery: Delivery) -> list[str]:
    return [type(event).__name__ for event in delivery.events]


def test_a_result_record_hands_the_loop_the_starts_it_names_then_the_result() -> None:
    [delivery] = replayed([{"kind": "result", "index": 0, "result": _result(), "started": [0]}])
    assert kinds(delivery) == ["Started", "Finished"]
    assert delivery.done
    started, finished = delivery.events
    assert isinstance(started, Started) and started.request is REQUEST
    assert isinstance(finished, Finished) and finished.result.value == "charged"


def test_a_start_recorded_as_a_step_of_its_own_still_replays() -> None:
    # Records of the version that gave each start a step: a start step, then the result.
    first, second = replayed(
        [{"kind": "start", "index": 0}, {"kind": "result", "index": 0, "result": _result()}]
    )
    assert kinds(first) == ["Started"] and not first.done
    assert kinds(second) == ["Finished"] and second.done
