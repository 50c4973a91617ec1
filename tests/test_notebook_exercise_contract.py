"""One contract between notebooks and exercises: a worked example that implements an exercise passes it.

A notebook cell that defines a function or class named like an exercise's entry (`split_into_turns`,
`SessionHistory`, …) is the course telling the student "this is how it is done". It must then do
exactly what the exercise asks: the cell's definitions are graded on the exercise's public cases by
the same runner as a student's file. A cell that shows a *different* design must use another name.
A fill-in cell (its body still raises NotImplementedError) is the student's to write and is skipped.
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

from course_lib.checking.cases import load_cases
from course_lib.checking.catalog import EXERCISES, CourseLayout
from course_lib.checking.runner import run_exercise
from course_lib.checking.sandbox import Limits

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = CourseLayout(ROOT)
ENTRIES = {exercise.entry: exercise for exercise in EXERCISES}


def _is_fill_in(node: ast.AST) -> bool:
    return any(
        isinstance(inner, ast.Raise) and "NotImplementedError" in ast.unparse(inner) for inner in ast.walk(node)
    )


def worked_examples(folder: Path = ROOT / "notebooks") -> list[tuple[str, int, str, str]]:
    """(notebook, cell index, exercise name, source to grade) for every worked example found."""
    found = []
    for path in sorted(folder.glob("[0-9][0-9]_*.ipynb")) + sorted(folder.glob("bonus/[0-9][0-9]_*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type != "code":
                continue
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:
                continue  # IPython magics: no definitions to grade there
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in ENTRIES and not _is_fill_in(node):
                    # The cell's own imports and definitions: what a student would paste into the file.
                    kept = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef,
                                                                    ast.ClassDef, ast.Assign, ast.AnnAssign))]
                    found.append((path.relative_to(folder).as_posix(), index, ENTRIES[node.name].name,
                                  ast.unparse(ast.Module(kept, []))))
    return found


def contract_failures(examples: list[tuple[str, int, str, str]]) -> list[str]:
    failures = []
    for notebook, index, name, source in examples:
        exercise = next(exercise for exercise in EXERCISES if exercise.name == name)
        cases = load_cases(LAYOUT.public_cases_file(exercise), exercise, "public")
        result = run_exercise(exercise, source, [cases], Limits())
        failed = [case.case.name for case in result.cases if not case.passed]
        if result.status != "ok" or failed:
            failures.append(
                f"{notebook}, cell {index}: {exercise.entry} is named like the exercise but fails its public "
                f"cases {failed or result.message}; make it pass them or give it another name"
            )
    return failures


def test_every_worked_example_passes_its_exercise():
    assert contract_failures(worked_examples()) == []


def test_the_contract_catches_a_worked_example_that_differs(tmp_path):
    # The 04 of an earlier edition: a split_into_turns returning tuples, named like the exercise.
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("Ходы"),
        nbformat.v4.new_code_cell(
            "def split_into_turns(history):\n"
            "    return [(history[i], history[i + 1]) for i in range(0, len(history), 2)]\n"
        ),
        nbformat.v4.new_code_cell(
            "def split_into_turns(history):\n    raise NotImplementedError('Заполните')\n"
        ),  # a fill-in: the student's to write, not graded
    ]
    nbformat.write(notebook, tmp_path / "04_sample.ipynb")
    examples = worked_examples(tmp_path)
    assert [(e[0], e[1], e[2]) for e in examples] == [("04_sample.ipynb", 1, "split_into_turns")]
    assert len(contract_failures(examples)) == 1


def test_the_contract_sees_the_notebooks():
    assert list((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")), "no notebooks found"
    assert list((ROOT / "notebooks").glob("bonus/[0-9][0-9]_*.ipynb")), "no bonus notebooks found"
