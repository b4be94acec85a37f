"""The third driver of the turn loop: each model request and each tool event a DBOS step.

Beside :func:`~chatlas_like._run.drive.drive` and ``drive_async``, this one performs
the loop's steps (:mod:`chatlas_like._run.loop`) inside a DBOS workflow:

* ``ModelCall``: one step. Live, it reads the response and feeds each event to the
  loop as it arrives (so text streams out while the step runs), and records them all,
  with the error that ended the response, if any. Replayed, the recorded events are
  fed instead, and the same error thrown: the loop makes the same turn either way. A
  request in flight at a crash has no record, so it is sent again (it changes nothing).
* ``Download``: one step, its documents' bytes recorded, so a replay builds the same
  request without fetching again.
* ``RunTools`` / ``NEXT_RESULT``: a :class:`~chatlas_like.durable._round.DurableRound`,
  one step per call result. A step waits for what it records, writing the start of
  each call that may not run twice (:meth:`Recorder.write_now`) and feeding a
  generator tool's progress to the loop as they come, as a model step feeds the
  response's events. A recovered round reads the starts back (:func:`written_starts`).

What the loop emits goes to the caller's sink as it comes and, when publishing, to the
turn's DBOS stream, for readers that reconnect: what came before a step is written
inside that step (one insert, where a write of the workflow's own is a step of its own,
several statements), once a reader may be waiting for it (:class:`Recorder`). What a
step writes was settled by the steps recorded before it, so a step run again after a
crash writes the same items again; each write says where its items start in the
turn's emission order (:func:`stream_entry`), and readers skip what they have read
(:func:`unread`). What was not written by the end (the final answer's text, the items
of quick steps) is no write at all: it is the stream's tail, kept in the turn's output
(:meth:`Recorder.tail`), which a reader reads once the turn has ended. Progress of a
generator tool is never recorded: the stream holds only what a replay emits again, in
the same places.
"""

from __future__ import annotations

import base64
import contextvars
import itertools
import threading
import time
from collections.abc import Callable, Generator
from typing import Any, cast

from .._core.content_files import fetch_documents
from .._core.tool_result import ContentToolResultProgress
from .._run.drive import Sender, open_response
from .._run.loop import END, Download, ModelCall, NextEvent, NextResult, RunTools
from ._codec import decode_error, decode_item, encode_error, encode_item
from ._later import Later, later
from ._round import DurableRound

__all__ = [
    "PUBLISH_AFTER",
    "STREAM_KEY",
    "Recorder",
    "drive_durable",
    "stream_entry",
    "unread",
    "written_starts",
]

STREAM_KEY = "chatlas_like.items"
PUBLISH_AFTER = 0.1  # seconds a step lasts before what came before it is written
_DONE: Any = object()


class Recorder:
    """Runs steps in the current DBOS workflow and publishes what the loop emits.

    What was emitted before a step is written to the stream from inside that step, as
    soon as the oldest of it has waited ``publish_after`` seconds: at once if it has,
    else from the timer thread if the step is still running by then (a model's slow
    response, a tool's wait for its result: a reader sees the request while the tool
    works). Otherwise nothing is written: the items go with a later write (a call's
    start, :meth:`write_now`, carries them) or the turn's output (:meth:`tail`), so a
    turn of quick steps writes nothing but its calls' starts, and a reader waits at most
    ``publish_after`` behind a slow step.
    """

    def __init__(
        self,
        sink: Callable[[Any], None] | None = None,
        *,
        publish: bool = True,
        publish_after: float = PUBLISH_AFTER,
    ) -> None:
        self.sink = sink
        self.publish = publish
        self.publish_after = publish_after
        self.replayed = True  # every step so far came from the record
        self.answer: list[str] = []
        self._unpublished: list[Any] = []
        self._published = 0  # items emitted before the unpublished ones
        self._settled = 0  # the unpublished items the running step may write
        self._since = 0.0  # when the oldest unpublished item was emitted
        self._lock = threading.Lock()  # the timer thread publishes too
        self._job: Later | None = None  # the running step's scheduled write

    def step(self, name: str, fn: Callable[[], Any]) -> Any:
        """The recorded value of the workflow's next step, or ``fn()``'s, recorded."""
        from dbos import DBOS

        settled = len(self._unpublished)  # what the steps recorded so far emitted

        def live() -> Any:
            self.replayed = False
            self._settled = settled
            if settled:
                self._job = self._publish_soon()
            try:
                return fn()
            finally:
                self._cancel()  # a step's write lands inside it, before its record
                self._settled = 0

        return DBOS.run_step({"name": name}, live)

    def _cancel(self) -> None:
        if self._job is not None:
            self._job.cancel()  # waits for a write under way
            self._job = None

    def emit(self, item: Any) -> None:
        if isinstance(item, str):
            self.answer.append(item)
        if self.sink is not None:
            self.sink(item)
        if self.publish and not isinstance(item, ContentToolResultProgress):
            with self._lock:
                if not self._unpublished:
                    self._since = time.monotonic()
                self._unpublished.append(item)

    def tail(self) -> dict[str, Any] | None:
        """The stream entry of what was emitted and not written, for the turn's output
        (None when nothing was)."""
        with self._lock:
            if not self._unpublished:
                return None
            return stream_entry(self._published, self._unpublished)

    def write_now(self, **fields: Any) -> None:
        """Write ``fields`` to the stream from inside the running step, at once, with
        what came before the step: a record the step must not go on without (a call's
        start, :func:`written_starts`). Raises when the write fails."""
        self._cancel()  # this write carries the scheduled one's items
        with self._lock:
            count = self._settled
            entry = stream_entry(self._published, self._unpublished[:count]) | fields
        _write(entry)
        self._written(count)

    def _publish_soon(self) -> Later | None:
        wait = self._since + self.publish_after - time.monotonic()
        if wait <= 0:
            self._publish()
            return None
        context = contextvars.copy_context()  # the step's: DBOS writes as this step
        return later(wait, lambda: context.run(self._publish))

    def _publish(self) -> None:
        """Write the unpublished items settled before the running step, from inside
        it: at least once (a step run again after a crash writes them again), read
        once (see :func:`unread`)."""
        with self._lock:
            count = self._settled
            entry = stream_entry(self._published, self._unpublished[:count])
        try:
            _write(entry)
        except Exception:  # they stay unpublished: a later write or the output has them
            return
        self._written(count)

    def _written(self, count: int) -> None:
        with self._lock:
            del self._unpublished[:count]
            self._published += count
            self._settled = 0
            self._since = time.monotonic()


def stream_entry(at: int, items: list[Any]) -> dict[str, Any]:
    """A write to a turn's stream: ``items``, the first of them the turn's ``at``-th."""
    return {"at": at, "items": [encode_item(item) for item in items]}


def unread(entry: Any, read: int) -> tuple[list[Any], int]:
    """The items of a stream ``entry`` not among the first ``read`` items of the turn,
    decoded, and how many have been read after it. A step run again after a crash
    writes its items again: they are skipped here."""
    if not isinstance(entry, dict):  # written before entries said where they start
        entry = {"at": read, "items": entry}
    at, items = cast(int, entry["at"]), cast(list[Any], entry["items"])
    fresh = items[max(0, read - at) :]
    return [decode_item(item) for item in fresh], max(read, at + len(items))


def written_starts(round_: int) -> set[int]:
    """The calls of the turn's ``round_``-th tool round whose start this turn's stream
    holds (read from inside a step: DBOS records no read of it), so also those an
    execution that crashed wrote before recording the step that wrote them."""
    from dbos import DBOS
    from dbos import error as dbos_errors

    starts: set[int] = set()
    workflow_id = DBOS.workflow_id
    assert workflow_id is not None, "read from inside a turn's step"
    try:
        # With no wait for more: what the stream holds now is all there is.
        for entry in DBOS.read_stream(workflow_id, STREAM_KEY, timeout_seconds=0):
            if not isinstance(entry, dict):  # written before entries said where they start
                continue
            start = cast("dict[str, list[int]]", entry).get("start")  # [round, call]
            if start is not None and start[0] == round_:
                starts.add(start[1])
    except dbos_errors.DBOSStreamTimeoutError:
        pass
    return starts


def _write(entry: dict[str, Any]) -> None:
    from dbos import DBOS, WorkflowSerializationFormat

    DBOS.write_stream(STREAM_KEY, entry, serialization_type=WorkflowSerializationFormat.PORTABLE)


class _Pump:
    """Sends into the loop and hands what it emits to the recorder, up to its next step."""

    def __init__(self, loop: Generator[Any, Any, None], recorder: Recorder) -> None:
        self._loop = loop
        self._recorder = recorder

    def send(self, reply: Any) -> Any:
        try:
            step = self._loop.send(reply)
        except StopIteration:
            return _DONE
        return self._past_items(step)

    def throw(self, error: BaseException) -> Any:
        try:
            step = self._loop.throw(error)
        except StopIteration:
            return _DONE
        return self._past_items(step)

    def _past_items(self, step: Any) -> Any:
        while type(step) not in (Download, ModelCall, RunTools, NextEvent, NextResult):
            self._recorder.emit(step)
            try:
                step = self._loop.send(None)
            except StopIteration:
                return _DONE
        return step


def drive_durable(
    loop: Generator[Any, Any, None], sender: Sender, recorder: Recorder, *, where: str
) -> None:
    """Run ``loop`` to its end inside the current DBOS workflow (see the module docstring)."""
    pump = _Pump(loop, recorder)
    round_: DurableRound | None = None
    rounds = itertools.count()
    try:
        step = pump.send(None)
        while step is not _DONE:
            if type(step) is ModelCall:
                step = _model_call(pump, sender, recorder, step.body)
            elif type(step) is Download:
                step = _download(pump, recorder, step.urls)
            elif type(step) is RunTools:
                number = next(rounds)
                round_ = DurableRound(
                    step.requests,
                    sender.tools,
                    lambda fn: recorder.step("tool", fn),
                    recovered=recorder.replayed,
                    where=where,
                    deliver=lambda delivery: _expect_next_result(pump.send(delivery)),
                    record_start=lambda index, number=number: recorder.write_now(
                        start=[number, index]
                    ),
                    written_starts=lambda number=number: written_starts(number),
                )
                step = pump.send(round_)
            elif type(step) is NextResult:
                assert round_ is not None
                try:
                    delivery = round_.next()
                except BaseException as e:
                    step = pump.throw(e)
                    continue
                step = pump.send(delivery)
            else:
                raise AssertionError(f"the loop asked for {step!r} outside a model call")
    finally:
        loop.close()


def _expect_next_result(asked: Any) -> None:
    """After a delivery that is not the round's last, the loop asks for the next one."""
    if type(asked) is not NextResult:
        raise AssertionError(f"the loop asked for {asked!r} inside a tool round")


def _download(pump: _Pump, recorder: Recorder, urls: tuple[str, ...]) -> Any:
    """The documents' bytes, fetched once and recorded (as base64 text: steps are JSON)."""

    def live() -> dict[str, Any]:
        try:
            fetched = fetch_documents(urls)
        except Exception as e:
            return {"documents": None, "error": encode_error(e)}
        documents = {url: base64.b64encode(data).decode() for url, data in fetched.items()}
        return {"documents": documents, "error": None}

    record = recorder.step("download", live)
    if record["error"] is not None:
        return pump.throw(decode_error(record["error"]))
    return pump.send({url: base64.b64decode(text) for url, text in record["documents"].items()})


def _model_call(pump: _Pump, sender: Sender, recorder: Recorder, body: dict[str, Any]) -> Any:
    step = pump.send(None)  # the loop now waits for the response's first event
    fed = 0

    def live() -> dict[str, Any]:
        nonlocal step, fed
        events: list[dict[str, Any]] = []
        try:
            stream = open_response(sender, body)
        except Exception as e:
            return {"events": events, "error": encode_error(e)}
        try:
            while True:
                try:
                    event = next(stream)
                except StopIteration:
                    return {"events": events, "error": None}
                except Exception as e:  # the response broke off: recorded with what came
                    return {"events": events, "error": encode_error(e)}
                events.append(event)
                step = pump.send(event)  # streams out now, not when the step is recorded
                fed += 1
        finally:
            stream.close()

    record = recorder.step("model", live)
    for event in record["events"][fed:]:  # replayed: the loop has seen none of them yet
        step = pump.send(event)
    if record["error"] is not None:
        return pump.throw(decode_error(record["error"]))
    return pump.send(END)
