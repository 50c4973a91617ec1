"""Session lifetime in `ChatService`: idle sessions expire after a TTL, in least-recently-used order.

A server that keeps every conversation in a dict for ever grows without bound; the TTL is what
frees them. The clock is injected, so every test here moves time by hand and never sleeps.
"""

from __future__ import annotations

import math
import threading

import pytest

from course_lib.app import build_chat_app
from course_lib.chat_history import SlidingWindowHistory, TokenCounter
from course_lib.chat_service import ChatService, ChatServiceError
from course_lib.llm.client import LLMClient

TTL = 600.0


class FakeClock:
    """A monotonic clock that moves only when the test says so."""

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def make_service(llm_client, clock: FakeClock, ttl: float | None = TTL) -> ChatService:
    window = SlidingWindowHistory(TokenCounter(), input_token_budget=1_000_000)
    return ChatService(llm_client, window, session_ttl_seconds=ttl, clock=clock)


def test_idle_session_is_forgotten_on_the_next_access(offline_client, clock):
    service = make_service(offline_client, clock)
    service.reply("old", "Кофемашина не включается. Заказ 8041.")
    clock.advance(TTL + 1)
    service.reply("new", "Клавиатура пришла без кабеля.")

    assert service.session_ids() == ("new",)
    assert service.get_session("old").messages == ()  # its history is gone with it
    again = service.reply("old", "Напомните номер заказа.")
    assert again.history_messages == 2 and "8041" not in str(again.request_messages)


def test_a_session_used_within_the_ttl_stays(offline_client, clock):
    service = make_service(offline_client, clock)
    service.reply("s1", "Кофемашина не включается.")
    for _ in range(5):  # 5 × (TTL - 1) in total, but never idle for a whole TTL
        clock.advance(TTL - 1)
        reply = service.reply("s1", "Я проверил розетку.")
    assert service.session_ids() == ("s1",)
    assert reply.history_messages == 12


def test_expire_idle_sessions_counts_what_it_removed(offline_client, clock):
    service = make_service(offline_client, clock)
    for session_id in ("a", "b", "c"):
        service.reply(session_id, "Здравствуйте.")
        clock.advance(100)
    # Idle now: a 300 s, b 200 s, c 100 s.
    assert service.expire_idle_sessions() == 0
    clock.advance(TTL - 250)  # a 650 s, b 550 s, c 450 s
    assert service.expire_idle_sessions() == 1
    assert service.session_ids() == ("b", "c")
    clock.advance(1_000)
    assert service.expire_idle_sessions() == 2
    assert service.session_ids() == ()
    assert service.expire_idle_sessions() == 0


def test_session_ids_are_in_lru_order_and_use_moves_a_session_to_the_end(offline_client, clock):
    service = make_service(offline_client, clock)
    for session_id in ("a", "b", "c"):
        service.reply(session_id, "Здравствуйте.")
        clock.advance(10)
    assert service.session_ids() == ("a", "b", "c")

    service.reply("a", "Заказ 8041.")  # a is now the most recently used
    assert service.session_ids() == ("b", "c", "a")

    # Last used: b at t+10, c at t+20, a at t+30. At t+30+TTL-5 only a is younger than a TTL.
    clock.advance(TTL - 5)
    assert service.expire_idle_sessions() == 2
    assert service.session_ids() == ("a",)


def test_reading_a_session_does_not_extend_its_life(offline_client, clock):
    service = make_service(offline_client, clock)
    service.reply("s1", "Здравствуйте.")
    clock.advance(TTL - 1)
    assert len(service.get_session("s1").messages) == 2  # a read, not a use
    clock.advance(2)
    assert service.session_ids() == ()


def test_without_a_ttl_sessions_are_kept_for_ever(offline_client, clock):
    service = make_service(offline_client, clock, ttl=None)
    service.reply("s1", "Здравствуйте.")
    clock.advance(10**9)
    assert service.expire_idle_sessions() == 0
    assert service.session_ids() == ("s1",)


class BlockingClient:
    """Holds a call until the test releases it, so a reply can be caught in progress."""

    def __init__(self, inner: LLMClient) -> None:
        self.inner = inner
        self.entered = threading.Event()
        self.release = threading.Event()

    def generate(self, messages, **kwargs):
        self.entered.set()
        assert self.release.wait(timeout=5), "the test never released the call"
        return self.inner.generate(messages, **kwargs)


def start_slow_turn(service: ChatService, blocking: BlockingClient, session_id: str) -> threading.Thread:
    """Start a reply in a thread and return once it waits inside the model call."""
    blocking.entered.clear()
    blocking.release.clear()
    worker = threading.Thread(target=service.reply, args=(session_id, "Я уже проверил две розетки."))
    worker.start()
    assert blocking.entered.wait(timeout=5)
    return worker


def test_a_session_with_a_reply_in_progress_is_not_expired(offline_client, clock):
    blocking = BlockingClient(offline_client)
    blocking.release.set()
    service = make_service(blocking, clock)
    service.reply("busy", "Кофемашина не включается.")
    worker = start_slow_turn(service, blocking, "busy")
    try:
        clock.advance(TTL * 3)  # the model is slow: the session looks idle, but a turn is running
        assert service.expire_idle_sessions() == 0
        assert service.session_ids() == ("busy",)
    finally:
        blocking.release.set()
        worker.join(timeout=5)
    assert len(service.get_session("busy").messages) == 4  # the turn was saved where it belongs


def test_a_turn_that_just_finished_counts_as_use(offline_client, clock):
    blocking = BlockingClient(offline_client)
    blocking.release.set()
    service = make_service(blocking, clock)
    service.reply("busy", "Кофемашина не включается.")
    worker = start_slow_turn(service, blocking, "busy")
    clock.advance(TTL * 3)  # a reply slower than the TTL...
    blocking.release.set()
    worker.join(timeout=5)
    assert service.session_ids() == ("busy",)  # ...is saved, and its session is fresh again
    assert len(service.get_session("busy").messages) == 4


def test_an_in_progress_session_does_not_shield_older_idle_ones(offline_client, clock):
    blocking = BlockingClient(offline_client)
    blocking.release.set()
    service = make_service(blocking, clock)
    service.reply("idle", "Здравствуйте.")
    clock.advance(10)
    service.reply("busy", "Кофемашина не включается.")
    worker = start_slow_turn(service, blocking, "busy")
    try:
        clock.advance(TTL * 2)
        assert service.expire_idle_sessions() == 1
        assert service.session_ids() == ("busy",)
    finally:
        blocking.release.set()
        worker.join(timeout=5)


@pytest.mark.parametrize("fault", ["timeout", "server_error", "empty", "truncated"])
def test_a_failed_first_call_leaves_no_empty_session(offline_client, clock, fault):
    service = make_service(offline_client, clock)
    offline_client.offline_model.schedule_fault(fault)
    with pytest.raises(ChatServiceError):
        service.reply("s1", "Кофемашина не включается.")
    assert service.session_ids() == ()


def test_a_failed_call_in_an_existing_session_keeps_it(offline_client, clock):
    service = make_service(offline_client, clock)
    service.reply("s1", "Кофемашина не включается.")
    offline_client.offline_model.schedule_fault("timeout")
    with pytest.raises(ChatServiceError):
        service.reply("s1", "8041.")
    assert service.session_ids() == ("s1",)
    assert len(service.get_session("s1").messages) == 2


def test_reset_removes_the_session_from_the_registry(offline_client, clock):
    service = make_service(offline_client, clock)
    service.reply("a", "Здравствуйте.")
    service.reply("b", "Здравствуйте.")
    service.reset_session("a")
    assert service.session_ids() == ("b",)
    service.reset_session("unknown")  # nothing to do, no error
    assert service.session_ids() == ("b",)


@pytest.mark.parametrize("ttl", [0, 0.0, -1, -0.5, math.nan])
def test_a_ttl_that_is_not_positive_is_a_clear_error(offline_client, ttl):
    with pytest.raises(ValueError, match="Время жизни сессии должно быть больше нуля"):
        make_service(offline_client, FakeClock(), ttl=ttl)


def test_ttl_comes_from_the_settings(offline_settings):
    with build_chat_app(offline_settings.model_copy(update={"session_ttl_seconds": 900.0})) as app:
        assert app.chat_service.session_ttl_seconds == 900.0
    with build_chat_app(offline_settings) as app:
        assert app.chat_service.session_ttl_seconds is None


@pytest.mark.parametrize("value", ["0", "-5"])
def test_ttl_setting_rejects_values_that_are_not_positive(monkeypatch, value):
    from pydantic import ValidationError

    from course_lib.config import Settings

    monkeypatch.setenv("CHAT_SESSION_TTL_SECONDS", value)
    with pytest.raises(ValidationError, match="CHAT_SESSION_TTL_SECONDS|session_ttl_seconds"):
        Settings(_env_file=None, llm_backend="offline")


def test_idle_for_exactly_the_ttl_is_not_yet_expired(offline_client, clock):
    service = make_service(offline_client, clock)
    service.reply("s1", "Здравствуйте.")
    clock.advance(TTL)
    assert service.expire_idle_sessions() == 0  # "idle for longer than the TTL"
    clock.advance(0.001)
    assert service.expire_idle_sessions() == 1
