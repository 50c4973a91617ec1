"""INSTRUCTOR.md's generated sections are current; the student bundle's README, .gitignore, handin."""

from __future__ import annotations

import json
import re
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader import instructor, release
from course_lib.checking.catalog import EXERCISES, CourseLayout

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = CourseLayout(ROOT)
GUIDE = (ROOT / "INSTRUCTOR.md").read_text(encoding="utf-8")


def _section(name: str) -> str:
    return GUIDE.split(f"<!-- generated:{name} -->\n", 1)[1].split(f"<!-- /generated:{name} -->", 1)[0]


def test_quiz_key_is_generated_from_every_quiz_the_notebooks_show():
    key = _section("quiz-key")
    assert key == instructor.quiz_key(LAYOUT)
    shown = set()
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            shown |= {qid for _, qid in instructor.SHOW_QUIZ.findall("".join(cell["source"]))}
    assert shown and all(f"(`{qid}`)" in key for qid in shown)
    assert key.count("— ответ:") == sum(key.count(f"(`{qid}`)") for qid in shown)


def test_common_mistakes_are_generated_from_the_mutant_catalogue():
    assert _section("mistakes") == instructor.mistakes(LAYOUT)
    for exercise in EXERCISES:
        assert f"### `{exercise.name}`" in _section("mistakes")


def test_timings_table_comes_from_the_measured_file():
    measured = json.loads((Path(instructor.__file__).with_name(instructor.TIMINGS_FILE)).read_text())
    assert _section("timings") == instructor.timings_table(LAYOUT, measured)
    assert len(measured) == len(list((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")))


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle") / "b"
    assert release.main(["--out", str(out)]) == 0
    return out


def test_bundle_readme_is_for_students(bundle):
    readme = (bundle / "README.md").read_text(encoding="utf-8")
    assert readme != (ROOT / "README.md").read_text(encoding="utf-8")
    for needed in ("make lab", "notebooks/", "00_setup.ipynb", "exercises/", "check(", "make test",
                   "handin", "handin.zip", "скрытые тесты"):  # fmt: skip
        assert needed in readme, needed
    for exercise in EXERCISES:
        assert f"`exercises/{exercise.name}.py`" in readme
    for marker in release.INSTRUCTOR_ONLY:
        assert marker.lower() not in readme.lower()
    ignore = (bundle / ".gitignore").read_text(encoding="utf-8").split()
    assert {".venv/", ".env", "__pycache__/", ".ipynb_checkpoints/", "handin.zip"} <= set(ignore)


def test_verification_catches_an_instructor_readme(bundle, tmp_path):
    import shutil

    copy = tmp_path / "b"
    shutil.copytree(bundle, copy)
    shutil.copyfile(ROOT / "README.md", copy / "README.md")
    problems = release.verify_bundle(copy, LAYOUT)
    assert any("README.md содержит текст для преподавателя" in p for p in problems)


def test_handin_zips_the_exercise_files_only(bundle):
    env = {**os.environ, "PYTHONPATH": str(bundle), "LLM_BACKEND": "offline", "COURSE_DOTENV": "0"}
    result = subprocess.run([sys.executable, "-P", "-m", "course_lib", "handin"], cwd=bundle, env=env,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stderr
    names = zipfile.ZipFile(bundle / "handin.zip").namelist()
    assert sorted(names) == sorted(f"exercises/{e.name}.py" for e in EXERCISES)
    assert "Ещё не решены" in result.stdout  # stubs
    (bundle / "handin.zip").unlink()


def test_the_goals_table_names_each_exercise_in_its_own_notebooks_row():
    # The registry's notebook is where check() runs; the table said 05 for rolling_compress (06).
    text = (ROOT / "INSTRUCTOR.md").read_text(encoding="utf-8")
    rows = {line.split("`")[1][:2]: line for line in text.splitlines() if re.match(r"^\| `\d\d_\w+` \|", line)}
    assert len(rows) == len(list((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")))
    for exercise in EXERCISES:
        where = sorted(number for number, row in rows.items() if f"`{exercise.entry}`" in row or f"`{exercise.name}`" in row)
        # Never in another notebook's row (a freshly scaffolded exercise is in none yet).
        assert where in ([], [exercise.notebook]), (exercise.name, where)
    assert sum(any(f"`{e.entry}`" in row for row in rows.values()) for e in EXERCISES) >= 15
