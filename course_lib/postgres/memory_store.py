"""`PostgresMemoryStore`: long-term memory (facts, archived turns) on one PostgreSQL database.

Same contract as the SQLite `MemoryStore` (the parametrized memory tests run on both):
- facts: one active value per kind (a partial unique index holds that even when two processes
  learn about one user at once; a per-user advisory lock makes them take turns);
- recall: PostgreSQL's own full-text search with the `russian` configuration (Snowball stemming:
  "кофемашину" and "кофемашиной" are one lexeme), each word also matched as a prefix, ranked by
  `ts_rank`; the search vector is a generated column with a GIN index;
- forgetting deletes the user's rows and rewrites both tables with their indexes (`VACUUM FULL`),
  so the text is gone from the live table and index files, not merely marked dead.

Full-text search needs a UTF-8 database with a real locale (not `C`): under `C` PostgreSQL does
not lower-case Cyrillic, so "Кофемашина" and "кофемашина" would not match. The store refuses such
a database with a clear message.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from course_lib.memory.facts import ExtractedFact, MemoryFact
from course_lib.memory.store import (
    ArchivedTurn,
    LongTermStore,
    MemoryStoreError,
    MemoryUpdate,
    UpdateLog,
    search_words,
)
from course_lib.postgres.database import USER_LOCKS, DatabaseError, PostgresDatabase

SCHEMA = """
CREATE TABLE IF NOT EXISTS course_user_facts (
    id         bigserial PRIMARY KEY,
    user_id    text NOT NULL,
    kind       text NOT NULL,
    value      text NOT NULL,
    session_id text NOT NULL,
    turn       integer NOT NULL,
    created_at double precision NOT NULL,
    active     boolean NOT NULL
);
CREATE INDEX IF NOT EXISTS course_user_facts_by_user ON course_user_facts (user_id, active, kind);
CREATE UNIQUE INDEX IF NOT EXISTS course_user_facts_one_active ON course_user_facts (user_id, kind) WHERE active;
CREATE TABLE IF NOT EXISTS course_archived_turns (
    id             bigserial PRIMARY KEY,
    user_id        text NOT NULL,
    session_id     text NOT NULL,
    turn           integer NOT NULL,
    user_text      text NOT NULL,
    assistant_text text NOT NULL,
    created_at     double precision NOT NULL,
    search         tsvector GENERATED ALWAYS AS
                   (to_tsvector('russian', user_text || ' ' || assistant_text)) STORED
);
CREATE INDEX IF NOT EXISTS course_archived_turns_by_user ON course_archived_turns (user_id, session_id);
CREATE INDEX IF NOT EXISTS course_archived_turns_search ON course_archived_turns USING gin (search);
CREATE TABLE IF NOT EXISTS course_core_blocks (
    user_id    text NOT NULL,
    label      text NOT NULL,
    value      text NOT NULL,
    updated_at double precision NOT NULL,
    PRIMARY KEY (user_id, label)
);
"""
FACT_COLUMNS = "user_id, kind, value, session_id, turn, created_at"
TURN_COLUMNS = "user_id, session_id, turn, user_text, assistant_text, created_at"


class PostgresMemoryStore(LongTermStore):
    def __init__(self, url: str, *, wait_seconds: float = 30.0) -> None:
        try:
            self._db = PostgresDatabase(url, SCHEMA, wait_seconds=wait_seconds)
            with self._db.transaction() as connection:
                ctype = connection.execute("SHOW lc_ctype").fetchone()[0]
        except DatabaseError as error:
            raise MemoryStoreError(f"Хранилище памяти недоступно: {error}") from error
        if ctype.upper() in ("C", "POSIX"):
            self._db.close()
            raise MemoryStoreError(
                f"База PostgreSQL создана с локалью {ctype}: в ней полнотекстовый поиск не приводит "
                "кириллицу к нижнему регистру. Создайте базу с локалью UTF-8, например "
                "CREATE DATABASE course LOCALE 'C.UTF-8' TEMPLATE template0."
            )
        self.url = url

    # --- facts ------------------------------------------------------------------------------

    def remember(
        self, user_id: str, facts: Iterable[ExtractedFact], *, session_id: str, turn: int, now: float
    ) -> MemoryUpdate:
        log = UpdateLog(user_id, session_id=session_id, turn=turn, now=now)
        with self._guard(), self._db.transaction() as connection:
            # Two processes learning about one user take turns: each sees the other's values.
            connection.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (USER_LOCKS, user_id))
            for fact in facts:
                row = connection.execute(
                    f"SELECT {FACT_COLUMNS} FROM course_user_facts WHERE user_id = %s AND kind = %s AND active",
                    (user_id, fact.kind),
                ).fetchone()
                current = MemoryFact(*row) if row else None
                if log.decide(current, fact) is None:
                    continue
                if current is not None:
                    connection.execute(
                        "UPDATE course_user_facts SET active = false WHERE user_id = %s AND kind = %s AND active",
                        (user_id, fact.kind),
                    )
                connection.execute(
                    f"INSERT INTO course_user_facts ({FACT_COLUMNS}, active) VALUES (%s, %s, %s, %s, %s, %s, true)",
                    (user_id, fact.kind, fact.value, session_id, turn, now),
                )
        return log.update()

    def active_facts(self, user_id: str) -> list[MemoryFact]:
        return self._facts("WHERE user_id = %s AND active", (user_id,))

    def fact_history(self, user_id: str) -> list[MemoryFact]:
        return self._facts("WHERE user_id = %s", (user_id,))

    # --- turns --------------------------------------------------------------------------------

    def archive_turn(
        self, user_id: str, session_id: str, turn: int, user_text: str, assistant_text: str, *, now: float
    ) -> None:
        with self._guard(), self._db.transaction() as connection:
            connection.execute(
                f"INSERT INTO course_archived_turns ({TURN_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s)",
                (user_id, session_id, turn, user_text, assistant_text, now),
            )

    def sessions_of(self, user_id: str) -> tuple[str, ...]:
        rows = self._rows(
            "SELECT DISTINCT session_id FROM course_archived_turns WHERE user_id = %s ORDER BY session_id",
            (user_id,),
        )
        return tuple(row[0] for row in rows)

    def turns(self, user_id: str) -> list[ArchivedTurn]:
        rows = self._rows(
            f"SELECT {TURN_COLUMNS} FROM course_archived_turns WHERE user_id = %s ORDER BY id", (user_id,)
        )
        return [ArchivedTurn(*row) for row in rows]

    def search_turns(
        self, user_id: str, text: str, *, limit: int = 5, exclude_session: str | None = None
    ) -> list[ArchivedTurn]:
        query = tsquery(text)
        if query is None:
            return []
        rows = self._rows(
            f"SELECT {TURN_COLUMNS}, ts_rank(search, q, 1) AS score "
            "FROM course_archived_turns, to_tsquery('russian', %s) AS q "
            "WHERE search @@ q AND user_id = %s AND session_id IS DISTINCT FROM %s "
            "ORDER BY score DESC, id DESC LIMIT %s",
            (query, user_id, exclude_session, limit),
        )
        return [ArchivedTurn(*row) for row in rows]

    # --- forgetting -------------------------------------------------------------------------

    def forget(self, user_id: str) -> int:
        with self._guard():
            with self._db.transaction() as connection:
                facts = connection.execute("DELETE FROM course_user_facts WHERE user_id = %s", (user_id,)).rowcount
                turns = connection.execute(
                    "DELETE FROM course_archived_turns WHERE user_id = %s", (user_id,)
                ).rowcount
                blocks = connection.execute("DELETE FROM course_core_blocks WHERE user_id = %s", (user_id,)).rowcount
            # Deleted rows stay in heap pages and in the GIN and b-tree indexes until rewritten.
            self._db.erase_deleted_rows("course_user_facts", "course_archived_turns", "course_core_blocks")
        return facts + turns + blocks

    def forget_matching(self, user_id: str, text: str) -> int:
        query = tsquery(text)
        if query is None:
            return 0
        with self._guard():
            with self._db.transaction() as connection:
                deleted = connection.execute(
                    "DELETE FROM course_archived_turns WHERE user_id = %s AND search @@ to_tsquery('russian', %s)",
                    (user_id, query),
                ).rowcount
            if deleted:
                self._db.erase_deleted_rows("course_archived_turns")
        return deleted

    # --- core memory ------------------------------------------------------------------------

    def core_blocks(self, user_id: str) -> dict[str, str]:
        rows = self._rows("SELECT label, value FROM course_core_blocks WHERE user_id = %s ORDER BY label", (user_id,))
        return {label: value for label, value in rows}

    def save_core_block(self, user_id: str, label: str, value: str, *, now: float) -> None:
        with self._guard(), self._db.transaction() as connection:
            if value:
                connection.execute(
                    "INSERT INTO course_core_blocks (user_id, label, value, updated_at) VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (user_id, label) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                    (user_id, label, value, now),
                )
            else:
                connection.execute(
                    "DELETE FROM course_core_blocks WHERE user_id = %s AND label = %s", (user_id, label)
                )

    def close(self) -> None:
        self._db.close()

    # --- internals ----------------------------------------------------------------------------

    def _facts(self, where: str, parameters: Sequence[object]) -> list[MemoryFact]:
        rows = self._rows(f"SELECT {FACT_COLUMNS}, active FROM course_user_facts {where} ORDER BY id", parameters)
        return [MemoryFact(*row[:6], active=bool(row[6])) for row in rows]

    def _rows(self, sql: str, parameters: Sequence[object]) -> list[tuple]:
        with self._guard(), self._db.transaction() as connection:
            return connection.execute(sql, parameters).fetchall()

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except DatabaseError as error:
            raise MemoryStoreError(f"Хранилище памяти: {error}") from error


def tsquery(text: str) -> str | None:
    """A `to_tsquery('russian', …)` text for the words of `text`: any of them, each also as a prefix.

    Words are runs of letters and digits, so a quote or an operator in the user's text cannot
    change the query's syntax.
    """
    words = [f"'{word}':*" for word in search_words(text)]
    return " | ".join(words) or None
