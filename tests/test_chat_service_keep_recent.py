"""`ChatService(..., keep_recent_turns=K)`.

K = 0 must be exactly the seed-000 design (after a compression the request is instruction + summary
+ new message and the session keeps only the new turn): checked against a faithful re-implementation
of the seed's `reply()` on the same scripted dialogue, request by request. K > 0 keeps the K newest
whole turns that were in the window verbatim and folds only the older ones into the summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from course_lib.chat_history import SlidingWindowHistory
from course_lib.chat_service import ChatService, ChatServiceError, validate_reply
from course_lib.conversation_summary_service import ConversationSummaryService, SummaryResult
from course_lib.llm.client import LLMClient, Message
from course_lib.llm.offline import OfflineModel
from course_lib.prompts.support_chat import SUPPORT_CHAT_PROMPT
from course_lib.scenarios import COFFEE_DIALOGUE, MONITOR_DIALOGUE, MONITOR_RECALL
from course_lib.tokenizer import TokenCounter

BUDGET = 300
COUNTER = TokenCounter()
SCRIPT = [*MONITOR_DIALOGUE, MONITOR_RECALL, *COFFEE_DIALOGUE, "Напомните номер заказа."]


def offline_client(make_settings, model: OfflineModel | None = None) -> LLMClient:
    return LLMClient(make_settings(llm_backend="offline"), offline_model=model or OfflineModel())


def service(make_settings, k: int, *, budget: int = BUDGET, model: OfflineModel | None = None) -> ChatService:
    client = offline_client(make_settings, model)
    return ChatService(
        client,
        SlidingWindowHistory(COUNTER, budget),
        ConversationSummaryService(client),
        keep_recent_turns=k,
    )


# --- the seed's reply(), re-implemented as written in seed 000 (step 4) ---------------------------


@dataclass
class SeedSession:
    messages: list[Message] = field(default_factory=list)
    summary: str | None = None


def seed_summary_message(summary: str | None) -> Message | None:
    if summary is None:
        return None
    return {"role": "user", "content": f"<conversation_summary>\n{summary}\n</conversation_summary>"}


def seed_reply(session: SeedSession, text: str, client: LLMClient, policy, summarizer) -> tuple[str, bool]:
    developer_message = {"role": "developer", "content": SUPPORT_CHAT_PROMPT.render()}
    user_message = {"role": "user", "content": f"<customer_message>\n{text}\n</customer_message>"}
    summary_message = seed_summary_message(session.summary)
    context_messages = [summary_message] if summary_message is not None else []
    prepared = policy.prepare(developer_message, session.messages, user_message, context_messages)

    new_summary = session.summary
    summary_updated = False
    if prepared.removed_history_messages > 0:
        new_summary = summarizer.summarize(previous_summary=session.summary, messages=session.messages)
        summary_updated = True
        prepared = policy.prepare(developer_message, [], user_message, [seed_summary_message(new_summary)])

    reply_text = validate_reply(client.generate(prepared.messages))
    assistant_message = {"role": "assistant", "content": reply_text}
    if summary_updated:
        session.summary = new_summary
        session.messages = [user_message, assistant_message]
    else:
        session.messages.extend([user_message, assistant_message])
    return reply_text, summary_updated


def test_k0_is_exactly_the_seed_000_design(make_settings):
    ours_model, seed_model = OfflineModel(), OfflineModel()
    ours = service(make_settings, 0, model=ours_model)
    seed_client = offline_client(make_settings, seed_model)
    seed_policy = SlidingWindowHistory(COUNTER, BUDGET)
    seed_summarizer = ConversationSummaryService(seed_client)
    session = SeedSession()

    compressions = 0
    for text in SCRIPT:
        reply = ours.reply("s", text)
        seed_text, seed_updated = seed_reply(session, text, seed_client, seed_policy, seed_summarizer)
        assert (reply.text, reply.summary_updated) == (seed_text, seed_updated)
        snapshot = ours.get_session("s")
        assert list(snapshot.messages) == session.messages and snapshot.summary == session.summary
        if reply.summary_updated:
            compressions += 1
            # instruction + summary + new message, and the session is just the new turn
            assert [m["role"] for m in reply.request_messages] == ["developer", "user", "user"]
            assert reply.request_messages[1]["content"].startswith("<conversation_summary>")
            assert reply.context_history_messages == 0
            assert reply.history_messages == 2
    assert compressions >= 3
    # every request the model received — summary requests included — is the same, in the same order
    assert ours_model.requests == seed_model.requests


def test_k0_is_the_default(make_settings):
    client = offline_client(make_settings)
    assert ChatService(client, SlidingWindowHistory(COUNTER, BUDGET)).keep_recent_turns == 0


def check_k_turns(make_settings, k: int, script: list[str]) -> int:
    chat = service(make_settings, k)
    seen = 0
    for text in script:
        before = chat.get_session("s")
        window = chat.preview("s", text)
        reply = chat.reply("s", text)
        if not reply.summary_updated:
            continue
        seen += 1
        kept_turns = min(k, window.context_history_messages // 2)
        kept = list(before.messages[len(before.messages) - 2 * kept_turns :])
        # only the older messages were folded into the summary …
        assert reply.summarized_messages == len(before.messages) - 2 * kept_turns
        # … the kept ones travel verbatim, after the summary and before the new message …
        request = list(reply.request_messages)
        assert request[1]["content"].startswith("<conversation_summary>")
        assert request[2 : 2 + len(kept)] == kept
        assert len(request) == 3 + len(kept)
        assert reply.context_history_messages == len(kept)
        # … and the session keeps them plus the new turn.
        after = chat.get_session("s")
        assert list(after.messages[: len(kept)]) == kept and len(after.messages) == len(kept) + 2
    return seen


MONITOR_SCRIPT = [*MONITOR_DIALOGUE, MONITOR_RECALL]


@pytest.mark.parametrize("k", [1, 2, 3])
def test_k_keeps_the_newest_turns_of_the_window_verbatim(make_settings, k):
    assert check_k_turns(make_settings, k, MONITOR_SCRIPT) >= 2


@pytest.mark.parametrize("k", [1, 2, 3])
def test_every_turn_is_verbatim_or_folded_even_when_the_summary_grows(make_settings, k):
    """A longer new summary can push a kept turn out of the window: it is then folded too."""
    chat = service(make_settings, k)
    pushed_out = 0
    for text in SCRIPT:
        before = chat.get_session("s")
        window = chat.preview("s", text)
        reply = chat.reply("s", text)
        if not reply.summary_updated:
            continue
        planned = min(k, window.context_history_messages // 2)
        kept = reply.context_history_messages
        assert kept % 2 == 0 and kept <= 2 * planned
        # No message is lost: the older ones are in the summary, the newest `kept` in the request.
        assert reply.summarized_messages + kept == len(before.messages)
        request = list(reply.request_messages)
        assert request[2 : 2 + kept] == list(before.messages[len(before.messages) - kept :])
        assert reply.removed_history_messages == 0
        if kept < 2 * planned:
            pushed_out += 1
            assert reply.llm_calls >= 3  # summarized again with the pushed-out turn included
    if k == 1:
        assert pushed_out >= 1  # the script really exercises the case


def test_k_larger_than_the_window_keeps_what_the_window_had(make_settings):
    chat = service(make_settings, 50)
    for text in MONITOR_SCRIPT:
        window = chat.preview("s", text)
        reply = chat.reply("s", text)
        if reply.summary_updated:
            assert reply.context_history_messages == window.context_history_messages
            assert reply.summarized_messages > 0  # the dropped turns were folded, never lost


def test_summarized_messages_counts_what_was_folded(make_settings):
    chat = service(make_settings, 0)
    for text in SCRIPT:
        before = chat.get_session("s")
        reply = chat.reply("s", text)
        assert reply.summarized_messages == (len(before.messages) if reply.summary_updated else 0)


@pytest.mark.parametrize("kind, after", [("server_error", 0), ("timeout", 1)])
def test_a_failed_turn_with_k_changes_nothing(make_settings, kind, after):
    model = OfflineModel()
    chat = service(make_settings, 1, model=model)
    for text in MONITOR_DIALOGUE[:3]:
        chat.reply("s", text)
    before = chat.get_session("s")
    assert before.summary is not None and before.messages
    assert chat.preview("s", MONITOR_DIALOGUE[3]).removed_history_messages > 0  # the next turn compresses
    model.schedule_fault(kind, after=after)  # after=0: the summary call fails; after=1: the reply after it
    with pytest.raises(ChatServiceError):
        chat.reply("s", MONITOR_DIALOGUE[3])
    assert chat.get_session("s") == before
    done = chat.reply("s", MONITOR_DIALOGUE[3])
    assert done.summary_updated and done.summarized_messages > 0


class LongSummaries:
    """A summary service whose summaries are always too long for the budget."""

    def __init__(self, inner: ConversationSummaryService) -> None:
        self._inner = inner
        self.calls = 0

    def summarize_detailed(self, previous_summary, messages):
        self.calls += 1
        result = self._inner.summarize_detailed(previous_summary, messages)
        return SummaryResult(text=result.text + " Подробности." * 200, llm_result=result.llm_result)


def test_a_summary_that_does_not_fit_with_k_changes_nothing(make_settings):
    client = offline_client(make_settings)
    summaries = LongSummaries(ConversationSummaryService(client))
    chat = ChatService(
        client, SlidingWindowHistory(COUNTER, BUDGET), summaries, keep_recent_turns=1, summary_failure="raise"
    )
    for text in MONITOR_DIALOGUE[:2]:
        chat.reply("s", text)
    before = chat.get_session("s")
    assert chat.preview("s", MONITOR_DIALOGUE[2]).removed_history_messages > 0
    with pytest.raises(ChatServiceError, match="Новая сводка не помещается в бюджет"):
        chat.reply("s", MONITOR_DIALOGUE[2])
    assert summaries.calls == 1
    assert chat.get_session("s") == before


def test_a_summary_that_does_not_fit_answers_with_the_window_by_default(make_settings):
    client = offline_client(make_settings)
    summaries = LongSummaries(ConversationSummaryService(client))
    chat = ChatService(
        client, SlidingWindowHistory(COUNTER, BUDGET), summaries, keep_recent_turns=1, summary_failure="window"
    )
    for text in MONITOR_DIALOGUE[:2]:
        chat.reply("s", text)
    before = chat.get_session("s")
    reply = chat.reply("s", MONITOR_DIALOGUE[2])
    assert "не помещается" in reply.summary_error and not reply.summary_updated
    after = chat.get_session("s")
    assert after.summary == before.summary and after.messages[: len(before.messages)] == before.messages
    assert len(after.messages) == len(before.messages) + 2


@pytest.mark.parametrize("bad", [-1, -5])
def test_negative_k_is_a_clear_error(make_settings, bad):
    client = offline_client(make_settings)
    with pytest.raises(ValueError, match="keep_recent_turns"):
        ChatService(client, SlidingWindowHistory(COUNTER, BUDGET), keep_recent_turns=bad)


@pytest.mark.parametrize("bad", [True, 1.0, "1", None])
def test_k_must_be_an_int(make_settings, bad):
    client = offline_client(make_settings)
    with pytest.raises(TypeError, match="keep_recent_turns"):
        ChatService(client, SlidingWindowHistory(COUNTER, BUDGET), keep_recent_turns=bad)
