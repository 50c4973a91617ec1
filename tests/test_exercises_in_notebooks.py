"""Every registered exercise is practised in the notebook the registry names, and only there; that
notebook shows the student's failing function on the lesson's example."""

import re
from pathlib import Path

import nbformat
import pytest

from course_lib.checking.catalog import EXERCISES, get_exercise

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


def _stand_ins(path: Path) -> dict[str, str]:
    """{exercise name: the notebook's variable} for every `VAR = your_code("name")` of the notebook."""
    code = "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code")
    return {name: var for var, name in re.findall(r'^(\w+) = your_code\("(\w+)"\)', code, re.M)}


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_the_home_notebook_shows_a_failing_function_on_its_example(exercise):
    # The fallback never hides the lesson: until the student's function passes, the lesson runs it
    # once on its own example beside the course's version (ExerciseCode.show_mistake).
    if not (NOTEBOOKS.parent / "course_lib" / "course_versions" / f"{exercise.name}.py").is_file():
        pytest.skip("a freshly scaffolded exercise: no course version, the notebook does not run it yet")
    path = next(NOTEBOOKS.glob(f"{exercise.notebook}_*.ipynb"))
    code = "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code")
    variable = {get_exercise(name, challenges=True).name: var for name, var in _stand_ins(path).items()}.get(exercise.name)
    assert variable, f"{path.name} takes {exercise.name} through your_code"
    assert f"{variable}.show_mistake(" in code, f"{path.name}: {variable}.show_mistake(...) on the lesson's example"
