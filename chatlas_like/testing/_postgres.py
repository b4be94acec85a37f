"""A throwaway PostgreSQL server on 127.0.0.1, for tests and benchmarks.

Uses the server programs of the system's ``postgresql`` package (Debian puts them in
``/usr/lib/postgresql/VERSION/bin``, off PATH). The data folder is a new temporary
folder; as root the server runs as the ``postgres`` user (it refuses to run as root).
It listens on a free loopback port and a private Unix socket folder, trusts local
connections, and is stopped and deleted by :meth:`TemporaryPostgres.stop`::

    with TemporaryPostgres() as pg:
        store = PostgresStore(pg.url())
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

__all__ = ["TemporaryPostgres", "find_postgres_bin"]


def find_postgres_bin() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``, or None when PostgreSQL is absent."""
    on_path = shutil.which("pg_ctl")
    if on_path is not None:
        return Path(on_path).parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=_version_key)
    return Path(found[-1]).parent if found else None


def _version_key(path: str) -> int:
    part = Path(path).parent.parent.name
    return int(part) if part.isdigit() else 0


class TemporaryPostgres:
    """A PostgreSQL server of its own: ``start()``, ``url()``, ``create_database()``, ``stop()``.

    Parameters
    ----------
    fsync
        Make commits durable (off by default, as a test server needs no durability).
    """

    def __init__(self, *, fsync: bool = False) -> None:
        self.fsync = fsync  # off by default: tests need no durability, and run faster
        self.port = 0
        self.directory: Path | None = None
        self._bin: Path | None = None
        self._as_root = os.geteuid() == 0

    def start(self) -> TemporaryPostgres:
        self._bin = find_postgres_bin()
        if self._bin is None:
            raise RuntimeError("PostgreSQL is not installed (scripts/system-deps.sh installs it)")
        self.directory = Path(tempfile.mkdtemp(prefix="chatlas-like-pg-"))
        if self._as_root:
            shutil.chown(self.directory, "postgres", "postgres")
        data = self.directory / "data"
        self._run("initdb", "-D", str(data), "--auth=trust", "-U", "postgres", "-E", "UTF8")
        self.port = _free_port()
        self.resume()
        return self

    def pause(self) -> None:
        """Stop the server, keeping its data and port (:meth:`resume` starts it again):
        a store outage, for tests."""
        assert self.directory is not None, "start() the server first"
        self._run("pg_ctl", "-D", str(self.directory / "data"), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        """Start the server (again) on its port."""
        assert self.directory is not None, "start() the server first"
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.directory}"
        if not self.fsync:
            options += " -c fsync=off"
        self._run(
            "pg_ctl",
            "-D",
            str(self.directory / "data"),
            "-o",
            options,
            "-l",
            str(self.directory / "log"),
            "-w",
            "start",
        )

    def url(self, database: str = "postgres") -> str:
        """A connection URL for ``database`` as the ``postgres`` superuser."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A new empty database; its URL."""
        import psycopg
        from psycopg import sql

        name = f"test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url(name)

    def stop(self) -> None:
        if self.directory is None:
            return
        data = self.directory / "data"
        if (data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(self.directory, ignore_errors=True)
        self.directory = None

    def __enter__(self) -> TemporaryPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self, program: str, *args: str) -> None:
        assert self._bin is not None
        command = [str(self._bin / program), *args]
        if self._as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(
                f"{program} failed ({done.returncode}): {done.stderr or done.stdout}"
            )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
