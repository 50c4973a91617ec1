"""The chat widget and the context inspector, driven headlessly: button.click(), values, HTML.

The service is the real `ChatService` (real window, real token counter, real summary service) over a
scripted LLM client, so the tests do not depend on the offline model's wording. One test at the end
runs the course's monitor dialogue against the offline model itself.
"""

from __future__ import annotations

import itertools

import pytest

from course_lib.chat_history import SlidingWindowHistory, TokenCounter
from course_lib.chat_service import ChatService
from course_lib.console import print_reply
from course_lib.conversation_summary_service import ConversationSummaryService
from course_lib.llm.client import LLMResult
from course_lib.llm.errors import LLMTimeoutError
from course_lib.widgets import ChatController, ChatWidget, ContextInspector, chat_panel
from course_lib.widgets.context import (
    DEVELOPER,
    DROPPED,
    HISTORY,
    SUMMARIZED,
    SUMMARY,
    USER,
    classify_request,
    context_from_request,
)
from course_lib.widgets.render import TranscriptEntry, plural, render_context, render_transcript

from course_lib.scenarios import MONITOR_DIALOGUE as MONITOR, MONITOR_RECALL as RECALL
COUNTER = TokenCounter()
SUMMARY_TEXT = "Заказ 7718, монитор: подставка пришла с трещиной, коробка целая, фото сделано."


class ScriptedLLM:
    """Answers like a model would, counts calls, and fails on demand."""

    def __init__(self) -> None:
        self.calls: list[list[dict]] = []
        self.fail_next = False
        self._ids = itertools.count(1)

    def generate(self, messages):
        self.calls.append([dict(m) for m in messages])
        if self.fail_next:
            self.fail_next = False
            raise LLMTimeoutError("Модель не ответила вовремя (таймаут). Попробуйте ещё раз.")
        number = next(self._ids)
        if "<conversation_fragment>" in messages[-1]["content"]:
            text = SUMMARY_TEXT
        else:
            text = f"Ответ поддержки №{number}."
        # Usage as a provider with the course's own tokenizer would report it: ChatService calibrates
        # its budget against prompt_tokens, so made-up figures would move the window.
        prompt = COUNTER.count_messages(messages)
        return LLMResult(text=text, finish_reason="stop", model="scripted", response_id=f"resp-{number}",
                         prompt_tokens=prompt, completion_tokens=10, total_tokens=prompt + 10)


def make_service(budget: int = 300, *, with_summary: bool = True, llm: ScriptedLLM | None = None):
    llm = llm or ScriptedLLM()
    policy = SlidingWindowHistory(TokenCounter(), budget)
    summary = ConversationSummaryService(llm) if with_summary else None
    return ChatService(llm, policy, summary), llm


def sequential_ids(prefix: str = "session"):
    counter = itertools.count(1)
    return lambda: f"{prefix}-{next(counter)}"


def say(chat: ChatWidget, text: str) -> None:
    chat.message_box.value = text
    chat.send_button.click()


# ------------------------------------------------------------------------------------------------
# The chat widget


def test_send_shows_reply_session_id_and_console_metrics():
    service, llm = make_service()
    chat = ChatWidget(service, new_session_id=sequential_ids())
    assert "session-1" in chat.session_html.value
    assert "Диалог пуст" in chat.transcript_html.value

    say(chat, MONITOR[0])

    assert chat.message_box.value == ""  # cleared after a successful send
    assert [(e.role, e.text) for e in chat.controller.transcript] == [
        ("user", MONITOR[0]),
        ("assistant", "Ответ поддержки №1."),
    ]
    assert "Ответ поддержки №1." in chat.transcript_html.value
    assert "course-msg-user" in chat.transcript_html.value
    metrics = chat.metrics_html.value
    for line in ("Session ID ответа", "Сообщений в истории", "Оценка входных токенов до запроса",
                 "Сводка обновлена на этом ходу", "Входные токены", "ID ответа"):
        assert line in metrics
    assert chat.status_html.value == ""
    assert not chat.send_button.disabled and not chat.new_dialog_button.disabled


def test_metrics_use_the_console_wording():
    service, _ = make_service()
    controller = ChatController(service, session_id="s1")
    reply = controller.send(MONITOR[0])
    console_lines: list[str] = []
    print_reply(reply, console_lines.append)
    assert controller.metrics[: len(console_lines) - 1] == console_lines[1:]  # all but "Поддержка: …"
    assert controller.metrics[-1] == "Вызовов модели на этом ходу: 1"


@pytest.mark.parametrize("text", ["", "   \n"])
def test_empty_message_shows_russian_error_and_changes_nothing(text):
    service, llm = make_service()
    chat = ChatWidget(service, session_id="s1")
    say(chat, MONITOR[0])
    before = (list(chat.controller.transcript), service.get_session("s1"), chat.controller.last_context)

    say(chat, text)

    assert "Ошибка чата: Сообщение не должно быть пустым." in chat.status_html.value
    assert (list(chat.controller.transcript), service.get_session("s1"), chat.controller.last_context) == before
    assert len(llm.calls) == 1


def test_model_failure_is_shown_keeps_the_text_and_a_retry_works():
    service, llm = make_service()
    chat = ChatWidget(service, session_id="s1")
    say(chat, MONITOR[0])
    snapshot = service.get_session("s1")
    transcript = list(chat.controller.transcript)

    llm.fail_next = True
    say(chat, MONITOR[1])

    assert "Ошибка чата: Не удалось получить ответ модели" in chat.status_html.value
    assert "таймаут" in chat.status_html.value
    assert service.get_session("s1") == snapshot
    assert chat.controller.transcript == transcript
    assert chat.message_box.value == MONITOR[1]  # kept, so the student can press the button again
    assert not chat.send_button.disabled

    chat.send_button.click()
    assert chat.status_html.value == ""
    assert len(chat.controller.transcript) == 4


def test_unexpected_exception_is_shown_not_raised():
    class Broken:
        class history_policy:  # noqa: N801 - a stand-in attribute
            input_token_budget = 300

        def get_session(self, session_id):
            raise KeyError("нет такой сессии")

    controller = ChatController(Broken(), new_session_id=lambda: "x")
    assert controller.send("Привет") is None
    assert controller.error.startswith("Непредвиденная ошибка (KeyError)")


def test_new_dialog_is_the_console_new_command():
    service, _ = make_service()
    chat = ChatWidget(service, new_session_id=sequential_ids())
    inspector = ContextInspector(chat)
    say(chat, MONITOR[0])
    assert service.get_session("session-1").messages

    chat.new_dialog_button.click()

    assert chat.controller.session_id == "session-2"
    assert "session-2" in chat.session_html.value
    assert service.get_session("session-1").messages == ()  # the old session was cleared
    assert chat.controller.transcript == [] and "Диалог пуст" in chat.transcript_html.value
    assert chat.metrics_html.value == ""
    assert inspector.view is None and "Отправьте сообщение" in inspector.html.value

    say(chat, "Здравствуйте")
    reply = chat.controller.last_reply
    assert reply.session_id == "session-2" and reply.history_messages == 2


def test_continuing_an_existing_session_shows_its_messages():
    service, _ = make_service()
    service.reply("old", MONITOR[0])
    chat = ChatWidget(service, session_id="old")
    assert [e.text for e in chat.controller.transcript] == [MONITOR[0], "Ответ поддержки №1."]
    assert MONITOR[0] in chat.transcript_html.value


def test_html_from_users_is_escaped():
    service, _ = make_service()
    chat = ChatWidget(service, session_id="s1")
    say(chat, "<script>alert(1)</script> </div>")
    html = chat.transcript_html.value
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt; &lt;/div&gt;" in html
    inspector_html = render_context(chat.controller.last_context)
    assert "<script>" not in inspector_html


# ------------------------------------------------------------------------------------------------
# The context inspector


def test_inspector_marks_every_message_and_counts_tokens():
    service, _ = make_service(budget=2000)
    chat = ChatWidget(service, session_id="s1")
    inspector = ContextInspector(chat)
    for text in MONITOR[:3]:
        say(chat, text)

    view = inspector.view
    reply = chat.controller.last_reply
    assert [e.kind for e in view.sent] == [DEVELOPER, HISTORY, HISTORY, HISTORY, HISTORY, USER]
    assert [e.role for e in view.sent] == [m["role"] for m in reply.request_messages]
    counter = service.history_policy.token_counter
    assert [e.tokens for e in view.sent] == [counter.count_message(m) for m in reply.request_messages]
    assert view.estimated_tokens == reply.estimated_prompt_tokens == counter.count_messages(reply.request_messages)
    assert view.overhead_tokens == 3
    assert view.left_out == ()
    assert view.budget == 2000
    html = inspector.html.value
    assert "Использовано" in html and "из 2000 токенов бюджета" in html
    for label in ("developer-инструкция", "история в окне", "новое сообщение"):
        assert label in html
    assert "Все сообщения сессии попали в запрос." in html
    assert "нет (сессия ещё не сжималась)" in html


def test_inspector_shows_the_window_sliding_without_summary():
    service, _ = make_service(budget=300, with_summary=False)
    chat = ChatWidget(service, session_id="s1")
    inspector = ContextInspector(chat)
    for text in MONITOR:
        say(chat, text)

    reply = chat.controller.last_reply
    view = inspector.view
    assert reply.removed_history_messages > 0
    assert len(view.left_out) == reply.removed_history_messages
    assert {e.kind for e in view.left_out} == {DROPPED}
    assert view.count_of(HISTORY) == reply.context_history_messages
    # The oldest messages fell out; the first one (with the order number) is among them.
    assert "7718" in view.left_out[0].content
    assert view.estimated_tokens <= 300
    assert "не поместились в окно и не отправлены" in inspector.html.value


def test_inspector_shows_the_summary_taking_over():
    service, llm = make_service(budget=300)
    chat = ChatWidget(service, session_id="s1")
    inspector = ContextInspector(chat)
    summary_turn = None
    for number, text in enumerate(MONITOR, start=1):
        say(chat, text)
        if chat.controller.last_reply.summary_updated:
            summary_turn = number
            break
    assert summary_turn is not None, "с бюджетом 300 summary должно появиться в этом диалоге"

    view = inspector.view
    assert view.summary_updated and view.summary == SUMMARY_TEXT
    assert [e.kind for e in view.sent] == [DEVELOPER, SUMMARY, USER]
    assert view.left_out and {e.kind for e in view.left_out} == {SUMMARIZED}
    assert len(view.left_out) == 2 * (summary_turn - 1)
    html = inspector.html.value
    assert "свёрнута в новую сводку" in html and "свёрнуто в сводку" in html
    assert SUMMARY_TEXT in html
    assert "Вызовов модели на этом ходу: 2" in chat.controller.metrics
    assert "Вызовов модели на этом ходу" in chat.metrics_html.value

    say(chat, RECALL)  # the next turn sends the summary plus the fresh exact turn
    assert [e.kind for e in inspector.view.sent] == [DEVELOPER, SUMMARY, HISTORY, HISTORY, USER]
    assert not inspector.view.summary_updated


def test_classify_request_and_left_out_are_pure_functions():
    counter = TokenCounter()
    history = [
        {"role": "user", "content": "<customer_message>\nраз\n</customer_message>"},
        {"role": "assistant", "content": "один"},
        {"role": "user", "content": "<customer_message>\nдва\n</customer_message>"},
        {"role": "assistant", "content": "два"},
    ]
    request = [
        {"role": "system", "content": "правила"},
        {"role": "user", "content": "<conversation_summary>\nкратко\n</conversation_summary>"},
        *history[2:],
        {"role": "user", "content": "<customer_message>\nтри\n</customer_message>"},
    ]
    assert classify_request(request) == [DEVELOPER, SUMMARY, HISTORY, HISTORY, USER]
    view = context_from_request(request, history, counter=counter, estimated_tokens=counter.count_messages(request),
                                budget=100, summary="кратко")
    assert [e.content for e in view.left_out] == [history[0]["content"], history[1]["content"]]
    assert view.free_tokens == 100 - view.estimated_tokens
    assert view.tokens_of(DROPPED) == counter.count_message(history[0]) + counter.count_message(history[1])


def test_render_helpers():
    assert [plural(n, ("токен", "токена", "токенов")) for n in (1, 2, 5, 11, 21, 112)] == [
        "1 токен", "2 токена", "5 токенов", "11 токенов", "21 токен", "112 токенов"]
    html = render_transcript([TranscriptEntry("user", "a & b"), TranscriptEntry("assistant", "ok")])
    assert "a &amp; b" in html and html.count("course-msg-") == 2


# ------------------------------------------------------------------------------------------------
# The panel, and the offline model end to end


def test_chat_panel_wires_the_three_widgets():
    service, llm = make_service(budget=300)
    panel = chat_panel(service)
    assert panel.chat.controller.service is service
    say(panel.chat, MONITOR[0])
    assert panel.inspector.view is panel.chat.controller.last_context
    assert "в окне ходов:" in panel.budget.summary_html.value and "из 1" in panel.budget.summary_html.value


def test_offline_model_recall_after_summary(offline_settings):
    from course_lib.app import build_chat_app

    settings = offline_settings.model_copy(update={"chat_input_token_budget": 300})
    with build_chat_app(settings) as app:
        panel = chat_panel(app)  # a ChatApp is unwrapped to its chat_service
        for text in MONITOR:
            say(panel.chat, text)
            assert panel.chat.status_html.value == "", panel.chat.status_html.value
        say(panel.chat, RECALL)
        assert "7718" in panel.chat.controller.last_reply.text
        view = panel.inspector.view
        assert view.summary is not None and "7718" in view.summary
        assert any(e.kind == SUMMARY for e in view.sent)


def test_text_fallback_of_the_widgets_is_short_stable_and_says_what_to_do():
    """nbval compares text/plain outputs; the widgets' must not contain random Session IDs, and a
    notebook opened before its cells ran shows them: they tell the student what to do."""
    service, _ = make_service()
    panel = chat_panel(service)
    say(panel.chat, MONITOR[0])
    bundles = [w._repr_mimebundle_()["text/plain"] for w in (panel, panel.chat, panel.inspector, panel.budget)]
    hint = "выполните по порядку ячейки выше и эту (Shift+Enter)"
    assert bundles == [
        f"▶ Чат с инспектором контекста: {hint}, чтобы открыть чат.",
        f"▶ Чат поддержки: {hint}, чтобы открыть чат.",
        f"▶ Инспектор контекста: {hint}, чтобы увидеть запрос к модели.",
        f"▶ Бюджет окна: {hint}, чтобы двигать ползунок бюджета.",
    ]
    assert all(len(text) < 110 for text in bundles)  # ipywidgets cuts text/plain at 110 characters
    assert bundles == [w._repr_mimebundle_()["text/plain"] for w in (panel, panel.chat, panel.inspector, panel.budget)]
