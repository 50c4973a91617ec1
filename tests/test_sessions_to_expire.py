"""Notebook 07's fill-in `sessions_to_expire` is the one implementation of the TTL rule (issue 29).

- `course_lib.session_store.sessions_to_expire` (re-exported as the notebook's reference from
  `course_lib.steps.persistence`): the sessions idle for longer than the TTL, not busy, sorted;
- `InMemorySessionStore` and `SQLiteSessionStore` expire sessions by the rule they are given
  (`sessions_to_expire=`, the course's by default) with the service's clock and TTL, the SQLite
  store counting the sessions another process holds the lease of as busy;
- the examples of the notebook's check cell turn down each typical wrong body (the course's rule
  runs instead), and take a right one written differently.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import nbformat
import pytest

from course_lib.chat_history import SlidingWindowHistory
from course_lib.chat_service import ChatService
from course_lib.session_store import InMemorySessionStore, SQLiteSessionStore, sessions_to_expire
from course_lib.steps import persistence
from course_lib.tokenizer import TokenCounter

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "07_persistence_and_memory.ipynb"
TURN = [{"role": "user", "content": "Заказ 8041."}, {"role": "assistant", "content": "Спасибо, записал."}]


def test_the_rule_keeps_the_boundary_and_busy_sessions_and_sorts():
    last_used = MappingProxyType({"c": 0.0, "a": 0.0, "edge": 1400.0, "busy": 0.0, "fresh": 4000.0})
    busy = frozenset({"busy"})  # read-only inputs: the rule only reads them
    assert sessions_to_expire(last_used, 5000.0, 3600.0, busy) == ["a", "c"]
    assert sessions_to_expire({}, 5000.0, 3600.0, ()) == []
    assert persistence.sessions_to_expire is sessions_to_expire  # the notebook's reference is the stores' rule


def spy(calls):
    def rule(last_used, now, ttl_seconds, busy):
        calls.append((dict(last_used), now, ttl_seconds, busy))
        return ["a", "unknown"]  # what the rule returns is what goes (an unknown id is not counted)

    return rule


def test_the_in_memory_store_expires_what_its_rule_returns():
    calls = []
    store = InMemorySessionStore(sessions_to_expire=spy(calls))
    for session_id, now in (("a", 1.0), ("b", 2.0)):
        store.commit(session_id, 0, TURN, None, unchanged_prefix=0, now=now)
    assert store.expire_idle(100.0, 10.0, busy={"b"}) == 1
    assert calls == [({"a": 1.0, "b": 2.0}, 100.0, 10.0, frozenset({"b"}))]
    assert store.session_ids() == ("b",)


def test_the_sqlite_store_counts_leased_sessions_as_busy(tmp_path):
    calls = []
    store = SQLiteSessionStore(tmp_path / "s.sqlite3", sessions_to_expire=spy(calls))
    other = SQLiteSessionStore(tmp_path / "s.sqlite3")
    for session_id in ("a", "b"):
        store.commit(session_id, 0, TURN, None, unchanged_prefix=0, now=1.0)
    with other.session_lock("b"):  # another process is answering in b
        assert store.expire_idle(100.0, 10.0) == 1
    assert calls == [({"a": 1.0, "b": 1.0}, 100.0, 10.0, frozenset({"b"}))]
    assert store.session_ids() == ("b",)
    store.close(), other.close()


def test_the_service_hands_the_store_its_clock_and_ttl(offline_client):
    calls = []
    window = SlidingWindowHistory(TokenCounter(), input_token_budget=1_000_000)
    service = ChatService(offline_client, window, store=InMemorySessionStore(sessions_to_expire=spy(calls)),
                          session_ttl_seconds=60.0, clock=lambda: 500.0)  # fmt: skip
    service.expire_idle_sessions()
    assert calls == [({}, 500.0, 60.0, frozenset())]


# --- the notebook's examples ------------------------------------------------------------------------

def check_cell_source() -> str:
    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    return next(cell.source for cell in cells if cell.get("id") == "nb07-ttl-fill-check")


def chosen(body, capsys):
    namespace = {"sessions_to_expire": body}
    exec(check_cell_source(), namespace)  # the notebook's own check cell, on this body
    return namespace["sessions_to_expire"], capsys.readouterr().out


WRONG = {
    ">= at the boundary": lambda lu, now, ttl, busy: sorted(s for s, t in lu.items() if now - t >= ttl and s not in busy),
    "busy forgotten": lambda lu, now, ttl, busy: sorted(s for s, t in lu.items() if now - t > ttl),
    "dict order": lambda lu, now, ttl, busy: [s for s, t in lu.items() if now - t > ttl and s not in busy],
    "a set": lambda lu, now, ttl, busy: {s for s, t in lu.items() if now - t > ttl and s not in busy},
    "last_used + ttl the wrong way round": lambda lu, now, ttl, busy: sorted(
        s for s, t in lu.items() if t + ttl > now and s not in busy),
    "busy mutated": lambda lu, now, ttl, busy: sorted(
        s for s, t in lu.items() if now - t > ttl and not (s in busy and busy.discard(s) is None)),
}


@pytest.mark.parametrize("mistake", WRONG)
def test_each_typical_mistake_is_turned_down_and_the_course_rule_runs(mistake, capsys):
    body = WRONG[mistake]
    body.__name__ = "sessions_to_expire"
    used, output = chosen(body, capsys)
    assert used is sessions_to_expire and "↪ sessions_to_expire:" in output and "версия курса" in output


def test_a_mutating_loop_over_last_used_is_turned_down(capsys):
    def sessions_to_expire_(last_used, now, ttl_seconds, busy):
        for session_id, used_at in last_used.items():
            if now - used_at > ttl_seconds and session_id not in busy:
                del last_used[session_id]  # "expires" in the caller's dict
        return []

    sessions_to_expire_.__name__ = "sessions_to_expire"
    assert chosen(sessions_to_expire_, capsys)[0] is sessions_to_expire


def test_a_right_body_written_differently_is_the_one_used(capsys):
    def mine(last_used, now, ttl_seconds, busy):
        return sorted(set(last_used) - set(busy) - {s for s, t in last_used.items() if t >= now - ttl_seconds})

    mine.__name__ = "sessions_to_expire"
    used, output = chosen(mine, capsys)
    assert used is mine and "✔ sessions_to_expire" in output
