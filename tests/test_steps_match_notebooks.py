"""The classes the student builds in 01–04 have one home each in `course_lib.steps`: the notebook
cell that teaches a class and the module later notebooks import it from hold the same source.

A row is skipped only while its module does not exist yet (the 02/03 modules are written by
another engineer at the same time); once the module exists, the notebook must show the same code.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import textwrap
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"

# (notebook stem, class or function name, module that is its home)
STEPS = [
    ("01_stateless_call", "ChatServiceError", "course_lib.steps.common"),
    ("01_stateless_call", "ChatReply", "course_lib.steps.common"),
    ("01_stateless_call", "validate_reply", "course_lib.steps.common"),
    ("01_stateless_call", "requests_table", "course_lib.steps.common"),
    ("01_stateless_call", "build_messages", "course_lib.steps.stateless"),
    ("01_stateless_call", "StatelessChatService", "course_lib.steps.stateless"),
    ("02_single_history", "SingleHistoryChatService", "course_lib.steps.single_history"),
    ("03_sessions", "SessionChatService", "course_lib.steps.sessions"),
    ("04_sliding_window", "WindowReply", "course_lib.steps.window"),
    ("04_sliding_window", "WindowChatService", "course_lib.steps.window"),
]

# Written once, in 01 (issue 9: one helper, one home); later notebooks import them.
WRITTEN_ONCE_IN_01 = ("ChatServiceError", "ChatReply", "validate_reply", "requests_table")


def normalized(source: str) -> str:
    lines = [line.rstrip() for line in textwrap.dedent(source).splitlines()]
    return "\n".join(lines).strip("\n")


def code_cells(stem: str) -> list[tuple[int, str]]:
    notebook = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
    return [(index, cell.source) for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"]


def top_level_definitions(source: str) -> dict[str, str]:
    """name -> source of each top-level `class`/`def` block (decorators included)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # e.g. a cell with IPython magics; it defines nothing we look for
        return {}
    lines = source.splitlines()
    blocks = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno] + [decorator.lineno for decorator in node.decorator_list])
            blocks[node.name] = "\n".join(lines[start - 1 : node.end_lineno])
    return blocks


def definitions_in(stem: str, name: str) -> list[tuple[int, str]]:
    return [
        (index, blocks[name])
        for index, source in code_cells(stem)
        if name in (blocks := top_level_definitions(source))
    ]


@pytest.mark.parametrize(("stem", "name", "module_name"), STEPS, ids=[f"{s}:{n}" for s, n, _ in STEPS])
def test_notebook_cell_and_module_hold_the_same_source(stem, name, module_name):
    if importlib.util.find_spec(module_name) is None:
        pytest.skip(f"{module_name} does not exist yet")
    module = importlib.import_module(module_name)
    assert hasattr(module, name), f"{module_name} has no {name}"

    found = definitions_in(stem, name)
    assert len(found) == 1, (
        f"{stem}.ipynb must define {name} in exactly one cell (found in cells {[i for i, _ in found]})"
    )
    index, cell_block = found[0]
    module_block = inspect.getsource(getattr(module, name))
    assert normalized(cell_block) == normalized(module_block), (
        f"{stem}.ipynb, cell {index}: {name} differs from {module_name}; edit both or neither"
    )


def test_the_table_names_every_step_module():
    homes = {module for _, _, module in STEPS}
    package = NOTEBOOKS.parent / "course_lib" / "steps"
    taught_here = {f"course_lib.steps.{name}" for name in ("common", "stateless", "single_history", "sessions")}
    assert taught_here <= homes
    assert (package / "__init__.py").is_file()


@pytest.mark.parametrize("name", WRITTEN_ONCE_IN_01)
def test_helpers_from_01_are_not_retyped_in_later_notebooks(name):
    retyped = [
        f"{path.stem}, cell {index}"
        for path in sorted(NOTEBOOKS.glob("*.ipynb"))
        if path.stem != "01_stateless_call"
        for index, _ in definitions_in(path.stem, name)
    ]
    assert not retyped, f"{name} is written in 01 and lives in course_lib.steps.common; import it instead: {retyped}"


def test_definitions_are_extracted_with_their_decorators():
    source = "x = 1\n\n@dataclass(frozen=True)\nclass A:\n    a: int\n\n\ndef f():\n    return 1\n"
    blocks = top_level_definitions(source)
    assert blocks["A"] == "@dataclass(frozen=True)\nclass A:\n    a: int"
    assert blocks["f"] == "def f():\n    return 1"
