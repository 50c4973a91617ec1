"""`MemoryStore`: a user's long-term facts and archived turns in one SQLite file.

- Facts: one active value per kind; a new value replaces the old one for use, and the old one
  stays in the history with `active = 0` (the customer's new phone number wins, the old is kept).
- Turns: every committed turn of a user, searchable with FTS5 and ranked by BM25.
- Forgetting deletes a user's rows, rebuilds the search index and compacts the file, so the text
  is gone from the file's bytes — not merely hidden.

Every query names the user: one user's memory cannot reach another's request.

`LongTermStore` is the interface `LongTermMemory` needs; `MemoryStore` (SQLite) and
`course_lib.postgres.memory_store.PostgresMemoryStore` implement it, and one parametrized test suite
runs on both.
"""

from __future__ import annotations

import os
import re
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from course_lib.memory.facts import ExtractedFact, MemoryFact
from course_lib.sqlite_file import SQLiteFile

SCHEMA = """
CREATE TABLE IF NOT EXISTS user_facts (
    id         INTEGER PRIMARY KEY,
    user_id    TEXT NOT NULL,
    kind       TEXT NOT NULL,
    value      TEXT NOT NULL,
    session_id TEXT NOT NULL,
    turn       INTEGER NOT NULL,
    created_at REAL NOT NULL,
    active     INTEGER NOT NULL CHECK (active IN (0, 1))
);
CREATE INDEX IF NOT EXISTS user_facts_by_user ON user_facts(user_id, active, kind);
CREATE TABLE IF NOT EXISTS archived_turns (
    id             INTEGER PRIMARY KEY,
    user_id        TEXT NOT NULL,
    session_id     TEXT NOT NULL,
    turn           INTEGER NOT NULL,
    user_text      TEXT NOT NULL,
    assistant_text TEXT NOT NULL,
    created_at     REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS archived_turns_by_user ON archived_turns(user_id, session_id);
CREATE TABLE IF NOT EXISTS core_blocks (
    user_id    TEXT NOT NULL,
    label      TEXT NOT NULL,
    value      TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (user_id, label)
);
CREATE VIRTUAL TABLE IF NOT EXISTS archived_turns_fts USING fts5(
    user_text, assistant_text, content='archived_turns', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2'
);
"""

# Words that match almost every support turn: searching for them only adds noise.
STOP_WORDS = frozenset(
    "как что где когда это мой моя мое мои меня мне вас вам ваш ваша ваше все для при про или так "
    "уже еще есть был была было были будет можно нужно надо очень спасибо здравствуйте пожалуйста "
    "напомните скажите подскажите который которая которое".split()
)
PREFIX_CHARS = 5
"""Russian inflects: "кофемашину", "кофемашиной" share a prefix, so a word is searched as `кофем*`."""


@dataclass(frozen=True)
class ArchivedTurn:
    user_id: str
    session_id: str
    turn: int
    user_text: str
    assistant_text: str
    created_at: float
    score: float = 0.0
    """BM25 relevance (higher is better) when the turn comes from a search."""


@dataclass(frozen=True)
class MemoryUpdate:
    """What one `remember` call changed."""

    added: tuple[MemoryFact, ...] = ()
    replaced: tuple[tuple[MemoryFact, MemoryFact], ...] = ()
    """(old, new) pairs: the old value stays in the history, inactive."""
    unchanged: tuple[MemoryFact, ...] = ()


class UpdateLog:
    """The decision every store makes per new fact, and the `MemoryUpdate` it adds up to.

    `decide()` returns the row to insert, or None when the active value of that kind is the same
    (case aside); the store then deactivates `current` (when there is one) and inserts the row.
    """

    def __init__(self, user_id: str, *, session_id: str, turn: int, now: float) -> None:
        self._row = (user_id, session_id, turn, now)
        self.added: list[MemoryFact] = []
        self.replaced: list[tuple[MemoryFact, MemoryFact]] = []
        self.unchanged: list[MemoryFact] = []

    def decide(self, current: MemoryFact | None, fact: ExtractedFact) -> MemoryFact | None:
        if current is not None and current.value.casefold() == fact.value.casefold():
            self.unchanged.append(current)
            return None
        user_id, session_id, turn, now = self._row
        new = MemoryFact(user_id, fact.kind, fact.value, session_id, turn, now)
        if current is not None:
            self.replaced.append((_inactive(current), new))
        else:
            self.added.append(new)
        return new

    def update(self) -> MemoryUpdate:
        return MemoryUpdate(tuple(self.added), tuple(self.replaced), tuple(self.unchanged))


class MemoryStoreError(RuntimeError):
    """A memory store failed (a database error); the message says why, in Russian."""


class LongTermStore(ABC):
    """What long-term memory keeps per user: facts with their history, and archived turns."""

    @abstractmethod
    def remember(
        self, user_id: str, facts: Iterable[ExtractedFact], *, session_id: str, turn: int, now: float
    ) -> MemoryUpdate:
        """Store new values (a changed value replaces the active one, which stays in the history)."""

    @abstractmethod
    def active_facts(self, user_id: str) -> list[MemoryFact]:
        """The values in use: the newest of each kind."""

    @abstractmethod
    def fact_history(self, user_id: str) -> list[MemoryFact]:
        """Every value ever stored for the user, oldest first, replaced ones included."""

    @abstractmethod
    def archive_turn(
        self, user_id: str, session_id: str, turn: int, user_text: str, assistant_text: str, *, now: float
    ) -> None:
        """Keep a committed turn, searchable."""

    @abstractmethod
    def sessions_of(self, user_id: str) -> tuple[str, ...]:
        """The sessions the user had turns in, sorted."""

    @abstractmethod
    def turns(self, user_id: str) -> list[ArchivedTurn]:
        """The user's archived turns, oldest first."""

    @abstractmethod
    def search_turns(
        self, user_id: str, text: str, *, limit: int = 5, exclude_session: str | None = None
    ) -> list[ArchivedTurn]:
        """The user's archived turns that best match `text`, best first."""

    @abstractmethod
    def forget(self, user_id: str) -> int:
        """Erase the user's facts, turns and core memory for good; return how many rows were deleted."""

    @abstractmethod
    def forget_matching(self, user_id: str, text: str) -> int:
        """Erase for good the user's archived turns that a search for `text` finds; return how many."""

    @abstractmethod
    def core_blocks(self, user_id: str) -> dict[str, str]:
        """The user's core memory (notebook 09): label → text."""

    @abstractmethod
    def save_core_block(self, user_id: str, label: str, value: str, *, now: float) -> None:
        """Replace one block's text (an empty text removes the block)."""

    @abstractmethod
    def close(self) -> None:
        """Release connections; the store is not used afterwards."""


class MemoryStore(LongTermStore):
    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        wait_seconds: float = 30.0,
        make_query: Callable[[str], str | None] | None = None,
    ) -> None:
        """`make_query` turns a customer's text into the FTS5 query of `search_turns` and
        `forget_matching` (`fts_query` by default; notebook 08 passes the student's exercise)."""
        self._make_query = make_query if make_query is not None else fts_query
        try:
            self._db = SQLiteFile(path, SCHEMA, wait_seconds=wait_seconds)
        except sqlite3.OperationalError as error:
            if "fts5" not in str(error).lower():
                raise
            raise MemoryStoreError(
                f"SQLite этого Python ({sqlite3.sqlite_version}) собран без FTS5, а поиску по старым ходам "
                "нужен полнотекстовый индекс. Возьмите Python с обычной сборкой SQLite (python.org, Debian, "
                "Ubuntu, conda) или храните память в PostgreSQL: CHAT_STORE_URL=postgresql://…"
            ) from None
        self.path = self._db.path
        self._transaction = self._db.transaction
        self._connection = self._db.connection

    # --- facts ------------------------------------------------------------------------------

    def remember(
        self,
        user_id: str,
        facts: Iterable[ExtractedFact],
        *,
        session_id: str,
        turn: int,
        now: float,
    ) -> MemoryUpdate:
        log = UpdateLog(user_id, session_id=session_id, turn=turn, now=now)
        with self._transaction() as connection:
            for fact in facts:
                current = self._active_fact(connection, user_id, fact.kind)
                if log.decide(current, fact) is None:
                    continue
                if current is not None:
                    connection.execute(
                        "UPDATE user_facts SET active = 0 WHERE user_id = ? AND kind = ? AND active = 1",
                        (user_id, fact.kind),
                    )
                connection.execute(
                    "INSERT INTO user_facts (user_id, kind, value, session_id, turn, created_at, active) "
                    "VALUES (?, ?, ?, ?, ?, ?, 1)",
                    (user_id, fact.kind, fact.value, session_id, turn, now),
                )
        return log.update()

    def active_facts(self, user_id: str) -> list[MemoryFact]:
        """The values in use: the newest of each kind."""
        return self._facts("WHERE user_id = ? AND active = 1", (user_id,))

    def fact_history(self, user_id: str) -> list[MemoryFact]:
        """Every value ever stored for the user, oldest first, replaced ones included."""
        return self._facts("WHERE user_id = ?", (user_id,))

    # --- turns --------------------------------------------------------------------------------

    def archive_turn(
        self, user_id: str, session_id: str, turn: int, user_text: str, assistant_text: str, *, now: float
    ) -> None:
        with self._transaction() as connection:
            cursor = connection.execute(
                "INSERT INTO archived_turns (user_id, session_id, turn, user_text, assistant_text, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (user_id, session_id, turn, user_text, assistant_text, now),
            )
            connection.execute(
                "INSERT INTO archived_turns_fts (rowid, user_text, assistant_text) VALUES (?, ?, ?)",
                (cursor.lastrowid, user_text, assistant_text),
            )

    def sessions_of(self, user_id: str) -> tuple[str, ...]:
        """The sessions the user had turns in (to forget them too)."""
        rows = self._connection().execute(
            "SELECT DISTINCT session_id FROM archived_turns WHERE user_id = ? ORDER BY session_id", (user_id,)
        )
        return tuple(row[0] for row in rows)

    def turns(self, user_id: str) -> list[ArchivedTurn]:
        rows = self._connection().execute(
            "SELECT user_id, session_id, turn, user_text, assistant_text, created_at FROM archived_turns "
            "WHERE user_id = ? ORDER BY id",
            (user_id,),
        )
        return [ArchivedTurn(*row) for row in rows]

    def search_turns(
        self, user_id: str, text: str, *, limit: int = 5, exclude_session: str | None = None
    ) -> list[ArchivedTurn]:
        """The user's archived turns that best match `text` (BM25), best first."""
        query = self._make_query(text)
        if query is None:
            return []
        rows = self._connection().execute(
            "SELECT t.user_id, t.session_id, t.turn, t.user_text, t.assistant_text, t.created_at, "
            "       -bm25(archived_turns_fts) AS score "
            "FROM archived_turns_fts JOIN archived_turns AS t ON t.id = archived_turns_fts.rowid "
            "WHERE archived_turns_fts MATCH ? AND t.user_id = ? AND t.session_id IS NOT ? "
            "ORDER BY score DESC, t.id DESC LIMIT ?",
            (query, user_id, exclude_session, limit),
        )
        return [ArchivedTurn(*row) for row in rows]

    # --- forgetting -------------------------------------------------------------------------

    def forget(self, user_id: str) -> int:
        """Erase the user's facts, turns and core memory from the file; return how many rows were deleted."""
        with self._transaction() as connection:
            facts = connection.execute("DELETE FROM user_facts WHERE user_id = ?", (user_id,)).rowcount
            turns = connection.execute("DELETE FROM archived_turns WHERE user_id = ?", (user_id,)).rowcount
            blocks = connection.execute("DELETE FROM core_blocks WHERE user_id = ?", (user_id,)).rowcount
            # An FTS5 index keeps deleted terms in old segments until it is rebuilt.
            connection.execute("INSERT INTO archived_turns_fts (archived_turns_fts) VALUES ('rebuild')")
        self._erase_free_pages()
        return facts + turns + blocks

    def forget_matching(self, user_id: str, text: str) -> int:
        query = self._make_query(text)
        if query is None:
            return 0
        with self._transaction() as connection:
            deleted = connection.execute(
                "DELETE FROM archived_turns WHERE user_id = ? AND id IN "
                "(SELECT rowid FROM archived_turns_fts WHERE archived_turns_fts MATCH ?)",
                (user_id, query),
            ).rowcount
            if deleted:
                connection.execute("INSERT INTO archived_turns_fts (archived_turns_fts) VALUES ('rebuild')")
        if deleted:
            self._erase_free_pages()
        return deleted

    def _erase_free_pages(self) -> None:
        connection = self._connection()
        # Nothing deleted may remain in free pages or in the write-ahead log.
        connection.execute("VACUUM")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # --- core memory ------------------------------------------------------------------------

    def core_blocks(self, user_id: str) -> dict[str, str]:
        rows = self._connection().execute(
            "SELECT label, value FROM core_blocks WHERE user_id = ? ORDER BY label", (user_id,)
        )
        return dict(rows)

    def save_core_block(self, user_id: str, label: str, value: str, *, now: float) -> None:
        with self._transaction() as connection:
            if value:
                connection.execute(
                    "INSERT INTO core_blocks (user_id, label, value, updated_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (user_id, label) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                    (user_id, label, value, now),
                )
            else:
                connection.execute("DELETE FROM core_blocks WHERE user_id = ? AND label = ?", (user_id, label))

    def close(self) -> None:
        self._db.close()

    # --- internals ----------------------------------------------------------------------------

    def _facts(self, where: str, parameters: Sequence[object]) -> list[MemoryFact]:
        rows = self._connection().execute(
            "SELECT user_id, kind, value, session_id, turn, created_at, active FROM user_facts "
            f"{where} ORDER BY id",
            parameters,
        )
        return [MemoryFact(*row[:6], active=bool(row[6])) for row in rows]

    @staticmethod
    def _active_fact(connection: sqlite3.Connection, user_id: str, kind: str) -> MemoryFact | None:
        row = connection.execute(
            "SELECT user_id, kind, value, session_id, turn, created_at FROM user_facts "
            "WHERE user_id = ? AND kind = ? AND active = 1",
            (user_id, kind),
        ).fetchone()
        return MemoryFact(*row) if row else None


def search_words(text: str) -> list[str]:
    """The words of `text` worth searching for: casefolded, no noise words, no repeats."""
    words = [
        word
        for word in re.findall(r"\w{3,}", text.casefold())
        if word not in STOP_WORDS and not (word.isdigit() and len(word) < 3)
    ]
    return list(dict.fromkeys(words))


def fts_query(text: str) -> str | None:
    """An FTS5 query for the words of `text`: any of them, each as a quoted prefix."""
    words = []
    for word in search_words(text):
        stem = word[:PREFIX_CHARS] if len(word) > PREFIX_CHARS and not word.isdigit() else word
        words.append(f'"{stem}"*')
    return " OR ".join(dict.fromkeys(words)) or None


def _inactive(fact: MemoryFact) -> MemoryFact:
    return MemoryFact(fact.user_id, fact.kind, fact.value, fact.session_id, fact.turn, fact.created_at, False)
