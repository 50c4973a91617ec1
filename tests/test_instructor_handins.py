"""Hand-ins as they arrive and regrades that keep everything, run as an instructor would.

Moodle's "download submissions in folders" layout with Russian names and a handin.zip inside
(BOM and CRLF in the files), a notebook handed in instead of the .py files, two identical copies
of one file, a regrade of one student with `--exercise` that keeps the other sections, the total
and similarity.csv, and cases that never ran after the timeout limit.
"""

from __future__ import annotations

import csv
import json
import shutil
import zipfile
from pathlib import Path

from grader import cli
from course_lib.checking.catalog import BY_NAME, CourseLayout
from grader.submission import Submission

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = CourseLayout(ROOT)
QUIET = ["--no-progress", "--allow-weak-sandbox"]
TWO = ["--exercise", "commit_turn", "--exercise", "split_into_turns"]


def _solution(name: str) -> bytes:
    return (ROOT / "solutions" / f"{name}.py").read_bytes()


def _windows(data: bytes) -> bytes:
    return b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n")


def _moodle_folder(base: Path, student: str, files: dict[str, bytes], zip_name: str = "handin.zip") -> Path:
    folder = base / f"{student}_{abs(hash(student)) % 10**7:07d}_assignsubmission_file_"
    folder.mkdir(parents=True)
    with zipfile.ZipFile(folder / zip_name, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return folder


def _scores(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "grades.csv", encoding="utf-8", newline="") as handle:
        return {row["source"]: row for row in csv.DictReader(handle)}


def test_moodle_folders_with_a_zip_inside_are_graded_like_zips(tmp_path, capsys):
    subs = tmp_path / "Домашнее задание 1"
    solved = {f"exercises/{n}.py": _windows(_solution(n)) for n in ("commit_turn", "split_into_turns")}
    good = _moodle_folder(subs, "Иван Петров", solved)
    half = _moodle_folder(subs, "Анна Смирнова", {"commit_turn.py": _solution("commit_turn")}, "Мои решения.zip")
    traversal = _moodle_folder(subs, "Олег Ёлкин", {"../commit_turn.py": _solution("commit_turn")})
    bomb = _moodle_folder(subs, "Пётр Бомбин", {"commit_turn.py": b"#" * 400_000 + b"\n"})
    two = _moodle_folder(subs, "Двойной Архив", solved)
    with zipfile.ZipFile(two / "handin (1).zip", "w") as archive:
        archive.writestr("commit_turn.py", b"def commit_turn(h, u, a):\n    return 0\n")
    out = tmp_path / "out"
    assert cli.main([*map(str, sorted(subs.iterdir())), "--out", str(out), *QUIET, *TWO]) == 0
    rows = _scores(out)
    assert rows[good.name]["score"] == "20.00" and rows[good.name]["status"] == "ok"
    assert rows[half.name]["commit_turn"] == "10.00" and rows[half.name]["split_into_turns"] == "0.00"
    assert rows[traversal.name]["status"] == "missing"  # a `..` member is never read
    assert rows[bomb.name]["status"] == "crash" and "zip" in (out / rows[bomb.name]["submission"]
                                                              / "feedback.md").read_text(encoding="utf-8")
    assert rows[two.name]["status"] == "ambiguous"
    feedback = (out / rows[two.name]["submission"] / "feedback.md").read_text(encoding="utf-8")
    assert "несколько разных архивов" in feedback


def test_a_notebook_instead_of_py_files_is_said_once_and_clearly(tmp_path):
    subs = tmp_path / "subs"
    (subs / "nb_folder").mkdir(parents=True)
    notebook = {"cells": [{"cell_type": "code", "source": ["def commit_turn(h, u, a):\n", "    return 0\n"],
                           "metadata": {}, "outputs": [], "execution_count": None}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}  # fmt: skip
    (subs / "nb_folder" / "02_single_history.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    with zipfile.ZipFile(subs / "nb_zip.zip", "w") as archive:
        archive.writestr("notebooks/04_sliding_window.ipynb", json.dumps(notebook))
    (subs / "empty").mkdir()
    out = tmp_path / "out"
    assert cli.main([*map(str, sorted(subs.iterdir())), "--out", str(out), *QUIET, *TWO]) == 0
    rows = _scores(out)
    for name in ("nb_folder", "nb_zip.zip"):
        assert "ноутбук" in rows[name]["details"] and "handin:" in rows[name]["details"]
        feedback = (out / rows[name]["submission"] / "feedback.md").read_text(encoding="utf-8")
        assert feedback.count("ноутбуки не проверяются") == 1 and ".ipynb" in feedback
        assert "сдан ноутбук" in feedback
    assert "ноутбук" not in rows["empty"]["details"]
    assert "ноутбуки не проверяются" not in (out / "empty" / "feedback.md").read_text(encoding="utf-8")


def test_identical_copies_are_one_file_different_ones_are_ambiguous(tmp_path):
    folder = tmp_path / "student"
    for place in ("exercises", "backup/exercises"):
        (folder / place).mkdir(parents=True)
        (folder / place / "commit_turn.py").write_bytes(_solution("commit_turn"))
    (folder / "split_into_turns.py").write_bytes(_solution("split_into_turns"))
    (folder / "exercises" / "split_into_turns.py").write_bytes(_solution("split_into_turns") + b"# mine\n")
    submission = Submission.open(folder, LAYOUT)
    try:
        assert submission.read(BY_NAME["commit_turn"]).source == _solution("commit_turn").decode()
        assert submission.read(BY_NAME["split_into_turns"]).failure.category == "ambiguous"
    finally:
        submission.close()
    archive_path = tmp_path / "student.zip"
    with zipfile.ZipFile(archive_path, "w") as archive:
        archive.writestr("a/commit_turn.py", _solution("commit_turn"))
        archive.writestr("b/commit_turn.py", _solution("commit_turn"))
    submission = Submission.open(archive_path, LAYOUT)
    try:
        assert submission.read(BY_NAME["commit_turn"]).failure is None
    finally:
        submission.close()


def test_a_regrade_of_one_exercise_keeps_feedback_totals_and_similarity(tmp_path, capsys):
    subs = tmp_path / "subs"
    for login in ("s01", "s02", "s03"):
        (subs / login).mkdir(parents=True)
        for name in ("commit_turn", "split_into_turns"):
            (subs / login / f"{name}.py").write_bytes(_solution(name))
    stub = (ROOT / "exercises" / "commit_turn.py").read_bytes()
    (subs / "s03" / "commit_turn.py").write_bytes(stub)
    out = tmp_path / "out"
    args = ["--hidden-visibility", "visible", "--similarity-threshold", "0.5"]
    assert cli.main([*map(str, sorted(subs.iterdir())), "--out", str(out), *QUIET, *TWO, *args]) == 0
    similarity_before = (out / "similarity.csv").read_text(encoding="utf-8").splitlines()
    assert len(similarity_before) > 3
    # s03 fixes commit_turn; the instructor regrades only that exercise of only that student.
    (subs / "s03" / "commit_turn.py").write_bytes(_solution("commit_turn"))
    capsys.readouterr()
    assert cli.main([str(subs / "s03"), "--out", str(out), *QUIET, "--exercise", "commit_turn", *args]) == 0
    feedback = (out / "s03" / "feedback.md").read_text(encoding="utf-8")
    assert "**Итого: 20 из 20 баллов.**" in feedback
    assert "## commit_turn" in feedback and "## split_into_turns" in feedback
    results = json.loads((out / "s03" / "results.json").read_text(encoding="utf-8"))
    assert results["score"] == 20
    assert {t["extra_data"]["exercise"] for t in results["tests"]} == {"commit_turn", "split_into_turns"}
    assert round(sum(t["max_score"] for t in results["tests"]), 4) == 20
    by_name = {row["submission"]: row for row in _scores(out).values()}
    assert by_name["s03"]["score"] == "20.00" and by_name["s03"]["split_into_turns"] == "10.00"
    similarity_after = (out / "similarity.csv").read_text(encoding="utf-8").splitlines()
    untouched = [line for line in similarity_before if "s03" not in line]
    assert set(untouched) <= set(similarity_after)  # the other pairs are kept
    assert any("s03" in line and "commit_turn" in line for line in similarity_after)  # s03's recomputed
    assert any("split_into_turns" in line and "s03" in line for line in similarity_after)


def test_cases_after_the_timeout_limit_are_not_run_and_validation_runs_first(tmp_path):
    folder = tmp_path / "slow"
    folder.mkdir()
    (folder / "commit_turn.py").write_text(
        "def commit_turn(history, user_text, assistant_text):\n"
        "    if not isinstance(user_text, str) or not isinstance(assistant_text, str):\n"
        "        raise TypeError('не строка')\n"
        "    if not user_text.strip() or not assistant_text.strip():\n"
        "        raise ValueError('пусто')\n"
        "    while True:\n"
        "        pass\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    code = cli.main([str(folder), "--out", str(out), *QUIET, "--exercise", "commit_turn",
                     "--case-timeout", "0.5", "--max-timeouts", "1", "--hidden-visibility", "visible"])  # fmt: skip
    assert code == 0
    results = json.loads((out / "slow" / "results.json").read_text(encoding="utf-8"))
    reasons = {t["extra_data"]["case"]: t["extra_data"]["reason"] for t in results["tests"]}
    assert reasons["пустой ответ ассистента — ValueError"] == "passed"  # validation ran first
    assert list(reasons.values()).count("timeout") == 1
    feedback = (out / "slow" / "feedback.md").read_text(encoding="utf-8")
    assert "Не запускались" in feedback
    not_run = feedback.split("Не запускались", 1)[1]
    assert "Подсказка" not in not_run  # no hints about what a case that never ran checks
    hidden_failed = feedback.split("Скрытые тесты, которые не прошли:", 1)[-1].split("Не запускались")[0]
    assert hidden_failed.count("❌") <= 1


def test_points_in_feedback_have_decimal_commas():
    # issue 31: «42.96 из 44» in a Russian sentence; the CSV files keep dots (or --excel's commas).
    from grader.report import _points

    assert [_points(v) for v in (42.96, 7.5, 10.0, 0.0, 0.004)] == ["42,96", "7,5", "10", "0", "0"]
    from grader.report import _out_of

    assert [_out_of(v) for v in (120, 21, 11, 3.23, 0, 1)] == [
        "120 баллов", "21 балла", "11 баллов", "3,23 балла", "0 баллов", "1 балла"]


def test_a_syntax_error_shows_the_students_line(tmp_path):
    from course_lib.checking.cases import load_cases
    from course_lib.checking.runner import run_exercise
    from course_lib.checking.sandbox import Limits

    exercise = BY_NAME["commit_turn"]
    source = "def commit_turn(history, user_text, assistant_text):\n    if not user_text\n        return history\n"
    public = load_cases(LAYOUT.public_cases_file(exercise), exercise, "public")
    result = run_exercise(exercise, source, [public], Limits())
    assert result.status == "syntax_error"
    assert "строка 2" in result.message and "2 |     if not user_text" in result.message


def test_a_regrades_similarity_rows_equal_a_fresh_full_runs(tmp_path, capsys):
    # issue 31: a regrade changed a pair nobody touched (0.900 → 0.947); rows and order must match.
    subs = tmp_path / "subs"
    reference = _solution("commit_turn").decode("utf-8")
    variants = {
        "s01": reference,
        "s02": reference.replace("history", "hist"),
        "s03": "# мой вариант\n" + reference.replace("history", "items") + "\n\ndef unused(x):\n    return x * 2\n",
        "s04": reference.replace("assistant_text", "answer"),
    }
    for login, source in variants.items():
        (subs / login).mkdir(parents=True)
        (subs / login / "commit_turn.py").write_text(source, encoding="utf-8")
        (subs / login / "split_into_turns.py").write_bytes(_solution("split_into_turns"))
    args = [*QUIET, "--similarity-threshold", "0.5"]
    regraded, fresh = tmp_path / "regraded", tmp_path / "fresh"
    assert cli.main([*map(str, sorted(subs.iterdir())), "--out", str(regraded), *args]) == 0
    (subs / "s03" / "commit_turn.py").write_text(variants["s03"] + "\n# исправлено\n", encoding="utf-8")
    assert cli.main([str(subs / "s03"), "--out", str(regraded), *args, "--exercise", "commit_turn"]) == 0
    assert cli.main([*map(str, sorted(subs.iterdir())), "--out", str(fresh), *args]) == 0
    after_regrade = (regraded / "similarity.csv").read_text(encoding="utf-8").splitlines()
    after_full = (fresh / "similarity.csv").read_text(encoding="utf-8").splitlines()
    assert len(after_full) > 3 and after_regrade == after_full
