"""Notebook 07: a session store whose every commit is the student's `commit_session`.

`ExerciseSessionStore` keeps sessions in a dict of this process, like `InMemorySessionStore`, but
what a commit writes — or whether it is refused — is decided by the exercise `commit_session(stored,
expected_version, messages, summary, user)` (taken through `course_lib.your_code`: the student's
code once it passes its public cases, the course's version before that). The function returns the
new state; the store swaps it in under its lock, so a commit leaves the old state or the new one,
never half of it. The exercise's `SessionConflictError` / `SessionOwnerError` become the library's,
so `ChatService` reports them as it reports those of the SQLite store.

`sessions_to_expire` is the TTL rule of section 1.6 (the notebook's fill-in): which idle sessions
a TTL removes. Its home is `course_lib.session_store`, whose stores expire sessions by it (the
stores are imported here, so the rule cannot live here); it is re-exported under the notebook's name.

The lease of section 1.5 needs no store of its own: `SQLiteSessionStore(path, take_lease=...)` asks
the exercise `take_lease` whether a process may answer in a session. `crash_holding_lease` makes the
lesson's crashed process: a real, separate one that takes a session's lease and dies mid-turn.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from course_lib.messages import Message
from course_lib.session_store import (
    InMemorySessionStore,
    SessionConflictError,
    SessionOwnerError,
    SessionState,
    SessionStoreError,
    _conflict_text,
    check_owner,
    check_storable,
    sessions_to_expire,  # noqa: F401 — the course's version of 07's fill-in, imported from here
)
from course_lib.whole_history import BrokenHistoryError, WholeHistory
from course_lib.your_code import on_each_call

CommitSession = Callable[[dict | None, int, list[dict], str | None, str | None], dict]


def as_row(state: SessionState) -> dict:
    """A stored session as the exercise sees it: plain data."""
    return {"messages": [dict(message) for message in state.messages], "summary": state.summary,
            "version": state.version, "owner": state.owner}  # fmt: skip


class ExerciseSessionStore(InMemorySessionStore):
    """Sessions in this process; `commit_session` decides every commit (notebook 07)."""

    def __init__(self, commit_session: CommitSession | None = None) -> None:
        super().__init__()
        # In the notebook: `commit_session = your_code("commit_session")`.
        self._commit_session = commit_session if commit_session is not None else on_each_call("commit_session")

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
            stored = None if entry is None else as_row(entry[0])
            try:
                row = self._commit_session(stored, expected_version, [dict(m) for m in messages], summary, owner)
            except Exception as error:
                kind = type(error).__name__
                if kind == "SessionConflictError":
                    raise SessionConflictError(_conflict_text(session_id)) from error
                if kind == "SessionOwnerError":
                    check_owner(session_id, entry[0].owner if entry else None, owner)
                    raise SessionOwnerError(f"Сессия {session_id} принадлежит другому клиенту.") from error
                raise
            try:
                state = SessionState(WholeHistory(row["messages"]), row["summary"], row["version"], row["owner"])
            except (BrokenHistoryError, KeyError, TypeError) as error:
                raise SessionStoreError(f"commit_session вернула не состояние сессии: {error}") from error
            self._states[session_id] = (state, now)
            self._states.move_to_end(session_id)
        return state


# Run by `crash_holding_lease` in a process of its own: take the lease as a turn would, then die
# without the `finally` that returns it (os._exit skips it, like a killed process).
_CRASH = """
import os, sys
sys.path.insert(0, sys.argv[3])
from course_lib.session_store import SQLiteSessionStore
lock = SQLiteSessionStore(sys.argv[1], wait_seconds=5).session_lock(sys.argv[2])
lock.__enter__()  # kept in a variable: a dropped generator would run its finally and free the lease
os._exit(9)
"""


def crash_holding_lease(path: str | os.PathLike[str], session_id: str) -> None:
    """A separate process takes `session_id`'s lease in the SQLite file `path` and crashes mid-turn:
    its row stays in `session_leases`, naming a pid of this host that no longer exists. (That
    process takes a free lease with the course's `take_lease`; what the lesson shows is what the
    process that comes next decides.)"""
    root = str(Path(__file__).resolve().parents[2])  # the course folder, so the child imports course_lib
    result = subprocess.run([sys.executable, "-c", _CRASH, str(path), session_id, root],
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    if result.returncode != 9:
        raise RuntimeError(f"Процесс с арендой не дошёл до сбоя: {result.stderr.strip()[-500:]}")
