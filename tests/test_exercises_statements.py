"""Stubs and reference solutions agree on names and signatures; stubs carry the whole statement."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from course_lib.checking.catalog import EXERCISES

ROOT = Path(__file__).resolve().parents[1]


def _tree(folder: str, name: str) -> ast.Module:
    return ast.parse((ROOT / folder / f"{name}.py").read_text(encoding="utf-8"))


def _signatures(tree: ast.Module) -> dict[str, list[str]]:
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = [arg.arg for arg in node.args.args]
        elif isinstance(node, ast.ClassDef):
            found[node.name] = []
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and not item.name.startswith("_") or (
                    isinstance(item, ast.FunctionDef) and item.name == "__init__"
                ):
                    found[f"{node.name}.{item.name}"] = [arg.arg for arg in item.args.args]
    return found


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_stub_statement_is_complete(exercise):
    tree = _tree("exercises", exercise.name)
    doc = ast.get_docstring(tree)
    assert doc and f"Упражнение «{exercise.name}»" in doc
    # The header names the notebook whose practice runs check(): the registry's, not an old one.
    assert doc.startswith(f"Упражнение «{exercise.name}» (ноутбук {exercise.notebook}): ")
    course_version = ROOT / "course_lib" / "course_versions" / f"{exercise.name}.py"
    if course_version.is_file():  # a freshly scaffolded exercise has none yet
        assert f"(notebook {exercise.notebook})" in course_version.read_text(encoding="utf-8").splitlines()[0]
    for section in ("Требования", "Пример", f'check("{exercise.name}")'):
        assert section in doc, section
    functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
    assert functions
    for function in functions:
        (statement,) = function.body
        assert isinstance(statement, ast.Raise)
        assert "NotImplementedError" in ast.unparse(statement)


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_stub_and_solution_share_the_interface(exercise):
    stub = _signatures(_tree("exercises", exercise.name))
    solution = _signatures(_tree("solutions", exercise.name))
    assert exercise.entry in stub
    for name, params in stub.items():
        assert solution.get(name) == params, name
    if exercise.kind == "function":
        assert stub[exercise.entry] == list(exercise.params)


def test_chat_history_error_is_given_in_the_stub():
    spec = importlib.util.spec_from_file_location("stub", ROOT / "exercises" / "split_into_turns.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert issubclass(module.ChatHistoryError, ValueError)


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.name)
def test_exercise_files_import_nothing_from_the_course(exercise):
    for folder in ("exercises", "solutions"):
        for node in ast.walk(_tree(folder, exercise.name)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [alias.name for alias in node.names]
                module = getattr(node, "module", None) or ""
                assert not any(n.startswith(("course_lib", "solutions")) for n in [module, *names])
