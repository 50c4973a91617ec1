"""`course-grader instructor new-exercise NAME --notebook NN` on a temporary copy of the course: the
scaffolded exercise passes the course's own checks on the first run (statement, interface, case
counts and names, points, mutants caught by public and hidden cases, grading, release), and its
practice cells land in the notebook, whose stored outputs then pass nbval."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NAME = "clean_reply"


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    copy = tmp_path_factory.mktemp("course") / "course"
    # __pycache__ is copied too: its bytecode stays valid (copy2 keeps mtimes) and saves a recompile.
    for name in ("course_lib", "grader", "exercises", "solutions", "grading", "notebooks", "tests"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("browser"))
    for name in ("README.md", "requirements.txt", "pyproject.toml", "Makefile", ".env.example"):
        if (ROOT / name).exists():
            shutil.copyfile(ROOT / name, copy / name)
    return copy


def _run(copy: Path, *args: str, module: str | None = None) -> subprocess.CompletedProcess:
    if module is None:
        module = "grader" if args[0] in ("grade", "release", "instructor") else "course_lib"
    env = {**os.environ, "PYTHONPATH": str(copy), "LLM_BACKEND": "offline", "COURSE_DOTENV": "0",
           "PYTEST_ADDOPTS": ""}  # the outer run's options (-q, --durations) would change what we read
    return subprocess.run([sys.executable, "-P", "-m", module, *args], cwd=copy, env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip


@pytest.fixture(scope="module")
def scaffolded(course):
    result = _run(course, "instructor", "new-exercise", NAME, "--notebook", "04", "--title", "Очистка ответа")
    assert result.returncode == 0, result.stderr
    return course, result.stdout


def test_the_command_writes_every_file_and_prints_the_notebook_cells(scaffolded):
    course, stdout = scaffolded
    for relative in (f"exercises/{NAME}.py", f"solutions/{NAME}.py", f"exercises/cases/{NAME}.json",
                     f"grading/hidden/{NAME}.json"):  # fmt: skip
        assert (course / relative).is_file()
        assert str(course / relative) in stdout  # printed in full
    registry = json.loads((course / "course_lib/checking/exercises.json").read_text(encoding="utf-8"))
    assert registry["exercises"][-1]["name"] == NAME and registry["exercises"][-1]["notebook"] == "04"
    assert "INSTRUCTOR.md" in stdout
    notebook = next((course / "notebooks").glob("04_*.ipynb"))
    text = notebook.read_text(encoding="utf-8")
    assert f"](../exercises/{NAME}.py)" in text and f'check(\\"{NAME}\\")' in text
    assert str(notebook) in stdout


def test_a_second_run_or_a_bad_name_changes_nothing(scaffolded):
    course, _ = scaffolded
    before = (course / "course_lib/checking/exercises.json").read_bytes()
    for args in ([NAME, "--notebook", "04"], ["Bad-Name", "--notebook", "04"], ["other", "--notebook", "99"]):
        result = _run(course, "instructor", "new-exercise", *args)
        assert result.returncode == 2 and "Ошибка" in result.stderr and "Traceback" not in result.stderr
    assert (course / "course_lib/checking/exercises.json").read_bytes() == before
    assert not (course / "exercises" / "other.py").exists()


def test_the_course_checks_pass_for_the_scaffolded_exercise(scaffolded):
    """The rules of tests/test_exercises_statements.py, test_grading_cases.py,
    test_instructor_exercises.py and test_exercises_in_notebooks.py, run in the copy for the new
    exercise, and nbval over the notebook that now practises it."""
    course, _ = scaffolded
    result = _run(course, "tests/test_exercises_statements.py", "tests/test_grading_cases.py",
                  "tests/test_instructor_exercises.py", "tests/test_exercises_in_notebooks.py",
                  "-v", "-k", f"{NAME} or registry or points",
                  "-p", "no:cacheprovider", module="pytest")  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:]
    ran = [line for line in result.stdout.splitlines() if line.endswith("PASSED") or " PASSED " in line]
    assert [line for line in ran if line.startswith("tests/test_exercises_statements.py::") and NAME in line], ran
    notebook = str(next((course / "notebooks").glob("04_*.ipynb")))
    result = _run(course, notebook, "--nbval", "--nbval-sanitize-with", "notebooks/sanitize.cfg", "-q",
                  "-p", "no:cacheprovider", module="pytest")  # fmt: skip
    assert result.returncode == 0 and " passed" in result.stdout, result.stdout[-3000:]


def test_grading_release_and_the_mutants_work_on_it(scaffolded, tmp_path):
    course, _ = scaffolded
    script = f"""
import json
from pathlib import Path
from course_lib.checking.catalog import BY_NAME, CourseLayout
from course_lib.checking.cases import load_cases
from course_lib.checking.runner import run_exercise
from course_lib.checking.sandbox import Limits
layout = CourseLayout(Path("{course}"))
exercise = BY_NAME["{NAME}"]
phases = [load_cases(layout.public_cases_file(exercise), exercise, "public"),
          load_cases(layout.hidden_cases_file(exercise), exercise, "hidden")]
def score(source):
    result = run_exercise(exercise, source, phases, Limits())
    failed = {{r.case.visibility for r in result.cases if not r.passed}}
    return result.score, sorted(failed), result.status
reference = (layout.solutions_dir / "{NAME}.py").read_text(encoding="utf-8")
out = {{"reference": score(reference),
        "stub": score((layout.exercises_dir / "{NAME}.py").read_text(encoding="utf-8"))}}
for mutant in json.loads(layout.hidden_cases_file(exercise).read_text(encoding="utf-8"))["mutants"]:
    old, new = mutant["replace"]
    assert old in reference, mutant
    out[mutant["mistake"]] = score(reference.replace(old, new, 1))
print(json.dumps(out))
"""
    result = subprocess.run(
        [sys.executable, "-P", "-c", script], cwd=course, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(course)})  # fmt: skip
    assert result.returncode == 0, result.stderr
    scores = json.loads(result.stdout)
    assert scores.pop("reference") == [10.0, [], "ok"]
    assert scores.pop("stub")[0] == 0
    assert len(scores) >= 3
    for mistake, (points, failed, status) in scores.items():
        assert status == "ok" and failed == ["hidden", "public"] and points < 10, mistake
    bundle = _run(course, "release", "--out", str(tmp_path / "bundle"))
    assert bundle.returncode == 0, bundle.stderr
    sub = tmp_path / "sub"
    sub.mkdir()
    shutil.copyfile(course / "solutions" / f"{NAME}.py", sub / f"{NAME}.py")
    graded = _run(course, "grade", str(sub), "--out", str(tmp_path / "out"), "--no-progress",
                  "--exercise", NAME)  # fmt: skip
    assert graded.returncode == 0, graded.stderr
    assert ",10.00,10.00," in (tmp_path / "out" / "grades.csv").read_text(encoding="utf-8")
