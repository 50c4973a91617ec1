"""Notebook 07's store on the student's commit_session: with the course's version it keeps what the
library's in-memory store keeps; a commit_session without the version check loses a turn, visibly."""

from __future__ import annotations

import pytest

from course_lib.course_versions.commit_session import commit_session
from course_lib.session_store import (
    InMemorySessionStore,
    SessionConflictError,
    SessionOwnerError,
    SessionStoreError,
)
from course_lib.steps.persistence import ExerciseSessionStore, as_row

TURN_A = [{"role": "user", "content": "Заказ 8041."}, {"role": "assistant", "content": "Спасибо, записал."}]
TURN_B = [{"role": "user", "content": "Заказ 8041!"}, {"role": "assistant", "content": "Принято."}]


def test_the_course_version_stores_what_the_library_stores():
    ours, library = ExerciseSessionStore(commit_session), InMemorySessionStore()
    for store in (ours, library):
        store.commit("s", 0, TURN_A, None, unchanged_prefix=0, now=1.0, owner="anna")
        store.commit("s", 1, TURN_A + TURN_B, "Сводка.", unchanged_prefix=2, now=2.0, owner="anna")
        store.commit("t", 0, TURN_B, None, unchanged_prefix=0, now=3.0)
    assert ours.load("s") == library.load("s") and ours.load("t") == library.load("t")
    assert ours.session_ids() == library.session_ids() == ("s", "t")
    assert ours.sessions_owned_by("anna") == ("s",) and ours.expire_idle(3.5, 1.0) == 1
    assert as_row(ours.load("t")) == {"messages": TURN_B, "summary": None, "version": 1, "owner": None}


def test_refusals_become_the_librarys_errors_and_write_nothing():
    store = ExerciseSessionStore(commit_session)
    store.commit("race", 0, TURN_A, None, unchanged_prefix=0, now=1.0)
    with pytest.raises(SessionConflictError, match="изменилась"):
        store.commit("race", 0, TURN_B, None, unchanged_prefix=0, now=2.0)
    with pytest.raises(SessionOwnerError, match="без имени клиента"):
        store.commit("race", 1, TURN_A + TURN_B, None, unchanged_prefix=2, now=2.0, owner="anna")
    assert list(store.load("race").messages) == TURN_A and store.load("race").version == 1


def test_a_commit_without_the_version_check_loses_the_first_turn():
    def last_writer_wins(stored, expected_version, messages, summary, user):
        version = 0 if stored is None else stored["version"]
        return {"messages": messages, "summary": summary, "version": version + 1, "owner": user}

    store = ExerciseSessionStore(last_writer_wins)
    seen_by_a, seen_by_b = store.load("race"), store.load("race")
    store.commit("race", seen_by_a.version, TURN_A, None, unchanged_prefix=0, now=1.0)
    store.commit("race", seen_by_b.version, TURN_B, None, unchanged_prefix=0, now=2.0)  # no refusal
    assert list(store.load("race").messages) == TURN_B  # the first process's turn is gone


def test_a_commit_that_returns_no_session_state_is_refused():
    store = ExerciseSessionStore(lambda *args: {"messages": TURN_A[:1], "summary": None, "version": 1, "owner": None})
    with pytest.raises(SessionStoreError, match="commit_session"):
        store.commit("s", 0, TURN_A, None, unchanged_prefix=0, now=1.0)
    assert store.load("s").version == 0
