"""`PostgresDatabase`: one PostgreSQL database used from several threads, processes and machines.

The PostgreSQL counterpart of `SQLiteFile`: every thread gets its own connection (a turn holds
its session's advisory lock on that connection, and locks belong to connections), opened on first
use and reopened when the server dropped it. Writes go through `transaction()`.

How a dead lock holder is detected, and so how long its session stays blocked:
- a killed process (SIGKILL, a crash): its kernel closes the socket, the server ends that backend
  and releases its locks at once;
- a dead machine or a cut network: the server's TCP keepalives (`KEEPALIVE_SETTINGS`, set on every
  connection) give up after `DEAD_PEER_SECONDS`;
- a process stuck inside a transaction: `idle_in_transaction_session_timeout` ends it.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import errors as pg_errors

# Idle 10 s, then 3 probes 5 s apart (and unacknowledged data for 25 s): a silent peer is dead
# after about 25 s.
KEEPALIVE_SETTINGS = {
    "tcp_keepalives_idle": "10",
    "tcp_keepalives_interval": "5",
    "tcp_keepalives_count": "3",
    "tcp_user_timeout": "25000",
    "idle_in_transaction_session_timeout": "60000",
}
DEAD_PEER_SECONDS = 25
"""How long after its machine died a lock holder's locks are released (a killed process: at once)."""
# Advisory locks are two int4 keys: a namespace and a hash of the name (a hash collision only makes
# two names wait for each other, never share data).
SCHEMA_LOCK = 0x636F7572  # creating the course's tables ("cour")
SESSION_LOCKS = 0x636F7573  # one lock per chat session
USER_LOCKS = 0x636F7574  # one lock per user's long-term memory update


class DatabaseError(RuntimeError):
    """The database failed or is unreachable; the message says why, in Russian (no password)."""


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


class PostgresDatabase:
    def __init__(self, url: str, schema: str, *, wait_seconds: float = 30.0) -> None:
        self.url = url
        self._wait_seconds = wait_seconds
        self._local = threading.local()
        self._connections: list[psycopg.Connection] = []
        self._connections_lock = threading.Lock()
        # Several processes may create the tables at once: CREATE … IF NOT EXISTS is not safe
        # against a concurrent twin, so they take turns.
        with self.transaction() as connection:
            connection.execute("SELECT pg_advisory_xact_lock(%s, 0)", (SCHEMA_LOCK,))
            connection.execute(schema)

    def connection(self) -> psycopg.Connection:
        """This thread's connection (autocommit: transactions are explicit)."""
        connection = getattr(self._local, "connection", None)
        if connection is None or connection.closed or connection.broken or self._local.pid != os.getpid():
            connection = self._connect()
            self._local.connection, self._local.pid = connection, os.getpid()
            with self._connections_lock:
                self._connections.append(connection)
        return connection

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        connection = self.connection()
        try:
            with connection.transaction():
                yield connection
        except psycopg.Error as error:
            raise self.failure(error) from error

    def failure(self, error: psycopg.Error) -> DatabaseError:
        """A `DatabaseError` for `error`; a broken connection is dropped so the next call reconnects."""
        connection = getattr(self._local, "connection", None)
        if connection is not None and connection.broken:
            self._local.connection = None
        if isinstance(error, pg_errors.LockNotAvailable):
            return BusyError(f"не дождались блокировки за {self._wait_seconds:g} с")
        return DatabaseError(f"ошибка PostgreSQL ({redact(self.url)}): {_first_line(error)}")

    def try_lock(self, key: str, namespace: int = SESSION_LOCKS) -> bool:
        """Take the session-level advisory lock for `key` on this thread's connection, waiting up to
        `wait_seconds`. False when someone else held it all that time."""
        connection = self.connection()
        try:
            connection.execute("SELECT set_config('lock_timeout', %s, false)", (f"{int(self._wait_seconds * 1000)}ms",))
            connection.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (namespace, key))
        except pg_errors.LockNotAvailable:
            return False
        except psycopg.Error as error:
            raise self.failure(error) from error
        return True

    def unlock(self, key: str, namespace: int = SESSION_LOCKS) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is None or connection.closed or connection.broken:
            return  # the server released it with the connection
        try:
            connection.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (namespace, key))
        except psycopg.Error:
            # A connection that cannot unlock is useless: closing it releases the lock server-side.
            connection.close()

    def erase_deleted_rows(self, *tables: str, attempts: int = 50, pause: float = 0.1) -> None:
        """Rewrite `tables` (VACUUM FULL) until no deleted row's bytes are left in them.

        VACUUM FULL copies a deleted row into the new file while any transaction might still see
        it — one in this database, or a backend of any database that is just connecting — and says
        so in its VERBOSE detail ("N dead row versions cannot be removed yet"). Such a row is
        deleted but its text is still on disk: retry until none is left, else say so, so that
        nobody is told a text was erased when it was not.
        """
        for _ in range(attempts):
            if self._vacuum_full_leaves_dead_rows(tables) == 0:
                return
            time.sleep(pause)
        raise DatabaseError(
            "строки удалены, но PostgreSQL пока хранит их байты: их ещё видит открытая транзакция; "
            "повторите удаление позже"
        )

    def _vacuum_full_leaves_dead_rows(self, tables: tuple[str, ...]) -> int:
        connection = self.connection()
        left = 0

        def count(diagnostic) -> None:
            nonlocal left
            # One notice per table ('"public.t": found …'); its detail's first number is the dead
            # rows copied, whatever the server's language.
            primary, detail = diagnostic.message_primary or "", diagnostic.message_detail or ""
            numbers = re.findall(r"\d+", detail)
            if numbers and any(f'{table}"' in primary for table in tables):
                left += int(numbers[0])

        connection.add_notice_handler(count)
        try:
            connection.execute(f"VACUUM (FULL, VERBOSE) {', '.join(tables)}")
        except psycopg.Error as error:
            raise self.failure(error) from error
        finally:
            connection.remove_notice_handler(count)
        return left

    def close(self) -> None:
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            connection.close()
        self._local = threading.local()

    def _connect(self) -> psycopg.Connection:
        try:
            connection = psycopg.connect(
                self.url,
                autocommit=True,
                connect_timeout=max(1, int(self._wait_seconds)),
                keepalives=1,
                keepalives_idle=10,
                keepalives_interval=5,
                keepalives_count=3,
            )
        except psycopg.Error as error:
            raise DatabaseError(
                f"не удалось подключиться к PostgreSQL ({redact(self.url)}): {_first_line(error)}"
            ) from error
        for name, value in KEEPALIVE_SETTINGS.items():
            connection.execute("SELECT set_config(%s, %s, false)", (name, value))
        return connection


class BusyError(DatabaseError):
    """A lock was not granted in time."""


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
