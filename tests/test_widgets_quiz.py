"""Quiz widgets: single and multiple choice, immediate feedback, explanation after the answer."""

from __future__ import annotations

import pytest

from course_lib.widgets import Option, Quiz, QuizQuestion
from course_lib.widgets.quiz import RIGHT, TEXT_FALLBACK, WRONG

SINGLE = dict(
    question="Когда безопасно добавлять новый ход user/assistant в историю сессии?",
    options=[
        ("Сразу после получения сообщения пользователя", False, "Если модель не ответит, в истории останется полуход."),
        ("После успешного ответа, проверки finish_reason и непустого текста", True),
        ("Перед вызовом модели, чтобы она увидела свой ход", False),
    ],
    explanation="Сессия меняется только после проверенного ответа: сбой не оставляет следов.",
)
MULTIPLE = dict(
    question="Какие правила должна соблюдать стратегия скользящего окна?",
    options=[
        Option("Всегда оставлять место для developer-инструкции и нового сообщения", True),
        Option("Добавлять историю с самых новых ходов", True),
        Option("Сохранять только целые пары user/assistant", True),
        Option("Пропускать длинный ход и брать более старые короткие", False, "Тогда в истории появятся разрывы."),
    ],
    explanation="Окно берёт целые ходы от новых к старым и останавливается на первом, что не влез.",
)


def test_single_choice_answers_immediately_with_explanation():
    quiz = Quiz(**SINGLE)
    assert not quiz.question.multiple
    assert quiz.check_button not in quiz.children  # no button: picking is answering
    assert quiz.feedback_html.value == ""

    quiz.checkboxes[0].value = True
    assert quiz.result is not None and not quiz.result.correct
    feedback = quiz.feedback_html.value
    assert f"{WRONG} Неверно." in feedback
    assert "полуход" in feedback  # why this option is wrong
    assert "Пояснение." in feedback and "сбой не оставляет следов" in feedback
    assert f"{WRONG} Сразу после" in quiz.labels[0].value

    quiz.checkboxes[1].value = True
    assert [box.value for box in quiz.checkboxes] == [False, True, False]  # behaves like radio buttons
    assert quiz.result.correct and f"{RIGHT} Верно!" in quiz.feedback_html.value
    assert RIGHT in quiz.labels[1].value and WRONG not in quiz.labels[0].value

    quiz.checkboxes[1].value = False
    assert quiz.result is None and quiz.feedback_html.value == ""


def test_multiple_choice_checks_on_button_and_explains_mistakes():
    quiz = Quiz(**MULTIPLE)
    assert quiz.question.multiple and quiz.check_button in quiz.children
    assert "Выберите все верные ответы" in quiz.children[0].value

    quiz.check_button.click()
    assert "Сначала выберите ответ." in quiz.feedback_html.value and quiz.result is None

    quiz.checkboxes[0].value = True
    quiz.checkboxes[3].value = True
    assert quiz.feedback_html.value.count("Сначала") == 1  # nothing checked until the button
    quiz.check_button.click()
    result = quiz.result
    assert not result.correct and result.wrong_picks == (3,) and result.missed == 2
    assert "Не совсем: лишних отмечено: 1, не отмечено верных: 2." in quiz.feedback_html.value
    assert "разрывы" in quiz.feedback_html.value and "Пояснение." in quiz.feedback_html.value

    quiz.select(0, 1, 2)
    quiz.check_button.click()
    assert quiz.result.correct and f"{RIGHT} Верно!" in quiz.feedback_html.value


def test_select_helper_and_plain_string_options():
    quiz = Quiz("2 + 2 = ?", ["3", ("4", True), "5"])
    assert quiz.select(1).correct
    assert quiz.select(2).message == "Неверно."


def test_question_text_and_options_are_escaped():
    quiz = Quiz("Что делает <b>тег</b>?", [("<customer_message>", True), "ничего"])
    assert "&lt;b&gt;тег&lt;/b&gt;" in quiz.children[0].value
    assert "&lt;customer_message&gt;" in quiz.labels[0].value


@pytest.mark.parametrize(
    "options, multiple, message",
    [
        ([("а", False), ("б", False)], None, "нет ни одного верного"),
        ([("а", True), ("а", False)], None, "повторяются"),
        ([("а", True), ("б", True)], False, "верных вариантов 2"),
        ([("а", True)], None, "хотя бы два"),
    ],
    ids=["no-correct", "duplicates", "single-with-two-correct", "one-option"],
)
def test_invalid_questions_are_rejected(options, multiple, message):
    with pytest.raises(ValueError, match=message):
        QuizQuestion("Вопрос?", options, multiple=multiple)


def test_multiple_choice_with_one_correct_option_is_allowed():
    question = QuizQuestion("Что верно?", [("а", True), ("б", False), ("в", False)], multiple=True)
    assert question.multiple and question.check([0]).correct and not question.check([0, 1]).correct
    with pytest.raises(IndexError):
        question.check([7])
    with pytest.raises(TypeError):
        QuizQuestion("?", [("а", True), 5])


def test_text_fallback_says_what_to_do_and_gives_nothing_away():
    text = Quiz(**SINGLE)._repr_mimebundle_()["text/plain"]
    assert text == TEXT_FALLBACK and "выполните эту ячейку (Shift+Enter)" in text
    assert "True" not in text and "Сразу после" not in text and len(text) < 110


def test_single_choice_looks_like_radio_buttons_multiple_like_checkboxes():
    single, multiple = Quiz(**SINGLE), Quiz(**MULTIPLE)
    assert "course-quiz-single" in single._dom_classes and "<style>" in single.children[0].value
    assert "course-quiz-multiple" in multiple._dom_classes and "<style>" not in multiple.children[0].value


def test_reordered_question_keeps_answers_attached_to_their_options():
    question = QuizQuestion(**SINGLE)
    shown = question.reordered([2, 0, 1])
    assert [o.text for o in shown.options] == [question.options[i].text for i in (2, 0, 1)]
    assert shown.correct_indices == {2} and shown.check([2]).correct
    assert Quiz(shown).select(2).correct
    with pytest.raises(ValueError, match="перестановка"):
        question.reordered([0, 0, 1])
