"""Self-check questions for the notebooks: single or multiple choice, feedback at once.

`QuizQuestion` holds the question and checks an answer (plain Python, tested headlessly). `Quiz` is
the widget: one row per option (a box and a wrapping label, so long Russian options are never
cut off). Single choice looks like radio buttons and answers as soon as an option is picked;
multiple choice has checkboxes and a "Проверить" button. After every answer the widget marks the
picked options, says what was wrong and shows the explanation.

Notebooks do not build quizzes in cells (students would read the answers there): they call
`course_lib.quizzes.show_quiz(notebook, quiz_id)`, which loads the question from a data file and
shows its options in a fixed shuffled order. Direct use, for tests and experiments:

    Quiz(
        "Когда безопасно добавлять новый ход в историю сессии?",
        [
            ("Сразу после получения сообщения пользователя", False),
            ("После успешного ответа, проверки finish_reason и непустого текста", True),
            ("До вызова модели, чтобы она увидела свой ход", False, "Тогда сбой оставит полуход."),
        ],
        explanation="Сессия меняется только после проверенного ответа.",
    )
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Union

import ipywidgets as widgets

from course_lib.widgets.render import esc

# Marks that ordinary text fonts have (DejaVu, Liberation...): emoji would need an emoji font.
RIGHT = '<span style="color:#1e8449">✔</span>'
WRONG = '<span style="color:#c0392b">✘</span>'

# What a notebook shows before the cell has run (or when the widget's model is gone after a
# kernel restart and the stored text/plain is all Lab has).
TEXT_FALLBACK = "▶ Вопрос для самопроверки: выполните эту ячейку (Shift+Enter), чтобы увидеть его и ответить."

# ipywidgets has no radio button with a wrapping label: single choice keeps the checkbox rows and
# draws the boxes as circles. An HTML widget's <style> applies to the page, scoped by the class.
RADIO_STYLE = (
    "<style>"
    ".course-quiz-single .course-quiz-row input[type=checkbox]{-webkit-appearance:none;appearance:none;"
    "width:15px;height:15px;margin:0;border:2px solid #5d6d7e;border-radius:50%;background:#fff;"
    "cursor:pointer}"
    ".course-quiz-single .course-quiz-row input[type=checkbox]:checked{border-color:#2e86de;"
    "background:radial-gradient(circle,#2e86de 0 38%,#fff 45%)}"
    "</style>"
)

OptionSpec = Union["Option", tuple[str, bool], tuple[str, bool, str], str]


@dataclass(frozen=True)
class Option:
    """An answer option; `why` explains, after the answer, why a wrong pick is wrong."""

    text: str
    correct: bool = False
    why: str = ""


@dataclass(frozen=True)
class QuizResult:
    correct: bool
    selected: tuple[int, ...]
    wrong_picks: tuple[int, ...]
    missed: int
    message: str


def _option(spec: OptionSpec) -> Option:
    if isinstance(spec, Option):
        return spec
    if isinstance(spec, str):
        return Option(spec)
    if isinstance(spec, tuple) and len(spec) in (2, 3):
        return Option(*spec)
    raise TypeError(f"Вариант ответа задаётся строкой, Option или кортежем (текст, верно[, почему]): {spec!r}")


class QuizQuestion:
    """A question, its options and the rule that checks an answer."""

    def __init__(
        self,
        question: str,
        options: Sequence[OptionSpec],
        *,
        explanation: str = "",
        multiple: bool | None = None,
    ) -> None:
        self.question = question
        self.options: tuple[Option, ...] = tuple(_option(spec) for spec in options)
        self.explanation = explanation
        correct = [index for index, option in enumerate(self.options) if option.correct]
        if len(self.options) < 2:
            raise ValueError("В вопросе должно быть хотя бы два варианта ответа.")
        if not correct:
            raise ValueError(f"В вопросе {question!r} нет ни одного верного варианта.")
        texts = [option.text for option in self.options]
        if len(set(texts)) != len(texts):
            raise ValueError(f"В вопросе {question!r} повторяются варианты ответа.")
        self.multiple = len(correct) > 1 if multiple is None else multiple
        if not self.multiple and len(correct) != 1:
            raise ValueError(f"Вопрос {question!r} с одним ответом, а верных вариантов {len(correct)}.")
        self.correct_indices: frozenset[int] = frozenset(correct)

    def reordered(self, order: Sequence[int]) -> QuizQuestion:
        """The same question with its options shown in `order` (indices into `self.options`)."""
        if sorted(order) != list(range(len(self.options))):
            raise ValueError(f"Порядок вариантов {list(order)} — не перестановка 0…{len(self.options) - 1}.")
        return QuizQuestion(
            self.question,
            [self.options[index] for index in order],
            explanation=self.explanation,
            multiple=self.multiple,
        )

    @property
    def hint(self) -> str:
        if self.multiple:
            return "Выберите все верные ответы и нажмите «Проверить»."
        return "Выберите один ответ."

    def check(self, selected: Iterable[int]) -> QuizResult:
        picked = tuple(sorted(set(selected)))
        for index in picked:
            if not 0 <= index < len(self.options):
                raise IndexError(f"Нет варианта №{index}.")
        wrong = tuple(index for index in picked if index not in self.correct_indices)
        missed = len(self.correct_indices - set(picked))
        correct = not wrong and missed == 0
        if not picked:
            message = "Сначала выберите ответ."
        elif correct:
            message = "Верно!"
        elif not self.multiple:
            message = "Неверно."
        else:
            details = []
            if wrong:
                details.append(f"лишних отмечено: {len(wrong)}")
            if missed:
                details.append(f"не отмечено верных: {missed}")
            message = "Не совсем: " + ", ".join(details) + "."
        return QuizResult(correct, picked, wrong, missed, message)


class Quiz(widgets.VBox):
    """The question as a widget: the same arguments as `QuizQuestion`, or a ready `QuizQuestion`
    (options shown in its order)."""

    def __init__(
        self,
        question: str | QuizQuestion,
        options: Sequence[OptionSpec] = (),
        *,
        explanation: str = "",
        multiple: bool | None = None,
        **kwargs: Any,
    ) -> None:
        if isinstance(question, QuizQuestion):
            self.question = question
        else:
            self.question = QuizQuestion(question, options, explanation=explanation, multiple=multiple)
        self.result: QuizResult | None = None
        self.quiz_id: str | None = None  # "<notebook>/<id>" when shown by course_lib.quizzes.show_quiz
        self._syncing = False

        self.checkboxes: list[widgets.Checkbox] = []
        self.labels: list[widgets.HTML] = []
        rows = []
        for index in range(len(self.question.options)):
            checkbox = widgets.Checkbox(value=False, indent=False, description="",
                                        layout=widgets.Layout(width="28px", flex="0 0 28px"))
            checkbox.add_class(f"course-quiz-option-{index}")
            label = widgets.HTML(self._label(index), layout=widgets.Layout(flex="1 1 auto"))
            checkbox.observe(lambda change, i=index: self._on_pick(i, change["new"]), names="value")
            self.checkboxes.append(checkbox)
            self.labels.append(label)
            row = widgets.HBox([checkbox, label], layout=widgets.Layout(align_items="center"))
            row.add_class("course-quiz-row")
            rows.append(row)

        self.check_button = widgets.Button(description="Проверить", button_style="info")
        self.check_button.add_class("course-quiz-check")
        self.check_button.on_click(lambda _button: self.submit())
        self.feedback_html = widgets.HTML()
        self.feedback_html.add_class("course-quiz-feedback")

        children: list[widgets.Widget] = [
            widgets.HTML(
                ("" if self.question.multiple else RADIO_STYLE)
                + f'<div style="font-weight:bold;margin-bottom:2px;line-height:1.4">{esc(self.question.question)}</div>'
                f'<div style="font-size:12px;color:#555">{esc(self.question.hint)}</div>'
            ),
            *rows,
        ]
        if self.question.multiple:
            children.append(self.check_button)
        children.append(self.feedback_html)
        super().__init__(
            children=children,
            layout=kwargs.pop("layout", widgets.Layout(border="1px solid #d6dbdf", padding="6px",
                                                       margin="6px 0")),
            **kwargs,
        )
        self.add_class("course-quiz")
        self.add_class("course-quiz-multiple" if self.question.multiple else "course-quiz-single")

    def __repr__(self) -> str:  # the text/plain fallback; stable for nbval, gives no answer away
        return TEXT_FALLBACK

    @property
    def selected(self) -> tuple[int, ...]:
        return tuple(index for index, box in enumerate(self.checkboxes) if box.value)

    def select(self, *indices: int) -> QuizResult | None:
        """Tick exactly these options (as a student would); single choice answers at once."""
        self._syncing = True
        try:
            for index, box in enumerate(self.checkboxes):
                box.value = index in indices
        finally:
            self._syncing = False
        if not self.question.multiple and indices:
            return self.submit()
        return self.result

    def submit(self) -> QuizResult:
        result = self.question.check(self.selected)
        self.result = result if result.selected else None
        self._render(result)
        return result

    def _on_pick(self, index: int, value: bool) -> None:
        if self._syncing or self.question.multiple:
            return
        # Single choice: the boxes behave like radio buttons, and picking is answering.
        self._syncing = True
        try:
            for other, box in enumerate(self.checkboxes):
                if other != index:
                    box.value = False
        finally:
            self._syncing = False
        if value:
            self.submit()
        else:
            self.result = None
            self._render(None)

    def _label(self, index: int, mark: str = "") -> str:
        option = self.question.options[index]
        return f'<div style="white-space:normal;line-height:1.35">{mark}{esc(option.text)}</div>'

    def _render(self, result: QuizResult | None) -> None:
        for index in range(len(self.question.options)):
            mark = ""
            if result is not None and index in result.selected:
                mark = (RIGHT if index in self.question.correct_indices else WRONG) + " "
            self.labels[index].value = self._label(index, mark)
        if result is None:
            self.feedback_html.value = ""
            return
        if not result.selected:
            self.feedback_html.value = f'<div style="color:#555">{esc(result.message)}</div>'
            return
        color, background = ("#1e8449", "#eafaf1") if result.correct else ("#c0392b", "#fdecea")
        parts = [f'<div class="course-quiz-verdict" style="font-weight:bold;color:{color}">'
                 f'{RIGHT if result.correct else WRONG} {esc(result.message)}</div>']
        for index in result.wrong_picks:
            why = self.question.options[index].why
            if why:
                parts.append(f"<div>«{esc(self.question.options[index].text)}» — {esc(why)}</div>")
        if self.question.explanation:
            parts.append(f'<div class="course-quiz-explanation" style="margin-top:3px">'
                         f"<b>Пояснение.</b> {esc(self.question.explanation)}</div>")
        self.feedback_html.value = (
            f'<div style="background:{background};border-radius:4px;padding:6px 8px;margin-top:4px;'
            'line-height:1.4">'
            f'{"".join(parts)}</div>'
        )
