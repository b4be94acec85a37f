"""The SDK-neutral helpers around a provider's clients."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from chatlas_like.providers._sdk import SyncClient


class _Client:
    closed = False

    def close(self) -> None:
        self.closed = True


def test_threads_racing_for_the_sync_client_make_one_client() -> None:
    sync = SyncClient()
    made: list[_Client] = []
    start = threading.Barrier(8)

    def make() -> _Client:
        time.sleep(0.01)  # long enough for every racer to find no client yet
        made.append(_Client())
        return made[-1]

    def race(_: int) -> Any:
        start.wait()
        return sync.get(make)

    with ThreadPoolExecutor(8) as pool:
        clients = list(pool.map(race, range(8)))
    assert len(made) == 1
    assert all(client is made[0] for client in clients)


def test_closing_the_sync_client_closes_it_and_the_next_get_makes_another() -> None:
    sync = SyncClient()
    first = sync.get(_Client)
    sync.close()
    assert first.closed and not sync.made
    assert sync.get(_Client) is not first
