"""`PostgresSessionStore`: the `SessionStore` interface on one PostgreSQL database.

Same contract as `SQLiteSessionStore` (the parametrized store tests run on both):
- a commit is one transaction: `SELECT … FOR UPDATE` of the session row, the version check, the
  owner check, then the row and the new messages; a stale version writes nothing;
- `session_lock` is a session-level advisory lock on the thread's connection: it works across
  processes and machines, and the server releases it when the holder's connection dies (a killed
  process: at once; a dead machine: after `DEAD_PEER_SECONDS`), so another process can continue;
- `expire_idle` skips sessions whose lock another connection holds (a reply in progress);
- `compact` (after forgetting a user) rewrites the tables and their indexes (`VACUUM FULL`), so
  deleted text does not stay in the live files.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager

from course_lib.messages import Message
from course_lib.russian import decimal
from course_lib.postgres.database import SESSION_LOCKS, BusyError, DatabaseError, PostgresDatabase
from course_lib.session_store import (
    SessionBusyError,
    SessionConflictError,
    SessionState,
    SessionStore,
    SessionStoreError,
    _conflict_text,
    _whole,
    check_storable,
    checked_version,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS course_sessions (
    session_id text PRIMARY KEY,
    owner      text,
    summary    text,
    version    bigint NOT NULL,
    last_used  double precision NOT NULL
);
CREATE INDEX IF NOT EXISTS course_sessions_by_last_used ON course_sessions (last_used);
CREATE INDEX IF NOT EXISTS course_sessions_by_owner ON course_sessions (owner);
CREATE TABLE IF NOT EXISTS course_messages (
    session_id text NOT NULL REFERENCES course_sessions (session_id) ON DELETE CASCADE,
    position   integer NOT NULL,
    role       text NOT NULL CHECK (role IN ('user', 'assistant')),
    content    text NOT NULL,
    PRIMARY KEY (session_id, position)
);
"""


EXPIRY_BATCH = 500
"""Idle sessions deleted per transaction: advisory locks for at most this many at once."""
EXPIRE_BATCH = """
WITH candidates AS MATERIALIZED (
    SELECT session_id FROM course_sessions
    WHERE last_used < %s AND NOT (session_id = ANY(%s))
    ORDER BY last_used LIMIT %s
), deleted AS (
    DELETE FROM course_sessions WHERE session_id IN (
        SELECT session_id FROM candidates WHERE pg_try_advisory_xact_lock(%s, hashtext(session_id))
    )
    RETURNING 1
)
SELECT (SELECT count(*) FROM candidates), (SELECT count(*) FROM deleted)
"""


class PostgresSessionStore(SessionStore):
    def __init__(self, url: str, *, wait_seconds: float = 30.0) -> None:
        self._wait_seconds = wait_seconds
        try:
            self._db = PostgresDatabase(url, SCHEMA, wait_seconds=wait_seconds)
        except DatabaseError as error:
            raise SessionStoreError(f"Хранилище сессий недоступно: {error}") from error
        self.url = url

    def close(self) -> None:
        self._db.close()

    def load(self, session_id: str) -> SessionState:
        # One statement, one snapshot: the row and its messages are of the same commit.
        with self._guard(), self._db.transaction() as connection:
            rows = connection.execute(
                "SELECT s.summary, s.version, s.owner, m.role, m.content FROM course_sessions AS s "
                "LEFT JOIN course_messages AS m ON m.session_id = s.session_id "
                "WHERE s.session_id = %s ORDER BY m.position",
                (session_id,),
            ).fetchall()
        if not rows:
            return SessionState()
        summary, version, owner = rows[0][:3]
        messages = _whole({"role": row[3], "content": row[4]} for row in rows if row[3] is not None)
        return SessionState(messages, summary, version, owner)

    def commit(
        self,
        session_id: str,
        expected_version: int,
        messages: Sequence[Message],
        summary: str | None,
        *,
        unchanged_prefix: int,
        now: float,
        owner: str | None = None,
    ) -> SessionState:
        check_storable(session_id, owner, summary, messages)
        stored = _whole(messages)
        new = [(position, m["role"], m["content"]) for position, m in enumerate(messages) if position >= unchanged_prefix]
        with self._guard(), self._db.transaction() as connection:
            row = connection.execute(
                "SELECT version, owner FROM course_sessions WHERE session_id = %s FOR UPDATE", (session_id,)
            ).fetchone()
            current = checked_version(session_id, row, owner, expected_version)
            if row is None:
                inserted = connection.execute(
                    "INSERT INTO course_sessions (session_id, owner, summary, version, last_used) "
                    "VALUES (%s, %s, %s, 1, %s) ON CONFLICT (session_id) DO NOTHING",
                    (session_id, owner, summary, now),
                )
                if inserted.rowcount != 1:  # another process created it since our SELECT
                    raise SessionConflictError(_conflict_text(session_id))
            else:
                connection.execute(
                    "UPDATE course_sessions SET summary = %s, version = version + 1, last_used = %s "
                    "WHERE session_id = %s",
                    (summary, now, session_id),
                )
            connection.execute(
                "DELETE FROM course_messages WHERE session_id = %s AND position >= %s",
                (session_id, unchanged_prefix),
            )
            if new:
                connection.execute(
                    "INSERT INTO course_messages (session_id, position, role, content) "
                    "SELECT %s, * FROM unnest(%s::integer[], %s::text[], %s::text[])",
                    (session_id, [n[0] for n in new], [n[1] for n in new], [n[2] for n in new]),
                )
        return SessionState(stored, summary, current + 1, owner)

    def delete(self, session_id: str) -> None:
        with self._guard(), self._db.transaction() as connection:
            connection.execute("DELETE FROM course_sessions WHERE session_id = %s", (session_id,))

    def compact(self) -> None:
        # Deleted rows stay in heap pages and index entries until the tables are rewritten.
        with self._guard():
            self._db.erase_deleted_rows("course_sessions", "course_messages")

    def session_ids(self) -> tuple[str, ...]:
        with self._guard(), self._db.transaction() as connection:
            rows = connection.execute(
                "SELECT session_id FROM course_sessions ORDER BY last_used, session_id"
            ).fetchall()
        return tuple(row[0] for row in rows)

    def sessions_owned_by(self, owner: str | None) -> tuple[str, ...]:
        where, parameters = ("owner IS NULL", ()) if owner is None else ("owner = %s", (owner,))
        with self._guard(), self._db.transaction() as connection:
            rows = connection.execute(
                f"SELECT session_id FROM course_sessions WHERE {where} ORDER BY session_id", parameters
            ).fetchall()
        return tuple(row[0] for row in rows)

    def expire_idle(self, now: float, ttl_seconds: float, busy: Collection[str] = ()) -> int:
        deadline = now - ttl_seconds  # sessions_to_expire's rule in SQL: last used before the deadline
        # A session whose lock another connection holds has a reply in progress: not idle. The
        # try-lock is transaction-scoped, and each one is an entry in the server's shared lock
        # table (about 64 per connection): one transaction over 20,000 idle sessions ran out of
        # shared memory and failed every turn. So: the oldest EXPIRY_BATCH at a time, one
        # transaction each, until a batch finds fewer or frees nothing (all of it busy).
        removed = 0
        while True:
            with self._guard(), self._db.transaction() as connection:
                row = connection.execute(EXPIRE_BATCH, (deadline, list(busy), EXPIRY_BATCH, SESSION_LOCKS))
                found, deleted = row.fetchone()
            removed += deleted
            if found < EXPIRY_BATCH or deleted == 0:
                return removed

    @contextmanager
    def session_lock(self, session_id: str) -> Iterator[None]:
        with self._guard():
            taken = self._db.try_lock(session_id)
        if not taken:
            raise SessionBusyError(
                f"Сессия {session_id} занята другим процессом дольше {decimal(self._wait_seconds, None)} с."
            )
        try:
            yield
        finally:
            self._db.unlock(session_id)

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except BusyError as error:
            raise SessionBusyError(f"Хранилище сессий занято: {error}") from error
        except DatabaseError as error:
            raise SessionStoreError(f"Хранилище сессий: {error}") from error
