"""The class's sheets: grades.csv updated in place (regrades, shards) and gradebooks for an LMS.

grades.csv: grading into an output folder that already has one updates the rows of the
submissions just graded and keeps every other row. The read-merge-write runs under an exclusive
lock (`.grades.lock`, flock) and the file is replaced atomically (write a temporary file, then
rename), so shards graded in parallel into one folder never lose each other's rows and a reader
never sees half a file. A regrade of some exercises only (`--exercise`) updates those cells.

Gradebooks (`--roster roster.csv --lms canvas|moodle`):

* Canvas imports a CSV whose leading columns are `Student, ID, SIS User ID, SIS Login ID, Section`,
  then one column per assignment named `Assignment name (assignment id)`; a roster is Canvas's own
  gradebook export (the same leading columns). Without an id Canvas creates a new assignment.
* Moodle imports a CSV with an identifier column mapped at import to a user field (e-mail,
  username or ID number) and a grade column mapped to a grade item. We write Moodle's export
  layout: `First name, Last name, ID number, Email address, <grade item>`; map "Email address" to
  the e-mail field (or "ID number" to idnumber) at import.

A submission matches a roster row when its name (the output name, or the folder/zip name without
`.zip`) equals the row's `submission` column, or one of its identifiers (SIS Login ID, SIS User ID,
ID, ID number, Username, Email address, or the part of the e-mail before "@"), compared without case.
Submissions that match no student, and students with no submission, are listed — never dropped.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from course_lib.grading.catalog import BY_NAME
from course_lib.grading.results import STATUSES
from course_lib.grading.safetext import csv_cell

LOCK_NAME = ".grades.lock"
FIXED = ("submission", "status", "score", "max_score")
TRAILING = ("details", "source")
PRIORITY = ("report_error", "crash", "memory", "timeout", "syntax_error", "ambiguous", "missing")

CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_COLUMNS = ("First name", "Last name", "ID number", "Email address")
ROSTER_KEYS = (
    "submission", "SIS Login ID", "SIS User ID", "ID", "ID number", "Username", "Email address",
    "Email", "email", "login",
)  # fmt: skip


@contextmanager
def locked(folder: Path):
    """An exclusive lock on the output folder's grades.csv (blocks until other shards are done)."""
    import fcntl

    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def read_rows(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8", errors="replace") as handle:
        return [dict(row) for row in csv.DictReader(handle)]


def _exercise_columns(rows: Iterable[dict[str, str]], graded: list[str]) -> list[str]:
    present = set(graded)
    for row in rows:
        present |= {key for key in row if key in BY_NAME}
    order = list(BY_NAME)
    return [name for name in order if name in present]


def _details_by_exercise(details: str) -> tuple[dict[str, list[str]], list[str]]:
    by_exercise: dict[str, list[str]] = {}
    other = []
    for entry in filter(None, (part.strip() for part in details.split(";"))):
        name, _, rest = entry.partition(":")
        if name in BY_NAME:
            by_exercise.setdefault(name, []).append(entry)
        else:
            other.append(entry)
    return by_exercise, other


def _merge_row(old: dict[str, str], new: dict[str, str], graded: list[str], columns: list[str]) -> dict:
    """The new row, but with the old cells of exercises this run did not grade."""
    if old is None or set(graded) >= {name for name in columns if old.get(name)}:
        return new
    merged = dict(new)
    old_details, _ = _details_by_exercise(old.get("details", ""))
    new_details, new_other = _details_by_exercise(new.get("details", ""))
    entries = []
    for name in columns:
        if name in graded:
            entries += new_details.get(name, [])
        else:
            merged[name] = old.get(name, "")
            entries += old_details.get(name, [])
    merged["details"] = "; ".join(entries + new_other)
    scored = [name for name in columns if merged.get(name)]
    merged["score"] = f"{sum(float(merged[name]) for name in scored):.2f}"
    merged["max_score"] = f"{sum(BY_NAME[name].points for name in scored):.2f}"
    statuses = {entry.partition(":")[2].strip() for entry in entries} & set(STATUSES)
    merged["status"] = next((s for s in PRIORITY if s in statuses), new.get("status", "ok"))
    return merged


def write_csv_atomic(path: Path, header: list[str], rows: Iterable[list[str]]) -> None:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow(header)
    for row in rows:
        writer.writerow([csv_cell(str(cell)) for cell in row])
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(partial, "w", newline="", encoding="utf-8", errors="backslashreplace") as handle:
        handle.write(buffer.getvalue())
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(partial, path)


@dataclass
class MergeReport:
    updated: int
    added: int
    kept: int
    rows: list[dict[str, str]]


def update_grades_csv(path: Path, new_rows: list[dict[str, str]], graded: list[str]) -> MergeReport:
    """Merge this run's rows into grades.csv (call under `locked`)."""
    old_rows = read_rows(path)
    columns = _exercise_columns([*old_rows, *new_rows], graded)
    old_by_name = {row.get("submission", ""): row for row in old_rows}
    new_by_name = {row["submission"]: row for row in new_rows}
    result, updated, kept = [], 0, 0
    for row in old_rows:
        name = row.get("submission", "")
        if name in new_by_name:
            result.append(_merge_row(row, new_by_name[name], graded, columns))
            updated += 1
        else:
            result.append(row)
            kept += 1
    added = [row for row in new_rows if row["submission"] not in old_by_name]
    result += added
    header = [*FIXED, *columns, *TRAILING]
    write_csv_atomic(path, header, ([row.get(key, "") for key in header] for row in result))
    return MergeReport(updated, len(added), kept, result)


# --- LMS gradebooks -----------------------------------------------------------------------------


def read_roster(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = [
            {(key or "").strip(): (value or "").strip() for key, value in row.items()}
            for row in csv.DictReader(handle)
        ]
    # Canvas's export has a "Points Possible" row (and sometimes others) with no student.
    return [row for row in rows if row.get("Student", "x") and "Points Possible" not in row.values()]


def _keys(row: dict[str, str]) -> set[str]:
    keys = set()
    for column in ROSTER_KEYS:
        value = row.get(column, "").strip().lower()
        if value:
            keys.add(value)
            if "@" in value:
                keys.add(value.split("@", 1)[0])
    return keys


def _submission_keys(row: dict[str, str]) -> set[str]:
    keys = {row["submission"].lower()}
    source = row.get("source", "")
    if source:
        stem = Path(source).name
        keys.add(stem.lower())
        keys.add(stem.lower().removesuffix(".zip"))
    return keys


@dataclass
class Gradebook:
    path: Path
    matched: int
    unmatched_submissions: list[str]
    students_without_submission: list[str]


def write_gradebook(
    out: Path, lms: str, roster_path: Path, grades: list[dict[str, str]], assignment: str,
    assignment_id: str | None,
) -> Gradebook:  # fmt: skip
    roster = read_roster(roster_path)
    index: dict[str, int] = {}
    for number, student in enumerate(roster):
        for key in _keys(student):
            index.setdefault(key, number)
    score_of: dict[int, str] = {}
    unmatched = []
    for row in grades:
        found = next((index[key] for key in sorted(_submission_keys(row)) if key in index), None)
        if found is None:
            unmatched.append(row["submission"])
        else:
            score_of[found] = row.get("score", "")
    missing = [
        _display_name(student)
        for number, student in enumerate(roster)
        if number not in score_of
    ]
    column = f"{assignment} ({assignment_id})" if assignment_id else assignment
    if lms == "canvas":
        header = [*CANVAS_COLUMNS, column]
        rows = [
            [*(student.get(key, "") for key in CANVAS_COLUMNS), score_of.get(number, "")]
            for number, student in enumerate(roster)
        ]
    else:
        header = [*MOODLE_COLUMNS, column]
        rows = [
            [
                student.get("First name", ""),
                student.get("Last name", ""),
                student.get("ID number", ""),
                student.get("Email address", student.get("Email", "")),
                score_of.get(number, ""),
            ]
            for number, student in enumerate(roster)
        ]
    path = out / f"gradebook-{lms}.csv"
    write_csv_atomic(path, header, rows)
    return Gradebook(path, len(score_of), unmatched, missing)


def _display_name(student: dict[str, str]) -> str:
    name = student.get("Student") or " ".join(
        part for part in (student.get("First name", ""), student.get("Last name", "")) if part
    )
    key = next((student[k] for k in ROSTER_KEYS if student.get(k)), "")
    return f"{name} ({key})" if name and key else name or key or "?"
