"""batch_chat and its variants through each provider's real SDK against the loopback batch
endpoints: Anthropic's Message Batches, and OpenAI's Batch API on Responses and Chat
Completions (the same job, parametrised by ``api``)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from chatlas_like import (
    BadRequestError,
    Chat,
    ChatOllama,
    batch_chat,
    batch_chat_completed,
    batch_chat_structured,
    batch_chat_text,
)
from chatlas_like._batch import _BatchJob  # pyright: ignore[reportPrivateUsage]
from chatlas_like._persist import chat_file as _persist
from chatlas_like.providers._anthropic.schema import STRUCTURED_TOOL
from chatlas_like.testing import LoopbackServer, Reply

from ..scripts.batch_job import APIS, CAPITALS, KEY, PROMPTS, job_chat

FAST = 0.001  # seconds between polls: the loopback batch ends after a set number of polls
ROOT = Path(__file__).resolve().parents[2]
CREATE = {"anthropic": "/v1/messages/batches", "openai": "/v1/batches"}
FIRST = {"anthropic": "msgbatch_0001", "openai": "batch_0001"}


@pytest.fixture(params=APIS)
def api(request: pytest.FixtureRequest) -> str:
    return request.param


def wire(api: str) -> str:
    return "anthropic" if api == "anthropic" else "openai"


def prompt_of(body: Mapping[str, Any]) -> str:
    """The text of the last user message (after any tool results), on any of the APIs."""
    items = body.get("messages") or body.get("input") or []
    last = next(m for m in reversed(items) if m.get("role") == "user")
    content = last["content"]
    if isinstance(content, str):
        return content
    return next(b["text"] for b in content if b.get("type") in ("text", "input_text"))


def capitals(body: Mapping[str, Any]) -> Reply:
    prompt = prompt_of(body)
    if prompt == "fail":
        return Reply.error(400, "invalid_request_error", "this prompt is refused")
    if prompt == "look it up":
        return Reply.tool_call("capital", {"country": "Peru"})
    country = prompt.removeprefix("Capital of ").rstrip("?")
    return Reply.text(CAPITALS.get(country, "unknown"))


def batch_calls(server: LoopbackServer) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in server.requests if "/batches" in r.path]


def created(server: LoopbackServer, api: str) -> int:
    """How many batches were submitted."""
    return batch_calls(server).count(("POST", CREATE[wire(api)]))


def results_read_last(server: LoopbackServer, api: str) -> bool:
    """Whether the job's last call read the results: Anthropic's results route, or
    OpenAI's output file."""
    last = server.requests[-1]
    if api == "anthropic":
        return last.path == f"{CREATE['anthropic']}/{FIRST['anthropic']}/results"
    return last.path.startswith("/v1/files/") and last.path.endswith("/content")


def test_batch_chat_submits_polls_and_returns_chats_in_input_order(
    serve: Any, tmp_path: Path, api: str
) -> None:
    server = serve(capitals)
    chat = job_chat(server.url, api)
    chats = batch_chat(chat, PROMPTS, tmp_path / "job.json", poll_interval=FAST)
    assert chats is not None
    assert [str(c.get_last_turn()) for c in chats if c is not None] == ["Paris", "Lima", "Tokyo"]
    assert [str(c.get_turns()[0]) for c in chats if c is not None] == PROMPTS
    assert chat.get_turns() == []
    assert created(server, api) == 1
    status = ("GET", f"{CREATE[wire(api)]}/{FIRST[wire(api)]}")
    assert batch_calls(server).count(status) >= 2
    assert results_read_last(server, api)
    assert server.message_requests() == []


def test_a_batch_answer_carries_its_usage(serve: Any, tmp_path: Path, api: str) -> None:
    server = serve(capitals)
    chats = batch_chat(
        job_chat(server.url, api), PROMPTS[:1], tmp_path / "j.json", poll_interval=FAST
    )
    assert chats is not None and chats[0] is not None
    answer = chats[0].get_last_turn()
    assert answer is not None and answer.tokens is not None and len(answer.tokens) == 3
    assert answer.tokens[0] > 0 and answer.tokens[1] > 0


def test_the_state_file_holds_no_key(serve: Any, tmp_path: Path, api: str) -> None:
    server = serve(capitals)
    path = tmp_path / "job.json"
    batch_chat(job_chat(server.url, api), PROMPTS, path, poll_interval=FAST)
    assert KEY not in path.read_text()


def test_each_batch_request_is_the_chats_request_for_its_prompt(serve: Any, tmp_path: Path) -> None:
    server = serve(capitals)
    batch_chat(job_chat(server.url), PROMPTS, tmp_path / "job.json", poll_interval=FAST)
    (requests,) = server.batches.created()
    assert [r["custom_id"] for r in requests] == ["prompt-0", "prompt-1", "prompt-2"]
    params = requests[1]["params"]
    assert "stream" not in params
    assert params["system"][0]["text"] == "Answer in one word."
    assert [t["name"] for t in params["tools"]] == ["capital"]
    assert params["messages"][-1]["content"][0]["text"] == "Capital of Peru?"


@pytest.mark.parametrize("api", APIS[1:])
def test_each_openai_batch_line_is_the_chats_request_for_its_prompt(
    serve: Any, tmp_path: Path, api: str
) -> None:
    server = serve(capitals)
    batch_chat(job_chat(server.url, api), PROMPTS, tmp_path / "job.json", poll_interval=FAST)
    (lines,) = server.batches.created()
    endpoint = "/v1/responses" if api == "responses" else "/v1/chat/completions"
    assert [(r["custom_id"], r["method"], r["url"]) for r in lines] == [
        (f"prompt-{i}", "POST", endpoint) for i in range(3)
    ]
    body = lines[1]["body"]
    assert "stream" not in body and "stream_options" not in body
    assert body["model"] == "gpt-4.1"
    assert prompt_of(body) == "Capital of Peru?"
    names = [t.get("name") or t["function"]["name"] for t in body["tools"]]
    assert names == ["capital"]
    (upload,) = [f for f in server.files.files.values() if f.purpose == "batch"]
    assert [orjson.loads(line) for line in upload.data.splitlines()] == lines


def test_a_provider_without_a_batch_api_is_refused_before_anything_is_sent(
    serve: Any, tmp_path: Path
) -> None:
    server = serve(capitals)
    chat = ChatOllama(model="llama3.2:latest", base_url=server.url)
    with pytest.raises(TypeError, match="needs a provider with a batch API"):
        batch_chat(chat, PROMPTS, tmp_path / "job.json")
    assert not (tmp_path / "job.json").exists()
    assert batch_calls(server) == []


def test_batch_chat_text_returns_the_answers(serve: Any, tmp_path: Path, api: str) -> None:
    server = serve(capitals)
    texts = batch_chat_text(
        job_chat(server.url, api), PROMPTS, tmp_path / "job.json", poll_interval=FAST
    )
    assert texts == ["Paris", "Lima", "Tokyo"]


def test_an_errored_request_becomes_none_with_a_warning(
    serve: Any, tmp_path: Path, api: str
) -> None:
    server = serve(capitals)
    prompts = ["Capital of Peru?", "fail"]
    with pytest.warns(UserWarning, match=r"prompt 1: the batch request errored .*refused"):
        texts = batch_chat_text(
            job_chat(server.url, api), prompts, tmp_path / "j.json", poll_interval=FAST
        )
    assert texts == ["Lima", None]


def test_an_expired_request_becomes_none_with_a_warning(
    serve: Any, tmp_path: Path, api: str
) -> None:
    server = serve(capitals)
    server.batches.expire = {"prompt-0"}
    with pytest.warns(UserWarning, match="prompt 0: the batch request expired"):
        texts = batch_chat_text(
            job_chat(server.url, api), PROMPTS, tmp_path / "j.json", poll_interval=FAST
        )
    assert texts == [None, "Lima", "Tokyo"]


def test_an_answer_asking_for_tools_is_returned_unanswered_with_a_warning(
    serve: Any, tmp_path: Path, api: str
) -> None:
    server = serve(capitals)
    chat = job_chat(server.url, api)
    ran: list[str] = []
    chat.register_tool(lambda country: ran.append(country), name="capital", force=True)
    with pytest.warns(UserWarning, match=r"prompt 0: the model asked for tools \(capital\)"):
        chats = batch_chat(chat, ["look it up"], tmp_path / "j.json", poll_interval=FAST)
    assert chats is not None and isinstance(chats[0], Chat)
    answer = chats[0].get_last_turn()
    assert answer is not None and [r.name for r in answer.tool_requests] == ["capital"]
    assert chats[0].get_turns()[-1] is answer and ran == []
    # The conversation goes on validly (the server checks every call is answered once):
    # the request is answered as not run.
    assert str(chats[0].chat("Capital of Japan?", echo="none")) == "Tokyo"
    assert "capital" in orjson.dumps(server.message_requests()[0]).decode()
    assert ran == []


def test_a_chat_ending_with_unanswered_requests_is_batched_with_them_answered(
    serve: Any, tmp_path: Path, api: str
) -> None:
    server = serve(capitals)
    chat = job_chat(server.url, api)
    chat.register_tool(lambda country: country, name="capital", force=True)
    with pytest.warns(UserWarning, match="the model asked for tools"):
        (asked,) = batch_chat(chat, ["look it up"], tmp_path / "a.json", poll_interval=FAST)
    assert isinstance(asked, Chat)
    texts = batch_chat_text(asked, PROMPTS[:2], tmp_path / "b.json", poll_interval=FAST)
    assert texts == ["Paris", "Lima"]  # the API refused every request before


def test_wait_false_returns_none_until_the_batch_has_ended(
    serve: Any, tmp_path: Path, api: str
) -> None:
    server = serve(capitals)
    server.batches.polls_to_end = 3
    chat, path = job_chat(server.url, api), tmp_path / "job.json"
    assert batch_chat(chat, PROMPTS, path, wait=False) is None  # submitted, polled once
    assert batch_chat_completed(chat, PROMPTS, path) is False  # second poll
    assert batch_chat_completed(chat, PROMPTS, path) is True  # third poll: ended
    assert batch_chat_text(chat, PROMPTS, path, wait=False) == ["Paris", "Lima", "Tokyo"]
    assert created(server, api) == 1


def statuses_until_ended(job: _BatchJob) -> list[tuple[int, int, int, bool]]:
    """(processing, succeeded, failed, ended) at each poll until the batch ends."""
    seen: list[tuple[int, int, int, bool]] = []
    while not seen or not seen[-1][3]:
        job.poll()
        assert job.batch is not None
        status = job.provider.batch_status(job.batch)
        seen.append((status.processing, status.succeeded, status.failed, status.ended))
    return seen


def test_a_batch_processing_a_request_per_poll_reports_its_counts_moving(
    serve: Any, tmp_path: Path, api: str
) -> None:
    server = serve(capitals)
    server.batches.per_poll = 1
    server.batches.expire = {"prompt-1"}
    job = _BatchJob(job_chat(server.url, api), PROMPTS, tmp_path / "job.json")
    job.batch = job.provider.batch_submit(job.requests)
    assert statuses_until_ended(job) == [(2, 1, 0, False), (1, 1, 1, False), (0, 2, 1, True)]


def test_a_batch_with_every_request_processed_runs_until_polls_to_end(
    serve: Any, tmp_path: Path, api: str
) -> None:
    server = serve(capitals)
    server.batches.per_poll = 3
    server.batches.polls_to_end = 3
    job = _BatchJob(job_chat(server.url, api), PROMPTS, tmp_path / "job.json")
    job.batch = job.provider.batch_submit(job.requests)
    assert statuses_until_ended(job) == [(0, 3, 0, False), (0, 3, 0, False), (0, 3, 0, True)]


def test_nothing_submitted_is_not_completed(serve: Any, tmp_path: Path) -> None:
    server = serve(capitals)
    assert batch_chat_completed(job_chat(server.url), PROMPTS, tmp_path / "none.json") is False
    assert server.requests == []


def test_a_finished_job_is_read_back_from_its_file_without_the_server(
    serve: Any, tmp_path: Path, api: str
) -> None:
    server = serve(capitals)
    chat, path = job_chat(server.url, api), tmp_path / "job.json"
    first = batch_chat_text(chat, PROMPTS, path, poll_interval=FAST)
    server.stop()
    assert batch_chat_text(chat, PROMPTS, path) == first
    assert batch_chat_completed(chat, PROMPTS, path) is True


def test_other_prompts_at_the_same_path_are_refused(serve: Any, tmp_path: Path) -> None:
    server = serve(capitals)
    chat, path = job_chat(server.url), tmp_path / "job.json"
    batch_chat(chat, PROMPTS, path, wait=False)
    with pytest.raises(ValueError, match=r"holds another batch job \(its prompts, requests differ"):
        batch_chat(chat, [*PROMPTS[:2], "Capital of Chad?"], path)
    assert batch_calls(server).count(("POST", "/v1/messages/batches")) == 1


def test_a_changed_chat_at_the_same_path_is_refused(serve: Any, tmp_path: Path) -> None:
    server = serve(capitals)
    chat, path = job_chat(server.url), tmp_path / "job.json"
    batch_chat(chat, PROMPTS, path, wait=False)
    chat.set_model_params(temperature=0.2)
    with pytest.raises(ValueError, match=r"holds another batch job \(its requests differ"):
        batch_chat(chat, PROMPTS, path)
    assert batch_calls(server).count(("POST", "/v1/messages/batches")) == 1


def test_two_saves_of_a_state_file_never_share_a_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "job.json"
    first = _BatchJob(job_chat("http://127.0.0.1:9"), PROMPTS, path)
    second = _BatchJob(job_chat("http://127.0.0.1:9"), PROMPTS, path)
    first.batch, second.batch = {"id": "first"}, {"id": "second"}
    temporaries: list[Path] = []

    def meanwhile(temporary: Path) -> None:  # the first save is written, not yet renamed
        temporaries.append(temporary)
        if len(temporaries) == 1:
            second._save()  # pyright: ignore[reportPrivateUsage]

    monkeypatch.setattr(_persist, "before_replace", meanwhile)
    first._save()  # pyright: ignore[reportPrivateUsage]
    assert len(set(temporaries)) == 2
    assert json.loads(path.read_text())["batch"] == {"id": "first"}
    assert [p.name for p in tmp_path.iterdir()] == ["job.json"]


def test_a_job_resumes_from_another_process_without_resubmitting(
    serve: Any, tmp_path: Path, api: str
) -> None:
    server = serve(capitals)
    server.batches.polls_to_end = 4
    path = tmp_path / "job.json"
    assert batch_chat(job_chat(server.url, api), PROMPTS, path, wait=False) is None
    batch = json.loads(path.read_text())["batch"]
    assert batch.get("processing_status", batch.get("status")) == "in_progress"
    done = subprocess.run(
        [sys.executable, "-m", "tests.scripts.batch_job", server.url, str(path), api],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(done.stdout) == ["Paris", "Lima", "Tokyo"]
    assert created(server, api) == 1
    assert results_read_last(server, api)


class City(BaseModel):
    """A city."""

    name: str
    country: str


def cities(body: Mapping[str, Any]) -> Reply:
    assert body["tool_choice"] == {"type": "tool", "name": STRUCTURED_TOOL}
    country = prompt_of(body).removeprefix("Capital of ").rstrip("?")
    if country not in CAPITALS:
        return Reply.tool_call(STRUCTURED_TOOL, {"name": "?"})
    return Reply.tool_call(STRUCTURED_TOOL, {"name": CAPITALS[country], "country": country})


def test_batch_chat_structured_returns_validated_data(serve: Any, tmp_path: Path) -> None:
    server = serve(cities)
    data = batch_chat_structured(
        job_chat(server.url, structured_output_mode="tool"),
        PROMPTS[:2],
        tmp_path / "j.json",
        City,
        poll_interval=FAST,
    )
    assert data == [City(name="Paris", country="France"), City(name="Lima", country="Peru")]


def test_a_structured_jobs_completion_can_be_checked(serve: Any, tmp_path: Path) -> None:
    server = serve(cities)
    chat, path = job_chat(server.url, structured_output_mode="tool"), tmp_path / "j.json"
    assert batch_chat_structured(chat, PROMPTS[:2], path, City, wait=False) is None
    assert batch_chat_completed(chat, PROMPTS[:2], path) is True  # no data model to give


def test_structured_data_that_does_not_validate_is_none_with_a_warning(
    serve: Any, tmp_path: Path
) -> None:
    server = serve(cities)
    prompts = ["Capital of Atlantis?", "Capital of Peru?"]
    with pytest.warns(UserWarning, match="prompt 0: its data does not fit City"):
        data = batch_chat_structured(
            job_chat(server.url, structured_output_mode="tool"),
            prompts,
            tmp_path / "j.json",
            City,
            poll_interval=FAST,
        )
    assert data == [None, City(name="Lima", country="Peru")]


def json_cities(body: Mapping[str, Any]) -> Reply:
    fmt = body.get("text", {}).get("format") or body.get("response_format") or {}
    assert fmt["type"] == "json_schema"
    country = prompt_of(body).removeprefix("Capital of ").rstrip("?")
    return Reply.text(json.dumps({"name": CAPITALS[country], "country": country}))


@pytest.mark.parametrize("api", APIS[1:])
def test_batch_chat_structured_returns_validated_data_on_openai(
    serve: Any, tmp_path: Path, api: str
) -> None:
    server = serve(json_cities)
    data = batch_chat_structured(
        job_chat(server.url, api), PROMPTS[:2], tmp_path / "j.json", City, poll_interval=FAST
    )
    assert data == [City(name="Paris", country="France"), City(name="Lima", country="Peru")]


def test_an_openai_batch_whose_input_the_api_refused_says_which_line(
    serve: Any, tmp_path: Path
) -> None:
    server = serve(capitals)
    chat = job_chat(server.url, "responses")
    job = _BatchJob(chat, PROMPTS, tmp_path / "job.json")
    client = chat.provider._sync_client()  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
    upload = client.files.create(file=("b.jsonl", b"{not json\n"), purpose="batch")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    job.batch = client.batches.create(  # pyright: ignore[reportUnknownMemberType]
        input_file_id=upload.id, endpoint="/v1/responses", completion_window="24h"
    ).model_dump(mode="json")
    with pytest.raises(
        BadRequestError, match=r"refused batch batch_0001: line 1: .*not valid JSON"
    ):
        job.run(wait=True, poll_interval=FAST)
