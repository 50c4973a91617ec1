"""The classes the student builds in 01–04 have one home each in `course_lib.steps`: the notebook
cell that teaches a class and the module later notebooks import it from hold the same source.

A row is skipped only while its module does not exist yet (the 02/03 modules are written by
another engineer at the same time); once the module exists, the notebook must show the same code.
"The same code" is compared as Python syntax trees without docstrings: a notebook cell may carry
Russian comments and docstrings for the student while the module keeps English ones.

Fill-in cells (issue 17): the student completes a stub in the notebook; the course's version is a
collapsed cell named `course_<name>` that must be the module's `<name>`, and the check cell hands
`try_fill_in` the stub and that reference.
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
    ("01_stateless_call", "StatelessChatService", "course_lib.steps.stateless"),
    ("02_single_history", "SingleHistoryChatService", "course_lib.steps.single_history"),
    ("03_sessions", "ChatSession", "course_lib.steps.sessions"),
    ("03_sessions", "SessionRegistry", "course_lib.steps.sessions"),
    ("03_sessions", "SessionChatService", "course_lib.steps.sessions"),
    ("04_sliding_window", "ExerciseWindow", "course_lib.steps.window"),
    ("04_sliding_window", "WindowReply", "course_lib.steps.window"),
    ("04_sliding_window", "WindowChatService", "course_lib.steps.window"),
    ("05_summary", "summary_source", "course_lib.steps.summary"),
    ("05_summary", "HistorySummarizer", "course_lib.steps.summary"),
    ("05_summary", "SummarySession", "course_lib.steps.summary"),
    ("05_summary", "SummaryReply", "course_lib.steps.summary"),
    ("05_summary", "summary_message", "course_lib.steps.summary"),
    ("05_summary", "RequestPlan", "course_lib.steps.summary"),
    ("05_summary", "plan_request", "course_lib.steps.summary"),
    ("05_summary", "replace_history", "course_lib.steps.summary"),
    ("05_summary", "SummaryChatService", "course_lib.steps.summary"),
]

# (notebook stem, the stub the student fills in, module that holds the course's version under that name)
FILL_INS = [
    ("01_stateless_call", "build_messages", "course_lib.steps.stateless"),
    ("02_single_history", "save_validated_turn", "course_lib.steps.single_history"),
    ("03_sessions", "get_or_create_session", "course_lib.steps.sessions"),
    ("04_sliding_window", "turns_that_fit", "course_lib.steps.window"),
    ("05_summary", "commit_state", "course_lib.steps.summary"),
    ("09_tool_memory", "add_exchange", "course_lib.steps.tool_memory"),
    ("07_persistence_and_memory", "sessions_to_expire", "course_lib.steps.persistence"),
    ("10_measuring_memory", "category_scores", "course_lib.memory_eval.report"),
]

# Written once, in 01 (issue 9: one helper, one home); later notebooks import them.
WRITTEN_ONCE_IN_01 = ("ChatServiceError", "ChatReply", "validate_reply", "requests_table")


def normalized(source: str) -> str:
    lines = [line.rstrip() for line in textwrap.dedent(source).splitlines()]
    return "\n".join(lines).strip("\n")


def without_docstrings(source: str) -> str:
    """The syntax tree of `source` with docstrings dropped (comments never reach the tree)."""
    tree = ast.parse(textwrap.dedent(source))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


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
    assert without_docstrings(cell_block) == without_docstrings(module_block), (
        f"{stem}.ipynb, cell {index}: {name} differs from {module_name}; edit both or neither"
    )


@pytest.mark.parametrize(("stem", "name", "module_name"), FILL_INS, ids=[f"{s}:{n}" for s, n, _ in FILL_INS])
def test_fill_in_cells_use_the_modules_version_as_the_reference(stem, name, module_name):
    module = importlib.import_module(module_name)
    stubs = definitions_in(stem, name)
    assert len(stubs) == 1, f"{stem}.ipynb must define the stub {name} in exactly one cell"
    stub_tree = ast.parse(stubs[0][1]).body[0]
    raises = [node for node in ast.walk(stub_tree) if isinstance(node, ast.Raise)]
    assert raises and "NotImplementedError" in ast.unparse(raises[-1]), f"the stub {name} starts as NotImplementedError"

    references = definitions_in(stem, f"course_{name}")
    assert len(references) == 1, f"{stem}.ipynb must show the course's version as course_{name} in one cell"
    index, reference = references[0]
    cell = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4).cells[index]
    assert cell.metadata.get("jupyter", {}).get("source_hidden") is True, "the course's version is collapsed"
    renamed = reference.replace(f"def course_{name}(", f"def {name}(", 1)
    assert without_docstrings(renamed) == without_docstrings(inspect.getsource(getattr(module, name))), (
        f"{stem}.ipynb, cell {index}: course_{name} differs from {module_name}.{name}"
    )

    checks = [source for _, source in code_cells(stem) if f"try_fill_in({name}," in source]
    assert len(checks) == 1, f"{stem}.ipynb: one cell checks {name} with try_fill_in"
    assert f"{name} = try_fill_in({name}," in checks[0] and f"reference=course_{name}" in checks[0]
    assert f"from {module_name} import {name} as course_{name}" in checks[0]


def test_the_table_names_every_step_module():
    homes = {module for _, _, module in STEPS}
    package = NOTEBOOKS.parent / "course_lib" / "steps"
    taught_here = {f"course_lib.steps.{name}" for name in ("common", "stateless", "single_history", "sessions")}
    assert taught_here <= homes
    assert (package / "__init__.py").is_file()


@pytest.mark.parametrize("name", WRITTEN_ONCE_IN_01)
def test_helpers_from_01_are_not_retyped_in_later_notebooks(name):
    stems = [path.relative_to(NOTEBOOKS).with_suffix("").as_posix()  # bonus ones as bonus/NN_name
             for path in sorted(NOTEBOOKS.glob("*.ipynb")) + sorted(NOTEBOOKS.glob("bonus/*.ipynb"))]
    retyped = [
        f"{stem}, cell {index}"
        for stem in stems
        if stem != "01_stateless_call"
        for index, _ in definitions_in(stem, name)
    ]
    assert not retyped, f"{name} is written in 01 and lives in course_lib.steps.common; import it instead: {retyped}"


def test_docstrings_and_comments_do_not_count_but_code_does():
    english = 'def f(x):\n    """Twice x."""\n    return 2 * x  # double\n'
    russian = 'def f(x):\n    """Удвоенное x."""\n    return 2 * x  # вдвое\n'
    assert without_docstrings(english) == without_docstrings(russian)
    assert without_docstrings(english) != without_docstrings(english.replace("2 * x", "x + x"))


def test_definitions_are_extracted_with_their_decorators():
    source = "x = 1\n\n@dataclass(frozen=True)\nclass A:\n    a: int\n\n\ndef f():\n    return 1\n"
    blocks = top_level_definitions(source)
    assert blocks["A"] == "@dataclass(frozen=True)\nclass A:\n    a: int"
    assert blocks["f"] == "def f():\n    return 1"
