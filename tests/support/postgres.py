"""A PostgreSQL server started once per test session (a pytest plugin).

Test modules that need it say ``pytest_plugins = ["tests.support.postgres"]`` and mark
their tests ``@pytest.mark.postgres``. Without PostgreSQL installed the tests are
skipped, which fails the run under CI=true (see conftest).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chatlas_like.testing import TemporaryPostgres
from chatlas_like.testing._postgres import find_postgres_bin


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[TemporaryPostgres]:
    """The session's server, stopped at teardown."""
    if find_postgres_bin() is None:
        pytest.skip("PostgreSQL is not installed: run scripts/system-deps.sh")
    server = TemporaryPostgres().start()
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server: TemporaryPostgres) -> str:
    """A URL of a new, empty database on the session's server."""
    return postgres_server.create_database()
