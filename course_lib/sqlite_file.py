"""`SQLiteFile`: one SQLite database file used safely from several threads (and processes).

sqlite3 connections must not be shared between threads, so each thread gets its own, opened on
first use. Writes go through `transaction()`: `BEGIN IMMEDIATE` takes the write lock up front, so
a read-then-write step cannot be overtaken by another writer between its read and its write.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class SQLiteFile:
    def __init__(self, path: str | os.PathLike[str], schema: str, *, wait_seconds: float = 30.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._wait_seconds = wait_seconds
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        connection = self.connection()
        # Switching to WAL and creating the schema take locks that SQLite's busy handler does not
        # always wait for (another process opening the same file at the same moment gets "database
        # is locked" at once): retry them until wait_seconds has passed.
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                if connection.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    connection.execute("PRAGMA journal_mode = WAL")  # readers never block the writer
                connection.executescript(schema)
                break
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (autocommit mode: transactions are explicit)."""
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, isolation_level=None, timeout=self._wait_seconds)
            connection.execute("PRAGMA foreign_keys = ON")
            connection.execute("PRAGMA busy_timeout = %d" % int(self._wait_seconds * 1000))
            # Deleted rows are overwritten with zeros, not just unlinked: forgetting must forget.
            connection.execute("PRAGMA secure_delete = ON")
            self._local.connection = connection
            with self._connections_lock:
                self._connections.append(connection)
        return connection

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[sqlite3.Connection]:
        connection = self.connection()
        connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    def close(self) -> None:
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            try:
                connection.close()
            except sqlite3.ProgrammingError:
                pass  # opened by a thread that is gone; closed with it
        self._local = threading.local()
