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


def with_mistake(course: Path, name: str, old: str, new: str) -> tuple[object, list[str]]:
    """The reference solution with one typical mistake (`old` → `new`) saved as the student's file,
    and the stand-in `your_code(name)` returns for it, with the lines it announced."""
    from course_lib.checking.catalog import get_exercise
    from course_lib.your_code import ExerciseCode

    reference = (ROOT / "solutions" / f"{name}.py").read_text(encoding="utf-8")
    mistaken = reference.replace(old, new)
    assert mistaken != reference, f"{old!r} is not in solutions/{name}.py"
    write_exercise(course, name, mistaken)
    lines: list[str] = []
    return ExerciseCode(get_exercise(name), course, announce=lines.append), lines


def fix_mistake(course: Path, name: str) -> None:
    """The student fixes the file: the reference solution saved in its place."""
    write_exercise(course, name, (ROOT / "solutions" / f"{name}.py").read_text(encoding="utf-8"))
