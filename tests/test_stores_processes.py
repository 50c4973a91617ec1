"""PostgreSQL with several app processes: 8 chat processes on one database, and a killed lock holder.

Runs on a real server (see postgres_fixtures: skipped where PostgreSQL is not installed, a failure
in CI). SQLite's multi-process tests are in test_session_store.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from course_lib.app import build_chat_app
from course_lib.multi_process_demo import run_demo
from course_lib.postgres.database import DEAD_PEER_SECONDS
from course_lib.store_load import Turn, chat_worker, run_workers
from course_lib.store_url import open_memory_store, open_session_store
from store_backends import postgres_backend, postgres_server, postgres_url  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
ORDERS = {"alice": "1101", "bob": "2202", "vera": "3303", "gleb": "4404"}
KILLED_HOLDER_SECONDS = 5
"""The documented bound for a killed holder (its locks go with its connection, in well under 1 s)."""


def _plan(worker: int) -> list[Turn]:
    """Workers 2u and 2u+1 share user u's session (same session, two processes); each also has its own."""
    user = list(ORDERS)[worker // 2]
    order = ORDERS[user]
    turns = []
    for index in range(3):
        turns.append(Turn(f"case-{user}", user, f"Процесс {worker}, сообщение {index}: заказ {order}."))
        if index < 2:
            turns.append(Turn(f"own-{worker}", user, f"Процесс {worker}, свой диалог {index}: заказ {order}."))
    return turns


def test_eight_processes_lose_no_turn_interleave_none_and_leak_nothing(postgres_backend):
    postgres_url = postgres_backend.url
    plans = [_plan(worker) for worker in range(8)]
    reports = run_workers(chat_worker, [(postgres_url, worker, plan) for worker, plan in enumerate(plans)])
    assert [report.errors for report in reports] == [[]] * 8
    assert len({report.pid for report in reports}) == 8  # eight separate processes
    # They really overlapped: every worker started before any finished.
    assert max(r.started for r in reports) < min(r.finished for r in reports)

    sessions = open_session_store(postgres_url)
    memory = open_memory_store(postgres_url)
    sent = Counter(turn.session_id for plan in plans for turn in plan)
    assert set(sessions.session_ids()) == set(sent)
    for session_id, turns in sent.items():
        state = sessions.load(session_id)
        user = session_id.removeprefix("case-") if session_id.startswith("case-") else list(ORDERS)[int(session_id[4:]) // 2]
        assert state.owner == user
        assert len(state.messages) == 2 * turns  # no turn lost
        assert [m["role"] for m in state.messages] == ["user", "assistant"] * turns  # none split
        text = " ".join(m["content"] for m in state.messages)
        assert not [order for other, order in ORDERS.items() if other != user and order in text]
        for worker in range(8):  # each process's turns are in the order it sent them
            mine = [m["content"] for m in state.messages if f"Процесс {worker}," in m["content"]]
            assert mine == sorted(mine, key=lambda content: int(content.split(":")[0][-1]))
    for report in reports:
        for turn, reply in report.replies:
            assert not [o for u, o in ORDERS.items() if u != turn.user_id and o in reply]
    for user, order in ORDERS.items():
        values = " ".join(fact.value for fact in memory.fact_history(user))
        assert order in values and not [o for u, o in ORDERS.items() if u != user and o in values]
        assert len(memory.turns(user)) == sum(1 for plan in plans for t in plan if t.user_id == user)
    sessions.close()
    memory.close()


def test_a_killed_lock_holder_lets_another_process_continue_the_session(postgres_backend, offline_settings):
    postgres_url = postgres_backend.url
    app = build_chat_app(offline_settings, store=open_session_store(postgres_url, wait_seconds=30))
    service = app.chat_service
    service.reply("case", "Получил заказ 8041 с кофемашиной. Она не включается.")
    # Another app process takes the session's lock mid-turn (and starts writing), then is killed.
    code = (
        "import sys, time; sys.path.insert(0, sys.argv[2]);"
        "from course_lib.store_url import open_session_store;"
        "store = open_session_store(sys.argv[1]); lock = store.session_lock('case'); lock.__enter__();"
        "c = store._db.connection(); c.execute('BEGIN');"
        "c.execute(\"DELETE FROM course_messages WHERE session_id = 'case'\");"
        "print('locked', flush=True); time.sleep(600)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, postgres_url, str(ROOT)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        busy = open_session_store(postgres_url, wait_seconds=0.5)
        try:
            with busy.session_lock("case"):
                raise AssertionError("the lock of a live holder was granted")
        except Exception as error:  # SessionBusyError: the live holder keeps it
            assert "занята" in str(error)
        busy.close()
        successor = open_session_store(postgres_url, wait_seconds=30)
        os.kill(holder.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        with successor.session_lock("case"):
            waited = time.monotonic() - killed_at
        successor.close()
        reply = service.reply("case", "Напомните номер заказа.")  # another process continues
    finally:
        holder.kill()
        holder.wait()
    assert waited < KILLED_HOLDER_SECONDS < DEAD_PEER_SECONDS
    assert "8041" in reply.text  # the dead process's half-done turn left nothing behind
    assert len(service.get_session("case").messages) == 4
    app.close()


def test_the_demo_without_a_url_shows_recorded_figures_and_commands(monkeypatch):
    monkeypatch.delenv("COURSE_POSTGRES_URL", raising=False)
    report = run_demo()
    text = str(report)
    assert report.recorded and "Записанный прогон" in text and "8041" in text
    assert "python -m course_lib.postgres.cluster start" in text and "COURSE_POSTGRES_URL" in text


def test_the_demo_hands_one_conversation_from_one_process_to_another(postgres_backend):
    report = run_demo(postgres_backend.url)
    text = str(report)
    assert not report.recorded, text
    pids = [line.split("PID ")[1].split(")")[0] for line in report.lines if "PID" in line]
    assert len(pids) == 2 and pids[0] != pids[1]
    assert "8041" in text.split("ответ процесса 2:")[1] and "6 сообщений" in text and "владелец anna" in text
