"""Where sessions live: `SessionStore`, with an in-memory and a SQLite implementation.

`ChatService` decides *what* a turn changes; a store only keeps sessions and applies a turn as one
atomic commit. The commit names the version it was computed from: if the session changed in the
meantime (another process, a lease that ran out), it fails and nothing is written — a turn is
never lost and never interleaved with another.

- `InMemorySessionStore`: today's behaviour; everything is gone when the process ends.
- `SQLiteSessionStore`: one file (the standard library's `sqlite3`, WAL). Sessions survive a
  restart and can be shared by several processes; a per-session lease keeps two processes from
  working on the same session at once.
- `course_lib.postgres.session_store.PostgresSessionStore`: one PostgreSQL database shared by
  processes on many machines (`open_session_store` picks a store by URL, see `store_url`).

A session belongs to the user who started it (`owner`, None for a conversation without a user):
a commit for another user is refused, so one user can neither read nor extend another's session.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ContextManager

from course_lib.course_versions.take_lease import take_lease as course_take_lease
from course_lib.messages import Message
from course_lib.russian import decimal
from course_lib.sqlite_file import SQLiteFile
from course_lib.whole_history import BrokenHistoryError, WholeHistory


class SessionStoreError(RuntimeError):
    """The store cannot do what was asked; the message says why, in Russian."""


class SessionConflictError(SessionStoreError):
    """The session changed after it was loaded; the turn was not saved."""


class SessionBusyError(SessionStoreError):
    """Another process is answering in this session right now."""


class SessionOwnerError(SessionStoreError):
    """The session belongs to another user (or to none, or the caller gave none)."""


@dataclass(frozen=True)
class SessionState:
    """A session as stored: exact recent messages, the summary of older ones, and a version.

    `messages` is a `WholeHistory`: whole user/assistant turns, frozen, checked when stored (and
    when read back from a file someone else could have edited). `version` is 0 for a session that
    was never committed and grows by one with every commit. `owner`: the user who started it.
    """

    messages: WholeHistory = field(default_factory=WholeHistory)
    summary: str | None = None
    version: int = 0
    owner: str | None = None


TakeLease = Callable[[dict | None, dict, float, float], dict | None]
"""take_lease(current, claimant, now, lease_seconds): the new lease, or None while the session is busy."""

SessionsToExpire = Callable[[Mapping[str, float], float, float, Collection[str]], list[str]]
"""sessions_to_expire(last_used, now, ttl_seconds, busy): the ids the TTL removes now, sorted."""


def sessions_to_expire(last_used: Mapping[str, float], now: float, ttl_seconds: float,
                       busy: Collection[str]) -> list[str]:
    """The TTL rule, notebook 07's fill-in: ids of the sessions idle for longer than `ttl_seconds`
    at `now` (`last_used[id]`: when its last turn was committed), except the `busy` ones, sorted.
    The inputs are only read. Both stores below expire sessions by it (`sessions_to_expire=`)."""
    expired = []
    for session_id, used_at in last_used.items():
        idle_seconds = now - used_at
        if idle_seconds <= ttl_seconds:
            continue  # idle for exactly the TTL is not "longer than": kept
        if session_id in busy:
            continue  # a turn is running (here or in another process): never expire it mid-turn
        expired.append(session_id)
    return sorted(expired)


def _rule(rule: SessionsToExpire | None) -> SessionsToExpire:
    return rule if rule is not None else sessions_to_expire  # the course's rule by default


class SessionStore(ABC):
    """The interface `ChatService` needs. Implementations must be safe to use from threads."""

    @abstractmethod
    def load(self, session_id: str) -> SessionState:
        """The session's committed state (an empty `SessionState` for an unknown id)."""

    @abstractmethod
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
        """Replace the session's state in one atomic step, if it is still at `expected_version`.

        `unchanged_prefix` says how many leading messages are the ones already stored (a plain turn
        only appends), so a store can write just the rest. Raises `SessionConflictError` otherwise.
        `owner` is the user committing: the first commit makes them the owner, a later commit by
        anyone else raises `SessionOwnerError` and writes nothing.
        """

    @abstractmethod
    def delete(self, session_id: str) -> None:
        """Forget a session completely (no-op for an unknown id)."""

    @abstractmethod
    def session_ids(self) -> tuple[str, ...]:
        """Ids of the stored sessions, least recently committed first."""

    @abstractmethod
    def sessions_owned_by(self, owner: str | None) -> tuple[str, ...]:
        """Ids of the sessions `owner` started (what forgetting a user deletes), sorted; None: the
        sessions without an owner (no user, or a file from before sessions had owners)."""

    @abstractmethod
    def expire_idle(self, now: float, ttl_seconds: float, busy: Collection[str] = ()) -> int:
        """Delete sessions idle for longer than `ttl_seconds` at `now` (last committed before
        `now - ttl_seconds`), except `busy` ones and ones another process is answering in; return
        how many."""

    def session_lock(self, session_id: str) -> ContextManager[None]:
        """Exclusive right to work on a session across processes (a no-op within one process)."""
        return nullcontext()

    def compact(self) -> None:
        """Make deletions final on disk (nothing to do for a store that has no disk)."""

    def close(self) -> None:
        """Release resources (connections); the store is not used afterwards."""


class InMemorySessionStore(SessionStore):
    """Sessions in a dict of this process, ordered by last commit (the course's notebooks 02–05).

    Which idle sessions a TTL removes is decided by `sessions_to_expire(last_used, now, ttl_seconds,
    busy)` — notebook 07's fill-in (the course's rule by default)."""

    def __init__(self, *, sessions_to_expire: SessionsToExpire | None = None) -> None:
        self._states: OrderedDict[str, tuple[SessionState, float]] = OrderedDict()
        self._lock = threading.Lock()
        self._sessions_to_expire = _rule(sessions_to_expire)

    def load(self, session_id: str) -> SessionState:
        with self._lock:
            entry = self._states.get(session_id)
        return entry[0] if entry else SessionState()

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
        with self._lock:
            entry = self._states.get(session_id)
            current = entry[0].version if entry else 0
            if entry is not None:
                check_owner(session_id, entry[0].owner, owner)
            if current != expected_version:
                raise SessionConflictError(_conflict_text(session_id))
            base = entry[0].messages if entry else WholeHistory()
            state = SessionState(_grown(base, messages, unchanged_prefix), summary, current + 1, owner)
            self._states[session_id] = (state, now)
            self._states.move_to_end(session_id)
        return state

    def delete(self, session_id: str) -> None:
        with self._lock:
            self._states.pop(session_id, None)

    def snapshot(self) -> object:
        """Every session as it is now, for `restore` after a what-if turn (the memory benchmark).
        Cheap: a `SessionState` is immutable and its `WholeHistory` is never changed in place."""
        with self._lock:
            return OrderedDict(self._states)

    def restore(self, snapshot: object) -> None:
        with self._lock:
            self._states = OrderedDict(snapshot)  # type: ignore[arg-type]

    def session_ids(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(self._states)

    def sessions_owned_by(self, owner: str | None) -> tuple[str, ...]:
        with self._lock:
            return tuple(sorted(key for key, (state, _) in self._states.items() if state.owner == owner))

    def expire_idle(self, now: float, ttl_seconds: float, busy: Collection[str] = ()) -> int:
        deadline = now - ttl_seconds
        with self._lock:
            # Every turn asks (ChatService): hand the rule only the candidates, as the SQLite store's
            # index does. Ordered by last commit, they are a prefix (the boundary included).
            last_used = {}
            for session_id, (_, used_at) in self._states.items():
                if used_at > deadline:
                    break
                last_used[session_id] = used_at
            expired = self._sessions_to_expire(last_used, now, ttl_seconds, frozenset(busy))
            removed = [self._states.pop(session_id, None) for session_id in expired]
        return sum(entry is not None for entry in removed)


SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    owner      TEXT,
    summary    TEXT,
    version    INTEGER NOT NULL,
    last_used  REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_by_last_used ON sessions(last_used);
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    role       TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content    TEXT NOT NULL,
    PRIMARY KEY (session_id, position)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS session_leases (
    session_id TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    host       TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    expires    REAL NOT NULL
);
"""


class SQLiteSessionStore(SessionStore):
    """Sessions in one SQLite file, shared safely by threads and processes.

    A commit is one `BEGIN IMMEDIATE` transaction that checks the version and writes the session
    row and its messages: a crash at any point leaves either the old state or the new one. Every
    thread gets its own connection (sqlite3 connections must not be shared between threads).
    `lease_seconds` bounds how long a crashed process can hold a session; a lease of a process that
    no longer exists on this host is taken over at once. Whether a lease may be taken is decided by
    `take_lease(current, claimant, now, lease_seconds)` — notebook 07's exercise (the course's version
    by default; the notebook passes `your_code("take_lease")`): plain data in, the new lease or None out.
    Which idle sessions a TTL removes is decided by `sessions_to_expire` (notebook 07's fill-in),
    with the sessions leased by any process counted as busy.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        lease_seconds: float = 300.0,
        wait_seconds: float = 30.0,
        take_lease: TakeLease | None = None,
        sessions_to_expire: SessionsToExpire | None = None,
    ) -> None:
        if Path(path).exists() and not Path(path).is_file():
            raise SessionStoreError(f"Хранилище сессий {path} не является файлом.")
        try:
            self._db = SQLiteFile(path, SCHEMA, wait_seconds=wait_seconds)
        except sqlite3.Error as error:
            raise SessionStoreError(f"Не удалось открыть хранилище сессий {path}: {error}") from error
        self.path = self._db.path
        self._lease_seconds = lease_seconds
        self._wait_seconds = wait_seconds
        self._take_lease = take_lease if take_lease is not None else course_take_lease
        self._sessions_to_expire = _rule(sessions_to_expire)
        self._transaction = self._db.transaction
        self._connection = self._db.connection
        self._add_owner_column()

    def close(self) -> None:
        self._db.close()

    def _add_owner_column(self) -> None:
        # A file written before sessions had owners: its sessions stay without one (no user).
        with self._transaction() as connection:
            columns = {row[1] for row in connection.execute("PRAGMA table_info(sessions)")}
            if "owner" not in columns:
                connection.execute("ALTER TABLE sessions ADD COLUMN owner TEXT")
        connection = self._connection()
        connection.execute("CREATE INDEX IF NOT EXISTS sessions_by_owner ON sessions(owner)")

    # --- the interface ------------------------------------------------------------------------

    def load(self, session_id: str) -> SessionState:
        with self._transaction(write=False) as connection:
            row = connection.execute(
                "SELECT summary, version, owner FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
            if row is None:
                return SessionState()
            rows = connection.execute(
                "SELECT role, content FROM messages WHERE session_id = ? ORDER BY position",
                (session_id,),
            ).fetchall()
        # The file may have been edited by another program: check the history as it is read.
        messages = _whole({"role": role, "content": content} for role, content in rows)
        return SessionState(messages, row[0], row[1], row[2])

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
        with self._transaction() as connection:
            row = connection.execute(
                "SELECT version, owner FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
            current = checked_version(session_id, row, owner, expected_version)
            if row is None:
                connection.execute(
                    "INSERT INTO sessions (session_id, owner, summary, version, last_used) VALUES (?, ?, ?, 1, ?)",
                    (session_id, owner, summary, now),
                )
            else:
                connection.execute(
                    "UPDATE sessions SET summary = ?, version = version + 1, last_used = ? "
                    "WHERE session_id = ?",
                    (summary, now, session_id),
                )
            connection.execute(
                "DELETE FROM messages WHERE session_id = ? AND position >= ?",
                (session_id, unchanged_prefix),
            )
            connection.executemany(
                "INSERT INTO messages (session_id, position, role, content) VALUES (?, ?, ?, ?)",
                [
                    (session_id, position, message["role"], message["content"])
                    for position, message in enumerate(messages)
                    if position >= unchanged_prefix
                ],
            )
        return SessionState(stored, summary, current + 1, owner)

    def delete(self, session_id: str) -> None:
        with self._transaction() as connection:
            connection.execute("DELETE FROM sessions WHERE session_id = ?", (session_id,))

    def compact(self) -> None:
        # Free pages and the write-ahead log may still hold deleted text until these run.
        connection = self._connection()
        connection.execute("VACUUM")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def session_ids(self) -> tuple[str, ...]:
        rows = self._connection().execute(
            "SELECT session_id FROM sessions ORDER BY last_used, session_id"
        )
        return tuple(row[0] for row in rows)

    def sessions_owned_by(self, owner: str | None) -> tuple[str, ...]:
        rows = self._connection().execute(
            "SELECT session_id FROM sessions WHERE owner IS ? ORDER BY session_id", (owner,)
        )  # IS: NULL matches NULL, and the owner index still serves it
        return tuple(row[0] for row in rows)

    def expire_idle(self, now: float, ttl_seconds: float, busy: Collection[str] = ()) -> int:
        with self._transaction() as connection:
            # The index finds the candidates (the boundary included); the rule decides.
            last_used = dict(connection.execute(
                "SELECT session_id, last_used FROM sessions WHERE last_used <= ?", (now - ttl_seconds,)
            ).fetchall())
            # A session another process is answering in right now is busy too.
            leased = {
                row[0]
                for row in connection.execute(
                    "SELECT session_id FROM session_leases WHERE expires > ?", (time.time(),)
                )
            }
            expired = self._sessions_to_expire(last_used, now, ttl_seconds, frozenset(busy) | leased)
            deleted = connection.executemany(
                "DELETE FROM sessions WHERE session_id = ?", [(session_id,) for session_id in expired]
            ).rowcount
        return max(deleted, 0)

    @contextmanager
    def session_lock(self, session_id: str) -> Iterator[None]:
        owner = uuid.uuid4().hex
        deadline = time.monotonic() + self._wait_seconds
        while not self._try_lease(session_id, owner):
            if time.monotonic() > deadline:
                raise SessionBusyError(
                    f"Сессия {session_id} занята другим процессом дольше {decimal(self._wait_seconds, None)} с."
                )
            time.sleep(0.02)
        try:
            yield
        finally:
            with self._transaction() as connection:
                connection.execute(
                    "DELETE FROM session_leases WHERE session_id = ? AND owner = ?", (session_id, owner)
                )

    def _try_lease(self, session_id: str, owner: str) -> bool:
        now = time.time()
        claimant = {"owner": owner, "host": socket.gethostname(), "pid": os.getpid()}
        with self._transaction() as connection:  # read and write in one transaction: one winner
            row = connection.execute(
                "SELECT owner, host, pid, expires FROM session_leases WHERE session_id = ?", (session_id,)
            ).fetchone()
            current = None
            if row is not None:
                # alive: is there a process with this pid on *this* machine (take_lease weighs the host).
                current = {"owner": row[0], "host": row[1], "pid": row[2], "expires": row[3],
                           "alive": _process_alive(row[2])}  # fmt: skip
            lease = self._take_lease(current, claimant, now, self._lease_seconds)
            if lease is None:
                return False
            connection.execute(
                "INSERT OR REPLACE INTO session_leases (session_id, owner, host, pid, expires) "
                "VALUES (?, ?, ?, ?, ?)",
                (session_id, *_lease_row(lease, claimant)),
            )
        return True


def check_owner(session_id: str, owner: str | None, caller: str | None) -> None:
    """Refuse (`SessionOwnerError`, in Russian) a caller who is not the session's owner."""
    if owner == caller:
        return
    if owner is None:
        reason = "начата без имени клиента, её нельзя продолжить от имени клиента"
    elif caller is None:
        reason = "принадлежит клиенту; без имени клиента её продолжить нельзя"
    else:
        reason = "принадлежит другому клиенту: продолжить или стереть её может только тот, кто её начал"
    raise SessionOwnerError(f"Сессия {session_id} {reason}. Начните новую сессию.")


def check_storable(session_id: str, owner: str | None, summary: str | None, messages: Sequence[Message]) -> None:
    """Refuse text no store can keep faithfully (the same rule for every store, so none drifts):
    a NUL character (PostgreSQL's text cannot hold it) or a lone surrogate (not UTF-8)."""
    contents = (message.get("content") for message in messages if isinstance(message, dict))
    texts = [session_id, owner, summary, *contents]
    for text in texts:
        if not isinstance(text, str):
            continue
        if "\x00" in text:
            raise SessionStoreError("Текст содержит нулевой символ (\\x00): такой текст не сохраняется.")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise SessionStoreError(
                "Текст содержит непарный суррогат (это не UTF-8): такой текст не сохраняется."
            ) from None


def _whole(messages: Iterable[Message]) -> WholeHistory:
    try:
        return WholeHistory(messages)
    except BrokenHistoryError as error:
        raise SessionStoreError(f"История сессии повреждена: {error}") from None


def _grown(base: WholeHistory, messages: Sequence[Message], unchanged_prefix: int) -> WholeHistory:
    """`messages` as a WholeHistory: O(1) when they are `base` plus one turn, else checked anew."""
    if unchanged_prefix == len(base) and len(messages) == len(base) + 2:
        try:
            return base.with_turn(messages[-2], messages[-1])
        except BrokenHistoryError as error:
            raise SessionStoreError(f"История сессии повреждена: {error}") from None
    return _whole(messages)


def _lease_row(lease: object, claimant: dict) -> tuple[str, str, int, float]:
    """(owner, host, pid, expires) of the lease `take_lease` granted, refused (`SessionStoreError`)
    unless it is the claimant's with a number for `expires`: a lease under another name would never
    be released by the claimant, and the session would stay locked until it ran out."""
    if not (isinstance(lease, dict) and all(lease.get(key) == claimant[key] for key in claimant)):
        raise SessionStoreError(f"take_lease вернула не аренду претендента {claimant['owner']}: {lease!r}")
    expires = lease.get("expires")
    if isinstance(expires, bool) or not isinstance(expires, (int, float)):
        raise SessionStoreError(f"take_lease вернула аренду без срока (expires): {lease!r}")
    return lease["owner"], lease["host"], lease["pid"], expires


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, belongs to someone else
    return True


def checked_version(
    session_id: str, row: Sequence | None, caller: str | None, expected_version: int
) -> int:
    """The stored version from a `(version, owner)` row read in the commit's transaction (0 for a
    new session), after refusing another user's session and a session changed since it was read."""
    current = row[0] if row else 0
    if row is not None:
        check_owner(session_id, row[1], caller)
    if current != expected_version:
        raise SessionConflictError(_conflict_text(session_id))
    return current


def _conflict_text(session_id: str) -> str:
    return (
        f"Сессия {session_id} изменилась, пока готовился ответ (другой процесс или поток); "
        "этот ход не сохранён — отправьте сообщение ещё раз."
    )
