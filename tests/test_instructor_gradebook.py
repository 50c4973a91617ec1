"""Gradebooks for Canvas and Moodle from a 12-student roster, checked against each format's columns.

Canvas (its gradebook import): the leading columns `Student, ID, SIS User ID, SIS Login ID, Section`
exactly, then one column per assignment named `Assignment name (assignment id)`; a grade cell is a
number or empty (no change). Moodle (grade import from CSV): an identifier column that is mapped at
import to a user field (e-mail, username, ID number) and a grade column mapped to a grade item; we
write Moodle's own export layout (`First name, Last name, ID number, Email address`, grade item).
"""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import pytest

from grader import cli

ROOT = Path(__file__).resolve().parents[1]
QUIET = ["--no-progress", "--allow-weak-sandbox", "--exercise", "commit_turn"]
CANVAS_LEADING = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_IDENTIFIERS = {"ID number", "Email address", "Username"}
STUDENTS = [(f"Студент{n:02d}", f"Фамилия{n:02d}", f"s{n:02d}") for n in range(1, 13)]


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    base = tmp_path_factory.mktemp("lms")
    subs = base / "subs"
    # 10 of the 12 students hand in (s01..s10); s05 hands in stubs; one stranger is not enrolled.
    for _, _, login in STUDENTS[:10]:
        folder = subs / login
        folder.mkdir(parents=True)
        source = "exercises" if login == "s05" else "solutions"
        shutil.copyfile(ROOT / source / "commit_turn.py", folder / "commit_turn.py")
    (subs / "stranger").mkdir()
    shutil.copyfile(ROOT / "solutions" / "commit_turn.py", subs / "stranger" / "commit_turn.py")
    canvas_roster = base / "canvas_export.csv"
    with open(canvas_roster, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([*CANVAS_LEADING, "Homework 1 (101)"])
        writer.writerow(["    Points Possible", "", "", "", "", "10"])
        for number, (first, last, login) in enumerate(STUDENTS, start=1):
            writer.writerow([f"{last}, {first}", 5000 + number, f"SIS{number:03d}", login, "Группа 1", ""])
    moodle_roster = base / "moodle_export.csv"
    with open(moodle_roster, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["First name", "Last name", "ID number", "Institution", "Department", "Email address"])
        for number, (first, last, login) in enumerate(STUDENTS, start=1):
            writer.writerow([first, last, f"ID{number:03d}", "", "", f"{login}@uni.example"])
    return base, subs, canvas_roster, moodle_roster


def _grade(batch, lms, roster, capsys):
    base, subs, *_ = batch
    out = base / f"out-{lms}"
    code = cli.main([*map(str, sorted(subs.iterdir())), "--out", str(out), "--roster", str(roster),
                     "--lms", lms, "--assignment", "Упражнения", "--assignment-id", "4242", *QUIET])  # fmt: skip
    assert code == 0
    with open(out / f"gradebook-{lms}.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    return rows, capsys.readouterr().err


def test_canvas_gradebook_has_canvas_columns(batch, capsys):
    rows, err = _grade(batch, "canvas", batch[2], capsys)
    header, body = rows[0], rows[1:]
    assert header[:5] == CANVAS_LEADING
    assert len(header) == 6 and re.fullmatch(r".+ \(\d+\)", header[5]) and header[5] == "Упражнения (4242)"
    assert len(body) == 12 and all(len(row) == 6 for row in body)
    by_login = {row[3]: row for row in body}
    assert by_login["s01"][5] == "10.00" and by_login["s05"][5] == "0.00"
    assert by_login["s11"][5] == "" and by_login["s12"][5] == ""  # no submission: left empty
    assert by_login["s01"][:5] == ["Фамилия01, Студент01", "5001", "SIS001", "s01", "Группа 1"]
    assert all(cell == "" or re.fullmatch(r"\d+\.\d\d", cell) for cell in (row[5] for row in body))
    assert "stranger" in err and "Фамилия11, Студент11 (s11)" in err and "Фамилия12" in err


def test_moodle_gradebook_has_an_identifier_and_a_grade(batch, capsys):
    rows, err = _grade(batch, "moodle", batch[3], capsys)
    header, body = rows[0], rows[1:]
    assert header == ["First name", "Last name", "ID number", "Email address", "Упражнения (4242)"]
    assert MOODLE_IDENTIFIERS & set(header)
    by_mail = {row[3]: row for row in body}
    # On Moodle's 0…100 scale; students without a grade are left out (an empty cell wipes a grade).
    assert by_mail["s01@uni.example"][4] == "100.00" and by_mail["s05@uni.example"][4] == "0.00"
    assert "s12@uni.example" not in by_mail and len(body) == 10 and all(row[4] for row in body)
    assert "stranger" in err and "Студент11 Фамилия11" in err and "в файл не вошли" in err


def test_roster_and_lms_go_together(batch, capsys):
    base, subs, canvas_roster, _ = batch
    assert cli.main([str(subs / "s01"), "--out", str(base / "x"), "--lms", "canvas", *QUIET]) == 2
    assert cli.main([str(subs / "s01"), "--out", str(base / "x"), "--roster", str(base / "nope.csv"),
                     "--lms", "canvas", *QUIET]) == 2  # fmt: skip
