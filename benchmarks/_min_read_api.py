"""The floor of the read API: a minimal Starlette handler running the store's query.

``GET /interactions/processes/by-id/{id}/tool-results/{sequence}`` for one tenant: a
plain (sync) endpoint, which Starlette runs in its thread pool, a psycopg pool of the
store's size, the ``SELECT`` of ``PostgresStore.get``, the row as the record's JSON; no
key check, no input checks. Served by uvicorn on a socket with Nagle's algorithm off.
(An async endpoint on psycopg's async pool answered slower here, by about half.)

Run as ``python -m benchmarks._min_read_api DB_URL TENANT``: prints the port, serves
until killed.
"""

from __future__ import annotations

import contextlib
import socket
import sys
from collections.abc import AsyncIterator
from typing import Any

COLUMNS = (
    "interaction_process_id, sequence, tool_call_id, result, stored_length, original_length, "
    "is_truncated, is_error, tenant_id, id, date_created, date_updated"
)
NAMES = (
    "interactionProcessId",
    "sequence",
    "toolCallId",
    "result",
    "storedLength",
    "originalLength",
    "isTruncated",
    "isError",
    "tenantId",
    "id",
    "dateCreated",
    "dateUpdated",
)
QUERY = (
    f"SELECT {COLUMNS} FROM tool_results WHERE tenant_id = %s AND "
    "interaction_process_id = %s AND sequence = %s"
)


def main(url: str, tenant: str) -> None:
    import orjson
    import uvicorn
    from psycopg_pool import ConnectionPool
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    pool = ConnectionPool(url, min_size=4, max_size=4, open=False, kwargs={"autocommit": True})

    def one(request: Request) -> Response:
        run = request.path_params["id"]
        sequence = int(request.path_params["sequence"])
        with pool.connection() as conn:
            row: Any = conn.execute(QUERY, (tenant, run, sequence)).fetchone()
        if row is None:
            return Response(b'{"error":"not_found"}', 404, media_type="application/json")
        data = dict(zip(NAMES, row, strict=True))
        data["interactionProcessId"], data["id"] = str(row[0]), str(row[9])
        data["dateCreated"], data["dateUpdated"] = row[10].isoformat(), row[11].isoformat()
        return Response(orjson.dumps(data), media_type="application/json")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        pool.open(wait=True)
        yield
        pool.close()

    app = Starlette(
        routes=[Route("/interactions/processes/by-id/{id}/tool-results/{sequence}", one)],
        lifespan=lifespan,
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(sock.getsockname()[1], flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
