"""The read API of the tool-result store: a small Starlette (ASGI) app.

Routes (JSON; records as :meth:`ToolResultRecord.to_json` writes them)::

    GET /interactions/processes/by-id/{id}/tool-results/{sequence}   one record
    GET /interactions/processes/by-id/{id}/tool-results              a page of the run's
                                                                      records, by sequence

A listing is paged: ``?limit=N`` (``DEFAULT_PAGE`` by default, ``MAX_PAGE`` at most)
and ``?cursor=C`` (the ``nextCursor`` of the page before) select the page, which
answers ``{"items": [...], "nextCursor": C or null}``. Items are metadata (every field
but ``result``) unless ``?include=result`` asks for the bodies; a page with bodies
stops before the record that would take the response past ``max_response_bytes``
(16 MiB by default; a single record larger than that comes alone), so one request
never makes the server read or send a whole run of large results.

Every request needs ``Authorization: Bearer KEY``; a keys file maps each key to a
tenant (``{"KEY": "tenantId"}``) and a key only ever sees its tenant's records. No or
an unknown key gets 401. A record of another tenant answers exactly like a missing one
(404, same body), so ids cannot be probed across tenants; records written without a
tenant are never served. A malformed id (not a UUID), sequence (not a positive
integer; a trailing newline included), limit, cursor or include gets 400 saying which.

A keys file with a key given twice (the last would silently win) or a key that could
never authenticate (anything but visible ASCII: an ``Authorization`` header carries
nothing else reliably) is refused at start-up, naming the key by its position only.
The server's socket has Nagle's algorithm off (see :func:`listening_socket`).

Run it with ``python -m chatlas_like serve-results --db URL --keys FILE`` (uvicorn).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import orjson

from .._store import StoreError, ToolResultRecord, ToolResultStore, open_store

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

__all__ = [
    "DEFAULT_PAGE",
    "MAX_PAGE",
    "MAX_RESPONSE_BYTES",
    "create_app",
    "listening_socket",
    "read_keys",
    "serve",
]

DEFAULT_PAGE = 50
MAX_PAGE = 500
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
# Matched whole (fullmatch): ``$`` would also match before a trailing newline.
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_SEQUENCE = re.compile(r"[1-9][0-9]{0,17}")  # positive and within a bigint
_KEY_TEXT = re.compile(r"[\x21-\x7e]+")  # visible ASCII: what a header carries reliably
_NOT_FOUND = {"error": "not_found", "message": "no such tool result"}
_RECORD_ROOM = 1024  # JSON bytes of a record beyond its result, for the size estimate


def create_app(
    store: ToolResultStore,
    keys: Mapping[str, str],
    *,
    max_response_bytes: int = MAX_RESPONSE_BYTES,
) -> Starlette:
    """The read API over ``store`` for the tenants of ``keys`` (``{key: tenant_id}``)."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.routing import Route

    tenants = _hashed_keys(keys)

    async def one(request: Request) -> Response:
        tenant, problem = _check(request, tenants)
        if problem is not None:
            return problem
        sequence = request.path_params["sequence"]
        if not _SEQUENCE.fullmatch(sequence):
            return _error(400, "bad_sequence", "the sequence must be a positive integer")
        run = request.path_params["id"].lower()
        record = await run_in_threadpool(store.get, tenant, run, int(sequence))
        if record is None:
            return _json(404, _NOT_FOUND)
        return _json(200, record.to_json())

    async def listing(request: Request) -> Response:
        tenant, problem = _check(request, tenants)
        if problem is not None:
            return problem
        query, problem = _page_query(request)
        if problem is not None:
            return problem
        run = request.path_params["id"].lower()
        page = await run_in_threadpool(_page, store, tenant, run, query, max_response_bytes)
        if page is None:
            return _json(404, _NOT_FOUND)
        return _raw_json(200, page)

    base = "/interactions/processes/by-id/{id}/tool-results"
    return Starlette(
        routes=[
            Route(base, listing, methods=["GET"]),
            Route(base + "/{sequence}", one, methods=["GET"]),
        ]
    )


def _check(request: Request, tenants: Mapping[bytes, str]) -> tuple[str, Response | None]:
    """The caller's tenant, or the response refusing the request (401, then 400)."""
    header = request.headers.get("authorization", "")
    scheme, _, key = header.partition(" ")
    tenant = tenants.get(_digest(key.strip())) if scheme.lower() == "bearer" else None
    if tenant is None:
        return "", _error(
            401,
            "unauthorized",
            "send a valid key as 'Authorization: Bearer KEY'",
            {"WWW-Authenticate": 'Bearer realm="tool-results"'},
        )
    if not _UUID.fullmatch(request.path_params["id"]):
        return "", _error(400, "bad_id", "the process id must be a UUID")
    return tenant, None


@dataclass(frozen=True, slots=True)
class _PageQuery:
    after: int
    limit: int
    bodies: bool


def _page_query(request: Request) -> tuple[_PageQuery, Response | None]:
    """The listing's query, or the 400 refusing it."""
    params = request.query_params
    limit_text, cursor_text = params.get("limit"), params.get("cursor")
    include = params.get("include")
    limit = DEFAULT_PAGE
    if limit_text is not None:
        if not _SEQUENCE.fullmatch(limit_text) or int(limit_text) > MAX_PAGE:
            return _NO_QUERY, _error(
                400, "bad_limit", f"the limit must be an integer from 1 to {MAX_PAGE}"
            )
        limit = int(limit_text)
    if cursor_text is not None and not _SEQUENCE.fullmatch(cursor_text):
        return _NO_QUERY, _error(400, "bad_cursor", "the cursor must be a nextCursor given before")
    if include not in (None, "result"):
        return _NO_QUERY, _error(400, "bad_include", "include may only be 'result'")
    return _PageQuery(int(cursor_text or 0), limit, include == "result"), None


_NO_QUERY = _PageQuery(0, 0, False)


def _page(
    store: ToolResultStore, tenant: str, run: str, query: _PageQuery, max_bytes: int
) -> bytes | None:
    """One page of the listing as JSON bytes; None when the run has nothing for ``tenant``.

    Metadata first (one row more than the page, to know whether another follows); with
    bodies, only the records whose stored sizes fit ``max_bytes`` are read, and the
    encoded page is cut again to fit (keeping at least one record).
    """
    meta = store.list_page(tenant, run, after=query.after, limit=query.limit + 1, with_result=False)
    if not meta and query.after == 0:
        return None  # a run of another tenant answers exactly like a missing one
    more = len(meta) > query.limit
    records = meta[: query.limit]
    if query.bodies and records:
        budget, fits = max_bytes, 0
        for record in records:
            budget -= (record.stored_length or 0) + _RECORD_ROOM
            if budget < 0 and fits:
                break
            fits += 1
        more = more or fits < len(records)
        records = store.list_page(tenant, run, after=query.after, limit=fits, with_result=True)
    parts = [orjson.dumps(_item(r, query.bodies)) for r in records]
    room, kept = max_bytes - 64, 0  # 64: the page's own frame and cursor
    for part in parts:
        room -= len(part) + 1
        if room < 0 and kept:
            break
        kept += 1
    more = more or kept < len(parts)
    cursor = str(records[kept - 1].sequence) if more and kept else None
    return (
        b'{"items":[' + b",".join(parts[:kept]) + b'],"nextCursor":' + orjson.dumps(cursor) + b"}"
    )


def _item(record: ToolResultRecord, bodies: bool) -> dict[str, Any]:
    data = record.to_json()
    if not bodies:
        del data["result"]  # left out, not null: a listing of metadata
    return data


def _hashed_keys(keys: Mapping[str, str]) -> dict[bytes, str]:
    """Keys by their SHA-256, so a lookup's timing says nothing about a key's bytes."""
    hashed: dict[bytes, str] = {}
    for position, (key, tenant) in enumerate(keys.items(), start=1):
        if not isinstance(key, str) or not key.strip() or key != key.strip():
            raise ValueError("every key must be a non-empty string without surrounding spaces")
        if not _KEY_TEXT.fullmatch(key):
            raise ValueError(
                f"key #{position} can never authenticate: a key must be visible ASCII only "
                "(no spaces, control or non-ASCII characters), as an Authorization header "
                "carries it"
            )
        if not isinstance(tenant, str) or not tenant:
            raise ValueError("every key must map to a non-empty tenant id")
        hashed[_digest(key)] = tenant
    return hashed


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


def _json(status: int, data: Any, headers: Mapping[str, str] | None = None) -> Response:
    from starlette.responses import Response

    return Response(
        orjson.dumps(data), status_code=status, media_type="application/json", headers=headers
    )


def _raw_json(status: int, body: bytes) -> Response:
    from starlette.responses import Response

    return Response(body, status_code=status, media_type="application/json")


def _error(
    status: int, kind: str, message: str, headers: Mapping[str, str] | None = None
) -> Response:
    return _json(status, {"error": kind, "message": message}, headers)


def read_keys(path: str | os.PathLike[str]) -> dict[str, str]:
    """The keys file: a JSON object ``{key: tenantId}``, each key given once."""
    try:
        # The json module, for its pairs hook: orjson keeps the last of a repeated key.
        data = json.loads(Path(path).read_bytes(), object_pairs_hook=_unique_pairs)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: the keys file is not JSON: {e}") from None
    except _RepeatedKey as e:
        raise ValueError(
            f"{path}: key #{e.position} appears more than once; each key must map to one "
            "tenant (the last would silently win)"
        ) from None
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{path}: the keys file must be a JSON object {{key: tenantId}}")
    keys = cast(dict[str, Any], data)
    try:
        _hashed_keys(keys)  # validates
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    return keys


class _RepeatedKey(Exception):
    def __init__(self, position: int) -> None:
        super().__init__(position)
        self.position = position


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for position, (key, value) in enumerate(pairs, start=1):
        if key in seen:
            raise _RepeatedKey(position)
        seen[key] = value
    return seen


def listening_socket(family: socket.AddressFamily) -> socket.socket:
    """A TCP socket for the server, with Nagle's algorithm off.

    Made as IPPROTO_TCP (not protocol 0), so that asyncio recognises the connections it
    accepts as TCP and turns Nagle's algorithm off on each; TCP_NODELAY is also set on
    the listening socket, which Linux passes on to accepted ones. With Nagle on, a
    response written in two parts waits on the client's delayed ACK: about 40 ms.
    """
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def serve(
    db: str,
    keys_file: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_response_bytes: int = MAX_RESPONSE_BYTES,
) -> int:
    """Serve the read API with uvicorn until interrupted; prints the URL once listening."""
    try:  # Ctrl-C is how it is stopped, whenever it comes: no traceback
        return _serve(db, keys_file, host, port, max_response_bytes)
    except KeyboardInterrupt:
        return 0


def _serve(db: str, keys_file: str, host: str, port: int, max_response_bytes: int) -> int:
    import uvicorn

    try:
        keys = read_keys(keys_file)
    except (OSError, ValueError) as e:
        print(f"serve-results: {e}", file=sys.stderr)
        return 2
    try:
        store = open_store(db)
        store.list(None, "serve-results-start")  # a store it cannot open: say so now
    except (OSError, ValueError, StoreError) as e:
        print(f"serve-results: cannot open the store {db!r}: {e}", file=sys.stderr)
        return 2
    app = create_app(store, keys, max_response_bytes=max_response_bytes)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = listening_socket(family)
    try:
        sock.bind((host, port))  # bound here so that --port 0 can say which port it got
        sock.listen(128)
    except (OSError, OverflowError) as e:  # in use, not an address of this machine...
        sock.close()
        store.close()
        print(f"serve-results: cannot listen on {host}:{port}: {e}", file=sys.stderr)
        return 2
    bound = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    try:
        print(f"serving tool results on http://{shown}:{bound}", flush=True)
        server.run(sockets=[sock])
    finally:
        sock.close()
        store.close()
    return 0
