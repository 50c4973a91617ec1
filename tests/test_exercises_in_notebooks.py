"""Every registered exercise is practised in the notebook the registry names, and only there."""

import re
from pathlib import Path

import nbformat
import pytest

from course_lib.checking.catalog import EXERCISES

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def checks_in(path: Path) -> set[str]:
    notebook = nbformat.read(path, as_version=4)
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    return set(re.findall(r"""\bcheck\(\s*["']([\w]+)["']""", code))


CHECKS = {path.name[:2]: checks_in(path) for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))}


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda exercise: exercise.name)
def test_the_registry_names_the_notebook_that_runs_check(exercise):
    names = {exercise.name, exercise.entry}
    where = sorted(number for number, checks in CHECKS.items() if checks & names)
    assert where == [exercise.notebook], f"{exercise.name}: check() in {where}, registry says {exercise.notebook}"


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda exercise: exercise.name)
def test_the_practice_section_links_the_exercise_file(exercise):
    path = next(NOTEBOOKS.glob(f"{exercise.notebook}_*.ipynb"))
    markdown = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")
    assert f"](../exercises/{exercise.name}.py)" in markdown
