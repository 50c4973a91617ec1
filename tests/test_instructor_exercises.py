"""Exercises as data: one registry, computed totals, weights that favour the algorithm, and an
unregistered exercise or case file is a usage error (exit 2) in grade, release and autograder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib.checking import catalog
from course_lib.checking.cases import load_cases
from course_lib.checking.catalog import BY_NAME, EXERCISES, TOTAL_POINTS, CourseLayout
from course_lib.checking.results import case_points
from course_lib.checking.runner import run_exercise
from course_lib.checking.sandbox import Limits

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = CourseLayout(ROOT)

# The example: turns in the wrong order, and gaps (skips a turn that does not fit and
# keeps looking further back). Argument checks are all right. Equal weights gave it 7.62 of 10.
WRONG_ORDER_AND_GAPS = (ROOT / "solutions" / "select_recent_turns.py").read_text(encoding="utf-8").replace(
    """    kept = 0
    used = 0
    for cost in reversed(turn_token_costs):
        if used + cost > available_tokens:
            break  # older turns are not considered: the window has no gaps
        used += cost
        kept += 1
    selected = turns[len(turns) - kept :]
""",
    """    used = 0
    selected = []
    for turn, cost in zip(reversed(turns), reversed(turn_token_costs)):
        if used + cost > available_tokens:
            continue
        used += cost
        selected.append(turn)
""",
)


def _all_cases(exercise):
    return load_cases(LAYOUT.public_cases_file(exercise), exercise, "public") + load_cases(
        LAYOUT.hidden_cases_file(exercise), exercise, "hidden"
    )


def test_registry_is_the_one_list():
    data = json.loads(catalog.REGISTRY_FILE.read_text(encoding="utf-8"))
    assert [e["name"] for e in data["exercises"]] == [e.name for e in EXERCISES]
    assert TOTAL_POINTS == sum(e.points for e in EXERCISES)
    assert catalog.registration_problems(LAYOUT) == []


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_points_add_up_and_the_algorithm_counts_more(exercise):
    cases = _all_cases(exercise)
    points = case_points(exercise, cases)
    assert round(sum(points), 6) == exercise.points
    algorithm = sum(p for p, c in zip(points, cases) if c.group == "algorithm")
    validation = sum(p for p, c in zip(points, cases) if c.group == "validation")
    assert algorithm > validation


def test_wrong_order_and_gaps_no_longer_scores_most_of_the_points():
    assert WRONG_ORDER_AND_GAPS != (ROOT / "solutions" / "select_recent_turns.py").read_text()
    exercise = BY_NAME["select_recent_turns"]
    cases = [load_cases(LAYOUT.public_cases_file(exercise), exercise, "public"),
             load_cases(LAYOUT.hidden_cases_file(exercise), exercise, "hidden")]  # fmt: skip
    result = run_exercise(exercise, WRONG_ORDER_AND_GAPS, cases, Limits())
    equal = 10 * result.passed / len(result.cases)
    assert equal > 7.0  # what it got when every case weighed the same (7.62 when filed)
    assert result.score < 6.0, result.score


def test_unknown_name_is_a_clear_error():
    with pytest.raises(KeyError) as caught:
        catalog.get_exercise("no_such_exercise")
    assert "exercises.json" in str(caught.value) and not str(caught.value).startswith("'")


@pytest.fixture()
def course_copy(tmp_path):
    copy = tmp_path / "course"
    for name in ("course_lib", "grader", "exercises", "solutions", "grading", "notebooks"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("README.md", "requirements.txt", "pyproject.toml", "Makefile", ".env.example"):
        if (ROOT / name).exists():
            shutil.copyfile(ROOT / name, copy / name)
    return copy


def _course_lib(copy: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(copy), "LLM_BACKEND": "offline", "COURSE_DOTENV": "0"}
    package = "grader" if args[0] in ("grade", "release", "autograder", "export", "instructor") else "course_lib"
    return subprocess.run([sys.executable, "-P", "-m", package, *args], cwd=copy, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def test_unregistered_files_stop_grade_release_and_autograder(course_copy, tmp_path):
    shutil.copyfile(course_copy / "exercises" / "commit_turn.py", course_copy / "exercises" / "extra.py")
    sub = tmp_path / "sub"
    shutil.copytree(ROOT / "solutions", sub)
    for args in (["grade", str(sub), "--out", str(tmp_path / "o"), "--no-progress"],
                 ["release", "--out", str(tmp_path / "b")],
                 ["autograder", "--out", str(tmp_path / "a.zip")]):  # fmt: skip
        result = _course_lib(course_copy, *args)
        assert result.returncode == 2, (args, result.stderr)
        assert "exercises/extra.py" in result.stderr and "не зарегистрировано" in result.stderr
    (course_copy / "exercises" / "extra.py").unlink()
    (course_copy / "grading" / "hidden" / "extra.json").write_text("{}")
    assert _course_lib(course_copy, "release", "--out", str(tmp_path / "b")).returncode == 2


def test_adding_an_exercise_end_to_end(course_copy, tmp_path):
    """README "Add an exercise", followed on a copy exercise: stub, solution, public and hidden
    cases, one registry line; then grade, release and check() all know it, and totals follow."""
    name = "commit_turn_copy"
    for folder, suffix in (("exercises", ".py"), ("solutions", ".py"), ("exercises/cases", ".json"),
                           ("grading/hidden", ".json")):  # fmt: skip
        text = (course_copy / folder / f"commit_turn{suffix}").read_text(encoding="utf-8")
        if suffix == ".json":
            text = text.replace('"exercise": "commit_turn"', f'"exercise": "{name}"')
        (course_copy / folder / f"{name}{suffix}").write_text(text, encoding="utf-8")
    registry = course_copy / "course_lib" / "checking" / "exercises.json"
    data = json.loads(registry.read_text(encoding="utf-8"))
    entry = dict(next(e for e in data["exercises"] if e["name"] == "commit_turn"), name=name, points=5)
    data["exercises"].append(entry)
    registry.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")

    sub = tmp_path / "sub"
    shutil.copytree(course_copy / "solutions", sub)
    out = tmp_path / "out"
    graded = _course_lib(course_copy, "grade", str(sub), "--out", str(out), "--no-progress")
    assert graded.returncode == 0, graded.stderr
    header, row = (out / "grades.csv").read_text(encoding="utf-8").splitlines()[:2]
    assert name in header.split(",")
    assert f",{TOTAL_POINTS + 5:.2f},{TOTAL_POINTS + 5:.2f}," in row
    released = _course_lib(course_copy, "release", "--out", str(tmp_path / "bundle"))
    assert released.returncode == 0, released.stderr
    assert (tmp_path / "bundle" / "exercises" / f"{name}.py").is_file()
    assert f"exercises/{name}.py" in (tmp_path / "bundle" / "README.md").read_text(encoding="utf-8")
    checked = subprocess.run(
        [sys.executable, "-P", "-c", f"from course_lib.exercises import run_check; "
         f"r = run_check('{name}', root='{course_copy}', folder='{course_copy / 'solutions'}'); "
         "print(r.passed, len(r.cases))"],
        env={**os.environ, "PYTHONPATH": str(course_copy)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    passed, total = checked.stdout.split()
    assert passed == total and int(total) > 0, checked.stderr
