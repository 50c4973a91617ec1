"""The notebooks' self-check questions, kept in data files so students do not read the answers.

Each notebook's quizzes live in `course_lib/data/quizzes/<notebook-stem>.json`:

    {"window-rules": {"question": "...",
                      "options": [{"text": "...", "correct": true, "why": "..."}, ...],
                      "explanation": "...",
                      "multiple": true}}

`why` (why a wrong pick is wrong) and `multiple` (default: more than one correct option) are
optional. Options are stored in authoring order; `show_quiz()` shows them in a fixed shuffled
order derived from the notebook and the quiz id only, the same for every student and every run.
Which options are correct plays no part in it: across the course's questions the correct option
lands on every position, the first included (`tests/test_quizzes.py` checks the spread).

In a notebook cell (its source hidden):

    from course_lib.quizzes import show_quiz
    show_quiz("04_sliding_window", "window-rules")
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any

from course_lib.widgets.quiz import Option, Quiz, QuizQuestion

__all__ = [
    "QUIZ_DIR",
    "QuizDataError",
    "all_quizzes",
    "display_order",
    "displayed_question",
    "load_quizzes",
    "notebook_stems",
    "quiz_file",
    "show_quiz",
]

QUIZ_DIR = Path(__file__).resolve().parent / "data" / "quizzes"
QUIZ_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
QUIZ_KEYS = {"question", "options", "explanation", "multiple"}
OPTION_KEYS = {"text", "correct", "why"}


class QuizDataError(ValueError):
    """A quiz file is missing or malformed, or a quiz id is unknown (the message is Russian)."""


def _stem(notebook: str) -> str:
    name = Path(notebook).name
    return name[: -len(".ipynb")] if name.endswith(".ipynb") else name


def quiz_file(notebook: str) -> Path:
    """Where the quizzes of `notebook` ("04_sliding_window" or "04_sliding_window.ipynb") live."""
    return QUIZ_DIR / f"{_stem(notebook)}.json"


def notebook_stems() -> list[str]:
    """The notebooks that have a quiz file, sorted."""
    return sorted(path.stem for path in QUIZ_DIR.glob("*.json"))


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(QUIZ_DIR.parents[2]))
    except ValueError:
        return str(path)


def _option(raw: Any, where: str) -> Option:
    if not isinstance(raw, dict):
        raise QuizDataError(f"{where}: вариант ответа должен быть объектом с полями text и correct.")
    unknown = set(raw) - OPTION_KEYS
    if unknown:
        raise QuizDataError(f"{where}: неизвестные поля варианта: {', '.join(sorted(unknown))}.")
    text, correct, why = raw.get("text"), raw.get("correct"), raw.get("why", "")
    if not isinstance(text, str) or not text.strip():
        raise QuizDataError(f"{where}: у варианта нет текста (text).")
    if not isinstance(correct, bool):
        raise QuizDataError(f"{where}: у варианта «{text}» поле correct должно быть true или false.")
    if not isinstance(why, str):
        raise QuizDataError(f"{where}: у варианта «{text}» поле why должно быть строкой.")
    return Option(text, correct, why)


def _question(raw: Any, where: str) -> QuizQuestion:
    if not isinstance(raw, dict):
        raise QuizDataError(f"{where}: вопрос должен быть объектом.")
    unknown = set(raw) - QUIZ_KEYS
    if unknown:
        raise QuizDataError(f"{where}: неизвестные поля: {', '.join(sorted(unknown))}.")
    question, options = raw.get("question"), raw.get("options")
    explanation, multiple = raw.get("explanation", ""), raw.get("multiple")
    if not isinstance(question, str) or not question.strip():
        raise QuizDataError(f"{where}: нет текста вопроса (question).")
    if not isinstance(options, list):
        raise QuizDataError(f"{where}: options должен быть списком вариантов.")
    if not isinstance(explanation, str):
        raise QuizDataError(f"{where}: explanation должен быть строкой.")
    if multiple is not None and not isinstance(multiple, bool):
        raise QuizDataError(f"{where}: multiple должен быть true или false.")
    parsed = [_option(option, f"{where}, вариант {number}") for number, option in enumerate(options, 1)]
    if parsed and all(option.correct for option in parsed):
        raise QuizDataError(f"{where}: все варианты верные — угадывать нечего.")
    try:
        return QuizQuestion(question, parsed, explanation=explanation, multiple=multiple)
    except (ValueError, TypeError) as error:
        raise QuizDataError(f"{where}: {error}") from None


def load_quizzes(notebook: str) -> dict[str, QuizQuestion]:
    """Every quiz of a notebook by id, options in authoring order (for tests and answer keys)."""
    path = quiz_file(notebook)
    if not path.is_file():
        known = ", ".join(notebook_stems()) or "нет ни одного"
        raise QuizDataError(
            f"Нет файла с вопросами {_relative(path)} для ноутбука «{_stem(notebook)}». "
            f"Файлы есть для: {known}."
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise QuizDataError(f"Не удалось прочитать {_relative(path)}: {error}") from None
    if not isinstance(data, dict) or not data:
        raise QuizDataError(f"{_relative(path)}: ожидался непустой объект «id вопроса → вопрос».")
    quizzes: dict[str, QuizQuestion] = {}
    for quiz_id, raw in data.items():
        where = f"{_relative(path)}, вопрос «{quiz_id}»"
        if not QUIZ_ID.match(quiz_id):
            raise QuizDataError(f"{where}: id — строчные латинские буквы, цифры и дефисы.")
        quizzes[quiz_id] = _question(raw, where)
    return quizzes


def all_quizzes() -> dict[str, dict[str, QuizQuestion]]:
    """Every quiz of every notebook: {notebook stem: {quiz id: question}}."""
    return {stem: load_quizzes(stem) for stem in notebook_stems()}


def display_order(notebook: str, quiz_id: str, option_count: int) -> tuple[int, ...]:
    """The shown order of the options (indices in authoring order); the same on every run.

    Seeded from sha256, not hash(): Python salts str hashes per process. A plain shuffle that does
    not know which options are correct: a rule that kept the answer away from some position would
    itself be a tell (the answer was never first in any single-choice question once).
    """
    seed = int.from_bytes(hashlib.sha256(f"{_stem(notebook)}/{quiz_id}".encode()).digest()[:8], "big")
    order = list(range(option_count))
    random.Random(seed).shuffle(order)
    return tuple(order)


def _lookup(notebook: str, quiz_id: str) -> QuizQuestion:
    quizzes = load_quizzes(notebook)
    if quiz_id not in quizzes:
        raise QuizDataError(
            f"В {_relative(quiz_file(notebook))} нет вопроса «{quiz_id}». "
            f"Есть: {', '.join(quizzes)}."
        )
    return quizzes[quiz_id]


def displayed_question(notebook: str, quiz_id: str) -> QuizQuestion:
    """The question with its options in the order the student sees them."""
    question = _lookup(notebook, quiz_id)
    order = display_order(notebook, quiz_id, len(question.options))
    return question.reordered(order)


def show_quiz(notebook: str, quiz_id: str) -> Quiz:
    """The quiz widget for a notebook cell: `show_quiz("04_sliding_window", "window-rules")`."""
    quiz = Quiz(displayed_question(notebook, quiz_id))
    quiz.quiz_id = f"{_stem(notebook)}/{quiz_id}"
    quiz.add_class(f"course-quiz-id-{quiz_id}")  # lets a browser test find one quiz
    return quiz
