"""A section can be re-run after Run All: no later cell rebinds a name the setup cell imported.

Re-running from the middle is what a student does after editing an exercise; a cell that reused,
say, `tokens` (the course's «N токенов» helper) as a loop variable broke every cell after it that
called `tokens(...)` («'int' object is not callable»).
"""

from __future__ import annotations

import ast

import nbformat
import pytest

from notebook_text import ALL_NOTEBOOKS, notebook_name

NOTEBOOKS = ALL_NOTEBOOKS  # a bonus notebook is re-run from the middle just the same


def _imported(tree: ast.AST) -> set[str]:
    return {alias.asname or alias.name.split(".")[0]
            for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names}  # fmt: skip


def _bound_at_top(tree: ast.Module) -> set[str]:
    """Names a cell assigns at its top level (functions and classes keep their own scope)."""
    bound: set[str] = set()
    for statement in tree.body:
        for node in ast.walk(statement):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With)):
                targets = [getattr(node, "target", None)] + [item.optional_vars for item in getattr(node, "items", [])]
            for target in filter(None, targets):
                bound |= {name.id for name in ast.walk(target) if isinstance(name, ast.Name)}
    return bound


@pytest.mark.parametrize("path", NOTEBOOKS, ids=notebook_name)
def test_no_cell_rebinds_what_the_setup_cell_imported(path):
    cells = [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
    setup = next(cell for cell in cells if "setup_notebook()" in cell.source)
    imported = _imported(ast.parse(setup.source))
    clashes = []
    for index, cell in enumerate(cells):
        if cell is setup:
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue  # a cell with IPython magics defines nothing here
        clashes += [f"ячейка кода {index}: {name}" for name in sorted(_bound_at_top(tree) & imported)]
    assert not clashes, clashes
