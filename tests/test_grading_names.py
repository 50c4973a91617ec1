"""Batch integrity around names: reserved output names, collisions, formulas, report failures."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from grader import cli, report
from grader.names import output_name, output_names
from course_lib.checking.safetext import csv_cell

ROOT = Path(__file__).resolve().parents[1]
QUIET = ["--no-progress", "--allow-weak-sandbox", "--exercise", "commit_turn"]


def _submission(base: Path, name: str, solved: bool = True) -> Path:
    folder = base / name
    folder.mkdir(parents=True)
    source = ROOT / ("solutions" if solved else "exercises") / "commit_turn.py"
    shutil.copyfile(source, folder / "commit_turn.py")
    return folder


def _rows(out: Path) -> list[dict]:
    with open(out / "grades.csv", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_a_folder_named_grades_csv_cannot_replace_the_class_file(tmp_path):
    folder = _submission(tmp_path / "subs", "grades.csv")
    out = tmp_path / "out"
    assert cli.main([str(folder), "--out", str(out), *QUIET]) == 0
    assert (out / "grades.csv").is_file()
    (row,) = _rows(out)
    assert row["submission"].startswith("grades.csv-") and row["commit_turn"] == "10.00"
    assert row["source"] == cli.shown_path(folder)
    assert (out / row["submission"] / "results.json").is_file()


def test_colliding_names_stay_apart_and_stable(tmp_path):
    victim = _submission(tmp_path / "subs", "student_17", solved=True)
    attacker = _submission(tmp_path / "subs", "student 17", solved=False)
    out = tmp_path / "out"
    # The shell sorts "student 17" first: it must still not take student_17's name.
    assert cli.main([str(attacker), str(victim), "--out", str(out), *QUIET]) == 0
    rows = {row["submission"]: row for row in _rows(out)}
    assert rows["student_17"]["commit_turn"] == "10.00"
    assert rows["student_17"]["source"] == cli.shown_path(victim)
    (other,) = set(rows) - {"student_17"}
    assert other == output_name(attacker) and other.startswith("student_17-")
    assert rows[other]["commit_turn"] == "0.00" and rows[other]["source"] == cli.shown_path(attacker)
    results = json.loads((out / other / "results.json").read_text(encoding="utf-8"))
    assert results["extra_data"]["source"] == cli.shown_path(attacker)
    # Stable: the same folder gets the same name in any batch, alone or not.
    assert output_names([attacker]) == [other] == output_names([victim, attacker])[1:]


def test_formula_prefixes_are_neutralized_in_grades_csv(tmp_path):
    names = ["=HYPERLINK(1)", "+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx"]
    folders = [_submission(tmp_path / "subs", name) for name in names]
    out = tmp_path / "out"
    assert cli.main([*map(str, folders), "--out", str(out), *QUIET]) == 0
    for row in _rows(out):
        for cell in row.values():
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
    assert [csv_cell(text) for text in ("=1", "+1", "-1", "@a", "ok")] == ["'=1", "'+1", "'-1", "'@a", "ok"]


def test_a_report_that_fails_is_that_submissions_status(tmp_path, monkeypatch):
    first = _submission(tmp_path / "subs", "first")
    second = _submission(tmp_path / "subs", "second")
    original = report.feedback_markdown

    def broken(submission, *args):
        if submission.name == "first":
            raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")
        return original(submission, *args)

    monkeypatch.setattr(cli, "feedback_markdown", broken)
    out = tmp_path / "out"
    assert cli.main([str(first), str(second), "--out", str(out), *QUIET]) == 0
    rows = {row["submission"]: row for row in _rows(out)}
    assert rows["first"]["status"] == "report_error" and "report: UnicodeEncodeError" in rows["first"]["details"]
    assert rows["second"]["status"] == "ok" and rows["second"]["commit_turn"] == "10.00"
    assert (out / "second" / "feedback.md").is_file()
