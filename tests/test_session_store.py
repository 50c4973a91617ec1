"""Session stores: the same contract in memory and in SQLite; SQLite across restarts and processes."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from course_lib.app import build_chat_app
from course_lib.chat_service import ChatServiceError
from course_lib.session_store import (
    InMemorySessionStore,
    SessionConflictError,
    SessionState,
    SessionStoreError,
    SQLiteSessionStore,
)

TURN = [{"role": "user", "content": "Заказ 8041."}, {"role": "assistant", "content": "Спасибо."}]
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path):
    if request.param == "memory":
        yield InMemorySessionStore()
    else:
        sqlite_store = SQLiteSessionStore(tmp_path / "sessions.sqlite3")
        yield sqlite_store
        sqlite_store.close()


def test_an_unknown_session_is_empty_at_version_0(store):
    assert store.load("nope") == SessionState()
    assert store.session_ids() == ()


def test_commit_appends_and_replaces(store):
    first = store.commit("s", 0, TURN, None, unchanged_prefix=0, now=1.0)
    assert first == SessionState(tuple(TURN), None, 1)
    second_turn = [{"role": "user", "content": "Напомните номер."}, {"role": "assistant", "content": "8041."}]
    second = store.commit("s", 1, [*TURN, *second_turn], None, unchanged_prefix=2, now=2.0)
    assert store.load("s") == second and len(second.messages) == 4
    compressed = store.commit("s", 2, second_turn, "Заказ 8041.", unchanged_prefix=0, now=3.0)
    assert store.load("s") == compressed == SessionState(tuple(second_turn), "Заказ 8041.", 3)


def test_a_stale_version_is_refused_and_writes_nothing(store):
    store.commit("s", 0, TURN, None, unchanged_prefix=0, now=1.0)
    with pytest.raises(SessionConflictError, match="не сохранён"):
        store.commit("s", 0, [*TURN, *TURN], "x", unchanged_prefix=0, now=2.0)
    assert store.load("s") == SessionState(tuple(TURN), None, 1)


def test_stored_messages_are_copies(store):
    messages = [dict(message) for message in TURN]
    store.commit("s", 0, messages, None, unchanged_prefix=0, now=1.0)
    messages[0]["content"] = "подмена"
    assert store.load("s").messages[0]["content"] == "Заказ 8041."


def test_idle_sessions_expire_in_last_use_order_and_busy_ones_stay(store):
    for index, session_id in enumerate(["a", "b", "c"]):
        store.commit(session_id, 0, TURN, None, unchanged_prefix=0, now=float(index))
    assert store.session_ids() == ("a", "b", "c")
    assert store.expire_idle(deadline=2.0, busy={"a"}) == 1
    assert store.session_ids() == ("a", "c")
    store.delete("a")
    store.delete("never-was")
    assert store.session_ids() == ("c",)


def test_sqlite_survives_a_new_store_on_the_same_file(tmp_path):
    path = tmp_path / "sessions.sqlite3"
    first = SQLiteSessionStore(path)
    first.commit("s", 0, TURN, "summary", unchanged_prefix=0, now=1.0)
    first.close()
    second = SQLiteSessionStore(path)
    assert second.load("s") == SessionState(tuple(TURN), "summary", 1)
    second.close()


def test_sqlite_refuses_bad_messages_and_a_folder_path(tmp_path):
    store = SQLiteSessionStore(tmp_path / "s.sqlite3")
    with pytest.raises(SessionStoreError):
        store.commit("s", 0, [{"role": "developer", "content": "x"}], None, unchanged_prefix=0, now=1.0)
    assert store.load("s") == SessionState()
    with pytest.raises(SessionStoreError, match="не является файлом"):
        SQLiteSessionStore(tmp_path)


def test_forgotten_text_is_gone_from_the_file_bytes(tmp_path):
    path = tmp_path / "s.sqlite3"
    store = SQLiteSessionStore(path)
    secret = "Секретный адрес: Лесная улица 17"
    store.commit("s", 0, [{"role": "user", "content": secret}, TURN[1]], None, unchanged_prefix=0, now=1.0)
    store.delete("s")
    store.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("s.sqlite3"))
    assert secret.encode() not in raw


def _service(path: Path, settings, **options):
    app = build_chat_app(settings)
    from course_lib.chat_service import ChatService

    return ChatService(
        app.llm_client, app.history_policy, app.summary_service, store=SQLiteSessionStore(path), **options
    )


def test_a_session_survives_a_new_chat_service_on_the_same_file(tmp_path, offline_settings):
    path = tmp_path / "s.sqlite3"
    _service(path, offline_settings).reply("s", "Получил заказ 8041 с кофемашиной. Она не включается.")
    later = _service(path, offline_settings)
    reply = later.reply("s", "Напомните номер заказа.")
    assert reply.history_messages == 4
    assert "8041" in reply.text


def test_a_failed_turn_leaves_the_file_as_it_was(tmp_path, offline_settings):
    path = tmp_path / "s.sqlite3"
    service = _service(path, offline_settings)
    service.reply("s", "Получил заказ 8041 с кофемашиной.")
    before = service.store.load("s")
    service._llm_client.offline_model.schedule_fault("server_error")
    with pytest.raises(ChatServiceError):
        service.reply("s", "Она не включается.")
    assert SQLiteSessionStore(path).load("s") == before


def test_a_failed_first_turn_creates_no_session(tmp_path, offline_settings):
    service = _service(tmp_path / "s.sqlite3", offline_settings)
    service._llm_client.offline_model.schedule_fault("timeout")
    with pytest.raises(ChatServiceError):
        service.reply("new", "Здравствуйте.")
    assert service.session_ids() == ()


def test_threads_of_one_process_never_lose_a_turn(tmp_path, offline_settings):
    service = _service(tmp_path / "s.sqlite3", offline_settings)
    errors: list[BaseException] = []

    def talk(index: int) -> None:
        try:
            for turn in range(5):
                service.reply("shared", f"Сообщение {index}-{turn}.")
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=talk, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert len(service.get_session("shared").messages) == 4 * 5 * 2


def _talk_in_process(path: str, worker: int, turns: int) -> None:
    os.environ["LLM_BACKEND"] = "offline"
    os.environ["COURSE_DOTENV"] = "0"
    from course_lib.app import build_chat_app
    from course_lib.chat_service import ChatService
    from course_lib.config import load_settings

    app = build_chat_app(load_settings())
    service = ChatService(app.llm_client, app.history_policy, app.summary_service, store=SQLiteSessionStore(path))
    for turn in range(turns):
        service.reply("shared", f"Процесс {worker}, сообщение {turn}.")


def test_two_processes_on_one_file_never_lose_or_interleave_a_turn(tmp_path):
    path = str(tmp_path / "s.sqlite3")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_talk_in_process, args=(path, i, 6)) for i in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [worker.exitcode for worker in workers] == [0, 0]
    messages = SQLiteSessionStore(path).load("shared").messages
    assert len(messages) == 2 * 6 * 2
    # Every user message is followed by its own reply: no turn was split by another process's turn.
    roles = [message["role"] for message in messages]
    assert roles == ["user", "assistant"] * 12
    for worker in range(2):
        mine = [m["content"] for m in messages if f"Процесс {worker}," in m["content"]]
        assert [f"сообщение {turn}." in text for turn, text in enumerate(mine)] == [True] * 6


def test_a_killed_process_leaves_the_previous_state_and_no_stuck_lease(tmp_path):
    path = tmp_path / "s.sqlite3"
    store = SQLiteSessionStore(path)
    store.commit("s", 0, TURN, None, unchanged_prefix=0, now=1.0)
    # A process takes the session's lease and dies in the middle of a turn.
    code = (
        "import os, sys; sys.path.insert(0, sys.argv[2]);"
        "from course_lib.session_store import SQLiteSessionStore;"
        "s = SQLiteSessionStore(sys.argv[1]); lock = s.session_lock('s'); lock.__enter__();"
        "c = s._connection(); c.execute('BEGIN IMMEDIATE');"
        "c.execute(\"DELETE FROM messages WHERE session_id = 's'\"); os._exit(9)"
    )
    result = subprocess.run([sys.executable, "-c", code, str(path), str(ROOT)], timeout=60)
    assert result.returncode == 9
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT count(*) FROM session_leases").fetchone()[0] == 1
    fresh = SQLiteSessionStore(path, wait_seconds=2)
    assert fresh.load("s") == SessionState(tuple(TURN), None, 1)
    with fresh.session_lock("s"):  # the dead process's lease is taken over at once
        pass
