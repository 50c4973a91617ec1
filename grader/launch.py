"""Is `grade` safe to run from here? The import path must not contain a folder of submissions.

`python -m grader` puts the current folder first on the import path. Run from inside a folder of
submissions, a student folder named `grader` or `course_lib` (or `tqdm`, `json`, …) would be
imported instead of ours, unsandboxed, as the grading user. Nothing in our code can stop a planted
`grader` package (Python runs it before any line of ours); this check refuses the rest, and the
documented entry points never have the current folder on the path: the `course-grader` console
script (pyproject's [project.scripts]) and `python -P -m grader`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from course_lib.checking.safetext import one_line

PACKAGE_PARENT = Path(__file__).resolve().parents[1]  # the course folder: grader/ and course_lib/ sit in it


def unsafe_launch(submissions: list[Path]) -> str | None:
    """Why running here is unsafe (a Russian message), or None.

    Unsafe: the current folder is on the import path, is not the course's own folder, and holds
    submissions being graded or something named course_lib or grader.
    """
    if sys.flags.safe_path:
        return None
    cwd = Path(os.getcwd()).resolve()
    if cwd == PACKAGE_PARENT:
        return None  # the course's own folder: its grader and course_lib are these ones
    if not any(Path(entry or ".").resolve() == cwd for entry in sys.path):
        return None
    parents = {Path(os.path.abspath(path)).parent for path in submissions}
    if cwd not in parents and not any(os.path.lexists(cwd / name) for name in ("course_lib", "grader")):
        return None
    return (
        f"Текущая папка ({one_line(str(cwd))}) стоит первой в пути импорта Python: папка работы с именем "
        "course_lib или именем любого модуля выполнилась бы без песочницы. Запустите проверку "
        "командой .venv/bin/course-grader grade … или python -P -m grader grade … "
        "(либо из папки курса)."
    )
