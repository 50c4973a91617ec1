"""The course's own version of every exercise scores full points, graded like a student's file.

The notebooks run these until the student's code passes its public cases, so they must behave
exactly as the statements say: on the public cases *and* the hidden ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from course_lib.checking.cases import load_cases
from course_lib.checking.catalog import CHALLENGES, EXERCISES, CourseLayout
from course_lib.checking.runner import run_exercise
from course_lib.checking.sandbox import Limits

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = CourseLayout(ROOT)
VERSIONS = ROOT / "course_lib" / "course_versions"


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda exercise: exercise.name)
def test_the_course_version_passes_every_case(exercise):
    source = (VERSIONS / f"{exercise.name}.py").read_text(encoding="utf-8")
    groups = [
        load_cases(LAYOUT.public_cases_file(exercise), exercise, "public"),
        load_cases(LAYOUT.hidden_cases_file(exercise), exercise, "hidden"),
    ]
    result = run_exercise(exercise, source, groups, Limits())
    failed = [(case.case.name, case.detail) for case in result.cases if not case.passed]
    assert result.status == "ok" and not failed, failed


def test_there_is_one_course_version_per_exercise():
    # A challenge (notebook 10's own strategy) has one too: it runs until the student's keeps the contract.
    modules = {path.stem for path in VERSIONS.glob("*.py")} - {"__init__"}
    assert modules == {exercise.name for exercise in EXERCISES + CHALLENGES}
