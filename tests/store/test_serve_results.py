"""The read API over real HTTP: `python -m chatlas_like serve-results` on a loopback port."""

from __future__ import annotations

import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from chatlas_like import SqliteStore, ToolResultRecord, ToolResultStore
from chatlas_like._store import PostgresStore
from chatlas_like.testing import TemporaryPostgres

pytest_plugins = ["tests.support.postgres"]

KEYS = {"key-acme-0123456789": "acme", "key-globex-9876543210": "globex"}
ACME, GLOBEX = "key-acme-0123456789", "key-globex-9876543210"
RUN_A, RUN_B, RUN_NONE, RUN_SHARED = (str(uuid.uuid4()) for _ in range(4))


@dataclass
class Api:
    url: str
    store: ToolResultStore

    def get(self, path: str, key: str | None = None, scheme: str = "Bearer") -> Answer:
        request = urllib.request.Request(self.url + path)
        if key is not None:
            request.add_header("Authorization", f"{scheme} {key}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return Answer(response.status, dict(response.headers), response.read())
        except urllib.error.HTTPError as e:
            with e:
                return Answer(e.code, dict(e.headers), e.read())


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    raw: bytes

    @property
    def json(self) -> Any:
        return orjson.loads(self.raw)


def fill(store: ToolResultStore) -> None:
    records = [
        ToolResultRecord(RUN_A, 1, "toolu_a1", "acme one", 8, 8, tenant_id="acme"),
        ToolResultRecord(RUN_A, 2, "toolu_a2", "acme two", 8, 20, True, True, tenant_id="acme"),
        ToolResultRecord(RUN_B, 1, "toolu_b1", "globex one", 10, 10, tenant_id="globex"),
        ToolResultRecord(RUN_NONE, 1, "toolu_n1", "nobody's", 9, 9, tenant_id=None),
        ToolResultRecord(RUN_SHARED, 2, "toolu_s2", "acme shared", tenant_id="acme"),
        ToolResultRecord(RUN_SHARED, 1, "toolu_s1", "globex shared", tenant_id="globex"),
    ]
    for record in records:
        store.write(record)


def start(db: str, keys_file: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "chatlas_like", "serve-results"),
            *("--db", db, "--keys", str(keys_file), "--port", "0"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def api(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """The app served by the real command line, over a filled store of each backend."""
    folder = tmp_path_factory.mktemp("serve")
    if request.param == "sqlite":
        db = str(folder / "results.db")
        store: ToolResultStore = SqliteStore(db)
    else:
        server: TemporaryPostgres = request.getfixturevalue("postgres_server")
        db = server.create_database()
        store = PostgresStore(db)
    fill(store)
    keys_file = folder / "keys.json"
    keys_file.write_bytes(orjson.dumps(KEYS))
    child = start(db, keys_file)
    assert child.stdout is not None and child.stderr is not None
    line = child.stdout.readline()
    assert line.startswith("serving tool results on http://127.0.0.1:"), child.stderr.read()
    yield Api(line.rsplit(" ", 1)[1].strip(), store)
    child.terminate()
    child.wait(timeout=30)
    child.stdout.close()
    child.stderr.close()
    store.close()


def one(run: str, sequence: int | str) -> str:
    return f"/interactions/processes/by-id/{run}/tool-results/{sequence}"


def listing(run: str, query: str = "") -> str:
    return f"/interactions/processes/by-id/{run}/tool-results{query}"


def test_a_tenant_reads_its_own_record_with_every_field(api: Api) -> None:
    answer = api.get(one(RUN_A, 2), ACME)
    assert answer.status == 200 and answer.headers["content-type"] == "application/json"
    stored = api.store.get("acme", RUN_A, 2)
    assert stored is not None and answer.json == stored.to_json()
    assert answer.json["isTruncated"] is True and answer.json["originalLength"] == 20


def test_a_tenant_lists_its_run_in_sequence_order(api: Api) -> None:
    answer = api.get(listing(RUN_A, "?include=result"), ACME)
    assert answer.status == 200 and answer.json["nextCursor"] is None
    records = answer.json["items"]
    assert [(r["sequence"], r["result"]) for r in records] == [(1, "acme one"), (2, "acme two")]


def test_an_uppercase_id_finds_the_same_record(api: Api) -> None:
    assert api.get(one(RUN_A.upper(), 1), ACME).json["result"] == "acme one"


def test_another_tenants_record_answers_exactly_like_a_missing_one(api: Api) -> None:
    foreign = api.get(one(RUN_B, 1), ACME)
    missing_sequence = api.get(one(RUN_A, 99), ACME)
    missing_run = api.get(one(str(uuid.uuid4()), 1), ACME)
    assert foreign.status == missing_sequence.status == missing_run.status == 404
    assert foreign.raw == missing_sequence.raw == missing_run.raw
    assert foreign.headers["content-length"] == missing_run.headers["content-length"]


def test_listing_another_tenants_run_answers_exactly_like_a_missing_one(api: Api) -> None:
    foreign = api.get(listing(RUN_B), ACME)
    missing = api.get(listing(str(uuid.uuid4())), ACME)
    assert foreign.status == missing.status == 404 and foreign.raw == missing.raw


def test_a_run_shared_by_two_tenants_shows_each_only_its_own(api: Api) -> None:
    for key, expected in ((ACME, "acme shared"), (GLOBEX, "globex shared")):
        page = api.get(listing(RUN_SHARED, "?include=result"), key).json
        assert [r["result"] for r in page["items"]] == [expected]
    assert api.get(one(RUN_SHARED, 1), ACME).status == 404


def test_records_without_a_tenant_are_never_served(api: Api) -> None:
    for key in KEYS:
        assert api.get(one(RUN_NONE, 1), key).status == 404
        assert api.get(listing(RUN_NONE), key).status == 404


@pytest.mark.parametrize("bad", ["not-a-uuid", "1234", RUN_A[:-1], RUN_A + "0", "%20"])
def test_a_malformed_id_gets_400(api: Api, bad: str) -> None:
    for path in (one(bad, 1), listing(bad)):
        answer = api.get(path, ACME)
        assert answer.status == 400 and answer.json["error"] == "bad_id"


@pytest.mark.parametrize("bad", ["0", "-1", "abc", "1.5", "01", "9" * 19])
def test_a_malformed_sequence_gets_400(api: Api, bad: str) -> None:
    answer = api.get(one(RUN_A, bad), ACME)
    assert answer.status == 400 and "positive integer" in answer.json["message"]


@pytest.mark.parametrize(
    ("key", "scheme"),
    [(None, "Bearer"), ("wrong-key", "Bearer"), (ACME, "Basic"), ("", "Bearer")],
)
def test_no_or_an_unknown_key_gets_401(api: Api, key: str | None, scheme: str) -> None:
    for path in (one(RUN_A, 1), listing(RUN_A), one("not-a-uuid", "x")):
        answer = api.get(path, key, scheme)
        assert answer.status == 401 and answer.headers["www-authenticate"].startswith("Bearer")


def test_a_store_that_cannot_be_opened_is_refused_at_startup(tmp_path: Path) -> None:
    keys_file = tmp_path / "keys.json"
    keys_file.write_bytes(orjson.dumps({"k": "acme"}))
    child = start(str(tmp_path / "no such folder" / "r.db"), keys_file)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 2 and out == ""
    assert "cannot open the store" in err and "Traceback" not in err


def test_a_port_in_use_is_refused_with_one_line(tmp_path: Path) -> None:
    import socket

    keys_file = tmp_path / "keys.json"
    keys_file.write_bytes(orjson.dumps({"k": "acme"}))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        child = subprocess.Popen(
            [
                *(sys.executable, "-m", "chatlas_like", "serve-results"),
                *("--db", str(tmp_path / "r.db"), "--keys", str(keys_file), "--port", port),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        _, err = child.communicate(timeout=60)
    assert child.returncode == 2 and "cannot listen on" in err and "Traceback" not in err


def test_ctrl_c_stops_the_server_without_a_traceback(tmp_path: Path) -> None:
    import signal

    keys_file = tmp_path / "keys.json"
    keys_file.write_bytes(orjson.dumps({"k": "acme"}))
    child = start(str(tmp_path / "r.db"), keys_file)
    assert child.stdout is not None
    assert child.stdout.readline().startswith("serving tool results on http://127.0.0.1:")
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert "Traceback" not in err


def test_a_keys_file_with_an_empty_tenant_is_refused_at_startup(tmp_path: Path) -> None:
    keys_file = tmp_path / "keys.json"
    keys_file.write_bytes(orjson.dumps({"k": ""}))
    child = start(str(tmp_path / "r.db"), keys_file)
    out, err = child.communicate(timeout=60)
    assert child.returncode != 0 and out == "" and "non-empty tenant id" in err
