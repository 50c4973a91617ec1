"""Where the chat keeps its data, said by one string: a SQLite file's path or a PostgreSQL URL.

- `.course-data/sessions.sqlite3`, `sqlite:///abs/path.sqlite3`: one SQLite file (the embedded
  default; sessions and long-term memory share it);
- `postgresql://user:password@host:5432/db` (or `postgres://…`): one PostgreSQL database shared by
  many app processes on many machines; psycopg is imported only then;
- anything else that looks like `scheme:` is refused with a clear message — it must never quietly
  become a SQLite file in a folder named `postgresql:`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from course_lib.memory.store import LongTermStore
from course_lib.session_store import SessionStore

POSTGRES_SCHEMES = ("postgresql", "postgres")
SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):")  # two letters at least: "C:\..." is a path


class StoreUrlError(ValueError):
    """The store's address cannot be used; the message says why, in Russian."""


@dataclass(frozen=True)
class StoreLocation:
    kind: Literal["sqlite", "postgresql"]
    target: str
    """The file's path, or the database URL."""

    def display(self) -> str:
        """For messages: the path, or the URL without its password."""
        if self.kind == "sqlite":
            return f"файл SQLite {self.target}"
        from urllib.parse import urlsplit

        parts = urlsplit(self.target)
        where = self.target.replace(f":{parts.password}@", ":***@", 1) if parts.password else self.target
        return f"PostgreSQL {where}"


def parse_store_location(text: str) -> StoreLocation:
    if not isinstance(text, str) or not text.strip():
        raise StoreUrlError("Адрес хранилища пуст: укажите путь к файлу SQLite или postgresql://…")
    text = text.strip()
    match = SCHEME.match(text)
    if match is None:
        return StoreLocation("sqlite", text)
    scheme = match.group(1).lower()
    rest = text[match.end():]
    if scheme in POSTGRES_SCHEMES:
        if not rest.startswith("//"):
            raise StoreUrlError(
                "Адрес PostgreSQL пишется так: postgresql://пользователь:пароль@хост:5432/база"
            )
        return StoreLocation("postgresql", text)
    if scheme == "sqlite":
        path = rest[2:] if rest.startswith("//") else rest  # sqlite:///abs → /abs, sqlite:rel → rel
        if not path:
            raise StoreUrlError("В адресе sqlite: нет пути к файлу, например sqlite:///tmp/course.sqlite3")
        return StoreLocation("sqlite", path)
    raise StoreUrlError(
        f"Неизвестная схема «{scheme}:» в адресе хранилища. Допустимы: путь к файлу SQLite "
        "(например .course-data/sessions.sqlite3; файл с двоеточием в имени — как ./имя), "
        "sqlite:///путь или postgresql://пользователь:пароль@хост:5432/база."
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
