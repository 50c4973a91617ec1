"""Batch integrity around names: reserved output names, collisions, formulas, report failures."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from grader import cli, report
from grader.names import REGISTRY, output_name
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
    assert cli.main([str(attacker), "--out", str(out), *QUIET]) == 0
    assert cli.main([str(victim), str(attacker), "--out", str(tmp_path / "out2"), *QUIET]) == 0
    assert {row["submission"] for row in _rows(tmp_path / "out2")} == {"student_17", other}
    assert {row["submission"] for row in _rows(out)} == {"student_17", other}


def test_no_hand_in_can_take_a_name_the_grader_writes(tmp_path):
    """Folders named like the grader's own tables, and a zip that would unpack to one."""
    subs = tmp_path / "subs"
    folders = [_submission(subs, name) for name in ("similarity.csv", "gradebook-moodle.csv", "GRADES.CSV")]
    archive = subs / "gradebook-canvas.csv.zip"
    shutil.make_archive(str(archive)[:-4], "zip", folders[0])
    out = tmp_path / "out"
    assert cli.main([*map(str, folders), str(archive), "--out", str(out), *QUIET]) == 0
    for table in ("grades.csv", "similarity.csv"):
        assert (out / table).is_file()
    rows = _rows(out)
    assert len(rows) == 4 and all(row["commit_turn"] == "10.00" for row in rows)
    assert all(not row["submission"].lower().endswith(".csv") for row in rows)
    assert [path.name for path in out.iterdir() if path.name.lower().endswith(".csv")] != []
    assert all(path.is_file() for path in out.iterdir() if path.name.lower().endswith(".csv"))


def test_a_regrade_keeps_each_hand_in_in_its_own_folder(tmp_path):
    """Two students both sent handin/: a regrade of the second never lands in the first's row."""
    first = _submission(tmp_path / "subs" / "a", "handin", solved=False)
    second = _submission(tmp_path / "subs" / "b", "handin", solved=True)
    out = tmp_path / "out"
    assert cli.main([str(first), str(second), "--out", str(out), *QUIET]) == 0
    before = {row["submission"]: row for row in _rows(out)}
    assert sorted(row["commit_turn"] for row in before.values()) == ["0.00", "10.00"]
    (second_name,) = [name for name, row in before.items() if row["commit_turn"] == "10.00"]
    assert cli.main([str(second), "--out", str(out), *QUIET]) == 0
    after = {row["submission"]: row for row in _rows(out)}
    assert after == before  # the same two rows, the same folders, nobody's grade moved
    assert second_name in json.loads((out / REGISTRY).read_text(encoding="utf-8"))["folders"]


def test_a_new_copy_of_one_of_two_same_named_hand_ins_is_refused_not_guessed(tmp_path, capsys):
    first = _submission(tmp_path / "subs" / "a", "handin", solved=False)
    second = _submission(tmp_path / "subs" / "b", "handin", solved=True)
    out = tmp_path / "out"
    assert cli.main([str(first), str(second), "--out", str(out), *QUIET]) == 0
    before = (out / "grades.csv").read_bytes()
    capsys.readouterr()
    third = _submission(tmp_path / "new", "handin", solved=False)  # which of the two is it?
    assert cli.main([str(third), "--out", str(out), *QUIET]) == 2
    err = capsys.readouterr().err
    assert "handin" in err and "по прежнему пути" in err
    assert (out / "grades.csv").read_bytes() == before


def test_a_folder_named_like_another_students_output_cannot_replace_it(tmp_path):
    victim = _submission(tmp_path / "subs", "Иван Петров", solved=True)
    out = tmp_path / "out"
    assert cli.main([str(victim), "--out", str(out), *QUIET]) == 0
    (row,) = _rows(out)
    taken = row["submission"]
    assert taken == output_name(victim) and taken.startswith("Иван_Петров-")
    attacker = _submission(tmp_path / "other", taken, solved=False)  # safe, so it would keep it
    assert cli.main([str(attacker), "--out", str(out), *QUIET]) == 0
    rows = {row["submission"]: row for row in _rows(out)}
    assert rows[taken]["commit_turn"] == "10.00" and rows[taken]["source"] == cli.shown_path(victim)
    assert len(rows) == 2
    # The other order: the planted folder comes first, the victim later still gets a folder of its own.
    out2 = tmp_path / "out2"
    assert cli.main([str(attacker), "--out", str(out2), *QUIET]) == 0
    assert cli.main([str(victim), "--out", str(out2), *QUIET]) == 0
    rows = {row["source"]: row for row in _rows(out2)}
    assert rows[cli.shown_path(victim)]["commit_turn"] == "10.00"
    assert rows[cli.shown_path(attacker)]["commit_turn"] == "0.00"
    assert rows[cli.shown_path(victim)]["submission"] != rows[cli.shown_path(attacker)]["submission"]


def test_output_folders_from_before_names_were_remembered_are_not_taken_over(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # grades.csv's sources are then subs/a/handin and subs/b/handin
    victim = _submission(tmp_path / "subs" / "a", "handin", solved=True)
    out = tmp_path / "out"
    assert cli.main([str(victim), "--out", str(out), *QUIET]) == 0
    (out / REGISTRY).unlink()  # an output folder from the previous grader
    stranger = _submission(tmp_path / "subs" / "b", "handin", solved=False)
    assert cli.main([str(stranger), "--out", str(out), *QUIET]) == 0
    rows = {row["source"]: row for row in _rows(out)}
    assert rows[cli.shown_path(victim)]["submission"] == "handin"
    assert rows[cli.shown_path(victim)]["commit_turn"] == "10.00"
    assert rows[cli.shown_path(stranger)]["submission"].startswith("handin-")
    # The old folder's own submission goes on in it.
    assert cli.main([str(victim), "--out", str(out), *QUIET]) == 0
    assert len(_rows(out)) == 2


def test_the_same_hand_in_twice_in_one_run_is_refused(tmp_path, capsys):
    folder = _submission(tmp_path / "subs", "ivanov")
    out = tmp_path / "out"
    assert cli.main([str(folder), str(folder), "--out", str(out), *QUIET]) == 2
    assert "указана дважды" in capsys.readouterr().err
    assert not (out / "grades.csv").exists()


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
