"""A real PostgreSQL for the store tests: one server per test run, a fresh database per test.

The server is `COURSE_TEST_POSTGRES_URL` when set (`.ci/run` starts one and sets it; the URL's user
must be allowed to create databases), else a throwaway cluster from the system's packages that this
module starts in a temp dir (as the unprivileged `postgres` user when run as root).

Where PostgreSQL is not installed, every Postgres test is marked skipped at collection with the
same reason (`POSTGRES_MARKS`; pytest folds such skips into one line per test file). In CI (`CI=true`) or with `REQUIRE_POSTGRES=1`, that is a failure instead: CI
installs PostgreSQL, so a skip there would hide a broken setup.

Import the fixtures into a test module: `from postgres_fixtures import postgres_server, postgres_url`
(pytest finds fixtures by the names in the module; the server itself is started once per run).
"""

from __future__ import annotations

import atexit
import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from course_lib.postgres.cluster import TempCluster, missing_reason

REQUIRED = os.environ.get("CI") == "true" or os.environ.get("REQUIRE_POSTGRES") == "1"
_databases = itertools.count()
_server: PostgresServer | None = None


@dataclass
class PostgresServer:
    url: str
    """The admin URL (a database that always exists)."""

    def database_url(self, name: str) -> str:
        parts = urlsplit(self.url)
        return urlunsplit(parts._replace(path=f"/{name}"))

    def admin(self):
        import psycopg

        return psycopg.connect(self.url, autocommit=True)

    def data_directory(self) -> Path | None:
        """The server's data directory when this process can read it (to look at the raw files)."""
        with self.admin() as connection:
            path = Path(connection.execute("SHOW data_directory").fetchone()[0])
        return path if os.access(path, os.R_OK | os.X_OK) else None


def _unavailable() -> str | None:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "нет пакета psycopg (make install ставит его из requirements.txt)"
    if os.environ.get("COURSE_TEST_POSTGRES_URL"):
        return None
    return missing_reason()


UNAVAILABLE = _unavailable()
POSTGRES_MARKS = (
    [pytest.mark.skip(reason=f"PostgreSQL-тесты пропущены: {UNAVAILABLE}")] if UNAVAILABLE and not REQUIRED else []
)
"""Marks for a Postgres test or parameter: a skip where PostgreSQL is missing (never in CI)."""


@pytest.fixture(scope="session")
def postgres_server() -> PostgresServer:
    reason = _unavailable()
    if reason and REQUIRED:
        pytest.fail(f"CI/REQUIRE_POSTGRES=1, но PostgreSQL-тесты запустить нельзя: {reason}")
    if reason:
        pytest.skip(f"PostgreSQL-тесты пропущены: {reason}")
    return _shared_server()


def _shared_server() -> PostgresServer:
    """One server for the whole run, however many test modules import the fixture."""
    global _server
    if _server is None:
        url = os.environ.get("COURSE_TEST_POSTGRES_URL")
        if not url:
            cluster = TempCluster(durable=False)  # tests need no crash safety: fsync off is faster
            url = cluster.start()
            atexit.register(cluster.stop)
        _server = PostgresServer(url)
    return _server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A fresh, empty database for one test, dropped afterwards (connections and all)."""
    name = f"course_test_{os.getpid()}_{next(_databases)}"
    with postgres_server.admin() as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield postgres_server.database_url(name)
    finally:
        with postgres_server.admin() as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
