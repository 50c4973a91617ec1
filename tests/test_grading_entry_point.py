"""`grade *` run from inside the submissions folder must never import a student's `grader` or
`course_lib`."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "LLM_BACKEND": "offline", "COURSE_DOTENV": "0", "PYTHONPATH": str(ROOT)}
ARGS = ["--exercise", "commit_turn", "--no-progress", "--allow-weak-sandbox"]
PLANT = "import pathlib\npathlib.Path({marker!r}).write_text('executed')\n"


def _submissions(tmp_path: Path, package: bool) -> tuple[Path, Path]:
    subs = tmp_path / "subs"
    (subs / "alice").mkdir(parents=True)
    shutil.copyfile(ROOT / "solutions" / "commit_turn.py", subs / "alice" / "commit_turn.py")
    marker = tmp_path / "PLANTED-CODE-RAN"
    for package_name in ("grader", "course_lib"):
        planted = subs / package_name
        planted.mkdir()
        for name in ("__init__.py", "__main__.py") if package else ("commit_turn.py",):
            (planted / name).write_text(PLANT.format(marker=str(marker)), encoding="utf-8")
    return subs, marker


def _grade(command: list[str], subs: Path, out: Path) -> subprocess.CompletedProcess:
    names = sorted(path.name for path in subs.iterdir())  # what the shell's * expands to
    return subprocess.run(
        [*command, "grade", *names, "--out", str(out), *ARGS],
        cwd=subs, env=ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _console_script() -> Path:
    script = Path(sys.executable).parent / "course-grader"
    if not script.exists():
        pytest.skip("the course-grader console script is not installed (pip install -e .)")
    return script


@pytest.mark.parametrize("entry", ["console_script", "python -P"])
def test_documented_entry_points_never_import_a_planted_course_lib(tmp_path, entry):
    subs, marker = _submissions(tmp_path, package=True)
    if entry == "console_script":
        command = [str(_console_script())]
    else:
        command = [sys.executable, "-P", "-m", "grader"]
    env_path = ENV.pop("PYTHONPATH")
    try:
        completed = _grade(command, subs, tmp_path / "out")
    finally:
        ENV["PYTHONPATH"] = env_path
    assert completed.returncode == 0, completed.stderr
    assert not marker.exists()
    with open(tmp_path / "out" / "grades.csv", encoding="utf-8") as handle:
        rows = {row["submission"]: row for row in csv.DictReader(handle)}
    assert rows["alice"]["commit_turn"] == "10.00"
    assert rows["course_lib"]["status"] == "missing"  # just another folder: no commit_turn.py in it
    assert rows["grader"]["status"] == "missing"


def test_python_m_from_a_submissions_folder_is_refused(tmp_path):
    """A `grader` folder without __init__.py loses to our package; then grade refuses."""
    subs, marker = _submissions(tmp_path, package=False)
    completed = _grade([sys.executable, "-m", "grader"], subs, tmp_path / "out")
    assert completed.returncode == 2
    assert "python -P -m grader" in completed.stderr and "course-grader grade" in completed.stderr
    assert not marker.exists() and not (tmp_path / "out").exists()
