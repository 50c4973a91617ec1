"""course_lib.your_code: the notebooks run the student's exercise code once it passes, the course's before."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from course_lib.your_code import COURSE, YOURS, ExerciseCode, your_code
from course_lib.checking.catalog import get_exercise

ROOT = Path(__file__).resolve().parents[1]
TURN = [{"role": "user", "content": "Вопрос"}, {"role": "assistant", "content": "Ответ"}]


@pytest.fixture()
def course(tmp_path):
    """A course folder of its own: exercises/ with the stubs and public cases, course_lib/ present."""
    shutil.copytree(ROOT / "exercises", tmp_path / "exercises")
    (tmp_path / "course_lib").mkdir()
    return tmp_path


def _write(course: Path, name: str, text: str) -> None:
    path = course / "exercises" / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    # A new mtime even on file systems with coarse timestamps: the stand-in looks at (mtime, size, inode).
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def _code(course: Path, name: str, lines: list[str]) -> ExerciseCode:
    return ExerciseCode(get_exercise(name), course, announce=lines.append)


def test_a_stub_runs_the_course_version_and_says_so(course):
    lines: list[str] = []
    code = _code(course, "split_into_turns", lines)
    assert code.implementation == COURSE
    assert code(TURN) == [TURN]
    assert lines == [code.status]
    assert "пока заготовка" in lines[0] and 'check("split_into_turns")' in lines[0]


def test_a_solved_file_runs_the_students_code_without_a_restart(course):
    lines: list[str] = []
    code = _code(course, "split_into_turns", lines)
    _write(course, "split_into_turns", (ROOT / "solutions" / "split_into_turns.py").read_text(encoding="utf-8"))
    assert code(TURN) == [TURN]
    assert code.implementation == YOURS
    assert lines[-1].startswith("✔ split_into_turns: работает ваша функция") and "6 из 6" in lines[-1]
    assert code.entry.__module__ == "exercises_split_into_turns"


def test_a_failing_file_falls_back_and_names_the_score(course):
    lines: list[str] = []
    wrong = (ROOT / "solutions" / "select_recent_turns.py").read_text(encoding="utf-8").replace("break", "continue")
    _write(course, "select_recent_turns", wrong)
    code = _code(course, "select_recent_turns", lines)
    assert code.implementation == COURSE
    assert "не проходит открытые тесты" in lines[0] and 'check("select_recent_turns")' in lines[0]
    assert code([TURN, TURN], [5, 5], 5) == TURN  # the course's window: the newest turn only


def test_a_syntax_error_falls_back(course):
    lines: list[str] = []
    _write(course, "commit_turn", "def commit_turn(:\n")
    code = _code(course, "commit_turn", lines)
    assert code.implementation == COURSE
    assert "работает версия курса" in lines[0]
    history: list = []
    assert code(history, "Вопрос", "Ответ") == 2


def test_a_missing_file_falls_back(course):
    (course / "exercises" / "commit_turn.py").unlink()
    lines: list[str] = []
    code = _code(course, "commit_turn", lines)
    assert code.implementation == COURSE and "файла нет" in lines[0]


def test_going_back_to_the_stub_switches_back_and_announces_once(course):
    lines: list[str] = []
    stub = (course / "exercises" / "commit_turn.py").read_text(encoding="utf-8")
    _write(course, "commit_turn", (ROOT / "solutions" / "commit_turn.py").read_text(encoding="utf-8"))
    code = _code(course, "commit_turn", lines)
    assert code.implementation == YOURS
    _write(course, "commit_turn", stub)
    code([], "a", "b")
    code([], "a", "b")
    assert code.implementation == COURSE
    assert len(lines) == 2  # one line per change, not per call


def test_an_error_in_the_students_code_names_their_file(course):
    # Passes the public cases, fails on a longer history: the notebook must show it, not hide it.
    source = (ROOT / "solutions" / "split_into_turns.py").read_text(encoding="utf-8")
    source = source.replace("    turns = []\n", "    turns = []\n    if len(history) > 40:\n        raise RuntimeError('слишком длинная история')\n")
    _write(course, "split_into_turns", source)
    code = _code(course, "split_into_turns", [])
    assert code.implementation == YOURS
    with pytest.raises(RuntimeError) as caught:
        code(TURN * 21)
    assert any("exercises/split_into_turns.py" in note for note in caught.value.__notes__)


def test_the_class_exercise_makes_instances(course):
    code = _code(course, "SessionHistory", [])
    history = code()
    history.add_turn("s", "Вопрос", "Ответ")
    assert history.get_messages("s") == TURN


def test_your_code_gives_one_stand_in_per_exercise(course, capsys):
    first = your_code("commit_turn", root=course)
    again = your_code("commit_turn", root=course)
    assert first is again
    out = capsys.readouterr().out.splitlines()
    assert out == [first.status, first.status]  # asked twice in a notebook: the line shows under both cells


def test_the_custom_exception_comes_from_the_module_that_runs(course):
    code = _code(course, "split_into_turns", [])
    error = code.module_attribute("ChatHistoryError")
    assert issubclass(error, ValueError)
    with pytest.raises(error):
        code(TURN[:1])


def test_a_notebooks_line_speaks_even_after_a_course_module_asked_silently(course, capsys):
    # 04's service builds SessionHistory through course_lib.steps.sessions before the notebook's own line.
    silent = your_code("build_summary_source", root=course, announce=False)
    assert capsys.readouterr().out == ""
    spoken = your_code("build_summary_source", root=course)
    assert spoken is silent and capsys.readouterr().out.splitlines() == [silent.status]


def test_a_failing_function_is_shown_making_its_mistake_beside_the_course_version(course):
    # The fallback never hides the lesson: the student's `continue` (for `break`) takes the old turn.
    lines: list[str] = []
    wrong = (ROOT / "solutions" / "select_recent_turns.py").read_text(encoding="utf-8").replace("break", "continue")
    _write(course, "select_recent_turns", wrong)
    code = _code(course, "select_recent_turns", lines)
    shown: list[str] = []
    old, big, new = [TURN[0]], [TURN[1]], [TURN[0]]
    assert code.show_mistake([old, big, new], [1, 10, 1], 3, describe=len, out=shown.append)
    assert shown[0] == "↪ Ваша функция select_recent_turns на примере урока (открытые тесты пока не пройдены): 2"
    assert shown[1] == "  Версия курса на том же примере: 1"
    assert code.implementation == COURSE and code.students is not None and code.students is not code.entry


def test_a_raising_function_is_shown_with_its_line_and_a_stub_or_a_solution_shows_nothing(course):
    lines: list[str] = []
    code = _code(course, "commit_turn", lines)
    assert not code.show_mistake([], "Вопрос", "Ответ", out=lines.append) and code.students is None  # a stub
    _write(course, "commit_turn", "def commit_turn(history, user_text, assistant_text):\n    return history[5]\n")
    shown: list[str] = []
    assert code.show_mistake([], "Вопрос", "Ответ", out=shown.append)
    assert "выбросила IndexError: list index out of range (exercises/commit_turn.py, строка 2)" in shown[0]
    assert shown[1] == "  Версия курса на том же примере: 2"
    _write(course, "commit_turn", (ROOT / "solutions" / "commit_turn.py").read_text(encoding="utf-8"))
    assert not code.show_mistake([], "Вопрос", "Ответ", out=shown.append) and code.implementation == YOURS
