"""The two packages and the checker they share, read off the import graph of the source.

Every `import` counts, the ones inside functions too: a lazy import still makes a cycle the moment
it runs. The rules:

* no import cycle among the modules of `course_lib` and `grader`;
* `course_lib` (what students get) never imports `grader` (what they do not get);
* `course_lib.checking` — what `check()` and the grader both run — imports only the standard
  library and itself, and so does every `grader` module the Gradescope zip runs;
* the settings can validate a store's address without importing any store or the LLM client.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("course_lib", "grader")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imported_names(module: str, path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".")
                if path.name != "__init__.py":
                    package.pop()
                package = package[: len(package) - node.level + 1]
                base = ".".join(package + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                names.add(full if full in MODULES else base)
    return names


def _internal(name: str) -> str | None:
    """The course module an imported name lives in (`a.b.c` → `a.b` when `c` is a function)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _graph() -> dict[str, set[str]]:
    graph = {}
    for module, path in MODULES.items():
        targets = {_internal(name) for name in _imported_names(module, path)}
        graph[module] = {target for target in targets if target and target != module}
    return graph


GRAPH = _graph()


def _optional_imports(path: Path) -> set[str]:
    """Top-level names imported inside `try: … except ImportError` (used only when installed)."""
    optional = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Try) and any(
            isinstance(handler.type, ast.Name) and handler.type.id in ("ImportError", "ModuleNotFoundError")
            for handler in node.handlers
        ):
            for inner in node.body:
                if isinstance(inner, ast.ImportFrom) and inner.module and not inner.level:
                    optional.add(inner.module.split(".")[0])
                elif isinstance(inner, ast.Import):
                    optional.update(alias.name.split(".")[0] for alias in inner.names)
    return optional


def _external(module: str) -> set[str]:
    """Packages outside the course that the module needs (optional imports left out)."""
    path = MODULES[module]
    names = {name.split(".")[0] for name in _imported_names(module, path)}
    return names - set(PACKAGES) - _optional_imports(path)


def _closure(start: str) -> set[str]:
    seen, stack = set(), [start]
    while stack:
        module = stack.pop()
        if module not in seen:
            seen.add(module)
            stack.extend(GRAPH[module])
    return seen


def _cycles() -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(GRAPH[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    return found


def test_the_graph_sees_every_module():
    assert "course_lib.checking.runner" in GRAPH and "grader.cli" in GRAPH
    assert "course_lib.checking.sandbox" in GRAPH["course_lib.checking.runner"]
    assert "course_lib.checking.runner" in GRAPH["course_lib.exercises"]


def test_no_import_cycles():
    assert _cycles() == []


def test_the_cycle_detector_finds_one(monkeypatch):
    monkeypatch.setitem(GRAPH, "course_lib.config", GRAPH["course_lib.config"] | {"course_lib.llm.client"})
    assert any("course_lib.config" in cycle for cycle in _cycles())


def test_the_students_package_never_imports_the_instructors():
    leaks = sorted(
        (module, target)
        for module, targets in GRAPH.items()
        if module.startswith("course_lib")
        for target in targets
        if target.startswith("grader")
    )
    assert leaks == []


STDLIB = set(sys.stdlib_module_names) | {"__future__"}


@pytest.mark.parametrize(
    "entry", ["course_lib.checking.runner", "course_lib.checking.sandbox", "grader.cli", "grader.autograder"]
)
def test_what_grading_runs_is_standard_library_and_the_checker_only(entry):
    reached = _closure(entry)
    outside = sorted(m for m in reached if not (m.startswith("course_lib.checking") or m.startswith("grader")))
    assert outside == [], f"{entry} reaches {outside}"
    third_party = sorted({name for m in reached for name in _external(m)} - STDLIB)
    assert third_party == [], f"{entry} needs {third_party}"


def test_the_checker_imports_nothing_else_of_the_course():
    for module in MODULES:
        if module.startswith("course_lib.checking"):
            assert all(t.startswith("course_lib.checking") for t in GRAPH[module]), (module, GRAPH[module])


def test_settings_do_not_pull_in_the_stores_or_the_llm_client():
    reached = _closure("course_lib.config")
    assert not {m for m in reached if m.startswith(("course_lib.llm", "course_lib.postgres"))}
    assert "course_lib.session_store" not in reached and "course_lib.store_url" not in reached
