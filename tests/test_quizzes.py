"""Quiz data files and show_quiz(): valid questions, a shuffled order that gives nothing away,
the same order on every run, and notebooks that show quizzes only through show_quiz().

Tells across the course (issue 30): where the correct option is shown, which words open or fill
the options, and how long they are must not let a student answer without knowing the topic."""

from __future__ import annotations

import ast
import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib import quizzes
from course_lib.quizzes import (
    QuizDataError,
    all_quizzes,
    display_order,
    displayed_question,
    load_quizzes,
    notebook_stems,
    show_quiz,
)
from course_lib.widgets import Quiz
from notebook_text import BONUS_NOTEBOOKS, bonus_of, main_of

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))  # the main ones; bonus ones are in bonus/
ALL = [(stem, quiz_id) for stem, questions in all_quizzes().items() for quiz_id in questions]


def test_every_notebook_has_a_quiz_file():
    assert notebook_stems() == [path.stem for path in NOTEBOOKS]


@pytest.mark.parametrize("stem, quiz_id", ALL, ids=[f"{s}/{q}" for s, q in ALL])
def test_quiz_is_valid_and_its_shown_order_gives_nothing_away(stem, quiz_id):
    question = load_quizzes(stem)[quiz_id]
    correct = question.correct_indices
    assert len(question.options) >= 2 and 1 <= len(correct) < len(question.options)
    assert question.explanation.strip(), "every quiz explains its answer"
    if not question.multiple:
        assert len(correct) == 1

    shown = displayed_question(stem, quiz_id)
    assert sorted(option.text for option in shown.options) == sorted(o.text for o in question.options)
    assert shown.multiple == question.multiple and shown.explanation == question.explanation
    assert displayed_question(stem, quiz_id).options == shown.options  # stable within a process


def test_shown_order_does_not_depend_on_the_process():
    """sha256, not hash(): a kernel with another PYTHONHASHSEED shows the same order."""
    code = (
        "from course_lib.quizzes import all_quizzes, displayed_question\n"
        "print([[o.text for o in displayed_question(s, q).options]"
        " for s, qs in all_quizzes().items() for q in qs])"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    }
    expected = repr([[o.text for o in displayed_question(s, q).options] for s, q in ALL])
    assert outputs == {expected + "\n"}


def test_shown_order_is_pinned():
    """Changing the shuffle changes every screenshot and every student's view: do it on purpose."""
    assert display_order("04_sliding_window", "window-rules", 7) == (2, 5, 1, 0, 6, 4, 3)
    assert display_order("04_sliding_window.ipynb", "window-rules", 7) == (2, 5, 1, 0, 6, 4, 3)
    assert sorted(displayed_question("04_sliding_window", "window-rules").correct_indices) == [0, 2, 3, 6]


def test_the_order_is_a_shuffle_that_does_not_know_the_answer():
    # The old rule rotated the correct options out of the first positions, so the answer was never
    # first: a tell. The order now depends on the notebook and the id only.
    assert "correct" not in inspect.signature(display_order).parameters
    for number in range(300):
        for count in (2, 4, 5, 7):
            order = display_order("nb", f"q{number}", count)
            assert sorted(order) == list(range(count))


def test_show_quiz_builds_the_widget_in_the_shown_order():
    quiz = show_quiz("04_sliding_window", "removed-history-messages")
    assert isinstance(quiz, Quiz) and quiz.quiz_id == "04_sliding_window/removed-history-messages"
    assert "course-quiz-id-removed-history-messages" in quiz._dom_classes
    assert "course-quiz-single" in quiz._dom_classes  # radio look
    shown = displayed_question("04_sliding_window", "removed-history-messages")
    assert [option.text for option in quiz.question.options] == [o.text for o in shown.options]
    (right,) = shown.correct_indices
    assert right != 0  # the browser test's demo quiz: its script must not pass by clicking the first option
    assert not quiz.select(0).correct
    assert quiz.select(right).correct
    assert quiz._repr_mimebundle_()["text/plain"].startswith("▶ ")


def test_unknown_notebook_and_id_are_named_in_russian():
    with pytest.raises(QuizDataError, match=r"Нет файла с вопросами .*99_nothing\.json.*04_sliding_window"):
        show_quiz("99_nothing", "x")
    with pytest.raises(QuizDataError, match=r"04_sliding_window\.json нет вопроса «x». Есть: .*window-rules"):
        show_quiz("04_sliding_window", "x")


@pytest.mark.parametrize(
    "content, message",
    [
        ("{", "Не удалось прочитать"),
        ("[]", "непустой объект"),
        ('{"Bad Id": {}}', "id — строчные"),
        ('{"q": {"question": "?", "options": [{"text": "а", "correct": false}], "explanation": ""}}',
         "хотя бы два"),
        ('{"q": {"question": "?", "options": [{"text": "а", "correct": true}, {"text": "б", "correct": true}],'
         ' "explanation": ""}}', "все варианты верные"),
        ('{"q": {"question": "?", "options": [{"text": "а", "correct": "yes"}, {"text": "б", "correct": false}],'
         ' "explanation": ""}}', "correct должно быть"),
        ('{"q": {"question": "?", "options": [], "explanation": "", "answer": 1}}', "неизвестные поля: answer"),
        ('{"q": {"question": "", "options": [], "explanation": ""}}', "нет текста вопроса"),
        ('{"q": {"question": "?", "options": [{"text": "а", "correct": false}, {"text": "б", "correct": false}],'
         ' "explanation": ""}}', "нет ни одного верного"),
    ],
    ids=["not-json", "not-object", "bad-id", "one-option", "all-correct", "bool", "unknown-key",
         "empty-question", "no-correct"],
)
def test_malformed_quiz_files_fail_with_the_file_named(tmp_path, monkeypatch, content, message):
    monkeypatch.setattr(quizzes, "QUIZ_DIR", tmp_path)
    (tmp_path / "nb.json").write_text(content, encoding="utf-8")
    with pytest.raises(QuizDataError, match=message) as raised:
        load_quizzes("nb")
    assert "nb.json" in str(raised.value)


# --- The notebooks show quizzes only through show_quiz(), in hidden-source cells ------------------


def code_cells(path: Path) -> list[tuple[int, dict, str]]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return [
        (index, cell, "".join(cell["source"]))
        for index, cell in enumerate(notebook["cells"])
        if cell["cell_type"] == "code"
    ]


def show_quiz_calls(source: str) -> list[tuple[str, str]]:
    calls = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "show_quiz":
            calls.append(tuple(ast.literal_eval(arg) for arg in node.args[:2]))
    return calls


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_quizzes_come_from_data_files_with_hidden_source(path):
    # A main notebook's quiz file covers its bonus notebooks too: a quiz about a section that moved
    # into `notebooks/bonus/NN_*.ipynb` is shown there, under the main notebook's name.
    known = load_quizzes(path.stem)
    used = []
    for shown_in in [path, *bonus_of(path)]:
        for index, cell, source in code_cells(shown_in):
            where = f"{shown_in.name}, ячейка {index}"
            assert "Quiz(" not in source, f"{where}: Quiz(...) прямо в ноутбуке — используйте show_quiz()"
            if "show_quiz(" not in source:
                continue
            assert cell.get("metadata", {}).get("jupyter", {}).get("source_hidden") is True, (
                f"{where}: у ячейки с show_quiz() должен быть metadata.jupyter.source_hidden = true"
            )
            for stem, quiz_id in show_quiz_calls(source):
                assert stem == path.stem, f"{where}: вопрос из чужого ноутбука {stem}"
                assert quiz_id in known, f"{where}: нет вопроса {quiz_id}"
                used.append(quiz_id)
    assert used, "в ноутбуке нет ни одного вопроса для самопроверки"
    assert sorted(used) == sorted(known), "каждый вопрос из файла показан ровно один раз"


def test_every_bonus_notebook_belongs_to_a_main_notebook():
    for bonus in BONUS_NOTEBOOKS:
        assert main_of(bonus) in NOTEBOOKS, bonus.name


# --- No tells (issue 18): length and feedback must not give the answer away -----------------------

SINGLE = [(stem, quiz_id) for stem, quiz_id in ALL if not load_quizzes(stem)[quiz_id].multiple]
QUOTED_RUN = 3  # this many consecutive words of a correct option quoted in the feedback = a tell


def correct_option_is_the_longest(stem: str, quiz_id: str) -> bool:
    question = load_quizzes(stem)[quiz_id]
    (right,) = question.correct_indices
    lengths = [len(option.text) for option in question.options]
    return lengths[right] == max(lengths)


def quoted_runs(option_text: str, feedback: str) -> list[str]:
    """Runs of QUOTED_RUN consecutive words of the option (all of it when shorter) found in feedback."""
    option_words = re.findall(r"\w+", option_text.lower())
    feedback_text = " " + " ".join(re.findall(r"\w+", feedback.lower())) + " "
    size = min(QUOTED_RUN, len(option_words))
    runs = (" ".join(option_words[start : start + size]) for start in range(len(option_words) - size + 1))
    return [run for run in runs if f" {run} " in feedback_text]


def test_the_correct_option_is_the_longest_in_at_most_a_third_of_single_choice_quizzes():
    longest = [f"{stem}/{quiz_id}" for stem, quiz_id in SINGLE if correct_option_is_the_longest(stem, quiz_id)]
    assert len(longest) * 3 <= len(SINGLE), (
        f"in {len(longest)} of {len(SINGLE)} single-choice quizzes the correct option is the longest "
        f"(a student guesses by length): {longest}"
    )


def test_the_quote_detector_finds_quoted_runs():
    assert quoted_runs("Номер пришёл в другом запросе", "Подумайте: номер пришёл в другом запросе.") == [
        "номер пришёл в", "пришёл в другом", "в другом запросе"]
    assert quoted_runs("4", "Посчитайте сообщения: их 4.") == ["4"]
    assert quoted_runs("Модель всё помнит", "Посмотрите, что уходит в запросе.") == []


@pytest.mark.parametrize("stem, quiz_id", ALL, ids=[f"{s}/{q}" for s, q in ALL])
def test_feedback_shown_on_a_wrong_answer_does_not_quote_the_right_one(stem, quiz_id):
    """A wrong pick shows its `why` and the explanation (widgets/quiz.py): both are hints toward
    the reasoning, never the correct option's own words."""
    question = load_quizzes(stem)[quiz_id]
    feedback = " ".join([question.explanation, *(option.why for option in question.options)])
    quoted = {
        question.options[index].text: runs
        for index in question.correct_indices
        if (runs := quoted_runs(question.options[index].text, feedback))
    }
    assert not quoted, f"{stem}/{quiz_id}: the feedback on a wrong answer quotes the correct option: {quoted}"


# --- No tells across the course (issue 30): position, openings, absolute words, length ------------

ABSOLUTE_WORDS = ("всегда", "никогда", "гарантированно")  # anywhere in an option
OPENINGS = ("Ничего", "Только")  # an option that starts with one of these
SHOWN_FIRST_POSITIONS = 4  # every single-choice question has at least four options


def all_options():
    return [option for stem, quiz_id in ALL for option in load_quizzes(stem)[quiz_id].options]


def test_every_single_choice_question_has_at_least_four_options():
    assert all(len(load_quizzes(stem)[quiz_id].options) >= SHOWN_FIRST_POSITIONS for stem, quiz_id in SINGLE)


def test_the_correct_option_is_shown_on_every_position_roughly_evenly():
    positions = [next(iter(displayed_question(stem, quiz_id).correct_indices)) for stem, quiz_id in SINGLE]
    counts = [positions.count(position) for position in range(SHOWN_FIRST_POSITIONS)]
    # Evenly would be a quarter each: every position gets at least an eighth, none more than half.
    assert all(count * 2 * SHOWN_FIRST_POSITIONS >= len(SINGLE) for count in counts), counts
    assert all(count * 2 <= len(SINGLE) for count in counts), counts
    # With several correct options the first one shown is sometimes correct, sometimes not.
    firsts = [0 in displayed_question(stem, quiz_id).correct_indices for stem, quiz_id in ALL
              if load_quizzes(stem)[quiz_id].multiple]
    assert any(firsts) and not all(firsts), firsts


@pytest.mark.parametrize("opening", OPENINGS)
def test_an_opening_word_does_not_mark_the_wrong_options(opening):
    marked = [option.correct for option in all_options() if option.text.startswith(opening)]
    assert not marked or (any(marked) and not all(marked)), (
        f"options that start with «{opening}»: {marked.count(True)} correct, {marked.count(False)} wrong"
    )


@pytest.mark.parametrize("word", ABSOLUTE_WORDS)
def test_an_absolute_word_is_in_correct_options_too_or_nowhere(word):
    marked = [option.correct for option in all_options() if re.search(rf"\b{word}\b", option.text, re.IGNORECASE)]
    assert not marked or any(marked), f"«{word}» only in wrong options ({len(marked)})"


def test_absolute_words_mark_correct_options_about_as_often_as_any_option():
    options = all_options()
    base = sum(option.correct for option in options) / len(options)
    pattern = re.compile(rf"\b({'|'.join(ABSOLUTE_WORDS)})\b|^({'|'.join(OPENINGS)})", re.IGNORECASE)
    marked = [option.correct for option in options if pattern.search(option.text)]
    assert sum(marked) >= len(marked) * base / 2, (sum(marked), len(marked), base)


def test_the_correct_options_are_not_systematically_the_longest():
    # Single and multiple choice together: how often the longest option is a correct one, against
    # how often that would happen by chance (k correct of n options: k/n), and the mean length.
    longest_correct, by_chance, correct_lengths, wrong_lengths = 0, 0.0, [], []
    for stem, quiz_id in ALL:
        question = load_quizzes(stem)[quiz_id]
        lengths = [len(option.text) for option in question.options]
        mean = sum(lengths) / len(lengths)
        longest_correct += lengths.index(max(lengths)) in question.correct_indices
        by_chance += len(question.correct_indices) / len(lengths)
        for index, length in enumerate(lengths):
            (correct_lengths if index in question.correct_indices else wrong_lengths).append(length / mean)
    assert longest_correct <= by_chance * 1.25, (longest_correct, by_chance)
    assert sum(correct_lengths) / len(correct_lengths) <= 1.1 * sum(wrong_lengths) / len(wrong_lengths)
