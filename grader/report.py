"""What grading produces: Gradescope's results.json, a Russian feedback.md, and the class's grades.csv.

results.json and feedback.md are the student's. A hidden case shows only its name, passed / not
passed and the author's fixed hint: never its inputs, the expected value, what the code printed or
returned, nor even the reason it failed (the student's code chooses how it fails — an exception, a
wrong type, running out of memory — and could spell hidden inputs that way). For the same reason
the status a student sees comes from the import and the public cases only. grades.csv is the
instructor's and has the full status. Every string is written through `safetext` (no lone
surrogates, terminal escapes or spreadsheet formulas) and every file with surrogate-safe encoding.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePath

from course_lib.checking.results import STATUSES, CaseResult, ExerciseResult
from grader.roster import MOODLE_FOLDER
from course_lib.checking.safetext import csv_cell, deep_shown, shown

SUBMISSION_STATUS_PRIORITY = ("crash", "memory", "timeout", "syntax_error", "ambiguous", "missing")
REPORT_ERROR = "report_error"  # grades.csv only: this submission's report could not be written
HIDDEN_NOTE = "Данные скрытых тестов не показываются: только название теста и подсказка."
HIDDEN_LATER = (
    "Скрытые тесты уже проверены, но их результаты и итоговый балл будут видны после публикации "
    "оценок. Здесь — только открытые тесты (те же, что запускает check() в ноутбуке)."
)


@dataclass
class SubmissionResult:
    name: str
    exercises: list[ExerciseResult]
    internal_error: str = ""
    source: str = ""  # the folder as given on the command line
    report_error: str = ""
    notice: str = ""  # about the hand-in as a whole (a notebook instead of .py files), for both

    @property
    def score(self) -> float:
        return round(sum(result.score for result in self.exercises), 4)

    @property
    def max_score(self) -> float:
        return round(sum(result.max_score for result in self.exercises), 4)

    @property
    def status(self) -> str:
        """The instructor's status (grades.csv), from every case."""
        if self.report_error:
            return REPORT_ERROR
        return _worst(result.status for result in self.exercises)

    @property
    def shown_status(self) -> str:
        """The student's status (results.json), from the import and public cases only."""
        return _worst(result.shown_status for result in self.exercises)

    def status_details(self) -> str:
        details = [
            f"{result.exercise.name}: {status}"
            for result in self.exercises
            for status in (result.status, *result.flags)
            if status != "ok"
        ]
        if self.notice:
            details.append(f"handin: {self.notice}")
        if self.report_error:
            details.append(f"report: {self.report_error}")
        return "; ".join(details)


def _worst(statuses: Iterable[str]) -> str:
    found = set(statuses)
    for status in SUBMISSION_STATUS_PRIORITY:
        if status in found:
            return status
    return "ok"


def _test_output(result: CaseResult, exercise: ExerciseResult) -> str:
    if result.passed:
        return "Пройден."
    if result.case.visibility == "hidden":
        hint = f" Подсказка: {result.case.hint}" if result.case.hint else ""
        return f"Не пройден.{hint}"
    lines = [f"Не пройден: {result.reason}."]
    if result.detail:
        lines.append(result.detail)
    if result.output:
        lines.append(f"Вывод решения:\n{result.output}")
    return "\n".join(lines)


def conceals_hidden(hidden_visibility: str) -> bool:
    """Whether students must not see hidden outcomes now: anything but "visible" (Gradescope shows
    `after_due_date` / `after_published` tests later; the other parts of a report have no such
    switch, so they are written for "before")."""
    return hidden_visibility != "visible"


def results_json(
    submission: SubmissionResult,
    hidden_visibility: str = "after_published",
    execution_time: float | None = None,
) -> dict:
    """Gradescope's results format; each test also says which exercise it belongs to.

    With hidden tests not "visible", the parts a student sees at once — the top-level `output`, the
    visible tests, `extra_data` — count the public cases only: no hidden outcome, no total that
    includes one. The top-level `score` is the grade itself (Gradescope needs it).
    """
    concealed = conceals_hidden(hidden_visibility)
    tests = []
    for number, exercise in enumerate(submission.exercises, start=1):
        points = exercise.case_points()
        earned = exercise.earned_points()
        for index, result in enumerate(exercise.cases, start=1):
            hidden = result.case.visibility == "hidden"
            tests.append(
                {
                    "name": f"{exercise.exercise.name}: {result.case.name}",
                    "number": f"{number}.{index}",
                    "score": round(earned[index - 1], 4),
                    "max_score": round(points[index - 1], 4),
                    "status": "passed" if result.passed else "failed",
                    "output": _test_output(result, exercise),
                    "visibility": hidden_visibility if hidden else "visible",
                    "extra_data": {
                        "exercise": exercise.exercise.name,
                        "case": result.case.name,
                        "kind": result.case.visibility,
                        "reason": result.category if not hidden else _hidden_reason(result),
                    },
                }
            )
    summary = _summary_lines(submission, concealed)
    if submission.notice:
        summary = [f"⚠️ {submission.notice}", "", *summary]
    document = {
        "score": submission.score,
        "output": "\n".join(summary),
        "output_format": "md",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "submission": submission.name,
            "source": submission.source,
            "status": submission.shown_status,
            "hidden_results": "concealed" if concealed else "shown",
            "exercises": {
                exercise.exercise.name: _exercise_extra(exercise, concealed)
                for exercise in submission.exercises
            },
        },
    }
    if execution_time is not None:
        document["execution_time"] = max(0, round(execution_time))
    return deep_shown(document)


def _exercise_extra(exercise: ExerciseResult, concealed: bool) -> dict:
    if concealed:
        public = [r for r in exercise.cases if r.case.visibility == "public"]
        earned, possible = exercise.group_score("public")
        return {
            "public_score": earned,
            "public_max_score": possible,
            "status": exercise.shown_status,
            "public_passed": sum(r.passed for r in public),
            "public_total": len(public),
            "flags": list(exercise.flags),
        }
    return {
        "score": exercise.score,
        "max_score": exercise.max_score,
        "status": exercise.shown_status,
        "passed": exercise.passed,
        "total": len(exercise.cases),
        "flags": list(exercise.flags),
    }


def _student_heading(submission: SubmissionResult) -> str:
    """The name a student reads at the top of feedback: for Moodle's download folder
    (`Имя Фамилия_1234567_assignsubmission_file_`) the student's name, not the output folder's
    cleaned name with its hash; otherwise the submission's name."""
    moodle = MOODLE_FOLDER.match(PurePath(submission.source.replace("\\", "/").rstrip("/")).name)
    return shown(moodle.group("name").strip()) if moodle else submission.name


def _summary_lines(submission: SubmissionResult, concealed: bool) -> list[str]:
    """The top-level `output` (Markdown)."""
    if concealed:
        earned = sum(e.group_score("public")[0] for e in submission.exercises)
        possible = sum(e.group_score("public")[1] for e in submission.exercises)
        lines = [
            f"**Открытые тесты: {_points(earned)} из {_out_of(possible)}.**",
            "",
            HIDDEN_LATER,
            "",
        ]
        for exercise in submission.exercises:
            got, out_of = exercise.group_score("public")
            lines.append(
                f"- {exercise.exercise.name}: баллы за открытые тесты {_points(got)} из {_points(out_of)}"
                f" ({exercise.shown_status})"
            )
        return lines
    lines = [f"**Итого: {_points(submission.score)} из {_out_of(submission.max_score)}.**", ""]
    for exercise in submission.exercises:
        lines.append(
            f"- {exercise.exercise.name}: {_points(exercise.score)} из {_points(exercise.max_score)}"
            f" ({exercise.shown_status})"
        )
    lines += ["", HIDDEN_NOTE]
    return lines


def _hidden_reason(result: CaseResult) -> str:
    return "passed" if result.passed else "failed"


def _out_of(value: float) -> str:
    """«из 120 баллов», «из 21 балла», «из 3,23 балла»: after «из» the noun is genitive, singular
    for a fraction and for a number ending in 1 (not 11)."""
    text = _points(value)
    whole = text.isdigit() and int(text)
    singular = not text.isdigit() or (whole % 10 == 1 and whole % 100 != 11)
    return f"{text} {'балла' if singular else 'баллов'}"


def _points(value: float) -> str:
    """Points as a Russian sentence writes them: «42,96», «10», never «42.96»."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return (text or "0").replace(".", ",")


def _fenced(text: str) -> list[str]:
    """A code block no student-controlled text can break out of."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"   {fence}text", *[f"   {line}" for line in text.splitlines()], f"   {fence}"]


VALIDATION_RULE = (
    "Баллы за тесты с исключениями засчитываются в той же доле, в какой пройдены тесты "
    "на результат (открытые и скрытые — отдельно): заготовка, которая на всё выбрасывает нужное "
    "исключение, получает 0. Здесь из-за этого не засчитано {lost}."
)

STATUS_TEXT = {
    "ok": "решение запустилось",
    "syntax_error": "синтаксическая ошибка",
    "missing": "нет файла или нужной функции/класса",
    "ambiguous": "файл упражнения найден в работе несколько раз — оставьте один",
    "timeout": "превышен лимит времени",
    "memory": "превышен лимит памяти",
    "crash": "процесс с решением аварийно завершился",
}


def feedback_markdown(submission: SubmissionResult, hidden_visibility: str = "visible") -> str:
    """The student's Markdown report. With hidden results concealed (anything but "visible") it
    shows the import and the public cases only: no hidden name, hint, count or total."""
    concealed = conceals_hidden(hidden_visibility)
    if concealed:
        earned = sum(e.group_score("public")[0] for e in submission.exercises)
        possible = sum(e.group_score("public")[1] for e in submission.exercises)
        head = [f"**Открытые тесты: {_points(earned)} из {_out_of(possible)}.**", "", HIDDEN_LATER]
    else:
        head = [
            f"**Итого: {_points(submission.score)} из {_out_of(submission.max_score)}.**",
            "",
            HIDDEN_NOTE,
        ]
    lines = [f"# Результаты проверки: {_student_heading(submission)}", "", *head]
    if submission.internal_error:
        lines += ["", f"⚠️ {submission.internal_error}"]
    if submission.notice:
        lines += ["", f"⚠️ {submission.notice}"]
    for exercise in submission.exercises:
        public = [r for r in exercise.cases if r.case.visibility == "public"]
        hidden = [] if concealed else [r for r in exercise.cases if r.case.visibility == "hidden"]
        if concealed:
            got, out_of = exercise.group_score("public")
            points = f"баллы за открытые тесты {_points(got)} из {_points(out_of)}"
            counts = f"открытых тестов: {sum(r.passed for r in public)} из {len(public)}"
            all_counts = f"{len(public)} из {len(public)}"
        else:
            points = f"{_points(exercise.score)} из {_points(exercise.max_score)}"
            counts = (
                f"открытых тестов: {sum(r.passed for r in public)} из {len(public)}, "
                f"скрытых: {sum(r.passed for r in hidden)} из {len(hidden)}"
            )
            all_counts = f"открытые — {len(public)} из {len(public)}, скрытые — {len(hidden)} из {len(hidden)}"
        lines += ["", f"## {exercise.exercise.name} — {exercise.exercise.title}: {points}", ""]
        shown_cases = public + hidden
        if exercise.shown_status != "ok":
            lines.append(f"Состояние: {STATUS_TEXT[exercise.shown_status]}. Пройдено {counts}.")
            if exercise.message:
                lines += ["", *_fenced(exercise.message)]
        elif all(r.passed for r in shown_cases):
            lines.append(f"Все {'открытые ' if concealed else ''}тесты пройдены: {all_counts}.")
            continue
        else:
            lines.append(f"Пройдено {counts}.")
        not_run = [r for r in public + hidden if r.category == "not_run"]
        failed_public = [r for r in public if not r.passed and r.category != "not_run"]
        failed_hidden = [r for r in hidden if not r.passed and r.category != "not_run"]
        # Only public cases' reasons decide these summaries; hidden ones are passed or not.
        if public and all(r.category == "not_implemented" for r in public) and not any(
            r.passed for r in hidden
        ):
            lines += ["", "Не реализовано: все тесты получили NotImplementedError из заготовки."]
            continue
        if exercise.shown_status != "ok" and exercise.message and all(
            r.detail == exercise.message for r in failed_public
        ):
            continue  # it stopped before the hidden cases: every case failed for that one reason
        if failed_public:
            lines += ["", "Открытые тесты, которые не прошли:"]
            for result in failed_public:
                lines.append(f"- ❌ «{result.case.name}» — {result.reason}.")
                details = result.detail
                if result.output:
                    details += f"\nВывод решения:\n{result.output}"
                if details:
                    lines += _fenced(details)
        if failed_hidden:
            lines += ["", "Скрытые тесты, которые не прошли:"]
            for result in failed_hidden:
                hint = f" Подсказка: {result.case.hint}" if result.case.hint else ""
                lines.append(f"- ❌ «{result.case.name}».{hint}")
        if not_run:
            why = not_run[0].detail.removeprefix("не запускался: ")
            lines += ["", f"Не запускались ({why}), баллов за них нет:"]
            lines += [f"- ⏭ «{result.case.name}»" for result in not_run]
        lost = exercise.validation_discount("public" if concealed else None)
        if lost:
            lines += ["", VALIDATION_RULE.format(lost=_points(lost))]
    return shown("\n".join(lines) + "\n")


def write_text(path: Path, text: str) -> None:
    """UTF-8 that cannot fail on what slipped past `shown` (a lone surrogate becomes \\udXXX)."""
    with open(path, "w", encoding="utf-8", errors="backslashreplace") as handle:
        handle.write(text)


def grades_row(submission: SubmissionResult, exercises: list[str]) -> dict[str, str]:
    """One row of grades.csv (the instructor's: full status, every case counted)."""
    by_name = {result.exercise.name: result for result in submission.exercises}
    row = {
        "submission": submission.name,
        "status": submission.status,
        "score": f"{submission.score:.2f}",
        "max_score": f"{submission.max_score:.2f}",
        "details": submission.status_details(),
        "source": submission.source,
    }
    for name in exercises:
        row[name] = f"{by_name[name].score:.2f}" if name in by_name else ""
    return row


def write_grades_csv(path: Path, submissions: Iterable[SubmissionResult], exercises: list[str]) -> None:
    """grades.csv from scratch (see `gradebook.update_grades_csv` for the in-place update)."""
    with open(path, "w", newline="", encoding="utf-8", errors="backslashreplace") as handle:
        writer = csv.writer(handle)
        header = ["submission", "status", "score", "max_score", *exercises, "details", "source"]
        writer.writerow(header)
        for submission in submissions:
            row = grades_row(submission, exercises)
            writer.writerow([csv_cell(row[key]) for key in header])


assert set(SUBMISSION_STATUS_PRIORITY) | {"ok"} == set(STATUSES)
