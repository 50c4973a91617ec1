"""`python -m course_lib grade SUBMISSION... --out DIR`: grade folders of exercise files.

Writes DIR/<submission>/results.json (Gradescope), DIR/<submission>/feedback.md (for the student)
and DIR/grades.csv (one row per submission). Exit code 0 when grading worked, whatever the scores;
2 for a usage or case-file error, or an unsafe launch (see `launch`); 3 when the sandbox cannot hide
the solutions and hidden cases (unless --allow-weak-sandbox); 1 if the grader itself failed on some
exercise. A report that cannot be written is that submission's status (report_error), never the
batch's.

Each submission is graded by one worker, its exercises one after another, and workers take
different submissions: no two children of one submission ever run at the same time, so a child in
its hidden phase has no concurrent sibling to signal to (a covert channel through global counters
or timing), and the submission's wall-clock budget is simply its worker's time.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from course_lib.grading.cases import Case, CaseFormatError, load_cases
from course_lib.grading.catalog import EXERCISES, CourseLayout, Exercise, course_root, get_exercise
from course_lib.grading.launch import unsafe_launch
from course_lib.grading.names import output_names
from course_lib.grading.report import (
    SubmissionResult,
    feedback_markdown,
    results_json,
    write_grades_csv,
    write_text,
)
from course_lib.grading.results import CaseResult, ExerciseResult
from course_lib.grading.runner import run_exercise
from course_lib.grading.safetext import one_line, shown
from course_lib.grading.sandbox import Limits, SandboxError, detect_tier, selftest
from course_lib.grading.submission import Submission

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
        "--exercise-budget",
        type=float,
        default=Limits.exercise_seconds,
        help="секунд на все тесты одного упражнения",
    )
    parser.add_argument(
        "--submission-budget",
        type=float,
        default=Limits.submission_seconds,
        help="секунд на все упражнения одной работы",
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
            + one_line(", ".join(map(str, report["readable"])))
            + ". Запустите проверку от root (или там, где доступны user namespaces), "
            "либо добавьте --allow-weak-sandbox, если понимаете риск."
        )
    if report["readable"]:
        print("ВНИМАНИЕ: решения студентов смогут прочитать файлы курса.", file=sys.stderr)
    return None


def _internal_failure(exercise: Exercise, phases: list[list[Case]], error: BaseException) -> ExerciseResult:
    detail = shown(f"внутренняя ошибка проверяющей программы: {type(error).__name__}: {error}")
    cases = [CaseResult(case, False, "sandbox", detail) for phase in phases for case in phase]
    return ExerciseResult(exercise, "crash", cases, detail)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    started = time.monotonic()
    logging.basicConfig(format="%(levelname)s %(message)s", stream=sys.stderr)
    unsafe = unsafe_launch(args.submissions)
    if unsafe:
        print(f"Ошибка: {unsafe}", file=sys.stderr)
        return 2
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
        exercise_seconds=args.exercise_budget,
        submission_seconds=args.submission_budget,
        tier=args.sandbox_tier or detect_tier(),
    )
    problem = _check_sandbox(limits, layout, args.allow_weak_sandbox)
    if problem:
        print(problem, file=sys.stderr)
        return 3

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    names = output_names(args.submissions)
    folders = [Path(os.path.abspath(path)) for path in args.submissions]
    hide = sorted({str(layout.root), str(out), *(str(folder.parent) for folder in folders)})
    failed_internally = False

    def grade_submission(index: int) -> list[ExerciseResult]:
        """One worker, one submission, its exercises one after another."""
        nonlocal failed_internally
        deadline = time.monotonic() + limits.submission_seconds
        submission = Submission.open(folders[index], layout)
        graded = []
        try:
            for exercise in exercises:
                try:
                    found = submission.read(exercise)
                    graded.append(
                        run_exercise(
                            exercise, found.source, phases[exercise.name], limits, hide,
                            found.failure, deadline, found.flags,
                        )
                    )  # fmt: skip
                except Exception as error:  # a grader bug must not stop the batch
                    failed_internally = True
                    graded.append(_internal_failure(exercise, phases[exercise.name], error))
        finally:
            submission.close()
        return graded

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
        futures = {pool.submit(grade_submission, index): index for index in range(len(folders))}
        for future in as_completed(futures):
            index = futures[future]
            submission = SubmissionResult(names[index], future.result(), source=str(folders[index]))
            finished[index] = _report(out, submission, folders[index], args.hidden_visibility)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    submissions = [result for result in finished if result is not None]
    write_grades_csv(out / "grades.csv", submissions, [exercise.name for exercise in exercises])
    elapsed = time.monotonic() - started
    print(
        f"Проверено работ: {len(submissions)} за {elapsed:.1f} с. Результаты: {one_line(str(out))}",
        file=sys.stderr,
    )
    return 1 if failed_internally else 0


def _report(out: Path, submission: SubmissionResult, folder: Path, hidden_visibility: str) -> SubmissionResult:
    """Write one submission's files; a failure here is this submission's status, not the batch's."""
    if not os.path.lexists(folder):
        submission.internal_error = f"Папка работы не найдена: {folder}"
    elif os.path.islink(folder):
        submission.internal_error = f"Папка работы — символическая ссылка, не проверяется: {folder}"
    target = out / submission.name
    try:
        target.mkdir(parents=True, exist_ok=True)
        text = json.dumps(results_json(submission, hidden_visibility), ensure_ascii=False, indent=1)
        write_text(target / "results.json", text)
        write_text(target / "feedback.md", feedback_markdown(submission))
    except Exception as error:  # noqa: BLE001 - whatever it was, it is this submission's alone
        submission.report_error = one_line(f"{type(error).__name__}: {error}")[:300]
        logging.getLogger("course_lib.grading").warning(
            "%s: отчёт не записан: %s", one_line(submission.name), submission.report_error
        )
    return submission


if __name__ == "__main__":
    raise SystemExit(main())
