"""Notebook 07's exercise `take_lease` is the SQLite store's one lease rule (issue 29).

- `SQLiteSessionStore` asks `take_lease(current, claimant, now, lease_seconds)` for every lease, with
  plain data (the holder's row and whether its pid exists on this machine; the claimant's owner, host
  and pid); the course's version is the default, and it keeps the rule the store always had;
- notebook 07 passes `your_code("take_lease")`: a function that ignores a crashed holder locks the
  session (a real crashed process), one that overtakes a live holder lets two processes in;
- a lease that is not the claimant's is refused, nothing written;
- a student's function that fails its public cases is shown beside the course's version on the
  lesson's example (`show_mistake`), while the store keeps the course's rule and the chat carries on.
"""

from __future__ import annotations

import os
import socket
import sqlite3
from pathlib import Path

import pytest

from course_lib.checking.catalog import get_exercise
from course_lib.course_versions.take_lease import take_lease
from course_lib.session_store import SessionBusyError, SessionStoreError, SQLiteSessionStore
from course_lib.steps.persistence import crash_holding_lease
from course_lib.your_code import COURSE, YOURS, ExerciseCode

from student_course import course_copy, write_exercise, fix_mistake, with_mistake

ROOT = Path(__file__).resolve().parents[1]
ME = {"owner": "b", "host": "app-1", "pid": 5151}


def holder(**changes):
    return {"owner": "a", "host": "app-1", "pid": 4242, "expires": 1060.0, "alive": True, **changes}


def old_rule(current, now):
    """What `_try_lease` decided before the rule became an exercise (owners were always different)."""
    return current is None or not (
        current["expires"] > now and not (current["host"] == ME["host"] and not current["alive"])
    )


SITUATIONS = [None, holder(), holder(alive=False), holder(host="app-2", alive=False), holder(host="app-2"),
              holder(expires=1000.0), holder(expires=999.0, host="app-2"), holder(expires=1000.5, host="app-2")]


@pytest.mark.parametrize("current", SITUATIONS)
def test_the_course_version_keeps_the_stores_old_rule(current):
    lease = take_lease(current, ME, 1000.0, 300)
    assert (lease is not None) == old_rule(current, 1000.0)
    assert lease in (None, {**ME, "expires": 1300.0})


def _store(path, rule, **options):
    calls = []

    def spy(current, claimant, now, lease_seconds):
        calls.append((current, claimant, now, lease_seconds))
        return rule(current, claimant, now, lease_seconds)

    return SQLiteSessionStore(path, take_lease=spy, **options), calls


def _leases(path):
    with sqlite3.connect(path) as raw:
        return raw.execute("SELECT session_id, owner, host, pid FROM session_leases").fetchall()


def test_the_store_asks_take_lease_with_plain_data(tmp_path):
    path = tmp_path / "s.sqlite3"
    first, first_calls = _store(path, take_lease, lease_seconds=30)
    second, second_calls = _store(path, take_lease, wait_seconds=0.1)
    with first.session_lock("race"):
        (current, claimant, now, seconds), = first_calls
        assert current is None and seconds == 30 and isinstance(now, float)
        assert claimant == {"owner": claimant["owner"], "host": socket.gethostname(), "pid": os.getpid()}
        with pytest.raises(SessionBusyError, match="занята"):
            with second.session_lock("race"):
                pass
        held = second_calls[0][0]
        assert held == {**claimant, "expires": now + 30, "alive": True}  # this very process: alive
        assert second_calls[-1][1]["owner"] != claimant["owner"]
    assert _leases(path) == []  # returned when the turn ended
    with second.session_lock("race"):
        assert len(_leases(path)) == 1


def test_a_rule_that_waits_for_a_crashed_process_locks_the_session(tmp_path):
    path = tmp_path / "s.sqlite3"
    crash_holding_lease(path, "crash-case")  # a real process took the lease and died mid-turn
    ((_, _, host, pid),) = _leases(path)
    assert host == socket.gethostname() and pid != os.getpid()

    def no_crash_rule(current, claimant, now, lease_seconds):
        expired = current is None or current["expires"] <= now or current["owner"] == claimant["owner"]
        return {**claimant, "expires": now + lease_seconds} if expired else None

    waiting, calls = _store(path, no_crash_rule, wait_seconds=0.1)
    with pytest.raises(SessionBusyError):
        with waiting.session_lock("crash-case"):
            pass
    assert calls[0][0]["pid"] == pid and calls[0][0]["alive"] is False
    course, _ = _store(path, take_lease, wait_seconds=0.1)
    with course.session_lock("crash-case"):  # the course's rule takes it over at once
        assert _leases(path)[0][3] == os.getpid()


def test_a_rule_that_overtakes_a_live_holder_lets_two_processes_in(tmp_path):
    path = tmp_path / "s.sqlite3"

    def overtakes(current, claimant, now, lease_seconds):
        return {**claimant, "expires": now + lease_seconds}

    first, _ = _store(path, take_lease)
    second, _ = _store(path, overtakes, wait_seconds=0.1)
    with first.session_lock("race"), second.session_lock("race"):
        pass  # both "answer" at once: what the exercise's rule exists to prevent


def test_a_lease_that_is_not_the_claimants_is_refused(tmp_path):
    path = tmp_path / "s.sqlite3"
    for wrong in ({"owner": "someone", "host": "h", "pid": 1, "expires": 1e12},
                  lambda claimant: {**claimant, "expires": "later"}, lambda claimant: [claimant]):
        make = wrong if callable(wrong) else (lambda claimant, wrong=wrong: wrong)
        store, _ = _store(path, lambda current, claimant, now, seconds, make=make: make(claimant))
        with pytest.raises(SessionStoreError, match="take_lease вернула"):
            with store.session_lock("s"):
                pass
        assert _leases(path) == []


# --- a student's function in a course folder of its own ------------------------------------------

@pytest.fixture()
def course(tmp_path):
    return course_copy(tmp_path / "course")


def test_a_function_that_overtakes_a_live_holder_is_shown_and_the_store_keeps_the_course_rule(course, tmp_path):
    code, lines = with_mistake(course, "take_lease", '        crashed = current["host"] == host and not current["alive"]',
                               '        crashed = current["host"] == host')
    assert code.implementation == COURSE and "не проходит открытые тесты" in lines[-1]

    def who(lease):
        return "занята" if lease is None else f"отвечает {lease['owner']}"

    shown: list[str] = []
    assert code.show_mistake(holder(), ME, 1000.0, 300, describe=who, out=shown.append)
    assert shown[0].endswith("отвечает b") and shown[1] == "  Версия курса на том же примере: занята"

    # The lesson's store runs on the stand-in: the course's rule, so the live holder keeps the session.
    path = tmp_path / "s.sqlite3"
    first = SQLiteSessionStore(path, take_lease=code)
    second = SQLiteSessionStore(path, take_lease=code, wait_seconds=0.1)
    with first.session_lock("race"):
        with pytest.raises(SessionBusyError):
            with second.session_lock("race"):
                pass
    assert code.calls[COURSE] >= 2 and code.calls[YOURS] == 0

    fix_mistake(course, "take_lease")
    assert code.refresh() == YOURS
    with second.session_lock("race"):
        pass
    assert code.calls[YOURS] >= 1


def test_a_chat_on_the_students_rule_answers_after_a_crash(course, tmp_path, offline_settings):
    from course_lib.app import build_chat_app

    write_exercise(course, "take_lease", (ROOT / "solutions" / "take_lease.py").read_text(encoding="utf-8"))
    code = ExerciseCode(get_exercise("take_lease"), course, announce=None)
    path = tmp_path / "s.sqlite3"
    crash_holding_lease(path, "crash-case")
    app = build_chat_app(offline_settings, store=SQLiteSessionStore(path, take_lease=code, wait_seconds=0.5))
    reply = app.chat_service.reply("crash-case", "Заказ 8041: кофемашина так и не включилась.")
    assert dict(reply.implementations)["take_lease"] == YOURS and reply.text
    assert app.chat_service.store.load("crash-case").version == 1 and _leases(path) == []
    app.close()
