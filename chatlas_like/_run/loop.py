"""The turn loop: a generator that never awaits and never touches a network.

It yields steps and receives their outcomes (the sans-I/O pattern of httpx's auth
flows):

=================  =========================================  ===========================
step               the driver performs                        and sends back
=================  =========================================  ===========================
``Download``       fetches ``urls`` (off the event loop)      their bytes, by URL
``ModelCall``      opens the response for ``body``            None
``NEXT_EVENT``     reads the next provider event              the event, or ``END``
``RunTools``       starts a round of the tool requests        the round (``stop()``)
``NEXT_RESULT``    waits for the round's next delivery        a ``Delivery``
a str / Content    hands it to the caller (a stream's item)   None
a Turn             hands an inserted turn to the caller       None
=================  =========================================  ===========================

A driver that fails to perform a step throws the exception into the loop. Extension
points: ``Run.before_model_call`` (callables applied right before each model call:
the expansion step, request checks) and ``Run.finalize`` (applied to every result
before it enters the history: truncation, sequence numbers, the store write).

A tool round has two orders. Deliveries come in completion order: each call that
starts is passed to ``echo.tool_started``; each generator yield (progress) is echoed
and yielded to a ``content="all"`` stream, never kept; each final result is finalised
(the results of one delivery together) and echoed and yielded as it arrives, except a
generator's, which the stream does not get (its yields were its delivery, as in
chatlas). The history gets the round's results in call order, as one user turn, when
the last one is in: that is what the model receives.

Cancellation contract: closing the loop or throwing into it (Ctrl-C, a closed stream,
a cancelled task, a cut response) repairs the history before the exception
propagates: a partial answer is kept (with ``partial_reason``) and every tool request
without a result is answered, so the next call sends a valid request. Mid-round, the
round is stopped first: results already delivered are kept, calls that had started
are answered ``error`` (interrupted while running), calls that had not are
``refused``, and nothing the stopped calls deliver later is used. A stop asked for
through ``Run.stop_requested`` (a ``StreamController``) repairs it the same way and
ends the loop without an exception.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, cast

from .._core.content import (
    Content,
    ContentServerToolRequest,
    ContentServerToolResult,
    ContentToolRequest,
)
from .._core.errors import (
    ChatlasLikeError,
    ProviderError,
    StreamInterruptedError,
    ToolLoopLimitError,
)
from .._core.finish import check_finish
from .._core.history import History, answer_dangling
from .._core.tool_info import ToolInfo
from .._core.tool_result import ContentToolResult, failed, refused
from .._core.turn import AssistantTurn, Turn, Usage, UserTurn
from .._tools.observer import QUIET, Observer
from .._tools.runner import (
    INTERRUPTED_PENDING,
    INTERRUPTED_RUNNING,
    Delivery,
    Finished,
    Started,
    Stopped,
)
from .._tools.tool import Tool, ToolBuiltIn
from ..providers._base import Provider
from ..providers._types import RequestSpec
from .context import View
from .echo import EchoSink
from .options import ChatOptions
from .tool_ids import UniqueIds

__all__ = [
    "END",
    "NEXT_EVENT",
    "NEXT_RESULT",
    "Download",
    "ModelCall",
    "NextEvent",
    "NextResult",
    "Run",
    "RunTools",
    "turn_loop",
]

TURN_SEPARATOR = "\n\n"
CUT_OFF = "The response was cut off before this call was complete; send the call again."
STOPPED = "Not run: the user stopped the response before this call was answered."
STREAM_ENDED = "the response stream ended before the model finished its answer"
RAN_UNRECORDED = (
    "The call may have run, but its result was lost before it could be recorded; "
    "check its effect before calling it again."
)


@dataclass(frozen=True, slots=True)
class Download:
    """Fetch these URLs (``Provider.downloads()`` named them); send back their bytes
    by URL."""

    urls: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ModelCall:
    """Send ``body`` to the model."""

    body: dict[str, Any]


class NextEvent:
    """The type of ``NEXT_EVENT``: read the response's next event."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NEXT_EVENT"


class _End:
    __slots__ = ()

    def __repr__(self) -> str:
        return "END"


class NextResult:
    """The type of ``NEXT_RESULT``: wait for the tool round's next delivery."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NEXT_RESULT"


NEXT_EVENT: Any = NextEvent()
END: Any = _End()
NEXT_RESULT: Any = NextResult()


@dataclass(frozen=True, slots=True)
class RunTools:
    """Start a round of these tool requests and send back its handle (a ``Round``)."""

    requests: list[Any]


class Round(Protocol):
    """What the loop holds of a running tool round."""

    def stop(self) -> Stopped:
        """Stop it (thread-safe); which calls had started, and the results ready but
        not delivered."""
        ...


def _no_finalize(results: list[ContentToolResult]) -> list[ContentToolResult]:
    return results


def _whole(turns: Sequence[Turn]) -> View:
    return View(turns)


@dataclass(slots=True)
class Run:
    """One call of a chat verb: what the loop reads and the history it writes."""

    history: History
    provider: Provider
    spec: RequestSpec
    options: ChatOptions = field(default_factory=ChatOptions)
    echo: EchoSink | None = None
    yield_text: bool = True
    yield_content: bool = False
    tools: Mapping[str, Tool | ToolBuiltIn] = field(default_factory=lambda: {})
    before_model_call: Sequence[Callable[[Run], Sequence[Turn] | None]] = ()
    finalize: Callable[[list[ContentToolResult]], list[ContentToolResult]] = _no_finalize
    # What is sent of the history (old results as references: :mod:`._run.context`).
    view: Callable[[Sequence[Turn]], View] = _whole
    record_usage: Callable[[AssistantTurn], None] | None = None
    stop_requested: Callable[[], bool] | None = None
    stop_reason: Callable[[], str | None] | None = None
    text_yielded: bool = False
    usage: Usage = field(default_factory=Usage)
    rounds: int = 0
    token: object = None
    observer: Observer = QUIET


def turn_loop(run: Run, prompt: Turn | None) -> Generator[Any, Any, None]:
    """Talk to the model until it answers without asking for tools."""
    history = run.history
    run.token = token = history.claim()
    echo = run.echo
    assert echo is not None
    run.observer.begin()
    try:
        if prompt is not None:
            echo.user_turn(prompt)
            history.append(prompt, token)
        first_call = True
        while True:
            for step in run.before_model_call:
                for inserted in step(run) or ():
                    echo.inserted_turn(inserted)
                    if run.yield_content:
                        yield inserted
            try:
                turns, transient = run.view(history.turns)
                spec = replace(run.spec, transient=transient) if transient else run.spec
                urls = run.provider.downloads(turns)
                if urls:
                    spec = replace(spec, downloads=(yield Download(tuple(urls))))
                body = run.provider.build_request(turns, spec)
            except Exception:
                if first_call and prompt is not None:
                    history.remove(prompt, token)  # nothing was sent: leave no orphan prompt
                raise
            try:
                yield ModelCall(body)
                turn = yield from _receive(run)
            except ProviderError:
                if first_call and prompt is not None:
                    history.remove(prompt, token)  # nothing was answered: the call can be retried
                raise
            run.observer.response(turn)
            first_call = False
            history.append(turn, token)
            if turn.usage is not None:
                run.usage = run.usage + turn.usage
                if run.record_usage is not None:
                    run.record_usage(turn)
            check_finish(turn, structured=run.spec.data_model is not None)
            requests = turn.tool_requests
            if not requests:
                if not _resumes(run, turn):
                    return
                # A server tool paused the turn: let the model carry on, within the limit.
                _check_round_limit(run, [])
                run.rounds += 1
                continue
            _check_limits(run, requests)
            interrupt = yield from _tool_round(run, requests)
            if interrupt is not None:
                raise interrupt
            run.rounds += 1
            if run.stop_requested is not None and run.stop_requested():
                return
    except _Stopped:
        _drop_unanswered(prompt, history, token)
        if history.owns(token):
            answer_dangling(history.turns, STOPPED, run.finalize)
    except BaseException as error:
        _drop_unanswered(prompt, history, token)
        if history.owns(token):
            answer_dangling(history.turns, _reason(error), _safe(run.finalize))
        run.observer.failed(error)
        raise
    finally:
        history.release(token)
        echo.finish()
        run.observer.end()


def _drop_unanswered(prompt: Turn | None, history: History, token: object) -> None:
    """A prompt stopped before any answer arrived (a cancel, Ctrl-C, a closed stream)
    leaves no orphan: the next prompt would be merged with it into one message."""
    last = history.turns[-1] if history.turns else None
    if prompt is not None and last is prompt and history.owns(token):
        history.remove(prompt, token)


class _Stopped(Exception):
    """The caller asked the stream to stop (``Run.stop_requested``)."""


def _tool_round(run: Run, requests: list[Any]) -> Generator[Any, Any, BaseException | None]:
    """Run one round, delivering as it goes; its results join the history in call order.

    Returns the exception a tool raised to end the chat (Ctrl-C, SystemExit), if any.
    """
    history, token, echo = run.history, run.token, run.echo
    assert echo is not None
    handle: Round = yield RunTools(requests)
    answers: dict[int, ContentToolResult] = {}
    started: set[int] = set()
    arrived: list[tuple[int, ContentToolResult]] = []  # delivered, not yet finalised
    stop_requested = run.stop_requested
    try:
        while True:
            if stop_requested is not None and stop_requested():
                raise _Stopped
            delivery: Delivery = yield NEXT_RESULT
            history.check(token)
            for event in delivery.events:
                if isinstance(event, Finished):
                    arrived.append((event.index, event.result))
                    continue
                if arrived:
                    yield from _settle(run, arrived, answers)
                if isinstance(event, Started):
                    started.add(event.index)
                    echo.tool_started(event.request)
                else:  # a generator's yield: for watching only
                    echo.content(event)
                    if run.yield_content:
                        yield event
            if arrived:
                yield from _settle(run, arrived, answers)
            if delivery.done:
                break
    except BaseException as error:
        stopped = handle.stop()
        started |= stopped.started
        if history.owns(token):
            pending = INTERRUPTED_PENDING if isinstance(error, _Stopped) else _reason(error)
            ready = {f.index: f.result for f in stopped.ready if f.index not in answers}
            results = _answer_round(run, requests, answers, started, arrived, pending, ready)
            history.append(UserTurn(results), token)
        raise
    results = _answer_round(run, requests, answers, started, arrived, INTERRUPTED_PENDING)
    history.append(UserTurn(results), token)
    return delivery.interrupt


def _settle(
    run: Run, arrived: list[tuple[int, ContentToolResult]], answers: dict[int, ContentToolResult]
) -> Generator[Any, Any, None]:
    """Finalise the results that arrived together, then echo and yield them."""
    results = run.finalize([result for _, result in arrived])
    for (index, _), result in zip(arrived, results, strict=True):
        answers[index] = result
    arrived.clear()
    echo = run.echo
    assert echo is not None
    for result in results:
        echo.content(result)  # a sink closes a generator's call on it (``parts`` set)
        if run.yield_content and result.parts is None:  # a generator's yields were yielded
            yield result


def _answer_round(
    run: Run,
    requests: list[Any],
    answers: dict[int, ContentToolResult],
    started: set[int],
    arrived: list[tuple[int, ContentToolResult]],
    pending: str,
    ready: Mapping[int, ContentToolResult] | None = None,
) -> list[ContentToolResult]:
    """The round's results in call order: what was finalised, what was ``ready`` (a
    call that finished but was not delivered), and an answer for every other request,
    ``pending`` for a call that never started. What is new here is echoed, so a running
    card shows how its call ended."""
    if len(answers) == len(requests):
        return [answers[i] for i in range(len(requests))]
    lost = {index for index, _ in arrived}  # ran, but finalising failed
    missing: list[int] = []
    fresh: list[ContentToolResult] = []
    for index, request in enumerate(requests):
        if index in answers:
            continue
        missing.append(index)
        if ready is not None and index in ready:
            fresh.append(ready[index])
        elif index in lost:
            fresh.append(failed(request, RAN_UNRECORDED))
        elif index in started:
            fresh.append(failed(request, INTERRUPTED_RUNNING))
        else:
            fresh.append(refused(request, pending))
    fresh = _safe(run.finalize)(fresh)
    for index, result in zip(missing, fresh, strict=True):
        answers[index] = result
    if run.echo is not None:
        with contextlib.suppress(Exception):  # the history comes first; a display may be gone
            for result in fresh:
                run.echo.content(result)
    return [answers[i] for i in range(len(requests))]


def _receive(run: Run) -> Generator[Any, Any, AssistantTurn]:
    """Feed provider events to the accumulator, emitting deltas; the finished turn."""
    accumulator = run.provider.accumulator(run.spec)
    ids = UniqueIds(run.history.request_ids)  # a repeated id would break every later request
    echo = run.echo
    assert echo is not None
    echo_text = echo.text
    yield_text = run.yield_text
    stop_requested = run.stop_requested
    separate = run.text_yielded  # a later turn's text is set apart from the earlier one's
    described: dict[int, tuple[Content, Content]] = {}
    try:
        while True:
            if stop_requested is not None and stop_requested():
                raise _Stopped
            event = yield NEXT_EVENT
            if event is END:
                break
            out = accumulator.feed(event)
            if out is None:
                continue
            if type(out) is str:
                echo_text(out)
                if yield_text and out:
                    if separate:
                        separate = False
                        yield TURN_SEPARATOR
                    run.text_yielded = True
                    yield out
            elif isinstance(out, Content):
                out = _describe(ids.check(out), run, described)
                echo.content(out)
                if run.yield_content:
                    yield out
            else:  # several at once (a finished text's citations)
                for item in cast("tuple[Content, ...]", out):
                    echo.content(item)
                    if run.yield_content:
                        yield item
    except BaseException as error:
        partial = accumulator.partial_turn(_partial_reason(run, error))
        if partial is None or not run.history.owns(run.token):
            raise
        run.history.append(ids.turn(partial), run.token)
        if isinstance(error, ChatlasLikeError):
            raise StreamInterruptedError(f"{STREAM_ENDED}: {error}") from error
        raise
    if not accumulator.complete:
        partial = accumulator.partial_turn()
        if partial is not None:
            run.history.append(ids.turn(partial), run.token)
        raise StreamInterruptedError(f"{STREAM_ENDED} (no message_stop event)")
    turn = ids.turn(accumulator.turn())
    turn.contents[:] = [_describe(c, run, described) for c in turn.contents]  # not yet shared
    return turn


def _describe(content: Content, run: Run, described: dict[int, tuple[Content, Content]]) -> Content:
    """A registered tool's request with its :class:`ToolInfo` (chatlas's ``request.tool``),
    the same object whether it is streamed out first or met in the finished turn."""
    if type(content) is not ContentToolRequest or content.tool is not None:
        return content
    seen = described.get(id(content))
    if seen is not None:
        return seen[1]
    tool = run.tools.get(content.name)
    new = content if tool is None else replace(content, tool=ToolInfo.from_tool(tool))
    described[id(content)] = (content, new)  # the original is held, so its id stays unique
    return new


def _resumes(run: Run, turn: AssistantTurn) -> bool:
    """Whether a turn a server tool paused is sent back for the model to carry on.

    As in chatlas, a paused turn is handed back, unless ``resume_paused`` asks for more
    or the pause left a server tool call without its result: no new prompt may follow
    that (chatlas's next ``chat()`` fails on it, every time), so the model finishes it.
    """
    if turn.finish_reason not in run.provider.capabilities.paused_finish_reasons:
        return False
    if run.options.resume_paused:
        return True
    answered = {c.tool_use_id for c in turn.contents if isinstance(c, ContentServerToolResult)}
    return any(
        isinstance(c, ContentServerToolRequest) and c.id not in answered for c in turn.contents
    )


def _partial_reason(run: Run, error: BaseException) -> str:
    if isinstance(error, _Stopped):
        reason = run.stop_reason() if run.stop_reason is not None else None
        return reason or "cancelled"
    return "interrupted"


def _check_limits(run: Run, requests: list[Any]) -> None:
    _check_round_limit(run, requests)
    budget = run.options.max_tokens_per_chat
    if budget is not None and run.usage.total >= budget:
        _stop(
            run,
            requests,
            f"token budget reached ({run.usage.total:,} of max_tokens_per_chat={budget:,} used)",
        )


def _check_round_limit(run: Run, requests: list[Any]) -> None:
    limit = run.options.max_tool_rounds
    if limit is not None and run.rounds >= limit:
        _stop(run, requests, f"tool round limit reached (max_tool_rounds={limit})")


def _stop(run: Run, requests: list[Any], why: str) -> None:
    if requests:
        results = run.finalize([refused(r, f"Not run: the {why}.") for r in requests])
        run.history.append(UserTurn(results), run.token)
        for result in results:
            assert run.echo is not None
            run.echo.content(result)
    raise ToolLoopLimitError(
        f"The chat stopped asking the model: the {why}. The history is valid; "
        "raise the limit or call chat() again to continue."
    )


def _safe(
    finalize: Callable[[list[ContentToolResult]], list[ContentToolResult]],
) -> Callable[[list[ContentToolResult]], list[ContentToolResult]]:
    """``finalize``, or the results as they are when it fails again (the repair must
    not fail: the history stays valid)."""

    def guarded(results: list[ContentToolResult]) -> list[ContentToolResult]:
        try:
            return finalize(results)
        except Exception:
            return results

    return guarded


def _reason(error: BaseException) -> str:
    if isinstance(error, (StreamInterruptedError, ProviderError)):
        return CUT_OFF
    if isinstance(error, (KeyboardInterrupt, GeneratorExit, asyncio.CancelledError)):
        return INTERRUPTED_PENDING
    return f"Not run: the chat stopped ({type(error).__name__})."
