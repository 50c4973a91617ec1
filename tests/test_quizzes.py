"""Quiz data files and show_quiz(): valid questions, a shuffled order that gives nothing away,
the same order on every run, and notebooks that show quizzes only through show_quiz()."""

from __future__ import annotations

import ast
import json
import os
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

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
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
    assert shown.correct_indices != frozenset(range(len(correct))), "correct options all shown first"
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
    assert display_order("04_sliding_window", "window-rules", 7, frozenset({0, 1, 2, 3})) == (
        display_order("04_sliding_window.ipynb", "window-rules", 7, frozenset({0, 1, 2, 3}))
    )
    assert sorted(displayed_question("04_sliding_window", "window-rules").correct_indices) == [0, 2, 3, 6]


def test_rotation_moves_correct_options_out_of_the_first_positions():
    # Over many ids some shuffles put the correct options first; every one must be rotated away.
    for number in range(300):
        for count, correct in ((2, {0}), (4, {0}), (4, {0, 1}), (5, {0, 1, 2}), (7, {0, 1, 2, 3})):
            order = display_order("nb", f"q{number}", count, frozenset(correct))
            assert sorted(order) == list(range(count))
            assert set(order[: len(correct)]) != correct


def test_show_quiz_builds_the_widget_in_the_shown_order():
    quiz = show_quiz("04_sliding_window", "removed-history-messages")
    assert isinstance(quiz, Quiz) and quiz.quiz_id == "04_sliding_window/removed-history-messages"
    assert "course-quiz-id-removed-history-messages" in quiz._dom_classes
    assert "course-quiz-single" in quiz._dom_classes  # radio look
    shown = displayed_question("04_sliding_window", "removed-history-messages")
    assert [option.text for option in quiz.question.options] == [o.text for o in shown.options]
    (right,) = shown.correct_indices
    assert right != 0
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
    known = load_quizzes(path.stem)
    used = []
    for index, cell, source in code_cells(path):
        assert "Quiz(" not in source, f"ячейка {index}: Quiz(...) прямо в ноутбуке — используйте show_quiz()"
        if "show_quiz(" not in source:
            continue
        assert cell.get("metadata", {}).get("jupyter", {}).get("source_hidden") is True, (
            f"ячейка {index}: у ячейки с show_quiz() должен быть metadata.jupyter.source_hidden = true"
        )
        for stem, quiz_id in show_quiz_calls(source):
            assert stem == path.stem, f"ячейка {index}: вопрос из чужого ноутбука {stem}"
            assert quiz_id in known, f"ячейка {index}: нет вопроса {quiz_id}"
            used.append(quiz_id)
    assert used, "в ноутбуке нет ни одного вопроса для самопроверки"
    assert sorted(used) == sorted(known), "каждый вопрос из файла показан ровно один раз"
