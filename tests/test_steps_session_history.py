"""The session services of notebooks 03–05 keep their messages in 03's `SessionHistory`.

Notebook 03 hands the registry the student's class (`SessionHistory = your_code("SessionHistory")`);
`course_lib.steps.sessions` looks the class up by name when a service is built. These tests put a
recording subclass under that name and check that every service reads and writes through it: one
`add_turn` per successful turn, none when the model fails, and a failed summary or reply in 05's
service leaves both the stored history and the summary as they were.
"""

from __future__ import annotations

import pytest

from course_lib.chat_history import ChatHistoryError, SlidingWindowHistory, TokenCounter
from course_lib.conversation_summary_service import ConversationSummaryService
from course_lib.course_versions.session_history import SessionHistory
from course_lib.llm.client import LLMClient
from course_lib.scenarios import MONITOR_DIALOGUE
from course_lib.steps import sessions
from course_lib.steps.common import ChatServiceError
from course_lib.steps.sessions import SessionChatService
from course_lib.steps.summary import SummaryChatService, replace_history
from course_lib.steps.window import WindowChatService

SMALL_BUDGET = 300  # the notebooks' offline budget: 05's service compresses within six turns


class RecordingHistory(SessionHistory):
    """The course's store, plus a log of every write (what a student's class would receive)."""

    def __init__(self) -> None:
        super().__init__()
        self.added: list[tuple[str, str, str]] = []
        self.resets: list[str] = []

    def add_turn(self, session_id: str, user_text: str, assistant_text: str) -> None:
        self.added.append((session_id, user_text, assistant_text))
        super().add_turn(session_id, user_text, assistant_text)

    def reset(self, session_id: str) -> None:
        self.resets.append(session_id)
        super().reset(session_id)


@pytest.fixture
def client(make_settings):
    return LLMClient(make_settings())


@pytest.fixture
def recording(monkeypatch):
    monkeypatch.setattr(sessions, "SessionHistory", RecordingHistory)


def window() -> SlidingWindowHistory:
    return SlidingWindowHistory(TokenCounter(), SMALL_BUDGET)


SERVICES = {
    "03 SessionChatService": lambda client: SessionChatService(client),
    "04 WindowChatService": lambda client: WindowChatService(client, window()),
    "05 SummaryChatService": lambda client: SummaryChatService(
        client, window(), ConversationSummaryService(client), keep_recent_turns=0),
}


@pytest.mark.parametrize("name", SERVICES)
def test_each_service_commits_through_the_store_once_per_successful_turn(client, recording, name):
    service = SERVICES[name](client)
    store = service._histories
    assert type(store) is RecordingHistory  # the registry took the class by name: the student's in 03

    replies = [service.reply(" monitor ", text) for text in MONITOR_DIALOGUE]
    assert len(store.added) == len(replies)
    for (key, user_text, assistant_text), reply in zip(store.added, replies):
        assert key == "monitor"  # normalized before it reaches the store
        assert user_text == reply.request_messages[-1]["content"]  # the user content as sent
        assert assistant_text == reply.text
    # history_messages is the store's count after the commit, and history_of reads the store.
    assert replies[-1].history_messages == len(store.get_messages("monitor")) == len(service.history_of("monitor"))

    before = service.history_of("monitor")
    client.offline_model.schedule_fault("timeout")
    with pytest.raises(ChatServiceError):
        service.reply("monitor", "Что дальше?")
    assert len(store.added) == len(replies)  # a failed model call writes nothing
    assert service.history_of("monitor") == before


@pytest.mark.parametrize("name", SERVICES)
def test_reset_session_clears_the_store_for_that_session_only(client, recording, name):
    service = SERVICES[name](client)
    service.reply("a", MONITOR_DIALOGUE[0])
    service.reply("b", MONITOR_DIALOGUE[1])
    service.reset_session(" a ")
    assert service._histories.resets[-1] == "a"
    assert service.history_of("a") == [] and len(service.history_of("b")) == 2


def test_the_summary_service_rebuilds_the_store_after_a_compression(client, recording):
    service = SERVICES["05 SummaryChatService"](client)
    store = service._histories
    replies = [service.reply("m", text) for text in MONITOR_DIALOGUE]
    compressed = [reply for reply in replies if reply.summary_updated]
    assert compressed, "the small budget must make the service compress"
    # K = 0: every compression is one reset plus the new turn, so still one add_turn per turn.
    assert store.resets == ["m"] * len(compressed)
    assert len(store.added) == len(replies)
    last = compressed[-1]
    assert last.history_messages == 2 and service.summary_of("m") is not None


def test_k_kept_turns_are_written_back_in_order(client, recording):
    service = SummaryChatService(client, window(), ConversationSummaryService(client), keep_recent_turns=1)
    stored_before, reply = [], None
    for text in MONITOR_DIALOGUE:
        stored_before = service.history_of("m")
        reply = service.reply("m", text)
        if reply.summary_updated:
            break
    assert reply is not None and reply.summary_updated
    kept = stored_before[-2:]  # the one turn K = 1 keeps exact
    assert service.history_of("m") == [*kept, *reply.request_messages[-1:],
                                        {"role": "assistant", "content": reply.text}]


@pytest.mark.parametrize(("label", "kind", "after"), [
    ("the summary call fails", "server_error", 0),
    ("the summary is ready, the reply call fails", "timeout", 1),
    ("the summary is ready, the reply is cut by the length limit", "truncated", 1),
    ("the summary is ready, the reply is empty", "empty", 1),
])
def test_a_failed_turn_leaves_history_and_summary_as_they_were(client, recording, label, kind, after):
    service = SERVICES["05 SummaryChatService"](client)
    store = service._histories
    # Turns until the next one would compress: then a fault hits a turn that makes a summary.
    for text in MONITOR_DIALOGUE[:4]:
        service.reply("fault", text)
    history, summary = service.history_of("fault"), service.summary_of("fault")
    writes = (len(store.added), len(store.resets))

    client.offline_model.schedule_fault(kind, after=after)
    with pytest.raises(ChatServiceError):
        service.reply("fault", MONITOR_DIALOGUE[4])
    assert service.history_of("fault") == history, label
    assert service.summary_of("fault") == summary, label
    assert (len(store.added), len(store.resets)) == writes, label

    retried = service.reply("fault", MONITOR_DIALOGUE[4])  # the same turn, now whole
    assert retried.summary_updated and retried.history_messages == 2


def test_replace_history_checks_the_turns_before_it_resets():
    store = SessionHistory()
    store.add_turn("s", "Заказ 7718.", "Принято.")
    before = store.get_messages("s")
    for broken in ([{"role": "user", "content": "Вопрос?"}],
                   [{"role": "assistant", "content": "Ответ."}, {"role": "user", "content": "Вопрос?"}]):
        with pytest.raises(ChatHistoryError):
            replace_history(store, "s", broken)
        assert store.get_messages("s") == before

    kept = [{"role": "user", "content": "Да"}, {"role": "assistant", "content": "Оформляю курьера."}]
    replace_history(store, "s", kept)
    assert store.get_messages("s") == kept
