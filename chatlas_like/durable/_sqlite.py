"""A SQLite engine for DBOS that commits in WAL mode without waiting on the disk each time.

DBOS opens a SQLite system database in the default rollback-journal mode, where every
commit waits for several writes to reach the disk (about 10 ms here): a durable tool
round records about seven steps, so that wait dominates its cost. In WAL mode with
``synchronous=NORMAL`` a commit is an append to the log, made durable at checkpoints:
a process that is killed (the failure a durable chat is for) loses nothing committed;
a power failure or kernel crash may lose the last commits, as SQLite documents. Pass
the engine as DBOS's ``system_database_engine``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

__all__ = ["sqlite_engine"]


def sqlite_engine(path: str | Path) -> Any:
    """An SQLAlchemy engine on the SQLite file ``path`` for ``DBOS(config=...)``.

    Parameters
    ----------
    path
        The database file (made if missing).

    Returns
    -------
    sqlalchemy.Engine
        For ``config["system_database_engine"]`` (give ``system_database_url`` too,
        pointing at the same file: DBOS reads its dialect from it).

    Examples
    --------
    ```python
    config = {
        "name": "shop",
        "system_database_url": "sqlite:///shop.sqlite",
        "system_database_engine": sqlite_engine("shop.sqlite"),
    }
    ```
    """
    import sqlalchemy as sa
    from sqlalchemy import event

    file = Path(path)
    with sqlite3.connect(file) as conn:  # WAL is a property of the file: set it once
        conn.execute("PRAGMA journal_mode=WAL")
    engine = sa.create_engine(f"sqlite:///{file}")

    @event.listens_for(engine, "connect")
    def configure(dbapi_conn: Any, record: Any) -> None:  # pyright: ignore[reportUnusedFunction]
        # As DBOS sets up its own SQLite connections: one writer at a time, waiting
        # for the lock rather than failing, foreign keys on.
        dbapi_conn.isolation_level = "IMMEDIATE"
        dbapi_conn.execute("PRAGMA busy_timeout=30000")
        dbapi_conn.execute("PRAGMA foreign_keys=ON")
        dbapi_conn.execute("PRAGMA synchronous=NORMAL")

    return engine
