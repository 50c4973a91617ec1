"""Gradescope: `python -m grader autograder --out autograder.zip` builds the autograder, and
`python3 -P -m grader.autograder run` is what its `run_autograder` starts.

Gradescope's layout (its `autograder_samples` documentation): the zip is unpacked into
/autograder/source and `setup.sh` (at the zip's root) runs once when the image is built;
`run_autograder` is copied to /autograder/run_autograder and runs as root for every submission;
the student's files are in /autograder/submission, metadata in /autograder/submission_metadata.json,
and the result must be written to /autograder/results/results.json (a missing or invalid file
shows the student "failed to execute").

The zip holds only what grading needs: grader/ and the shared checker course_lib/checking/ (with
course_lib/__init__.py; standard library only), the stubs and public cases (exercises/) and the hidden cases (grading/hidden/);
never solutions/, notebooks or tests. `run` needs a system python3 >= 3.11 and no pip package.

`run`, in order: make the source, the submission, the results folder and the metadata root-only
(so a sandbox tier without namespaces — "uid", a default Docker container like Gradescope's —
can prove they are unreadable to the student's uid); grade the submission with one worker; copy
its results.json to /autograder/results/results.json. Whatever fails, a results.json is written:
an error result (score 0, a Russian message, the reason in extra_data) rather than nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from course_lib.checking.catalog import CourseLayout, course_root, registration_report

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
ZIP_DIRS = ("course_lib/checking", "grader")
ZIP_FILES = ("course_lib/__init__.py",)
SKIP_PARTS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache"}


def _zip_members(layout: CourseLayout) -> list[tuple[Path, str]]:
    root = layout.root
    members: list[tuple[Path, str]] = []
    for name in ZIP_FILES:
        members.append((root / name, name))
    for folder in ZIP_DIRS:
        for path in sorted((root / folder).rglob("*")):
            relative = path.relative_to(root)
            if path.is_file() and not path.is_symlink() and not SKIP_PARTS & set(relative.parts):
                if path.suffix not in (".pyc", ".pyo"):
                    members.append((path, relative.as_posix()))
    for path in sorted(layout.exercises_dir.glob("*.py")) + sorted(layout.public_cases_dir.glob("*.json")):
        members.append((path, path.relative_to(root).as_posix()))
    for path in sorted(layout.hidden_cases_dir.glob("*.json")):
        members.append((path, path.relative_to(root).as_posix()))
    return members


def build_zip(layout: CourseLayout, out: Path, hidden_visibility: str) -> list[str]:
    """Write the autograder zip; return the member names."""
    names = []
    partial = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        for script in ("setup.sh", "run_autograder"):
            info = zipfile.ZipInfo(script, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = 0o100755 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            text = (TEMPLATES / f"{script}.txt").read_text(encoding="utf-8")
            archive.writestr(info, text.replace("@HIDDEN_VISIBILITY@", hidden_visibility))
            names.append(script)
        for path, name in _zip_members(layout):
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = 0o100644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, path.read_bytes())
            names.append(name)
    os.replace(partial, out)
    return names


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["run"]:
        return run(args[1:])
    parser = argparse.ArgumentParser(
        prog="python -m grader autograder",
        description="Сборка автогрейдера для Gradescope (zip с setup.sh и run_autograder).",
    )
    parser.add_argument("--out", required=True, type=Path, help="куда записать zip")
    parser.add_argument("--course-root", type=Path, help="папка курса (по умолчанию — найти)")
    parser.add_argument(
        "--hidden-visibility",
        default="after_published",
        choices=["visible", "hidden", "after_due_date", "after_published"],
        help="visibility скрытых тестов в results.json",
    )
    parsed = parser.parse_args(args)
    layout = CourseLayout(course_root(parsed.course_root))
    unregistered = registration_report(layout)
    if unregistered:
        print(f"Ошибка: {unregistered}", file=sys.stderr)
        return 2
    out = parsed.out.resolve()
    if out.is_relative_to(layout.root / "exercises") or out.is_relative_to(layout.root / "course_lib"):
        print("Ошибка: zip нельзя класть внутрь exercises/ или course_lib/.", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    names = build_zip(layout, out, parsed.hidden_visibility)
    hidden = sum(name.startswith("grading/hidden/") for name in names)
    print(
        f"Автогрейдер: {out.name} ({len(names)} файлов, скрытых тестов: {hidden} файлов, решений нет). "
        "Загрузите его в Gradescope: Configure Autograder → Zip file upload."
    )
    return 0


# --- the Gradescope side ------------------------------------------------------------------------


def _error_result(message: str, reason: str, started: float) -> dict:
    return {
        "score": 0.0,
        "execution_time": max(0, round(time.monotonic() - started)),
        "output": (
            "**Автоматическая проверка не выполнилась.** Это не ошибка в вашем решении: "
            f"сообщите преподавателю.\n\n{message}"
        ),
        "output_format": "md",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [],
        "extra_data": {"grader_error": reason},
    }


def _write_json(path: Path, document: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.tmp")
    partial.write_text(json.dumps(document, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(partial, path)


def lock_down(base: Path) -> None:
    """Root-only: the source, the submission, the results and the student's metadata."""
    for name, mode in (("source", 0o700), ("submission", 0o700), ("results", 0o700)):
        path = base / name
        path.mkdir(exist_ok=True)
        os.chmod(path, mode)
    for name in ("submission_metadata.json", "run_autograder"):
        if (base / name).exists():
            os.chmod(base / name, 0o600 if name.endswith(".json") else 0o700)


def run(argv: list[str]) -> int:
    """Grade /autograder/submission; always write /autograder/results/results.json."""
    from grader import cli

    parser = argparse.ArgumentParser(prog="grader.autograder run")
    parser.add_argument("--base", type=Path, default=Path(os.environ.get("AUTOGRADER_ROOT", "/autograder")))
    parser.add_argument("--hidden-visibility", default="after_published")
    args = parser.parse_args(argv)
    started = time.monotonic()
    base = args.base
    target = base / "results" / "results.json"
    try:
        lock_down(base)
        scratch = Path(tempfile.mkdtemp(prefix="grading-out-"))
        os.chmod(scratch, 0o700)
        out = scratch / "out"
        log = io.StringIO()
        with contextlib.redirect_stderr(log):
            code = cli.main(
                [
                    str(base / "submission"),
                    "--out", str(out),
                    "--course-root", str(base / "source"),
                    "--jobs", "1",
                    "--no-progress",
                    "--hidden-visibility", args.hidden_visibility,
                ]
            )  # fmt: skip
        sys.stdout.write(log.getvalue())  # the instructor sees it in Gradescope's debug output
        produced = out / "submission" / "results.json"
        if code in (0, 1) and produced.is_file():
            document = json.loads(produced.read_text(encoding="utf-8"))
            if code == 1:
                document.setdefault("extra_data", {})["grader_error"] = "internal error on some exercise"
            _write_json(target, document)
            shutil.rmtree(scratch, ignore_errors=True)
            return 0
        reason = {2: "usage", 3: "sandbox"}.get(code, f"exit {code}")
        _write_json(target, _error_result(log.getvalue()[-1500:], reason, started))
        shutil.rmtree(scratch, ignore_errors=True)
        return 0
    except BaseException as error:  # noqa: BLE001 - the result file must exist whatever happened
        _write_json(target, _error_result(f"{type(error).__name__}: {error}", "exception", started))
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
