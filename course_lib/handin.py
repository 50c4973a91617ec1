"""`python -m course_lib handin`: the student's archive to hand in — exercises/*.py, nothing else.

Writes `handin.zip` in the course folder (or `--out`) with one `exercises/<name>.py` per
registered exercise that exists (and the ungraded strategy of notebook 10, for the instructor to see),
and says which graded exercises still raise NotImplementedError.
"""

from __future__ import annotations

import argparse
import ast
import sys
import zipfile
from pathlib import Path

from course_lib.checking.catalog import CHALLENGES, EXERCISES, CourseLayout, find_course_root
from course_lib.russian import files_count


def raises_not_implemented(tree: ast.AST) -> bool:
    """Whether the code contains `raise NotImplementedError` (a stub not yet solved)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(target, ast.Name) and target.id == "NotImplementedError":
                return True
    return False


def _unsolved(source: str) -> bool:
    try:
        return raises_not_implemented(ast.parse(source))
    except SyntaxError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_lib handin", description="Архив с решениями для сдачи."
    )
    parser.add_argument("--out", type=Path, help="куда записать архив (по умолчанию handin.zip)")
    args = parser.parse_args(argv)
    layout = CourseLayout(find_course_root())
    out = args.out or layout.root / "handin.zip"
    unsolved, missing = [], []
    written = 0
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for exercise in EXERCISES + CHALLENGES:
            path = layout.exercises_dir / f"{exercise.name}.py"
            if not path.is_file():
                if exercise.graded:
                    missing.append(exercise.name)
                continue
            source = path.read_text(encoding="utf-8-sig", errors="replace")
            if _unsolved(source):
                if not exercise.graded:
                    continue  # an untouched optional task: nothing to hand in
                unsolved.append(exercise.name)
            archive.write(path, f"exercises/{exercise.name}.py")
            written += 1
    print(f"Архив для сдачи: {out} ({files_count(written)}).")
    if unsolved:
        print("Ещё не решены (есть raise NotImplementedError): " + ", ".join(unsolved))
    if missing:
        print("Нет файлов: " + ", ".join(missing), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
