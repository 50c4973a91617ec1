"""Reading a store's address — a SQLite file's path or a PostgreSQL URL — without opening anything.

Its own module so that the settings can validate `CHAT_STORE_URL` without importing the stores
(and through them the LLM client); `course_lib.store_url` opens what this parses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

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
