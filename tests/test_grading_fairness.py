"""Grading fairness: points for exception cases count only in proportion to the return-value cases
the same exercise passes (issue 17), and per-test points add up to the exercise's points exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from course_lib.checking.cases import load_cases
from course_lib.checking.catalog import BY_NAME, EXERCISES, CourseLayout
from grader.report import SubmissionResult, feedback_markdown, results_json
from course_lib.checking.results import case_points
from course_lib.checking.runner import run_exercise
from course_lib.checking.sandbox import Limits

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = CourseLayout(ROOT)

ALWAYS_RAISES = '''
class ChatHistoryError(ValueError):
    pass


def split_into_turns(history):
    raise ChatHistoryError("история испорчена")
'''

# Right on every odd history, wrong pairing otherwise: some algorithm cases pass, not all.
HALF_RIGHT = '''
class ChatHistoryError(ValueError):
    pass


def split_into_turns(history):
    if len(history) % 2:
        raise ChatHistoryError("нечётное число сообщений")
    for message, role in zip(history, ["user", "assistant"] * len(history)):
        if message.get("role") != role:
            raise ChatHistoryError("роли")
    return [[history[i], history[i + 1]] for i in range(0, len(history), 2)][:1]
'''


def _phases(exercise):
    return [
        load_cases(LAYOUT.public_cases_file(exercise), exercise, "public"),
        load_cases(LAYOUT.hidden_cases_file(exercise), exercise, "hidden"),
    ]


def _grade(source: str):
    exercise = BY_NAME["split_into_turns"]
    return run_exercise(exercise, source, _phases(exercise), Limits(), hide=[str(ROOT)])


def test_a_stub_raising_the_exercises_own_exception_scores_zero():
    result = _grade(ALWAYS_RAISES)
    validation = [r for r in result.cases if r.case.group == "validation"]
    assert validation and all(r.passed for r in validation)  # it does raise the right exception…
    assert not any(r.passed for r in result.cases if r.case.group == "algorithm")
    assert result.score == 0  # …but earns nothing for it (3 of 10 before)
    document = results_json(SubmissionResult("s", [result]), "visible")
    assert document["score"] == 0 and all(test["score"] == 0 for test in document["tests"])
    feedback = feedback_markdown(SubmissionResult("s", [result]), "visible")
    assert "в той же доле" in feedback and "получает 0" in feedback


def test_validation_points_follow_the_share_of_algorithm_points():
    result = _grade(HALF_RIGHT)
    points, earned = result.case_points(), result.earned_points()
    for visibility in ("public", "hidden"):
        algorithm = [(p, r) for p, r in zip(points, result.cases)
                     if r.case.group == "algorithm" and r.case.visibility == visibility]  # fmt: skip
        fraction = sum(p for p, r in algorithm if r.passed) / sum(p for p, _ in algorithm)
        assert 0 < fraction < 1 or visibility == "public"
        for p, got, r in zip(points, earned, result.cases):
            if r.case.group == "validation" and r.case.visibility == visibility and r.passed:
                assert got == pytest.approx(p * fraction, abs=1e-4)
    assert result.score == pytest.approx(sum(earned), abs=1e-9)
    # Public points (shown before publication) never depend on hidden outcomes.
    exercise = BY_NAME["split_into_turns"]
    only_public = run_exercise(exercise, HALF_RIGHT, _phases(exercise)[:1], Limits())
    alone, together = only_public.group_score("public"), result.group_score("public")
    assert alone[0] / alone[1] == pytest.approx(together[0] / together[1], abs=1e-3)


def test_the_reference_solution_still_scores_full_points():
    source = (ROOT / "solutions" / "split_into_turns.py").read_text(encoding="utf-8")
    result = _grade(source)
    assert result.score == 10 and result.validation_discount() == 0


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_per_test_max_scores_sum_to_the_exercise_points_exactly(exercise):
    cases = [case for phase in _phases(exercise) for case in phase]
    points = case_points(exercise, cases)
    assert all(round(p, 4) == p for p in points)
    assert round(sum(points), 4) == exercise.points
    # Stated in Gradescope's terms: the tests' max_score as written to results.json.
    assert round(sum(round(p, 4) for p in points), 4) == exercise.points


def test_results_json_max_scores_sum_to_the_course_total(tmp_path):
    from course_lib.checking.results import CaseResult, ExerciseResult

    exercises = []
    for exercise in EXERCISES:
        cases = [case for phase in _phases(exercise) for case in phase]
        exercises.append(ExerciseResult(exercise, "ok", [CaseResult(c, True, "passed") for c in cases]))
    document = results_json(SubmissionResult("s", exercises), "visible")
    total = sum(e.points for e in EXERCISES)
    assert round(sum(t["max_score"] for t in document["tests"]), 4) == total
    assert round(sum(t["score"] for t in document["tests"]), 4) == total == document["score"]
    json.dumps(document)
