"""The chat box sends on Enter, and the widgets' texts match the service they show."""

from __future__ import annotations

import re

from course_lib.widgets import BudgetExplorer, ChatWidget, ContextInspector, chat_panel
from course_lib.widgets.budget import DEFAULT_PROBE_TEXT
from course_lib.widgets.chat import INPUT_HINT, has_summary_service
from course_lib.widgets.chat_input import ChatInput

from test_widgets_chat import MONITOR, make_service, say


def enter(chat: ChatWidget, text: str) -> None:
    """What the browser does on Enter: the box's value, then a "submit" message from the front end."""
    chat.message_box.value = text
    chat.message_box._on_message(chat.message_box, {"type": "submit", "value": text}, [])


def test_enter_sends_the_message_and_clears_the_box():
    service, llm = make_service()
    chat = ChatWidget(service, session_id="s")
    assert isinstance(chat.message_box, ChatInput)
    enter(chat, MONITOR[0])
    assert [entry.text for entry in chat.controller.transcript] == [MONITOR[0], "Ответ поддержки №1."]
    assert chat.message_box.value == "" and not chat.message_box.disabled
    assert len(llm.calls) == 1


def test_a_multiline_message_is_sent_as_it_was_typed():
    service, _ = make_service()
    chat = ChatWidget(service, session_id="s")
    enter(chat, "Первая строка\nвторая строка")  # Shift+Enter put the newline there
    assert chat.controller.transcript[0].text == "Первая строка\nвторая строка"


def test_enter_on_an_empty_box_shows_the_services_error_and_calls_nothing():
    service, llm = make_service()
    chat = ChatWidget(service, session_id="s")
    enter(chat, "   ")
    assert "Ошибка чата" in chat.status_html.value and not llm.calls


def test_input_ignores_other_messages_and_submits_nothing_while_disabled():
    box = ChatInput()
    seen = []
    box.on_submit(lambda b: seen.append(b.value))
    box._on_message(box, {"type": "focus"}, [])
    box._on_message(box, "submit", [])
    box.disabled = True
    box.submit("занят")
    assert seen == []
    box.disabled = False
    box.submit("готов")
    assert seen == ["готов"]
    assert repr(box) == "ChatInput(поле сообщения)"


def test_the_front_end_sends_on_enter_and_keeps_shift_enter_for_a_new_line():
    esm = ChatInput._esm
    assert 'event.key !== "Enter"' in esm and "event.shiftKey" in esm and "event.isComposing" in esm
    assert 'execCommand("insertText", false, "\\n")' in esm  # Lab cancels a plain line break in a cell
    assert "stopPropagation" in esm and 'model.send({ type: "submit"' in esm
    service, _ = make_service()
    hints = [child for child in ChatWidget(service).children if INPUT_HINT in getattr(child, "value", "")]
    assert len(hints) == 1


def test_without_a_summary_service_the_panel_says_nothing_about_summaries():
    service, _ = make_service(budget=200, with_summary=False)
    assert not has_summary_service(service)
    panel = chat_panel(service, session_id="s")
    for text in MONITOR[:5]:
        say(panel.chat, text)
    assert panel.inspector.view.left_out  # turns fell out of the window
    texts = [panel.chat.metrics_html.value, panel.inspector.html.value, panel.budget.summary_html.value,
             panel.budget.html.value]
    # <details><summary> is a tag; the developer prompt itself may name <conversation_summary>.
    visible = [re.sub(r"<[^>]+>|conversation_summary", "", text) for text in texts]
    assert all("summary" not in text.lower() for text in visible), visible
    assert "просто не попадут в запрос" in panel.budget.summary_html.value


def test_with_a_summary_service_the_summary_is_shown():
    service, _ = make_service(budget=300)
    assert has_summary_service(service)
    panel = chat_panel(service, session_id="s")
    say(panel.chat, MONITOR[0])
    assert "Текущая сводка" in panel.inspector.html.value
    assert "Сводка сохранена" in panel.chat.metrics_html.value


def test_the_budget_explorers_message_comes_from_the_notebook():
    service, _ = make_service()
    default = chat_panel(service, session_id="a")
    assert default.budget.probe_box.value == DEFAULT_PROBE_TEXT
    assert "7718" not in DEFAULT_PROBE_TEXT and "повреждено" not in DEFAULT_PROBE_TEXT
    panel = chat_panel(service, session_id="b", probe_text="Напомните номер заказа и модель кофемашины.")
    assert panel.budget.controller.probe_text == "Напомните номер заказа и модель кофемашины."
    explorer = BudgetExplorer(service, session_id="c", probe_text="Как меня зовут?")
    assert explorer.probe_box.value == "Как меня зовут?"


def test_inspector_table_header_has_separate_columns():
    service, _ = make_service()
    chat = ChatWidget(service, session_id="s")
    inspector = ContextInspector(chat)
    say(chat, MONITOR[0])
    html = inspector.html.value
    assert '<th style="padding:2px 8px 2px 4px;text-align:right">токены</th>' in html
    assert "<th style=\"padding:2px 4px\">текст сообщения</th>" in html
