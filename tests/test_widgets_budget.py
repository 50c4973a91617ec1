"""The budget explorer: the slider re-runs prepare() on the session and never calls the model."""

from __future__ import annotations

from course_lib.widgets import BudgetController, BudgetExplorer, ChatWidget
from course_lib.widgets.context import DROPPED, HISTORY

from test_widgets_chat import MONITOR, make_service, say


def chat_with_history(budget: int = 2000, turns: int = 5):
    service, llm = make_service(budget=budget)
    chat = ChatWidget(service, session_id="s1")
    for text in MONITOR[:turns]:
        say(chat, text)
    return service, llm, chat


def test_shrinking_the_budget_drops_the_oldest_whole_turns_without_a_model_call():
    service, llm, chat = chat_with_history()
    explorer = BudgetExplorer(service, chat)
    calls, snapshot = len(llm.calls), service.get_session("s1")
    history = snapshot.messages

    kept_by_budget = {}
    for budget in range(explorer.slider.max, explorer.slider.min - 1, -7):
        explorer.slider.value = budget
        view = explorer.controller.view
        assert view.origin == "preview" and view.budget == budget
        assert view.estimated_tokens <= budget
        kept = view.count_of(HISTORY)
        assert kept % 2 == 0  # whole user/assistant turns only
        # The window keeps the newest messages and leaves out the oldest ones, with no gaps.
        assert [e.content for e in view.sent if e.kind == HISTORY] == [m["content"] for m in history[len(history) - kept:]]
        assert [e.content for e in view.left_out] == [m["content"] for m in history[: len(history) - kept]]
        assert {e.kind for e in view.left_out} <= {DROPPED}
        kept_by_budget[budget] = kept

    counts = [kept_by_budget[b] for b in sorted(kept_by_budget)]
    assert counts == sorted(counts)  # a smaller budget never keeps more
    assert counts[0] == 0 and counts[-1] == len(history)
    assert len(llm.calls) == calls and service.get_session("s1") == snapshot


def test_slider_range_goes_from_required_messages_to_the_whole_history():
    service, _, chat = chat_with_history()
    explorer = BudgetExplorer(service, chat)
    controller = explorer.controller
    assert explorer.slider.min == controller.required_tokens
    assert explorer.slider.max >= max(controller.full_tokens, 2000)
    assert explorer.slider.value == 2000  # starts at CHAT_INPUT_TOKEN_BUDGET

    explorer.slider.value = explorer.slider.min
    assert controller.view.count_of(HISTORY) == 0
    assert controller.view.estimated_tokens == controller.required_tokens
    assert "Бюджет" in explorer.summary_html.value and "выпадает: 5" in explorer.summary_html.value
    assert "свернул бы выпавшие ходы в сводку" in explorer.summary_html.value
    assert "не поместились в окно" in explorer.html.value
    assert "модель не вызывалась" in explorer.html.value

    explorer.reset_button.click()
    assert explorer.slider.value == 2000 and controller.budget == 2000
    assert "выпадает: 0" in explorer.summary_html.value


def test_explorer_follows_the_chat_session():
    service, _, chat = chat_with_history(turns=2)
    explorer = BudgetExplorer(service, chat)
    maximum = explorer.slider.max
    say(chat, MONITOR[2])
    assert explorer.controller.view.count_of(HISTORY) == 6
    assert explorer.slider.max >= maximum

    chat.new_dialog_button.click()
    assert "нет истории" in explorer.summary_html.value
    assert explorer.controller.session_id == chat.controller.session_id


def test_probe_text_is_the_new_message_and_errors_are_russian():
    service, llm, chat = chat_with_history(turns=3)
    explorer = BudgetExplorer(service, chat)
    explorer.probe_box.value = "Коротко"
    assert "Коротко" in explorer.controller.view.sent[-1].content

    explorer.probe_box.value = "   "
    assert "Ошибка чата: Сообщение не должно быть пустым." in explorer.summary_html.value
    assert explorer.html.value == ""

    explorer.probe_box.value = "Снова нормально"
    assert explorer.controller.error is None and explorer.html.value


def test_budget_below_the_required_messages_is_explained():
    service, _, _ = chat_with_history(turns=2)
    controller = BudgetController(service, "s1")
    assert controller.set_budget(10) is None
    assert controller.error.startswith("Ошибка чата: Не удалось подготовить историю")
    assert "не помещаются во входной бюджет" in controller.error


def test_explorer_needs_a_session():
    service, _ = make_service()
    explorer = BudgetExplorer(service, session_id="empty")
    assert "нет истории" in explorer.summary_html.value
    try:
        BudgetExplorer(service)
    except TypeError as error:
        assert "session_id" in str(error)
    else:  # pragma: no cover
        raise AssertionError("BudgetExplorer без сессии должен отказать")
