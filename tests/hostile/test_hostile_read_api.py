"""Hostile input, the read API: bounded listings, strict paths, keys that make sense, no stall.

Served by the real command line (``python -m chatlas_like serve-results``) over each
backend. A listing is paged (``limit`` + ``cursor``, a default and a maximum), lists
metadata unless bodies are asked for, and stays under a response size cap; a path with
a trailing newline is refused; a keys file with a repeated key, or a key that could
never authenticate, is refused at start-up; a run id that is not a canonical UUID is
refused when written, by both stores.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from chatlas_like import SqliteStore, ToolResultRecord, ToolResultStore
from chatlas_like._cli.serve_results import DEFAULT_PAGE, MAX_PAGE, listening_socket
from chatlas_like._store import PostgresStore
from chatlas_like.testing import TemporaryPostgres

from ..store.test_serve_results import Api, one

pytest_plugins = ["tests.support.postgres"]

KEY = "key-acme-0123456789"
MANY = str(uuid.uuid4())  # 130 small results
BIG = str(uuid.uuid4())  # 5 results of 300 KB
CAP = 700_000  # the response cap the server is started with


def fill(store: ToolResultStore) -> None:
    store.write_many(
        ToolResultRecord(MANY, n, f"toolu_{n}", f"result {n}", tenant_id="acme")
        for n in range(1, 131)
    )
    body = "b" * 300_000
    store.write_many(
        ToolResultRecord(BIG, n, f"toolu_b{n}", body, 300_000, 300_000, tenant_id="acme")
        for n in range(1, 6)
    )


def start(db: str, keys_file: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "chatlas_like", "serve-results"),
            *("--db", db, "--keys", str(keys_file), "--port", "0", *extra),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def api(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    folder = tmp_path_factory.mktemp("hostile-api")
    if request.param == "sqlite":
        db = str(folder / "results.db")
        store: ToolResultStore = SqliteStore(db)
    else:
        server: TemporaryPostgres = request.getfixturevalue("postgres_server")
        db = server.create_database()
        store = PostgresStore(db)
    fill(store)
    keys_file = folder / "keys.json"
    keys_file.write_bytes(orjson.dumps({KEY: "acme"}))
    child = start(db, keys_file, "--max-response-bytes", str(CAP))
    assert child.stdout is not None and child.stderr is not None
    line = child.stdout.readline()
    assert line.startswith("serving tool results on http://127.0.0.1:"), child.stderr.read()
    yield Api(line.rsplit(" ", 1)[1].strip(), store)
    child.terminate()
    child.wait(timeout=30)
    child.stdout.close()
    child.stderr.close()
    store.close()


def listing(run: str, query: str = "") -> str:
    return f"/interactions/processes/by-id/{run}/tool-results{query}"


# -- paged listings -------------------------------------------------------------------------


def test_a_listing_gives_a_default_page_and_a_cursor_to_the_next(api: Api) -> None:
    page = api.get(listing(MANY), KEY).json
    assert [r["sequence"] for r in page["items"]] == list(range(1, DEFAULT_PAGE + 1))
    assert page["nextCursor"] is not None


def test_following_the_cursor_reads_every_record_once(api: Api) -> None:
    seen: list[int] = []
    cursor: str | None = None
    while True:
        query = "?limit=40" + (f"&cursor={cursor}" if cursor else "")
        page = api.get(listing(MANY, query), KEY).json
        seen.extend(r["sequence"] for r in page["items"])
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen == list(range(1, 131))


def test_a_listing_holds_metadata_unless_bodies_are_asked_for(api: Api) -> None:
    meta = api.get(listing(MANY, "?limit=2"), KEY).json["items"][0]
    full = api.get(listing(MANY, "?limit=2&include=result"), KEY).json["items"][0]
    assert "result" not in meta and meta["toolCallId"] == "toolu_1"
    assert full["result"] == "result 1" and {**meta, "result": "result 1"} == full


def test_a_listing_with_bodies_stays_under_the_response_cap(api: Api) -> None:
    answer = api.get(listing(BIG, "?limit=5&include=result"), KEY)
    page = answer.json
    assert len(answer.raw) <= CAP
    assert [r["sequence"] for r in page["items"]] == [1, 2] and page["nextCursor"] is not None
    rest = api.get(listing(BIG, f"?include=result&cursor={page['nextCursor']}"), KEY).json
    assert [r["sequence"] for r in rest["items"]] == [3, 4]


def test_metadata_of_big_results_lists_in_one_small_page(api: Api) -> None:
    answer = api.get(listing(BIG), KEY)
    assert len(answer.raw) < 5_000 and len(answer.json["items"]) == 5
    assert answer.json["nextCursor"] is None


@pytest.mark.parametrize(
    "query",
    ["?limit=0", "?limit=-1", "?limit=abc", f"?limit={MAX_PAGE + 1}", "?cursor=abc", "?cursor=0"],
)
def test_a_bad_limit_or_cursor_gets_400(api: Api, query: str) -> None:
    answer = api.get(listing(MANY, query), KEY)
    assert answer.status == 400 and answer.json["error"] in ("bad_limit", "bad_cursor")


def test_an_unknown_include_gets_400(api: Api) -> None:
    answer = api.get(listing(MANY, "?include=secrets"), KEY)
    assert answer.status == 400 and answer.json["error"] == "bad_include"


def test_a_cursor_past_the_end_gives_an_empty_last_page(api: Api) -> None:
    page = api.get(listing(MANY, "?cursor=130"), KEY).json
    assert page == {"items": [], "nextCursor": None}


# -- strict paths ---------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["1%0A", "1%0D%0A", "1%0A%0A", "%0A1"])
def test_a_sequence_with_a_newline_gets_400(api: Api, bad: str) -> None:
    answer = api.get(one(MANY, bad), KEY)
    assert answer.status == 400 and answer.json["error"] == "bad_sequence"


def test_a_run_id_with_a_trailing_newline_gets_400(api: Api) -> None:
    for path in (one(MANY + "%0A", 1), listing(MANY + "%0A")):
        answer = api.get(path, KEY)
        assert answer.status == 400 and answer.json["error"] == "bad_id"


# -- the keys file --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"key-one-0123456789": "acme", "key-one-0123456789": "globex"}', "more than once"),
        ('{"ключ-0123456789": "acme"}'.encode(), "visible ASCII"),
        (b'{"key with spaces 0123": "acme"}', "visible ASCII"),
        (b'{"key\\u0000nul-0123456789": "acme"}', "visible ASCII"),
        (b'{"key\\ttab-0123456789": "acme"}', "visible ASCII"),
    ],
    ids=["duplicate", "non-ascii", "space", "nul", "tab"],
)
def test_a_keys_file_that_cannot_work_is_refused_at_startup(
    tmp_path: Path, content: bytes, message: str
) -> None:
    keys_file = tmp_path / "keys.json"
    keys_file.write_bytes(content)
    child = start(str(tmp_path / "r.db"), keys_file)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 2 and out == "" and message in err


# -- run ids written ------------------------------------------------------------------------


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ToolResultStore]:
    if request.param == "sqlite":
        opened: ToolResultStore = SqliteStore(tmp_path / "r.db")
    else:
        opened = PostgresStore(request.getfixturevalue("postgres_url"))
    yield opened
    opened.close()


RUN = str(uuid.uuid4())


@pytest.mark.parametrize(
    "bad",
    [RUN.upper(), RUN.replace("-", ""), "{" + RUN + "}", "urn:uuid:" + RUN, "not-a-uuid", ""],
)
def test_a_run_id_that_is_not_a_canonical_uuid_is_refused_when_written(
    store: ToolResultStore, bad: str
) -> None:
    record = ToolResultRecord(bad, 1, "toolu_1", "x", tenant_id="acme")
    with pytest.raises(ValueError, match="canonical"):
        store.write(record)
    with pytest.raises(ValueError, match="canonical"):
        store.write_many([record])
    assert store.list("acme", RUN) == []


# -- no stall on small writes ---------------------------------------------------------------


def test_the_servers_socket_turns_nagles_algorithm_off() -> None:
    sock = listening_socket(socket.AF_INET)
    try:
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()


def test_every_connection_the_server_accepts_has_nagles_algorithm_off() -> None:
    async def accepted_nodelay() -> Any:
        sock = listening_socket(socket.AF_INET)
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted = writer.get_extra_info("socket")
            seen.set_result(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(connected, sock=sock)
        _, writer = await asyncio.open_connection(*sock.getsockname())
        value = await asyncio.wait_for(seen, 30)
        writer.close()
        server.close()
        await server.wait_closed()
        return value

    assert asyncio.run(accepted_nodelay()) != 0
