"""Notebook 10's Pareto front runs on the exercise `pareto_front` (issue 29): the course's version
by default, the student's function once it passes, and a failing one is shown on the stored run."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from course_lib.checking.catalog import get_exercise
from course_lib.course_versions.pareto_front import pareto_front as course_front
from course_lib.memory_eval import lesson
from course_lib.memory_eval.dataset import load_dataset
from course_lib.memory_eval.report import results_from_json
from course_lib.your_code import COURSE, YOURS, ExerciseCode

from student_course import course_copy, write_exercise

ROOT = Path(__file__).resolve().parents[1]
STORED = lesson.points(results_from_json(lesson.stored_run("offline").data, load_dataset()))


def dominates(a: lesson.Point, b: lesson.Point) -> bool:
    return a.accuracy >= b.accuracy and a.tokens <= b.tokens and (a.accuracy > b.accuracy or a.tokens < b.tokens)


def by_definition(points: list[lesson.Point]) -> list[str]:
    front = [p for p in points if not any(dominates(q, p) for q in points if q is not p)]
    return [p.name for p in sorted(front, key=lambda p: (p.tokens, p.name))]


def random_points(rng: random.Random) -> list[lesson.Point]:
    names = rng.sample("abcdefghij", rng.randint(0, 8))
    return [lesson.Point(n, n.upper(), rng.choice([0, 10, 10.0, 25, 40]), rng.choice([0, 0.25, 0.5, 1]))
            for n in names]  # fmt: skip


def test_the_course_version_finds_the_front_by_the_definition():
    rng = random.Random(29)
    for _ in range(2000):
        points = random_points(rng)
        assert [p.name for p in lesson.pareto_front(points)] == by_definition(points)


def test_the_stored_runs_front_and_who_beats_whom():
    assert [p.name for p in lesson.pareto_front(STORED)] == by_definition(STORED) == ["count", "window_summary"]
    for mine in STORED:
        expected = [p.name for p in STORED if p is not mine and dominates(mine, p)]
        assert [p.name for p in lesson.beaten_by(STORED, mine.name)] == expected


def test_the_table_and_beaten_by_use_the_front_they_are_given():
    calls = []

    def everyone(points):  # a front that keeps every strategy
        calls.append(points)
        return [p["name"] for p in sorted(points, key=lambda p: (p["tokens"], p["name"]))]

    table = lesson.front_table(STORED, front=everyone)
    assert table.count("●") == len(STORED) and "○" not in table
    assert set(calls[0][0]) == {"name", "accuracy", "tokens"}
    assert lesson.beaten_by(STORED, "window_summary", front=everyone) == []
    assert lesson.front_table(STORED).count("●") == 2


def test_front_names_speaks_the_tables_titles_and_shows_what_is_not_a_name():
    describe = lesson.front_names(STORED)
    assert describe(["count", "window_summary"]) == "на фронте 2 стратегии: Последние N сообщений, Окно + сводка"
    assert describe([]) == "пустой фронт"
    assert describe(["full", 7]) == "на фронте 2 стратегии: Полная история, 7"


@pytest.fixture()
def course(tmp_path):
    return course_copy(tmp_path)


def _write(course: Path, text: str) -> None:
    write_exercise(course, "pareto_front", text)


REFERENCE = (ROOT / "solutions" / "pareto_front.py").read_text(encoding="utf-8")


def test_notebook_10_shows_a_failing_front_on_the_stored_run_and_keeps_the_courses(course):
    # Strict domination on both axes: the strategies that tie the summary window on accuracy stay.
    wrong = REFERENCE.replace("    return at_least_as_good and strictly_better",
                              '    return a["accuracy"] > b["accuracy"] and a["tokens"] < b["tokens"]')
    _write(course, wrong)
    code = ExerciseCode(get_exercise("pareto_front"), course, announce=None)
    shown: list[str] = []
    assert code.show_mistake(lesson.as_dicts(STORED), describe=lesson.front_names(STORED), out=shown.append)
    assert code.implementation == COURSE
    assert shown[0].startswith("↪ Ваша функция pareto_front на примере урока (открытые тесты пока не пройдены): "
                               "на фронте 5 стратегий: Последние N сообщений, Окно + сводка, ")
    assert shown[1] == "  Версия курса на том же примере: на фронте 2 стратегии: Последние N сообщений, Окно + сводка"
    assert lesson.front_table(STORED, front=code).count("●") == 2  # the course's version draws the table


def test_a_passing_function_draws_the_table(course):
    _write(course, REFERENCE)
    code = ExerciseCode(get_exercise("pareto_front"), course, announce=None)
    assert [p.name for p in lesson.pareto_front(STORED, code)] == ["count", "window_summary"]
    assert code.implementation == YOURS and code.calls[YOURS] == 1
    assert not code.show_mistake(lesson.as_dicts(STORED), describe=lesson.front_names(STORED), out=print)
