"""A course folder of its own for a student's exercise files: tests that run `your_code` on a
student's function copy `exercises/` there and write the file the student would have saved."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def course_copy(tmp_path: Path) -> Path:
    """`tmp_path` as a course folder: the stubs and public cases of `exercises/`, an empty course_lib/."""
    shutil.copytree(ROOT / "exercises", tmp_path / "exercises")
    (tmp_path / "course_lib").mkdir()
    return tmp_path


def write_exercise(course: Path, name: str, text: str) -> None:
    """Save `exercises/<name>.py` as the student would; the file's time moves a second on, so a
    stand-in that re-checks a changed file sees the change even within one clock tick."""
    path = course / "exercises" / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
