"""One fixture, every store: the parametrized store tests open their stores through `Backend`.

`session_backend` runs a test on the in-memory, SQLite and PostgreSQL session stores;
`memory_backend` on SQLite and PostgreSQL (long-term memory has no in-memory store). A Postgres
variant skips (or fails in CI) through `postgres_fixtures`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from course_lib.memory.store import LongTermStore, MemoryStore
from course_lib.session_store import InMemorySessionStore, SessionStore, SQLiteSessionStore
from postgres_fixtures import POSTGRES_MARKS, PostgresServer, postgres_server, postgres_url  # noqa: F401


@dataclass
class Backend:
    kind: str
    folder: Path
    url: str | None = None
    server: PostgresServer | None = None
    opened: list = field(default_factory=list)

    @property
    def location(self) -> str:
        """What `--store` and `open_*_store` take for this backend."""
        return self.url if self.url else str(self.folder / "course.sqlite3")

    def session_store(self, **options) -> SessionStore:
        if self.kind == "memory":
            store: SessionStore = InMemorySessionStore()
        elif self.kind == "sqlite":
            store = SQLiteSessionStore(self.folder / "course.sqlite3", **options)
        else:
            from course_lib.postgres.session_store import PostgresSessionStore

            store = PostgresSessionStore(self.url, **options)
        self.opened.append(store)
        return store

    def memory_store(self) -> LongTermStore:
        if self.kind == "postgres":
            from course_lib.postgres.memory_store import PostgresMemoryStore

            store: LongTermStore = PostgresMemoryStore(self.url)
        else:  # the in-memory session store is paired with a SQLite memory file
            store = MemoryStore(self.folder / "course.sqlite3")
        self.opened.append(store)
        return store

    def raw_bytes(self) -> bytes:
        """Every byte of the stored data as it lies on disk (the WAL of PostgreSQL excluded)."""
        if self.kind != "postgres":
            return b"".join(p.read_bytes() for p in self.folder.iterdir() if p.name.startswith("course.sqlite3"))
        assert self.server is not None
        data = self.server.data_directory()
        assert data is not None, "файлы сервера PostgreSQL недоступны для чтения этому процессу"
        with self.server.admin() as connection:
            connection.execute("CHECKPOINT")  # dirty pages in shared buffers go to the files
        import psycopg

        with psycopg.connect(self.url) as connection:
            oid = connection.execute(
                "SELECT oid FROM pg_database WHERE datname = current_database()"
            ).fetchone()[0]
        return b"".join(p.read_bytes() for p in (data / "base" / str(oid)).iterdir() if p.is_file())

    def close(self) -> None:
        for store in self.opened:
            store.close()


def _backend(kind: str, request, tmp_path: Path) -> Backend:
    if kind == "postgres":
        server = request.getfixturevalue("postgres_server")
        return Backend(kind, tmp_path, request.getfixturevalue("postgres_url"), server)
    return Backend(kind, tmp_path)


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=POSTGRES_MARKS)])
def session_backend(request, tmp_path):
    backend = _backend(request.param, request, tmp_path)
    yield backend
    backend.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=POSTGRES_MARKS)])
def memory_backend(request, tmp_path):
    backend = _backend(request.param, request, tmp_path)
    yield backend
    backend.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=POSTGRES_MARKS)])
def shared_backend(request, tmp_path):
    """Stores that several processes share (the in-memory one is private to its process)."""
    backend = _backend(request.param, request, tmp_path)
    yield backend
    backend.close()


@pytest.fixture(params=[pytest.param("postgres", marks=POSTGRES_MARKS)])
def postgres_backend(request, tmp_path):
    """PostgreSQL only (a parameter, so that a skip folds into the file's one skip line)."""
    backend = _backend(request.param, request, tmp_path)
    yield backend
    backend.close()
