"""`python -m grader release --out DIR`: the student bundle, and a check that proves it is clean.

The bundle holds notebooks/, course_lib/, exercises/ (stubs and public cases), its own Russian
README.md for students (`templates/student_README.md.txt`: what to open, edit, check and hand in),
a .gitignore, requirements.txt and what installing them needs (pyproject.toml, Makefile,
.env.example). It never holds solutions/, grading/ (hidden cases), tests/ or the instructor's
README, nor the instructor's package grader/ and the test suite's helpers. Every exercise or case
file must be registered (exercises.json), else exit 2. After copying, `verify_bundle` checks the
result independently of how it was built:

* only allowed top-level entries exist;
* no file is byte-identical to a reference solution or a hidden-case file;
* no JSON file in the bundle contains a hidden case (compared as parsed data, so reformatting
  does not hide one), and every public case file equals the course's public case file;
* no Python file defines a function or class whose code matches a reference solution's
  (compared on the AST without docstrings);
* every exercise has its stub, and every function in a stub still raises NotImplementedError;
* no Python file imports the instructor's package or a test helper, and no test file is inside;
* the README holds no instructor-only text (solutions, hidden cases, grade, release, autograder).
Exit code 0 when the bundle is built and verified, 1 when verification fails, 2 on usage errors.
The bundle is built and verified in a temporary folder next to `--out` and moved into place only
after every check passed: a failed release leaves nothing at `--out` (and, with `--force`, the
previous bundle as it was).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from course_lib.checking.catalog import CHALLENGES, EXERCISES, CourseLayout, course_root, registration_report
from course_lib.handin import raises_not_implemented
from course_lib.russian import files_count

MARKER = ".course-release"
TEMPLATES = Path(__file__).with_name("templates")
TOP_LEVEL_DIRS = ("notebooks", "course_lib", "exercises", "jupyter")
TOP_LEVEL_FILES = ("requirements.txt", "pyproject.toml", "Makefile", ".env.example")
GENERATED_FILES = ("README.md", ".gitignore")
INSTRUCTOR_ONLY = (
    "solutions/", "grading/hidden", "grader grade", "grader release", "autograder",
    "INSTRUCTOR", "скрытые тесты в grading", "Gradescope autograder",
)  # fmt: skip


def student_readme() -> str:
    by_notebook = sorted(EXERCISES + CHALLENGES, key=lambda e: e.notebook)  # in the order the student meets them
    rows = [f"| `exercises/{e.name}.py` | `{e.notebook}` | {e.title} (`{e.entry}`){'' if e.graded else ' — задание без баллов'} |"
            for e in by_notebook]  # fmt: skip
    text = (TEMPLATES / "student_README.md.txt").read_text(encoding="utf-8")
    return text.replace("@EXERCISES@", "\n".join(rows))
IGNORED_PARTS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".mypy_cache"}
# Modules a student never runs: the instructor's package and the test suite's helpers. Neither is
# copied (they live outside TOP_LEVEL_DIRS); `verify_bundle` also refuses any file that imports one.
INSTRUCTOR_MODULES = ("grader", "fake_openai", "llamacpp_standin", "conftest")
IGNORED_SUFFIXES = {".pyc", ".pyo"}


def _ignored(path: Path) -> bool:
    return bool(IGNORED_PARTS & set(path.parts)) or path.suffix in IGNORED_SUFFIXES


def build_bundle(layout: CourseLayout, out: Path) -> list[Path]:
    """Copy the allowed parts of the course into `out`; return the files written (relative)."""
    written: list[Path] = []
    for name in TOP_LEVEL_DIRS:
        source = layout.root / name
        if not source.is_dir():
            continue
        for path in sorted(source.rglob("*")):
            relative = path.relative_to(layout.root)
            if _ignored(relative) or not path.is_file() or path.is_symlink():
                continue
            target = out / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            written.append(relative)
    for name in TOP_LEVEL_FILES:
        source = layout.root / name
        if source.is_file() and not source.is_symlink():
            shutil.copyfile(source, out / name)
            written.append(Path(name))
    (out / "README.md").write_text(student_readme(), encoding="utf-8")
    (out / ".gitignore").write_text((TEMPLATES / "gitignore.txt").read_text(encoding="utf-8"))
    written += [Path(name) for name in GENERATED_FILES]
    (out / MARKER).write_text("Пакет курса для студентов (python -m grader release).\n")
    return written


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _strip_docstrings(node: ast.AST) -> ast.AST:
    for child in ast.walk(node):
        body = getattr(child, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            child.body = body[1:] or [ast.Pass()]
    return node


def _definitions(source: str) -> dict[str, str]:
    """Top-level functions and classes (and methods) as normalized AST dumps."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = ast.dump(_strip_docstrings(node), include_attributes=False)
    return found


def _instructor_imports(source: str) -> list[str]:
    """Names of instructor or test-suite modules that `source` imports (at any depth)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found += [name for name in names if name.split(".")[0] in INSTRUCTOR_MODULES]
    return found


def _walk_json(value: Any):
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from _walk_json(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk_json(item)


def verify_bundle(bundle: Path, layout: CourseLayout) -> list[str]:
    """Every reason the bundle is not safe to hand out; empty when it is."""
    problems: list[str] = []
    allowed = set(TOP_LEVEL_DIRS) | set(TOP_LEVEL_FILES) | set(GENERATED_FILES) | {MARKER}
    for entry in bundle.iterdir():
        if entry.name not in allowed:
            problems.append(f"лишний элемент верхнего уровня: {entry.name}")
    files = [path for path in bundle.rglob("*") if path.is_file()]
    for path in bundle.rglob("*"):
        if path.is_symlink():
            problems.append(f"символическая ссылка: {path.relative_to(bundle)}")

    secret_files = sorted(layout.solutions_dir.glob("*.py")) + sorted(
        layout.hidden_cases_dir.glob("*.json")
    )
    secret_hashes = {_sha256(path): path for path in secret_files}
    for path in files:
        digest = _sha256(path)
        if digest in secret_hashes:
            problems.append(
                f"{path.relative_to(bundle)} совпадает с {secret_hashes[digest].relative_to(layout.root)}"
            )

    hidden_cases = []
    for path in sorted(layout.hidden_cases_dir.glob("*.json")):
        hidden_cases += json.loads(path.read_text(encoding="utf-8")).get("cases", [])
    for path in files:
        if path.suffix not in (".json", ".ipynb"):
            continue
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        for value in _walk_json(document):
            if isinstance(value, dict) and value in hidden_cases:
                problems.append(f"{path.relative_to(bundle)} содержит скрытый тест «{value['name']}»")

    solution_defs: dict[str, tuple[str, Path]] = {}
    for path in sorted(layout.solutions_dir.glob("*.py")):
        for name, dump in _definitions(path.read_text(encoding="utf-8")).items():
            solution_defs[dump] = (name, path)
    for path in files:
        if path.suffix != ".py":
            continue
        for name, dump in _definitions(path.read_text(encoding="utf-8", errors="replace")).items():
            if dump in solution_defs and _is_substantial(dump):
                origin = solution_defs[dump][1].relative_to(layout.root)
                problems.append(f"{path.relative_to(bundle)}: {name} совпадает с кодом из {origin}")

    for path in files:
        if path.suffix == ".py":
            for module in _instructor_imports(path.read_text(encoding="utf-8", errors="replace")):
                problems.append(f"{path.relative_to(bundle)}: импортирует {module} — модуль не для студентов")
        if path.name in ("conftest.py",) or path.name.startswith("test_"):
            problems.append(f"{path.relative_to(bundle)}: файл набора тестов курса в пакете студента")

    readme = bundle / "README.md"
    text = readme.read_text(encoding="utf-8", errors="replace") if readme.is_file() else ""
    if not text:
        problems.append("нет README.md для студентов")
    for marker in INSTRUCTOR_ONLY:
        if marker.lower() in text.lower():
            problems.append(f"README.md содержит текст для преподавателя: {marker!r}")
    if not (bundle / ".gitignore").is_file():
        problems.append("нет .gitignore")
    for exercise in EXERCISES + CHALLENGES:
        stub = bundle / "exercises" / f"{exercise.name}.py"
        cases = bundle / "exercises" / "cases" / f"{exercise.name}.json"
        if not stub.is_file():
            problems.append(f"нет заготовки exercises/{exercise.name}.py")
            continue
        if not exercise.graded:
            pass  # a challenge has a contract, not cases: only its stub is checked
        elif not cases.is_file():
            problems.append(f"нет открытых тестов exercises/cases/{exercise.name}.json")
        elif cases.read_bytes() != layout.public_cases_file(exercise).read_bytes():
            problems.append(f"exercises/cases/{exercise.name}.json отличается от открытых тестов курса")
        tree = ast.parse(stub.read_text(encoding="utf-8"))
        functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
        if not functions:
            problems.append(f"exercises/{exercise.name}.py: нет ни одной функции")
        for function in functions:
            if not raises_not_implemented(function):
                problems.append(
                    f"exercises/{exercise.name}.py: {function.name} не выбрасывает NotImplementedError"
                )
    return problems


def _is_substantial(dump: str) -> bool:
    """Skip trivial shared definitions (an empty exception class is in both stub and solution)."""
    return "Raise" in dump or "Return" in dump or "For(" in dump or "If(" in dump


def _umask() -> int:
    """The process's umask, read without changing it where Linux says it (os.umask sets it to read it)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m grader release",
        description="Сборка пакета курса для студентов: без решений и скрытых тестов.",
    )
    parser.add_argument("--out", required=True, type=Path, help="папка для пакета")
    parser.add_argument("--course-root", type=Path, help="папка курса (по умолчанию — найти)")
    parser.add_argument(
        "--force", action="store_true", help="заменить прежний пакет в этой папке (только пакет)"
    )
    args = parser.parse_args(argv)
    layout = CourseLayout(course_root(args.course_root))
    unregistered = registration_report(layout)
    if unregistered:
        print(f"Ошибка: {unregistered}", file=sys.stderr)
        return 2
    out = args.out.resolve()
    protected = {*TOP_LEVEL_DIRS, "solutions", "grading", "grader", "tests", ".git", ".venv"}
    inside = out.relative_to(layout.root).parts if layout.root in out.parents else ()
    if out == layout.root or out in layout.root.parents or (inside and inside[0] in protected):
        print(f"Ошибка: {out} — это сам курс или его часть.", file=sys.stderr)
        return 2
    if out.exists() and any(out.iterdir()):
        if not args.force:
            print(f"Ошибка: папка {out} не пуста (добавьте --force, если там прежний пакет).",
                  file=sys.stderr)
            return 2
        if not (out / MARKER).is_file():
            print(f"Ошибка: {out} не похожа на пакет курса ({MARKER} нет), не удаляю.",
                  file=sys.stderr)
            return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    try:
        written = build_bundle(layout, building)
        problems = verify_bundle(building, layout)
        if problems:
            print("Пакет НЕ прошёл проверку; в папке пакета ничего не изменилось:", file=sys.stderr)
            for problem in problems:
                print(f"  - {problem}", file=sys.stderr)
            return 1
        os.chmod(building, 0o777 & ~_umask())  # as mkdir would have made it (mkdtemp makes 0700)
        if out.exists():
            shutil.rmtree(out)  # the previous bundle (checked above), replaced only by a verified one
        os.replace(building, out)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    hidden = len(list(layout.hidden_cases_dir.glob("*.json")))
    solutions = len(list(layout.solutions_dir.glob("*.py")))
    print(
        f"Пакет собран: {out} ({files_count(len(written))}). Проверено: нет решений (сверено файлов: "
        f"{solutions}), нет скрытых тестов (сверено файлов: {hidden}), заготовки выбрасывают "
        "NotImplementedError, открытые тесты совпадают с курсом."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
