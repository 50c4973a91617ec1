"""Session stores: one contract for the in-memory, SQLite and PostgreSQL stores (parametrized, so they
cannot drift); SQLite across restarts and processes. Multi-process PostgreSQL: test_stores_processes."""

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
from course_lib.chat_service import ChatService, ChatServiceError
from course_lib.session_store import (
    SessionBusyError,
    SessionConflictError,
    SessionOwnerError,
    SessionState,
    SessionStoreError,
    SQLiteSessionStore,
)
from course_lib.store_url import StoreUrlError, open_session_store, parse_store_location
from helpers import CommandResult, run_course_command
from store_backends import (  # noqa: F401
    postgres_backend,
    postgres_server,
    postgres_url,
    session_backend,
    shared_backend,
)

TURN = [{"role": "user", "content": "Заказ 8041."}, {"role": "assistant", "content": "Спасибо."}]
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def store(session_backend):
    return session_backend.session_store()


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
    assert store.expire_idle(now=5.0, ttl_seconds=3.0, busy={"a"}) == 1
    assert store.session_ids() == ("a", "c")
    store.delete("a")
    store.delete("never-was")
    assert store.session_ids() == ("c",)


def test_a_session_belongs_to_the_user_who_started_it(store):
    store.commit("s", 0, TURN, None, unchanged_prefix=0, now=1.0, owner="alice")
    for intruder in ("bob", None, "Alice", "alice "):
        with pytest.raises(SessionOwnerError, match="Сессия s .*Начните новую сессию"):
            store.commit("s", 1, [*TURN, *TURN], "x", unchanged_prefix=2, now=2.0, owner=intruder)
    assert store.load("s") == SessionState(tuple(TURN), None, 1, "alice")
    store.commit("anonymous", 0, TURN, None, unchanged_prefix=0, now=3.0)
    with pytest.raises(SessionOwnerError, match="без имени клиента"):
        store.commit("anonymous", 1, [*TURN, *TURN], None, unchanged_prefix=2, now=4.0, owner="bob")
    assert store.commit("s", 1, [*TURN, *TURN], None, unchanged_prefix=2, now=5.0, owner="alice").version == 2
    assert store.sessions_owned_by("alice") == ("s",) and store.sessions_owned_by("bob") == ()


# Loops, not parametrize: a store test has one parameter (the store), so where PostgreSQL is
# missing its skips fold into one line.


def test_text_no_store_can_keep_is_refused_everywhere_and_writes_nothing(store):
    for bad in ("Заказ\x00 8041", "\ud800"):
        with pytest.raises(SessionStoreError, match="не сохраняется"):
            store.commit("s", 0, [{"role": "user", "content": bad}, TURN[1]], None, unchanged_prefix=0, now=1.0)
        with pytest.raises(SessionStoreError, match="не сохраняется"):
            store.commit(bad, 0, TURN, None, unchanged_prefix=0, now=1.0)
        with pytest.raises(SessionStoreError, match="не сохраняется"):
            store.commit("s", 0, TURN, bad, unchanged_prefix=0, now=1.0, owner=bad)
    assert store.session_ids() == ()


def test_hostile_session_ids_are_plain_data(store):
    for session_id in ("'; DROP TABLE course_sessions; --", "сессия №1 «кавычки»", "a" * 2000, "%s %(x)s ?", "🙂\t\n"):
        store.commit(session_id, 0, TURN, "сводка", unchanged_prefix=0, now=1.0, owner="o'brien")
        assert store.load(session_id) == SessionState(tuple(TURN), "сводка", 1, "o'brien")
        assert store.session_ids() == (session_id,) and store.sessions_owned_by("o'brien") == (session_id,)
        store.delete(session_id)
        assert store.session_ids() == ()


def test_a_session_lock_is_exclusive_across_store_instances(shared_backend):
    first = shared_backend.session_store(wait_seconds=0.5)
    second = shared_backend.session_store(wait_seconds=0.5)
    with first.session_lock("s"):
        with pytest.raises(SessionBusyError, match="занята"):
            with second.session_lock("s"):
                pass
        with second.session_lock("other"):  # other sessions are free
            pass
        first.commit("s", 0, TURN, None, unchanged_prefix=0, now=1.0)
        assert second.expire_idle(now=10.0, ttl_seconds=0.0) == 0  # a session being answered is not idle
    with second.session_lock("s"):
        pass
    assert second.expire_idle(now=10.0, ttl_seconds=0.0) == 1


def test_a_concurrent_first_commit_of_one_session_is_a_conflict_not_a_crash(shared_backend):
    first, second = shared_backend.session_store(), shared_backend.session_store()
    first.commit("s", 0, TURN, None, unchanged_prefix=0, now=1.0)
    with pytest.raises(SessionConflictError):
        second.commit("s", 0, TURN, None, unchanged_prefix=0, now=1.0)


def test_forgotten_text_is_gone_from_the_stored_bytes(shared_backend):
    store = shared_backend.session_store()
    secret = "Секретный адрес: Лесная улица 17"
    store.commit("s", 0, [{"role": "user", "content": secret}, TURN[1]], None, unchanged_prefix=0, now=1.0)
    store.commit("keep", 0, TURN, None, unchanged_prefix=0, now=1.0)
    store.delete("s")
    store.compact()
    raw = shared_backend.raw_bytes()
    assert secret.encode() not in raw
    assert "Заказ 8041.".encode() in raw  # the check can see text that is still stored



def test_a_snapshot_that_still_sees_deleted_text_delays_the_erasure_or_is_reported(postgres_backend):
    """VACUUM FULL keeps a deleted row another transaction may still see: compact() waits for it to
    end, and says so when it does not, instead of reporting an erasure that did not happen."""
    import psycopg

    shared_backend = postgres_backend  # SQLite has no concurrent snapshot of a deleted row

    store = shared_backend.session_store()
    secret = "Секретный адрес: Лесная улица 17"
    store.commit("s", 0, [{"role": "user", "content": secret}, TURN[1]], None, unchanged_prefix=0, now=1.0)
    store.commit("keep", 0, TURN, None, unchanged_prefix=0, now=1.0)
    reader = psycopg.connect(shared_backend.url)
    reader.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    reader.execute("SELECT 1").fetchone()  # a snapshot taken before the delete, no lock on the tables
    store.delete("s")
    from course_lib.postgres.database import DatabaseError

    with pytest.raises(DatabaseError, match="пока хранит их байты"):  # the retry lives in this layer
        store._db.erase_deleted_rows("course_sessions", "course_messages", attempts=2, pause=0.01)
    assert secret.encode() in shared_backend.raw_bytes()  # the report was true: the bytes are there
    threading.Timer(0.3, reader.rollback).start()  # the snapshot ends while compact() waits
    store.compact()
    reader.close()
    assert secret.encode() not in shared_backend.raw_bytes()


# --- the store's address -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "target"),
    [
        ("course.sqlite3", "sqlite", "course.sqlite3"),
        ("  /tmp/a b.sqlite3 ", "sqlite", "/tmp/a b.sqlite3"),
        ("sqlite:///tmp/x.sqlite3", "sqlite", "/tmp/x.sqlite3"),
        ("C:\\data\\x.sqlite3", "sqlite", "C:\\data\\x.sqlite3"),
        ("./odd:name.sqlite3", "sqlite", "./odd:name.sqlite3"),
        ("postgresql://u:p@db:5432/course", "postgresql", "postgresql://u:p@db:5432/course"),
        ("POSTGRES://db/course", "postgresql", "POSTGRES://db/course"),
    ],
)
def test_a_store_address_is_a_path_or_a_known_url(text, kind, target):
    location = parse_store_location(text)
    assert (location.kind, location.target) == (kind, target)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("postgresq://u@db/course", "Неизвестная схема «postgresq:»"),
        ("redis://localhost:6379/0", "Неизвестная схема «redis:»"),
        ("postgresql:course", "postgresql://пользователь"),
        ("sqlite:", "нет пути"),
        ("   ", "пуст"),
    ],
)
def test_an_unknown_or_broken_address_is_a_clear_error(text, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreUrlError, match=message):
        open_session_store(text)
    assert list(tmp_path.iterdir()) == []  # no folder named "redis:" or the like


def test_the_displayed_address_hides_the_password():
    shown = parse_store_location("postgresql://course:s3cret@db:5432/chat").display()
    assert "s3cret" not in shown and "course:***@db:5432/chat" in shown


def test_an_unreachable_postgres_is_a_clear_error_with_no_password():
    with pytest.raises(SessionStoreError, match="не удалось подключиться") as caught:
        open_session_store("postgresql://course:s3cret@127.0.0.1:1/chat", wait_seconds=1)
    assert "s3cret" not in str(caught.value)


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


def test_a_file_from_before_owners_is_upgraded_and_its_sessions_have_none(tmp_path):
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as raw:
        raw.executescript(
            "CREATE TABLE sessions (session_id TEXT PRIMARY KEY, summary TEXT, version INTEGER NOT NULL,"
            " last_used REAL NOT NULL);"
            "INSERT INTO sessions VALUES ('old', NULL, 1, 1.0);"
        )
    store = SQLiteSessionStore(path)
    assert store.load("old").owner is None and store.load("old").version == 1
    store.close()


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


# --- a session belongs to the user who started it (every store) ---------------------------------


def test_another_user_can_neither_join_read_reset_nor_forget_a_session(session_backend, offline_settings):
    app = build_chat_app(
        offline_settings, store=session_backend.session_store(), memory_store=session_backend.memory_store()
    )
    service = app.chat_service
    service.reply("case", "Получил заказ 8041 с кофемашиной. Она не включается.", user_id="alice")
    before = service.store.load("case")
    for attempt in (
        lambda: service.reply("case", "Напомните номер заказа.", user_id="bob"),
        lambda: service.reply("case", "Напомните номер заказа."),  # no user at all
        lambda: service.get_session("case", user_id="bob"),
        lambda: service.reset_session("case", user_id="bob"),
    ):
        with pytest.raises(ChatServiceError, match="Сессия case .*Начните новую сессию"):
            attempt()
    service.reply("bob-own", "Меня зовут Борис.", user_id="bob")
    assert service.forget_user("bob") >= 1
    assert service.store.load("case") == before  # bob's /forget erased only bob's data
    assert service.get_session("bob-own").messages == ()
    assert service.get_session("case", user_id="alice").messages == before.messages
    assert "8041" in service.reply("case", "Напомните номер заказа.", user_id="alice").text
    app.close()


def _chat(monkeypatch, location: str, lines: list[str], *args: str) -> CommandResult:
    return run_course_command(monkeypatch, ["chat", "--no-stream", "--store", location, *args], lines)


def test_the_console_refuses_another_users_session_and_forget_spares_it(shared_backend, monkeypatch):
    location = shared_backend.location
    alice = _chat(monkeypatch, location, ["Получил заказ 8041 с кофемашиной.", "/exit"],
                  "--user", "alice", "--session", "case-1")
    assert alice.returncode == 0, alice.stderr
    bob = _chat(monkeypatch, location, ["Напомните номер заказа.", "/forget", "/exit"],
                "--user", "bob", "--session", "case-1")
    assert "Ошибка чата: Сессия case-1 принадлежит другому клиенту" in bob.stdout
    assert "8041" not in bob.stdout and "Поддержка:" not in bob.stdout
    again = _chat(monkeypatch, location, ["Напомните номер заказа.", "/exit"],
                  "--user", "alice", "--session", "case-1")
    assert "сообщений в истории 2" in again.stdout and "8041" in again.stdout.split("Поддержка:")[-1]
    assert "s3cret" not in again.stdout


def test_the_console_refuses_an_unknown_store_scheme(monkeypatch):
    for store in ("redis://localhost/0", "postgresq://u@db/x"):
        result = _chat(monkeypatch, store, ["/exit"])
        assert result.returncode == 2 and "Неизвестная схема" in result.stderr
    assert not [p for p in (ROOT / "tests").iterdir() if p.name.endswith(":")]


def test_fifty_thousand_idle_sessions_expire_in_batches_and_the_turn_goes_through(postgres_backend, offline_settings):
    """postgres_many_sessions: with 20,000 idle sessions every turn failed with "out of shared memory"."""
    import psycopg

    store = postgres_backend.session_store()
    store.load("warm-up")  # creates the tables
    with psycopg.connect(postgres_backend.url, autocommit=True) as connection:
        connection.execute(
            "INSERT INTO course_sessions (session_id, owner, summary, version, last_used) "
            "SELECT 'idle-' || n, NULL, NULL, 1, 1.0 FROM generate_series(1, 50000) AS n"
        )
        connection.execute(
            "INSERT INTO course_messages (session_id, position, role, content) "
            "SELECT 'idle-' || n, 0, 'user', 'Заказ ' || n FROM generate_series(1, 50000) AS n"
        )
    app = build_chat_app(offline_settings, store=store)
    service = ChatService(app.llm_client, app.history_policy, store=store, session_ttl_seconds=60.0)
    service.reply("fresh", "Получил заказ 8041 с кофемашиной.")
    assert service.session_ids() == ("fresh",)
    with psycopg.connect(postgres_backend.url, autocommit=True) as connection:
        assert connection.execute("SELECT count(*) FROM course_messages").fetchone()[0] == 2
    app.close()
