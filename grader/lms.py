"""Gradebooks for an LMS from grades.csv and a roster (`--roster roster.csv --lms canvas|moodle`).

* Canvas imports a CSV whose leading columns are `Student, ID, SIS User ID, SIS Login ID, Section`,
  then one column per assignment named `Assignment name (assignment id)`; without an id Canvas
  creates a new assignment. The headers are written in English whatever the roster's language
  (Canvas's importer looks for them).
* Moodle imports a CSV with an identifier column mapped at import to a user field (e-mail,
  username or ID number) and a grade column mapped to a grade item. We write Moodle's export
  layout: `First name, Last name, ID number, Email address, <grade item>`. Moodle's CSV import
  refuses any grade above 100 ("gradevaluetoobig"), or above the site's `gradepointmax` when an
  administrator turned `unlimitedgrades` on; the grade item's own maximum is not consulted. So a
  Moodle gradebook is on a 0…100 scale unless `scale` says otherwise ("raw": the points as they are).
  An empty cell makes an existing grade item's grade "no grade", wiping a grade entered by hand:
  students without a grade are left out of a Moodle file unless `keep_missing`.
A Canvas gradebook has every roster student (an empty grade when there is no submission, or when
the match is ambiguous). Matching is `roster.match`'s: exact identifiers first, weaker keys only
when unique.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from course_lib.checking.catalog import BY_NAME
from grader.gradebook import write_csv_atomic
from grader.roster import Matching, Roster, RosterError, match
from course_lib.checking.safetext import one_line

CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_FIELDS = ("name", "canvas_id", "sis_user_id", "sis_login_id", "section")
MOODLE_COLUMNS = ("First name", "Last name", "ID number", "Email address")
MOODLE_DEFAULT_MAXIMUM = 100.0
RAW = "raw"
"""`scale` for the points as they are (a Moodle site with `unlimitedgrades` and its `gradepointmax`)."""
# The roster fields each LMS's importer can match a row on: Canvas by its ID, SIS User ID or SIS
# Login ID; Moodle by e-mail, ID number or username (mapped at import).
IMPORT_KEYS = {
    "canvas": ("canvas_id", "sis_user_id", "sis_login_id"),
    "moodle": ("email", "id_number", "username"),
}
_IMPORT_HINT = {
    "canvas": "ID, SIS User ID или SIS Login ID. Возьмите список из журнала Canvas (Grades → Export)",
    "moodle": "Email address, ID number или Username («Адрес электронной почты», «Индивидуальный "
    "номер», «Логин»). Возьмите список участников или журнал оценок из Moodle",
}


def check_roster_for(lms: str, roster: Roster) -> None:
    """RosterError when no row of the gradebook could be imported: the roster has none of the
    columns this LMS matches students on (a Moodle roster for a Canvas export, a bare name list)."""
    if any(key in roster.columns for key in IMPORT_KEYS[lms]):
        return
    raise RosterError(
        f"{one_line(str(roster.path))}: в списке студентов нет столбца, по которому "
        f"{lms.capitalize()} найдёт студента при импорте, — такой журнал не загрузится. "
        f"Нужен хотя бы один из столбцов: {_IMPORT_HINT[lms]}."
    )


@dataclass
class Gradebook:
    path: Path
    matched: int
    unmatched_submissions: list[str]
    students_without_submission: list[str]
    ambiguous: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    maximum: float = 0.0  # the highest grade possible in the file
    course_total: float = 0.0
    scale: float | None = None
    left_out: list[str] = field(default_factory=list)
    """Students without a grade not written at all (Moodle: an empty cell would wipe a grade)."""
    feedback: object = None  # feedback_delivery.FeedbackPackage written beside it, if any
    matching: Matching | None = None  # which roster student each submission went to


def effective_scale(lms: str, scale: float | str | None) -> float | None:
    """The scale a gradebook is written on: Moodle's 0…100 by default, the points for "raw"."""
    if scale == RAW:
        return None
    if scale is None and lms == "moodle":
        return MOODLE_DEFAULT_MAXIMUM
    return scale


def course_total(grades: list[dict[str, str]]) -> float:
    """Points possible: the sum of the points of every exercise that has a column in grades.csv."""
    graded = {key for row in grades for key, value in row.items() if key in BY_NAME}
    return round(sum(BY_NAME[name].points for name in graded), 4)


def _grade(score: str, total: float, scale: float | None) -> str:
    if not score:
        return ""
    value = float(score.replace(",", "."))
    if scale is not None and total:
        value = value * scale / total
    return f"{value:.2f}"


def write_gradebook(
    out: Path, lms: str, roster: Roster, grades: list[dict[str, str]], assignment: str,
    assignment_id: str | None, scale: float | str | None = None, keep_missing: bool = False,
) -> Gradebook:  # fmt: skip
    check_roster_for(lms, roster)
    scale = effective_scale(lms, scale)
    total = course_total(grades)
    matching = match(roster, [(row["submission"], row.get("source", "")) for row in grades])
    score_of: dict[int, str] = {}
    for row in grades:
        number = matching.student_of.get(row["submission"])
        if number is not None:
            score_of[number] = _grade(row.get("score", ""), total, scale)
    column = f"{assignment} ({assignment_id})" if assignment_id else assignment
    students = roster.students
    if lms == "canvas":
        header = [*CANVAS_COLUMNS, column]
        rows = [[*(s.get(k) for k in CANVAS_FIELDS), score_of.get(n, "")] for n, s in enumerate(students)]
    else:
        # Username only when the roster has it: Moodle can map it at import ("username").
        login = ["Username"] if "username" in roster.columns else []
        header = [*MOODLE_COLUMNS, *login, column]
        rows = [
            [s.get("first"), s.get("last"), s.get("id_number"), s.get("email"),
             *([s.get("username")] if login else []), score_of.get(n, "")]
            for n, s in enumerate(students)
        ]  # fmt: skip
    missing = [s.display_name for n, s in enumerate(students) if n not in score_of]
    left_out: list[str] = []
    if lms == "moodle" and not keep_missing:
        # One predicate for both: a row without a grade is not written, and is named on the screen.
        left_out = [student.display_name for n, student in enumerate(students) if not score_of.get(n)]
        rows = [row for n, row in enumerate(rows) if score_of.get(n)]
    path = out / f"gradebook-{lms}.csv"
    write_csv_atomic(path, header, rows)
    return Gradebook(
        path, len(score_of), matching.unmatched, missing, matching.ambiguous, matching.duplicates,
        scale if scale is not None else total, total, scale, left_out, matching=matching,
    )  # fmt: skip


def moodle_warning(gradebook: Gradebook) -> str | None:
    """The message for a Moodle gradebook whose grades may exceed Moodle's default maximum."""
    if gradebook.maximum <= MOODLE_DEFAULT_MAXIMUM:
        return None
    return (
        f"ВНИМАНИЕ: баллы без пересчёта (--scale raw), максимум {gradebook.maximum:g} больше 100. Импорт CSV "
        "в Moodle отклоняет любую оценку выше 100 (gradevaluetoobig), что бы ни стояло в «Максимальной "
        "оценке» элемента. Принять её может только сайт, где администратор включил «Неограниченные "
        "оценки» (unlimitedgrades) и поднял «Максимальную оценку» сайта (gradepointmax) не ниже "
        f"{gradebook.maximum:g}: Администрирование → Оценки → Основные настройки. Иначе уберите "
        "--scale raw: по умолчанию журнал Moodle в шкале 0…100."
    )
