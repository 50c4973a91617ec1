"""A section can be re-run after Run All, as a student does after editing an exercise.

Two checks. A cheap one reads the sources: no later cell rebinds a name the setup cell imported (a
cell that reused, say, `tokens` — the course's «N токенов» helper — as a loop variable broke every
cell after it that called `tokens(...)`: «'int' object is not callable»).

The real one runs them. Every notebook (`notebooks/NN_*.ipynb`, and `notebooks/bonus/*.ipynb` when
that folder exists) is executed top to bottom in one kernel with nbclient. Then, in the same kernel,
every `##` section runs again on its own, from the last section to the first: each re-runs on the
state that Run All and every section after it left, which is what breaks a re-run (a later section
rebinding a name, resetting a shared session, closing a file). Last, everything from the first
section to the end runs once more: a section's re-run must not break the sections after it either
(a list appended to twice, a session asked the same question twice). No cell may raise; the check
cells' asserts hold. Re-running from every section to the end, the student's literal action, costs
the sum of those tails — several runs of each notebook, about 90 s of CPU for the ten notebooks on
2 cores — against about 40 s for these two passes (both measured).

A cell that cannot run again in the middle of a notebook carries an explicit marker in its
metadata, `"rerun": "skip"` with `"rerun_reason"`; the test leaves it out of every pass. Only the
optional clean-up cells at the end of 08 and 09 carry it (they close the stores the sections above
read and delete their files: after them a notebook starts again from the top).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from notebook_text import ALL_NOTEBOOKS, notebook_name

NOTEBOOKS = ALL_NOTEBOOKS  # a bonus notebook is re-run from the middle just the same
EXECUTED = NOTEBOOKS
SKIP, REASON = "rerun", "rerun_reason"
FENCE = re.compile(r"^(```|~~~)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


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


def _skipped(cell) -> bool:
    return cell.cell_type == "code" and cell.metadata.get(SKIP) == "skip"


def _section_starts(cells) -> list[int]:
    """Indices of the Markdown cells that open a `##` section (headings inside a fenced block,
    e.g. a sample of Markdown, are not headings)."""
    starts = []
    for index, cell in enumerate(cells):
        if cell.cell_type != "markdown":
            continue
        fenced = False
        for line in cell.source.splitlines():
            if FENCE.match(line):
                fenced = not fenced
            elif not fenced and line.startswith("## "):
                starts.append(index)
                break
    return starts


def _heading(cell) -> str:
    return next((line for line in cell.source.splitlines() if line.startswith("## ")), "the whole notebook")


@pytest.mark.parametrize("path", EXECUTED, ids=notebook_name)
def test_a_skipped_cell_says_why(path):
    cells = nbformat.read(path, as_version=4).cells
    for cell in cells:
        assert cell.metadata.get(SKIP, "skip") == "skip", f"{path.name}: {SKIP} is only ever \"skip\""
        if _skipped(cell):
            assert len(cell.metadata.get(REASON, "").split()) >= 5, f"{path.name}: {cell.get('id')} needs a reason"


@pytest.mark.parametrize("path", EXECUTED, ids=notebook_name)
def test_each_section_runs_again_after_run_all(path, tmp_path, monkeypatch):
    for name, value in {"LLM_BACKEND": "offline", "COURSE_DOTENV": "0", "OFFLINE_STREAM_CHARS_PER_SECOND": "0",
                        "COURSE_DATA_DIR": str(tmp_path / "course-data")}.items():  # nbval may run it now
        monkeypatch.setenv(name, value)  # the kernel inherits this environment
    notebook = nbformat.read(path, as_version=4)
    cells = notebook.cells
    starts = _section_starts(cells) or [0]  # a notebook without ## sections is one section
    client = NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})

    def run(first: int, stop: int, when: str) -> None:
        for index in range(first, stop):
            cell = cells[index]
            if cell.cell_type != "code" or _skipped(cell):
                continue
            try:
                client.execute_cell(cell, index)
            except CellExecutionError as error:
                arrows = [line.strip() for line in ANSI.sub("", error.traceback).splitlines() if "---->" in line]
                failed = f"{error.ename}: {ANSI.sub('', error.evalue)}" + (f" ({arrows[-1]})" if arrows else "")
            else:
                continue
            pytest.fail(f"{path.name}, {when}: cell {index} ({cell.get('id')}) raised {failed}", pytrace=False)

    with client.setup_kernel():
        run(0, len(cells), "Run All")
        for start, stop in reversed(list(zip(starts, [*starts[1:], len(cells)]))):
            run(start, stop, f"section «{_heading(cells[start])}» again")
        run(starts[0], len(cells), "everything from the first section again")
