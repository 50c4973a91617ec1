"""Symlinks and hard links in submissions: refused when they reach the course, flagged otherwise."""

from __future__ import annotations

import csv
import os
import shutil
from pathlib import Path

from grader import cli

ROOT = Path(__file__).resolve().parents[1]
QUIET = ["--no-progress", "--allow-weak-sandbox", "--exercise", "commit_turn"]


def _course(tmp_path: Path) -> Path:
    """A private copy of the course, so links never touch the real checkout's files."""
    course = tmp_path / "course"
    for name in ("exercises", "course_lib", "grader", "solutions", "grading"):
        shutil.copytree(ROOT / name, course / name, ignore=shutil.ignore_patterns("__pycache__"))
    return course


def _rows(out: Path) -> dict[str, dict]:
    with open(out / "grades.csv", encoding="utf-8") as handle:
        return {row["submission"]: row for row in csv.DictReader(handle)}


def test_hard_links_to_the_reference_are_refused_and_others_flagged(tmp_path):
    course = _course(tmp_path)
    thief, twin_a, twin_b = (tmp_path / "subs" / name for name in ("thief", "twin_a", "twin_b"))
    for folder in (thief, twin_a, twin_b):
        folder.mkdir(parents=True)
    os.link(course / "solutions" / "commit_turn.py", thief / "commit_turn.py")
    shutil.copyfile(course / "solutions" / "commit_turn.py", twin_a / "commit_turn.py")
    os.link(twin_a / "commit_turn.py", twin_b / "commit_turn.py")  # one file, two submissions
    out = tmp_path / "out"
    folders = [str(thief), str(twin_a), str(twin_b)]
    assert cli.main([*folders, "--out", str(out), "--course-root", str(course), *QUIET]) == 0
    rows = _rows(out)
    assert rows["thief"]["commit_turn"] == "0.00" and rows["thief"]["status"] == "missing"
    feedback = (out / "thief" / "feedback.md").read_text(encoding="utf-8")
    assert "жёсткая ссылка на файл курса" in feedback
    for twin in ("twin_a", "twin_b"):
        assert rows[twin]["commit_turn"] == "10.00" and rows[twin]["status"] == "ok"
        assert rows[twin]["details"] == "commit_turn: hard_link"


def test_symlinks_inside_or_as_the_submission_are_refused(tmp_path):
    course = _course(tmp_path)
    linked_file = tmp_path / "subs" / "linked_file"
    linked_file.mkdir(parents=True)
    (linked_file / "commit_turn.py").symlink_to(course / "solutions" / "commit_turn.py")
    linked_folder = tmp_path / "subs" / "linked_folder"
    linked_folder.symlink_to(course / "solutions", target_is_directory=True)
    out = tmp_path / "out"
    args = [str(linked_file), str(linked_folder) + "/", "--out", str(out), "--course-root", str(course)]
    assert cli.main([*args, *QUIET]) == 0
    rows = _rows(out)
    assert rows["linked_file"]["commit_turn"] == "0.00"
    assert rows["linked_folder"]["commit_turn"] == "0.00"  # a trailing slash does not follow it
    assert "символическая ссылка" in (out / "linked_folder" / "feedback.md").read_text(encoding="utf-8")
