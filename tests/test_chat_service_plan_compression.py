"""`ChatService(..., plan_compression=...)`: notebook 05's exercise decides what a compression folds.

With the course's version of `plan_compression` the service folds exactly what it folds on its own
(K = 0 and K > 0, turn by turn, request by request); a student's function that counts K in messages
shows its mistake in the chat (a verbatim turn cut in half is refused by the store, the turn fails).
"""

from __future__ import annotations

import pytest

from course_lib.chat_history import SlidingWindowHistory
from course_lib.chat_service import ChatService, ChatServiceError
from course_lib.conversation_summary_service import ConversationSummaryService
from course_lib.course_versions.plan_compression import plan_compression
from course_lib.llm.client import LLMClient
from course_lib.llm.offline import OfflineModel
from course_lib.scenarios import COFFEE_DIALOGUE, MONITOR_DIALOGUE, MONITOR_RECALL
from course_lib.tokenizer import TokenCounter

SCRIPT = [*MONITOR_DIALOGUE, MONITOR_RECALL, *COFFEE_DIALOGUE]


def service(make_settings, k: int, plan=None) -> ChatService:
    client = LLMClient(make_settings(llm_backend="offline"), offline_model=OfflineModel())
    return ChatService(client, SlidingWindowHistory(TokenCounter(), 300), ConversationSummaryService(client),
                       keep_recent_turns=k, plan_compression=plan)  # fmt: skip


@pytest.mark.parametrize("k", [0, 1, 2])
def test_the_course_version_folds_what_the_service_folds_itself(make_settings, k):
    own, planned = service(make_settings, k), service(make_settings, k, plan_compression)
    folded = []
    for text in SCRIPT:
        expected, actual = own.reply("s", text), planned.reply("s", text)
        assert actual.request_messages == expected.request_messages
        assert (actual.summarized_messages, actual.history_messages) == (expected.summarized_messages, expected.history_messages)
        folded.append(actual.summarized_messages)
    assert planned.get_session("s") == own.get_session("s")
    assert sum(number > 0 for number in folded) >= 2  # the script compresses more than once


def test_the_plan_is_asked_with_plain_data_and_none_means_no_summary_call(make_settings):
    asked = []

    def never(history, window_kept, keep_recent_turns):
        asked.append((type(history), len(history), window_kept, keep_recent_turns))
        return None

    chat = service(make_settings, 1, never)
    for text in SCRIPT:
        reply = chat.reply("s", text)
        assert reply.llm_calls == 1 and not reply.summary_updated  # never a summary call
    assert asked and all(kind is list for kind, *_ in asked)
    assert any(window_kept < length for _, length, window_kept, _ in asked)  # the window did drop some


def test_k_counted_in_messages_breaks_a_turn_and_the_chat_says_so(make_settings):
    def in_messages(history, window_kept, keep_recent_turns):  # a typical mistake: K as messages
        if window_kept == len(history):
            return None
        split = len(history) - min(keep_recent_turns, window_kept)
        return {"fold": history[:split], "keep": history[split:]}

    chat = service(make_settings, 1, in_messages)
    with pytest.raises(ChatServiceError, match="законченных ходов"):
        for text in SCRIPT:
            chat.reply("s", text)
