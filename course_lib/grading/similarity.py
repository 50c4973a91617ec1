"""similarity.csv: submissions whose code for an exercise is nearly the same, per exercise.

Each exercise file is reduced to a normalized syntax tree: docstrings, comments and formatting are
gone, every local name (variables, arguments, functions, attributes are kept) becomes its order of
first appearance (`v0`, `v1`, …), string constants become `S`, numbers keep their value. Two
files are compared as sequences of node types with difflib (ratio in 0…1); a pair is reported when
the ratio reaches the threshold (default 0.9) and both are more than a stub (at least
`MIN_NODES` nodes and not the stub itself). Submissions are also compared with every function
shown in the notebooks' code cells and in course_lib (the code students were given), since
copying that is a hint, not proof. The report is a hint for a human: renamed-and-reordered code can
slip under it, and short exercises legitimately converge.
"""

from __future__ import annotations

import ast
import csv
import json
from difflib import SequenceMatcher
from itertools import combinations
from pathlib import Path

from course_lib.grading.catalog import CourseLayout, Exercise
from course_lib.grading.safetext import csv_cell

THRESHOLD = 0.9
MIN_NODES = 40


class _Normalize(ast.NodeTransformer):
    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def _name(self, name: str) -> str:
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._name(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._name(node.arg)
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self._name(node.name)
        node.returns = None
        _drop_docstring(node)
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self._name(node.name)
        _drop_docstring(node)
        self.generic_visit(node)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str):
            node.value = "S"
        return node


def _drop_docstring(node: ast.AST) -> None:
    body = getattr(node, "body", None)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(
        body[0].value.value, str
    ):
        node.body = body[1:] or [ast.Pass()]


def tokens(tree: ast.AST) -> tuple[str, ...]:
    """The normalized tree as a sequence of node types (and names/constants where they matter)."""
    tree = _Normalize().visit(tree)
    _drop_docstring(tree)
    out = []
    for node in ast.walk(tree):
        label = type(node).__name__
        if isinstance(node, ast.Name):
            label += ":" + node.id
        elif isinstance(node, ast.Attribute):
            label += ":" + node.attr
        elif isinstance(node, ast.Constant):
            label += ":" + repr(node.value)[:20]
        out.append(label)
    return tuple(out)


def source_tokens(source: str | None) -> tuple[str, ...] | None:
    if not source:
        return None
    try:
        return tokens(ast.parse(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def entry_tokens(source: str | None, entry: str) -> tuple[str, ...] | None:
    """The tokens of the exercise's own function or class (compared with course code)."""
    if not source:
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == entry:
            return tokens(ast.Module([node], []))
    return None


def _ratio(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    if not a or not b or min(len(a), len(b)) / max(len(a), len(b)) < THRESHOLD - 0.05:
        return 0.0
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() < THRESHOLD or matcher.quick_ratio() < THRESHOLD:
        return 0.0
    return matcher.ratio()


def course_functions(layout: CourseLayout) -> list[tuple[str, tuple[str, ...]]]:
    """Every function or class shown to students: notebooks' code cells and course_lib."""
    found: list[tuple[str, tuple[str, ...]]] = []

    def add(origin: str, source: str) -> None:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.append((f"{origin}:{node.name}", tokens(ast.Module([node], []))))

    for path in sorted((layout.root / "notebooks").glob("*.ipynb")):
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError):
            continue
        for number, cell in enumerate(cells):
            if cell.get("cell_type") == "code":
                text = "".join(cell.get("source", []))
                add(f"notebooks/{path.name}#{number}", "\n".join(
                    line for line in text.splitlines() if not line.lstrip().startswith(("%", "!"))
                ))  # fmt: skip
    for path in sorted((layout.root / "course_lib").rglob("*.py")):
        if "grading" in path.parts:
            continue
        add(str(path.relative_to(layout.root)), path.read_text(encoding="utf-8", errors="replace"))
    return [(origin, toks) for origin, toks in found if len(toks) >= MIN_NODES]


def similarity_rows(
    layout: CourseLayout,
    exercises: list[Exercise],
    sources: dict[str, dict[str, str | None]],  # submission -> exercise -> source
    threshold: float = THRESHOLD,
) -> list[list[str]]:
    shown = course_functions(layout)
    rows = []
    for exercise in exercises:
        stub = layout.exercises_dir / f"{exercise.name}.py"
        stub_tokens = source_tokens(stub.read_text(encoding="utf-8")) if stub.is_file() else None
        prepared = []
        entries = {}
        for submission, by_exercise in sources.items():
            toks = source_tokens(by_exercise.get(exercise.name))
            if toks is None or len(toks) < MIN_NODES or toks == stub_tokens:
                continue
            prepared.append((submission, toks))
            entries[submission] = entry_tokens(by_exercise.get(exercise.name), exercise.entry) or toks
        for (a, ta), (b, tb) in combinations(prepared, 2):
            ratio = 1.0 if ta == tb else _ratio(ta, tb)
            if ratio >= threshold:
                rows.append([exercise.name, "submissions", a, b, f"{ratio:.3f}"])
        for submission, _ in prepared:
            for origin, course in shown:
                ratio = _ratio(entries[submission], course)
                if ratio >= threshold:
                    rows.append([exercise.name, "course_code", submission, origin, f"{ratio:.3f}"])
    return rows


def write_similarity(path: Path, rows: list[list[str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8", errors="backslashreplace") as handle:
        writer = csv.writer(handle)
        writer.writerow(["exercise", "kind", "submission", "other", "similarity"])
        for row in sorted(rows, key=lambda r: (r[0], r[1], -float(r[4]), r[2], r[3])):
            writer.writerow([csv_cell(cell) for cell in row])
