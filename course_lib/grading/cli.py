"""`python -m course_lib grade SUBMISSION... --out DIR`: grade folders of exercise files.

Writes DIR/<submission>/results.json (Gradescope), DIR/<submission>/feedback.md (for the student)
and DIR/grades.csv (one row per submission). Exit code 0 when grading worked, whatever the scores;
2 for a usage or case-file error; 3 when the sandbox cannot hide the solutions and hidden cases
(unless --allow-weak-sandbox); 1 if the grader itself failed on some exercise.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from course_lib.grading.cases import Case, CaseFormatError, load_cases
from course_lib.grading.catalog import EXERCISES, CourseLayout, Exercise, course_root, get_exercise
from course_lib.grading.report import (
    SubmissionResult,
    feedback_markdown,
    results_json,
    write_grades_csv,
)
from course_lib.grading.runner import (
    CaseResult,
    ExerciseResult,
    read_submission_file,
    run_exercise,
)
from course_lib.grading.sandbox import Limits, SandboxError, detect_tier, selftest

TIER_TEXT = {
    "root": "пространства имён Linux, отдельный корень (pivot_root), uid без прав",
    "userns": "пользовательское пространство имён, отдельный корень (pivot_root), без capabilities",
    "basic": "только лимиты ресурсов и отдельная папка: файлы курса НЕ скрыты",
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m course_lib grade",
        description="Проверка работ студентов открытыми и скрытыми тестами в песочнице.",
    )
    parser.add_argument("submissions", nargs="+", type=Path, help="папки с файлами упражнений")
    parser.add_argument("--out", required=True, type=Path, help="куда записать результаты")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="параллельных процессов")
    parser.add_argument("--course-root", type=Path, help="папка курса (по умолчанию — найти)")
    parser.add_argument("--exercise", action="append", help="проверить только это упражнение")
    parser.add_argument(
        "--case-timeout", type=float, default=Limits.case_timeout, help="секунд на один тест"
    )
    parser.add_argument(
        "--import-timeout", type=float, default=Limits.import_timeout, help="секунд на импорт файла"
    )
    parser.add_argument(
        "--max-timeouts",
        type=int,
        default=Limits.max_timeouts,
        help="после стольких таймаутов остальные тесты упражнения не запускаются",
    )
    parser.add_argument(
        "--memory-mb", type=int, default=Limits.memory_mb, help="лимит памяти процесса, МБ"
    )
    parser.add_argument(
        "--hidden-visibility",
        default="after_published",
        choices=["visible", "hidden", "after_due_date", "after_published"],
        help="visibility скрытых тестов в results.json",
    )
    parser.add_argument("--no-progress", action="store_true", help="без индикатора прогресса")
    parser.add_argument(
        "--allow-weak-sandbox",
        action="store_true",
        help="проверять, даже если песочница не может скрыть решения и скрытые тесты",
    )
    parser.add_argument("--sandbox-tier", choices=["root", "userns", "basic"], help=argparse.SUPPRESS)
    return parser


def _unique_names(paths: list[Path]) -> list[str]:
    names: list[str] = []
    for path in paths:
        base = re.sub(r"[^\w.@+-]", "_", path.resolve().name) or "submission"
        base = base.lstrip(".") or "submission"
        name, counter = base, 2
        while name in names:
            name, counter = f"{base}-{counter}", counter + 1
        names.append(name)
    return names


def _load_all(layout: CourseLayout, exercises: list[Exercise]) -> dict[str, list[list[Case]]]:
    phases = {}
    for exercise in exercises:
        public = load_cases(layout.public_cases_file(exercise), exercise, "public")
        hidden = load_cases(layout.hidden_cases_file(exercise), exercise, "hidden")
        names = {case.name for case in public} & {case.name for case in hidden}
        if names:
            raise CaseFormatError(f"{exercise.name}: имена открытых и скрытых тестов совпадают: {names}")
        phases[exercise.name] = [public, hidden]
    return phases


def _check_sandbox(limits: Limits, layout: CourseLayout, allow_weak: bool) -> str | None:
    """Prove, with a real child, that it cannot read solutions or hidden cases; None when fine."""
    probe = [str(path) for path in layout.secret_paths() if path.exists()]
    probe += [str(path) for path in sorted(layout.hidden_cases_dir.glob("*.json"))[:1]]
    probe += [str(path) for path in sorted(layout.solutions_dir.glob("*.py"))[:1]]
    try:
        report = selftest(limits, probe, hide=[str(layout.root)])
    except SandboxError as error:
        return f"Песочница не запускается: {error}"
    tier = report["tier"]
    print(f"Песочница: {tier} — {TIER_TEXT[tier]}.", file=sys.stderr)
    if report["readable"] and not allow_weak:
        return (
            "Песочница не скрывает от решений файлы курса: "
            + ", ".join(report["readable"])
            + ". Запустите проверку от root (или там, где доступны user namespaces), "
            "либо добавьте --allow-weak-sandbox, если понимаете риск."
        )
    if report["readable"]:
        print("ВНИМАНИЕ: решения студентов смогут прочитать файлы курса.", file=sys.stderr)
    return None


def _internal_failure(exercise: Exercise, phases: list[list[Case]], error: BaseException) -> ExerciseResult:
    detail = f"внутренняя ошибка проверяющей программы: {type(error).__name__}: {error}"
    cases = [CaseResult(case, False, "sandbox", detail) for phase in phases for case in phase]
    return ExerciseResult(exercise, "crash", cases, detail)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    started = time.monotonic()
    logging.basicConfig(format="%(levelname)s %(message)s", stream=sys.stderr)
    layout = CourseLayout(course_root(args.course_root))
    try:
        exercises = (
            [get_exercise(name) for name in args.exercise] if args.exercise else list(EXERCISES)
        )
        phases = _load_all(layout, exercises)
    except (KeyError, CaseFormatError) as error:
        print(f"Ошибка: {error}", file=sys.stderr)
        return 2
    if not any(phase[1] for phase in phases.values()):
        print(
            f"Скрытых тестов нет ({layout.hidden_cases_dir}): проверяются только открытые.",
            file=sys.stderr,
        )
    limits = Limits(
        case_timeout=args.case_timeout,
        import_timeout=args.import_timeout,
        max_timeouts=args.max_timeouts,
        memory_mb=args.memory_mb,
        tier=args.sandbox_tier or detect_tier(),
    )
    problem = _check_sandbox(limits, layout, args.allow_weak_sandbox)
    if problem:
        print(problem, file=sys.stderr)
        return 3

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    names = _unique_names(args.submissions)
    folders = [path.resolve() for path in args.submissions]
    hide = sorted({str(layout.root), str(out), *(str(folder.parent) for folder in folders)})

    results: dict[tuple[int, str], ExerciseResult] = {}
    remaining = {index: len(exercises) for index in range(len(folders))}
    failed_internally = False

    def grade_one(index: int, exercise: Exercise) -> ExerciseResult:
        folder = folders[index]
        if not folder.is_dir():
            source, failure = None, None
        else:
            source, failure = read_submission_file(folder, exercise)
        return run_exercise(exercise, source, phases[exercise.name], limits, hide, failure)

    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a course dependency
        tqdm = None
    bar = (
        tqdm(total=len(folders), desc="Проверка", unit="раб", file=sys.stderr)
        if tqdm is not None and not args.no_progress
        else None
    )
    finished: list[SubmissionResult | None] = [None] * len(folders)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {
            pool.submit(grade_one, index, exercise): (index, exercise)
            for index in range(len(folders))
            for exercise in exercises
        }
        for future in as_completed(futures):
            index, exercise = futures[future]
            try:
                results[(index, exercise.name)] = future.result()
            except Exception as error:  # a grader bug must not stop the batch
                failed_internally = True
                results[(index, exercise.name)] = _internal_failure(
                    exercise, phases[exercise.name], error
                )
            remaining[index] -= 1
            if remaining[index] == 0:
                finished[index] = _write_submission(
                    out, names[index], folders[index], exercises, results, index,
                    args.hidden_visibility,
                )
                if bar is not None:
                    bar.update(1)
    if bar is not None:
        bar.close()
    submissions = [result for result in finished if result is not None]
    write_grades_csv(out / "grades.csv", submissions, [exercise.name for exercise in exercises])
    elapsed = time.monotonic() - started
    print(
        f"Проверено работ: {len(submissions)} за {elapsed:.1f} с. Результаты: {out}",
        file=sys.stderr,
    )
    return 1 if failed_internally else 0


def _write_submission(
    out: Path,
    name: str,
    folder: Path,
    exercises: list[Exercise],
    results: dict[tuple[int, str], ExerciseResult],
    index: int,
    hidden_visibility: str,
) -> SubmissionResult:
    submission = SubmissionResult(name, [results[(index, exercise.name)] for exercise in exercises])
    if not folder.is_dir():
        submission.internal_error = f"Папка работы не найдена: {folder}"
    target = out / name
    target.mkdir(parents=True, exist_ok=True)
    (target / "results.json").write_text(
        json.dumps(results_json(submission, hidden_visibility), ensure_ascii=False, indent=1),
        encoding="utf-8",
    )
    (target / "feedback.md").write_text(feedback_markdown(submission), encoding="utf-8")
    return submission


if __name__ == "__main__":
    raise SystemExit(main())
