"""`course-grader instructor new-exercise NAME --notebook NN` on a temporary copy of the course: the
scaffolded exercise passes the course's own checks on the first run (statement, interface, case
counts and names, points, mutants caught by public and hidden cases, grading, release), its
practice lands in the notebook, whose stored outputs then pass nbval, and every test of the suite
that reads the registry passes in the copy."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_KNOWN = {e["name"] for e in json.loads((ROOT / "course_lib/checking/exercises.json").read_text(encoding="utf-8"))["exercises"]}
# A name the course does not have yet (a course that already holds a scaffolded clean_reply works too).
NAME = next(name for name in ("clean_reply", *(f"clean_reply_{n}" for n in range(2, 100))) if name not in _KNOWN)
# The registry is read through these names; a test file that uses none of them does not depend on it.
REGISTRY_WORDS = ("EXERCISES", "BY_NAME", "get_exercise", "exercises.json")


def _course_files() -> list[str]:
    """What a fresh clone holds (tracked files, and new ones not ignored); without git, the folders
    and files a course is made of."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True)  # fmt: skip
    if listed.returncode == 0 and listed.stdout:
        return sorted({name for name in listed.stdout.decode().split("\0") if name and (ROOT / name).is_file()})
    names = ("course_lib", "grader", "exercises", "solutions", "grading", "notebooks", "tests", "README.md",
             "INSTRUCTOR.md", "requirements.txt", "pyproject.toml", "Makefile", ".env.example", ".gitignore")
    return sorted(str(path.relative_to(ROOT)) for name in names for path in
                  ([ROOT / name] if (ROOT / name).is_file() else (ROOT / name).rglob("*"))
                  if path.is_file() and "__pycache__" not in path.parts)  # fmt: skip


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    copy = tmp_path_factory.mktemp("course") / "course"
    for name in _course_files():
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, copy / name)
    return copy


def _run(copy: Path, *args: str, module: str | None = None) -> subprocess.CompletedProcess:
    if module is None:
        module = "grader" if args[0] in ("grade", "release", "instructor") else "course_lib"
    env = {**os.environ, "PYTHONPATH": str(copy), "LLM_BACKEND": "offline", "COURSE_DOTENV": "0",
           "OFFLINE_STREAM_CHARS_PER_SECOND": "0",
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
    assert (course / f"course_lib/course_versions/{NAME}.py").read_text(encoding="utf-8") != (
        course / f"solutions/{NAME}.py").read_text(encoding="utf-8")  # fmt: skip
    assert "INSTRUCTOR.md" in stdout
    guide = (course / "INSTRUCTOR.md").read_text(encoding="utf-8")
    assert f"### `{NAME}`" in guide and f"`{NAME}` |" in guide  # the mistakes and the timings table
    notebook = next((course / "notebooks").glob("04_*.ipynb"))
    text = notebook.read_text(encoding="utf-8")
    assert f"](../exercises/{NAME}.py)" in text and f'check(\\"{NAME}\\")' in text
    assert f'your_code(\\"{NAME}\\")' in text and f"{NAME}.show_mistake(" in text
    assert str(notebook) in stdout


def test_a_second_run_or_a_bad_name_changes_nothing(scaffolded):
    course, _ = scaffolded
    before = (course / "course_lib/checking/exercises.json").read_bytes()
    for args in ([NAME, "--notebook", "04"], ["Bad-Name", "--notebook", "04"], ["other", "--notebook", "99"]):
        result = _run(course, "instructor", "new-exercise", *args)
        assert result.returncode == 2 and "Ошибка" in result.stderr and "Traceback" not in result.stderr
    assert (course / "course_lib/checking/exercises.json").read_bytes() == before
    assert not (course / "exercises" / "other.py").exists()


def test_every_test_that_reads_the_registry_passes_in_the_copy(scaffolded):
    """What `make test` runs, restricted to the files that read the registry (and the prose caps
    and nbval of the notebook the exercise joined): none fails on the first run. The with-solutions
    notebook pass runs only for that notebook and its bonus notebooks: the others do not take the new
    exercise and run in the main suite (running all 19 here doubled this run's load, and the hostile
    catalogue's time budgets ran out beside it on 2 shared cores)."""
    course, _ = scaffolded
    here = Path(__file__).name
    files = sorted(str(path.relative_to(course)) for path in (course / "tests").glob("test_*.py")
                   if path.name != here and any(word in path.read_text(encoding="utf-8") for word in REGISTRY_WORDS))
    assert len(files) >= 20, files
    notebook = str(next((course / "notebooks").glob("04_*.ipynb")).relative_to(course))
    result = _run(course, *files, "tests/test_prose_all.py", notebook, "--nbval",
                  "--nbval-sanitize-with", "notebooks/sanitize.cfg", "-v", "-x", "-n", "2", "--dist", "loadfile",
                  "-k", "not test_the_notebook_runs_on_the_students_code or 04",
                  "-p", "no:cacheprovider", module="pytest")  # fmt: skip
    assert result.returncode == 0 and " passed" in result.stdout, result.stdout[-4000:]
    # The generic tests really ran on the new exercise (none skipped it).
    ran = {line.split("::")[0].split()[-1] for line in result.stdout.splitlines() if re.search(rf"\[{NAME}[]:]", line) and "PASSED" in line}
    for needed in ("tests/test_exercises_statements.py", "tests/test_grading_cases.py", "tests/test_course_versions.py",
                   "tests/test_exercises_in_notebooks.py", "tests/test_exercises_mutants.py"):  # fmt: skip
        assert needed in ran, (needed, sorted(ran))
    assert f"{notebook.removesuffix('.ipynb')}::ipynb::Cell" in result.stdout  # nbval compared its cells


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
