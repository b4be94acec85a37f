"""The read API of the tool-result store: a small Starlette (ASGI) app.

Routes (JSON; records as :meth:`ToolResultRecord.to_json` writes them)::

    GET /interactions/processes/by-id/{id}/tool-results/{sequence}   one record
    GET /interactions/processes/by-id/{id}/tool-results              the run's records,
                                                                      by sequence

Every request needs ``Authorization: Bearer KEY``; a keys file maps each key to a
tenant (``{"KEY": "tenantId"}``) and a key only ever sees its tenant's records. No or
an unknown key gets 401. A record of another tenant answers exactly like a missing one
(404, same body), so ids cannot be probed across tenants; records written without a
tenant are never served. A malformed id (not a UUID) or sequence (not a positive
integer) gets 400 saying which.

Run it with ``python -m chatlas_like serve-results --db URL --keys FILE`` (uvicorn).
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import orjson

from ._store import ToolResultStore, open_store

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

__all__ = ["create_app", "read_keys", "serve"]

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_SEQUENCE = re.compile(r"^[1-9][0-9]{0,17}$")  # positive and within a bigint
_NOT_FOUND = {"error": "not_found", "message": "no such tool result"}


def create_app(store: ToolResultStore, keys: Mapping[str, str]) -> Starlette:
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
        if not _SEQUENCE.match(sequence):
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
        run = request.path_params["id"].lower()
        records = await run_in_threadpool(store.list, tenant, run)
        if not records:
            return _json(404, _NOT_FOUND)
        return _json(200, [r.to_json() for r in records])

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
    if not _UUID.match(request.path_params["id"]):
        return "", _error(400, "bad_id", "the process id must be a UUID")
    return tenant, None


def _hashed_keys(keys: Mapping[str, str]) -> dict[bytes, str]:
    """Keys by their SHA-256, so a lookup's timing says nothing about a key's bytes."""
    hashed: dict[bytes, str] = {}
    for key, tenant in keys.items():
        if not isinstance(key, str) or not key.strip() or key != key.strip():
            raise ValueError("every key must be a non-empty string without surrounding spaces")
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


def _error(
    status: int, kind: str, message: str, headers: Mapping[str, str] | None = None
) -> Response:
    return _json(status, {"error": kind, "message": message}, headers)


def read_keys(path: str | os.PathLike[str]) -> dict[str, str]:
    """The keys file: a JSON object ``{key: tenantId}``."""
    try:
        data = orjson.loads(Path(path).read_bytes())
    except orjson.JSONDecodeError as e:
        raise ValueError(f"{path}: the keys file is not JSON: {e}") from None
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{path}: the keys file must be a JSON object {{key: tenantId}}")
    keys = cast(dict[str, Any], data)
    _hashed_keys(keys)  # validates
    return keys


def serve(db: str, keys_file: str, *, host: str = "127.0.0.1", port: int = 8000) -> int:
    """Serve the read API with uvicorn until interrupted; prints the URL once listening."""
    import uvicorn

    try:
        keys = read_keys(keys_file)
    except (OSError, ValueError) as e:
        print(f"serve-results: {e}", file=sys.stderr)
        return 2
    store = open_store(db)
    app = create_app(store, keys)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))  # bound here so that --port 0 can say which port it got
    sock.listen(128)
    bound = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    print(f"serving tool results on http://{shown}:{bound}", flush=True)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        store.close()
    return 0
