"""Where the chat keeps its data, said by one string: a SQLite file's path or a PostgreSQL URL.

- `.course-data/sessions.sqlite3`, `sqlite:///abs/path.sqlite3`: one SQLite file (the embedded
  default; sessions and long-term memory share it);
- `postgresql://user:password@host:5432/db` (or `postgres://…`): one PostgreSQL database shared by
  many app processes on many machines; psycopg is imported only then;
- anything else that looks like `scheme:` is refused with a clear message — it must never quietly
  become a SQLite file in a folder named `postgresql:`.
"""

from __future__ import annotations

from pathlib import Path

from course_lib.memory.store import LongTermStore
from course_lib.session_store import SessionStore
from course_lib.store_location import (  # noqa: F401 - re-exported for callers of this module
    POSTGRES_SCHEMES,
    StoreLocation,
    StoreUrlError,
    parse_store_location,
)


def open_session_store(location: StoreLocation | str, **options: float) -> SessionStore:
    location = _location(location)
    if location.kind == "postgresql":
        _require_psycopg()
        from course_lib.postgres.session_store import PostgresSessionStore

        return PostgresSessionStore(location.target, **options)
    from course_lib.session_store import SQLiteSessionStore

    return SQLiteSessionStore(Path(location.target), **options)


def open_memory_store(location: StoreLocation | str, **options: float) -> LongTermStore:
    location = _location(location)
    if location.kind == "postgresql":
        _require_psycopg()
        from course_lib.postgres.memory_store import PostgresMemoryStore

        return PostgresMemoryStore(location.target, **options)
    from course_lib.memory.store import MemoryStore

    return MemoryStore(Path(location.target), **options)


def _location(location: StoreLocation | str) -> StoreLocation:
    return location if isinstance(location, StoreLocation) else parse_store_location(location)


def _require_psycopg() -> None:
    try:
        import psycopg  # noqa: F401
    except ImportError as error:
        raise StoreUrlError(
            "Для PostgreSQL нужен пакет psycopg (он есть в requirements.txt): выполните make install."
        ) from error
