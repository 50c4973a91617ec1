"""The class's sheet: grades.csv, updated in place by regrades and shards.

Grading into an output folder that already has a grades.csv updates the rows of the submissions
just graded and keeps every other row. The read-merge-write runs under an exclusive lock
(`.grades.lock`, flock) and the file is replaced atomically (write a temporary file, then rename),
so shards graded in parallel into one folder never lose each other's rows and a reader never sees
half a file. A regrade of some exercises only (`--exercise`) updates those cells.

The file may have been opened and re-saved in Excel: it is read with the encoding and delimiter
detected (`table`), decimal commas accepted. A file that is not a grades.csv any more (no
`submission`/`score` columns, a score Excel turned into a date) raises `SheetError` before any
grading, and nothing is changed. Two formats are written: "plain" (UTF-8, `,`, `10.00`) and
"excel" (UTF-8 with a BOM, `;`, `10,00`: a Russian Excel opens it as a table, with numbers, and can
save it back). A sheet already in Excel's format (`;`) stays in it; `--excel` switches to it.
LMS gradebooks are `lms`'s job.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from course_lib.checking.catalog import BY_NAME
from course_lib.checking.results import STATUSES
from course_lib.checking.safetext import csv_cell
from grader.table import TableError, read_table, where

LOCK_NAME = ".grades.lock"
FIXED = ("submission", "status", "score", "max_score")
TRAILING = ("details", "source")
PRIORITY = ("report_error", "crash", "memory", "timeout", "syntax_error", "ambiguous", "missing")

FORMATS = {"plain": ("utf-8", ","), "excel": ("utf-8-sig", ";")}


class SheetError(TableError):
    """grades.csv cannot be read back (Russian message with file, line and column)."""


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


def _numeric_columns(header: list[str]) -> set[str]:
    return {"score", "max_score"} | {name for name in header if name in BY_NAME}


def read_sheet(path: Path) -> tuple[list[dict[str, str]], str]:
    """(rows, format) of an existing grades.csv, numbers with a decimal point; ([], "plain") when
    there is none. SheetError when it cannot be read back without losing a row or a grade."""
    if not path.is_file():
        return [], "plain"
    try:
        table = read_table(path)
    except TableError as error:
        raise SheetError(f"{error} Перепроверка ничего не изменила.") from error
    missing = [name for name in ("submission", "score") if name not in table.header]
    if missing:
        raise SheetError(
            f"{where(path, 1)}: это не grades.csv курса — нет столбцов {', '.join(missing)} "
            f"(прочитан как {table.described}; заголовок: {'; '.join(table.header[:6])}). "
            "Перепроверка ничего не изменила: верните исходный grades.csv или укажите другую --out."
        )
    numeric = _numeric_columns(table.header)
    rows = []
    for line, cells in table.rows:
        row = {key: (cells[i] if i < len(cells) else "") for i, key in enumerate(table.header)}
        for column, key in enumerate(table.header, start=1):
            value = row[key]
            if key in numeric and value:
                number = value.replace(",", ".").replace("\u00a0", "").replace(" ", "")
                try:
                    float(number)
                except ValueError:
                    raise SheetError(
                        f"{where(path, line, column)}: в столбце {key} не число: «{value[:30]}» "
                        "(Excel мог превратить число в дату). Перепроверка ничего не изменила: "
                        "верните исходный grades.csv или сохраняйте его с --excel."
                    ) from None
                row[key] = f"{float(number):.2f}"
        rows.append(row)
    return rows, ("excel" if table.delimiter == ";" else "plain")


def read_rows(path: Path) -> list[dict[str, str]]:
    return read_sheet(path)[0]


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


def write_csv_atomic(
    path: Path, header: list[str], rows: Iterable[list[str]], style: str = "plain"
) -> None:
    encoding, delimiter = FORMATS[style]
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, delimiter=delimiter)
    writer.writerow(header)
    for row in rows:
        writer.writerow([csv_cell(str(cell)) for cell in row])
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(partial, "w", newline="", encoding=encoding, errors="backslashreplace") as handle:
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
    style: str = "plain"


def update_grades_csv(
    path: Path, new_rows: list[dict[str, str]], graded: list[str], excel: bool = False
) -> MergeReport:
    """Merge this run's rows into grades.csv (call under `locked`); SheetError changes nothing."""
    old_rows, style = read_sheet(path)
    style = "excel" if excel else style
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
    numeric = _numeric_columns(header)

    def cell(row: dict[str, str], key: str) -> str:
        value = row.get(key, "")
        return value.replace(".", ",") if style == "excel" and key in numeric else value

    write_csv_atomic(path, header, ([cell(row, key) for key in header] for row in result), style)
    return MergeReport(updated, len(added), kept, result, style)
