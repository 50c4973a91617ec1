"""`python -m grader grade SUBMISSION... --out DIR`: grade submissions (folders or .zip files).

Writes DIR/<submission>/results.json (Gradescope), DIR/<submission>/feedback.md (for the student),
DIR/grades.csv (one row per submission, updated in place: a regrade or a shard changes only its own
rows, see `gradebook`), DIR/similarity.csv (`similarity`) and, with --roster and --lms, a gradebook
for Canvas or Moodle. Exit code 0 when grading worked, whatever the scores; 2 for a usage error (a
path that does not exist or is neither a folder nor a zip, an unregistered exercise or case file, a
case-file error) or an unsafe launch (see `launch`); 3 when the sandbox cannot hide the solutions
and hidden cases (unless --allow-weak-sandbox); 1 if the grader itself failed on some exercise. A
report that cannot be written is that submission's status (report_error), never the batch's.

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

from course_lib.checking.cases import Case, CaseFormatError, load_cases
from course_lib.checking.catalog import (
    EXERCISES,
    CourseLayout,
    Exercise,
    RegistryError,
    course_root,
    get_exercise,
    registration_report,
)
from grader import state
from grader.export import (
    ExportSettings,
    add_gradebook_arguments,
    export,
    print_gradebook,
    refresh,
)
from grader.gradebook import SheetError, locked, read_sheet, update_grades_csv
from grader.invocation import command_name, full_path
from grader.launch import unsafe_launch
from grader.names import NameClash, assign_names
from grader.report import (
    SubmissionResult,
    conceals_hidden,
    feedback_markdown,
    grades_row,
    results_json,
    write_text,
)
from course_lib.checking.results import CaseResult, ExerciseResult
from course_lib.checking.runner import (
    PendingExercise,
    SubmissionChild,
    SubmissionClock,
    finish_exercise,
    start_exercise,
)
from course_lib.checking.safetext import one_line, shown
from grader.similarity import copies_course_version, course_version_prints
from course_lib.checking.sandbox import Limits, SandboxError, detect_tier, selftest
from grader.lms import check_roster_for
from grader.roster import RosterError, read_roster
from grader.submission import Submission, canvas_download_root, moodle_download_root, submission_kind

TIER_TEXT = {
    "root": "пространства имён Linux, отдельный корень (pivot_root), uid без прав",
    "userns": "пользовательское пространство имён, отдельный корень (pivot_root), без capabilities",
    "uid": "отдельный uid без прав и seccomp (без пространств имён: сеть закрыта фильтром, "
    "файлы курса закрыты правами доступа)",
    "basic": "только лимиты ресурсов и отдельная папка: файлы курса НЕ скрыты",
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=command_name("grade"),
        description="Проверка работ студентов открытыми и скрытыми тестами в песочнице.",
    )
    parser.add_argument(
        "submissions", nargs="+", type=Path, help="работы: папки (файлы на любой глубине) или .zip"
    )
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
    add_gradebook_arguments(parser)
    parser.add_argument(
        "--excel",
        action="store_true",
        help="grades.csv для Excel: UTF-8 с BOM, разделитель «;», десятичная запятая",
    )
    parser.add_argument(
        "--similarity-threshold", type=float, default=0.9, help="порог для similarity.csv (0…1)"
    )
    parser.add_argument(
        "--allow-weak-sandbox",
        action="store_true",
        help="проверять, даже если песочница не может скрыть решения и скрытые тесты",
    )
    parser.add_argument(
        "--sandbox-tier", choices=["root", "userns", "uid", "basic"], help=argparse.SUPPRESS
    )
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


def _check_sandbox(
    limits: Limits, layout: CourseLayout, allow_weak: bool, extra: list[str] = ()
) -> str | None:
    """Prove, with a real child, that it cannot read solutions or hidden cases; None when fine.
    `extra`: more paths it must not read (the output folder, the submissions' folders)."""
    probe = [str(path) for path in layout.secret_paths() if path.exists()]
    probe += [path for path in extra if os.path.exists(path)]
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


def shown_path(path: Path) -> str:
    """A path for reports: relative to the current folder, else only its name (never absolute)."""
    relative = os.path.relpath(os.path.abspath(path))
    return one_line(relative if not relative.startswith("..") else Path(path).name)  # no raw ESC/CR


def check_paths(paths: list[Path]) -> str | None:
    """A usage error for a path that does not exist or is neither a folder nor a zip, or None."""
    for path in paths:
        if not os.path.lexists(path):
            return f"Нет такой работы: {shown_path(path)}"
        if submission_kind(path) is None:
            return f"{shown_path(path)} — не папка и не zip-архив"
        if moodle_download_root(path):
            return (
                f"{shown_path(path)} — папка выгрузки Moodle с работами всех студентов; проверяйте "
                f"папки студентов внутри неё: grade \"{shown_path(path)}\"/* --out …"
            )
        if canvas_download_root(path):
            return (
                f"{shown_path(path)} — папка выгрузки Canvas с работами всех студентов (файлы вида "
                f"логин_ID_номер_handin.zip); проверяйте архивы студентов внутри неё: "
                f"grade \"{shown_path(path)}\"/*.zip --out … Отдельные .py-файлы студентов так не проверить: "
                "просите сдавать handin.zip (python -m course_lib handin)."
            )
    return None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    started = time.monotonic()
    logging.basicConfig(format="%(levelname)s %(message)s", stream=sys.stderr)
    unsafe = unsafe_launch(args.submissions)
    if unsafe:
        print(f"Ошибка: {unsafe}", file=sys.stderr)
        return 2
    usage = check_paths(args.submissions)
    if usage is None and bool(args.roster) != bool(args.lms):
        usage = "--roster и --lms задаются вместе"
    if usage is None and args.roster is not None and not args.roster.is_file():
        usage = f"Нет файла со списком студентов: {full_path(args.roster)}"
    if usage:
        print(f"Ошибка: {usage}", file=sys.stderr)
        return 2
    # The roster and an existing grades.csv are read before any grading: a file that cannot be
    # understood stops here, with nothing changed.
    roster = None
    try:
        if args.roster is not None:
            roster = read_roster(args.roster)
            check_roster_for(args.lms, roster)
        read_sheet(args.out.resolve() / "grades.csv")
    except (RosterError, SheetError) as error:
        print(f"Ошибка: {error}", file=sys.stderr)
        return 2
    layout = CourseLayout(course_root(args.course_root))
    try:
        unregistered = registration_report(layout)
        if unregistered:
            raise RegistryError(unregistered)
        exercises = (
            [get_exercise(name) for name in args.exercise] if args.exercise else list(EXERCISES)
        )
        phases = _load_all(layout, exercises)
    except (KeyError, CaseFormatError, RegistryError) as error:
        print(f"Ошибка: {one_line(str(error))}", file=sys.stderr)
        return 2
    if not any(phase[1] for phase in phases.values()):
        print(
            f"Скрытых тестов нет ({one_line(str(layout.hidden_cases_dir))}): проверяются только открытые.",
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
    out = args.out.resolve()
    folders = [Path(os.path.abspath(path)) for path in args.submissions]
    # The bundle ships a working version of every exercise (the notebooks run on it until the
    # student's passes): a hand-in that is that version is flagged in grades.csv.
    course_prints = course_version_prints(layout, exercises)
    hide = sorted({str(layout.root), str(out), *(str(folder.parent) for folder in folders)})
    extra = []
    if limits.tier == "uid":  # no private root: file permissions must hide these from the child
        out.mkdir(mode=0o700, parents=True, exist_ok=True)
        extra = [str(out), *(str(folder) for folder in folders)]
    problem = _check_sandbox(limits, layout, args.allow_weak_sandbox, extra)
    if problem:
        print(problem, file=sys.stderr)
        return 3

    out.mkdir(parents=True, exist_ok=True)
    try:
        with locked(out):  # parallel shards into one folder agree on who owns which name
            names, notices = assign_names(
                out, args.submissions, earlier_sources=_earlier_sources(out), shown=shown_path
            )
    except NameClash as error:
        print(f"Ошибка: {error}", file=sys.stderr)
        return 2
    for notice in notices:
        print(notice, file=sys.stderr)
    failed_internally = False
    sources: dict[str, dict[str, str | None]] = {}

    def grade_submission(index: int) -> tuple[list[ExerciseResult], float, str]:
        """One worker, one submission, its exercises one after another."""
        nonlocal failed_internally
        begun = time.monotonic()
        deadline = SubmissionClock(limits.submission_seconds)
        submission = Submission.open(folders[index], layout)
        # A hand-in that cannot be opened at all (a damaged zip, over a limit) says why once, at the
        # top of feedback and in grades.csv's details, not only inside every exercise's section.
        notice = submission.notice or (submission.problem.detail if submission.problem else "")
        read: dict[str, str | None] = {}
        # Every exercise's public phase before any hidden one (see runner.start_exercise): what a
        # hidden phase leaves behind never reaches a public case's output.
        started: list[PendingExercise | ExerciseResult] = []
        found_files = {}  # exercise -> the file found, or the result of failing to read it
        try:
            for exercise in exercises:
                try:
                    found_files[exercise.name] = submission.read(exercise)
                except Exception as error:  # a grader bug must not stop the batch
                    failed_internally = True
                    found_files[exercise.name] = _internal_failure(exercise, phases[exercise.name], error)
        finally:
            submission.close()
        # One child runs all of this submission's exercises, one after another (see SubmissionChild).
        given = {
            exercise.name: (exercise, found.source)
            for exercise in exercises
            if not isinstance(found := found_files[exercise.name], ExerciseResult) and found.source is not None
        }
        with SubmissionChild(given, limits, hide) as child:
            for exercise in exercises:
                found = found_files[exercise.name]
                if isinstance(found, ExerciseResult):
                    started.append(found)
                    continue
                try:
                    read[exercise.name] = found.source
                    flags = found.flags
                    if copies_course_version(found.source, exercise, course_prints, args.similarity_threshold):
                        flags += ("course_version",)
                    started.append(
                        start_exercise(
                            exercise, found.source, phases[exercise.name], limits, hide,
                            found.failure, deadline, flags, child,
                        )
                    )  # fmt: skip
                except Exception as error:  # a grader bug must not stop the batch
                    failed_internally = True
                    started.append(_internal_failure(exercise, phases[exercise.name], error))
            graded = []
            for item in started:
                if isinstance(item, ExerciseResult):
                    graded.append(item)
                    continue
                try:
                    graded.append(finish_exercise(item))
                except Exception as error:  # noqa: BLE001 - as above
                    failed_internally = True
                    graded.append(_internal_failure(item.exercise, phases[item.exercise.name], error))
        sources[names[index]] = read
        return graded, time.monotonic() - begun, notice

    try:
        from tqdm import tqdm
    except ImportError:  # a bare python3 (Gradescope): no progress bar
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
            graded, seconds, notice = future.result()
            graded = _with_earlier(out, names[index], graded)
            submission = SubmissionResult(
                names[index], graded, source=shown_path(folders[index]), notice=notice
            )
            finished[index] = _report(out, submission, folders[index], args.hidden_visibility, seconds)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    submissions = [result for result in finished if result is not None]
    graded_names = [exercise.name for exercise in exercises]
    gradebooks, removed = [], []
    with locked(out):
        for submission in submissions:
            state.save(out, submission.name, submission.exercises, sources.get(submission.name, {}))
        try:
            merge = update_grades_csv(
                out / "grades.csv",
                [grades_row(s, [e.exercise.name for e in s.exercises]) for s in submissions],
                graded_names,
                excel=args.excel,
            )
        except SheetError as error:  # changed since it was read at the start
            print(f"Ошибка: {error}", file=sys.stderr)
            return 2
        if args.lms:
            settings = ExportSettings(
                args.lms, str(args.roster.resolve()), args.assignment, args.assignment_id, args.scale,
                args.keep_missing, args.feedback,
            )
            gradebooks = [export(out, settings, roster)]
        else:
            gradebooks = []
        # Every other gradebook in the folder (a Canvas one next to the Moodle one) follows too.
        others, removed = refresh(out, skip=args.lms)
        gradebooks += others
        kept, computed = state.update_similarity(
            out, layout, exercises, {s.name: sources.get(s.name, {}) for s in submissions},
            args.similarity_threshold,
        )  # fmt: skip
    elapsed = time.monotonic() - started
    print(
        f"Проверено работ: {len(submissions)} за {elapsed:.1f} с. Результаты: {full_path(out)}",
        file=sys.stderr,
    )
    style = "для Excel: UTF-8 с BOM, «;»" if merge.style == "excel" else "UTF-8, «,»"
    print(
        f"{full_path(out / 'grades.csv')} ({style}): обновлено строк {merge.updated}, добавлено "
        f"{merge.added}, прежних строк сохранено {merge.kept} (перепроверка меняет только строки "
        "проверенных работ).",
        file=sys.stderr,
    )
    print(
        f"{full_path(out / 'similarity.csv')}: пересчитано строк {computed}, сохранено {kept}.",
        file=sys.stderr,
    )
    for gradebook in gradebooks:
        print_gradebook(gradebook, gradebook.path.stem.removeprefix("gradebook-"))
    for message in removed:
        print(message, file=sys.stderr)
    return 1 if failed_internally else 0


def _earlier_sources(out: Path) -> dict[str, str]:
    """grades.csv's folder → source, for folders graded before their names were remembered."""
    try:
        rows, _ = read_sheet(out / "grades.csv")
    except SheetError:
        return {}
    return {row.get("submission", ""): row.get("source", "") for row in rows}


def _with_earlier(out: Path, name: str, graded: list[ExerciseResult]) -> list[ExerciseResult]:
    """This run's exercises plus the stored results of the ones it did not grade (a regrade with
    --exercise keeps every section and the total), in the registry's order."""
    now = {result.exercise.name: result for result in graded}
    earlier = state.earlier_results(out, name, set(now))
    merged = {**earlier, **now}
    return [merged[exercise.name] for exercise in EXERCISES if exercise.name in merged]


def _report(
    out: Path, submission: SubmissionResult, folder: Path, hidden_visibility: str, seconds: float
) -> SubmissionResult:
    """Write one submission's files; a failure here is this submission's status, not the batch's."""
    if os.path.islink(folder):
        submission.internal_error = (
            f"Работа — символическая ссылка, не проверяется: {one_line(folder.name)}"
        )
    target = out / submission.name
    try:
        target.mkdir(parents=True, exist_ok=True)
        document = results_json(submission, hidden_visibility, execution_time=seconds)
        write_text(target / "results.json", json.dumps(document, ensure_ascii=False, indent=1))
        write_text(target / "feedback.md", feedback_markdown(submission, hidden_visibility))
        full = target / "feedback_after_publication.md"
        if conceals_hidden(hidden_visibility):
            write_text(full, feedback_markdown(submission, "visible"))
        elif full.exists():
            full.unlink()
    except Exception as error:  # noqa: BLE001 - whatever it was, it is this submission's alone
        submission.report_error = one_line(f"{type(error).__name__}: {error}")[:300]
        logging.getLogger("grader").warning(
            "%s: отчёт не записан: %s", one_line(submission.name), submission.report_error
        )
    return submission


if __name__ == "__main__":
    raise SystemExit(main())
