"""The grade command line: arguments, outputs, progress, exit codes."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import cli

ROOT = Path(__file__).resolve().parents[1]
# Trusted code only here: where namespaces are unavailable, grade it in the basic tier anyway.
QUIET = ["--no-progress", "--allow-weak-sandbox"]


def _rows(out: Path) -> list[dict]:
    with open(out / "grades.csv", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_module_entry_point_with_progress_bar(tmp_path):
    """`python -m grader grade` end to end, as an instructor runs it."""
    submission = tmp_path / "ivanov"
    submission.mkdir()
    shutil.copyfile(ROOT / "solutions" / "commit_turn.py", submission / "commit_turn.py")
    completed = subprocess.run(
        [sys.executable, "-m", "grader", "grade", str(submission), "--out", str(tmp_path / "o"),
         "--exercise", "commit_turn", "--exercise", "split_into_turns", "--allow-weak-sandbox"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    assert "Проверка" in completed.stderr and "1/1" in completed.stderr  # tqdm's bar
    assert "Проверено работ: 1" in completed.stderr
    (row,) = _rows(tmp_path / "o")
    assert row["commit_turn"] == "10.00" and row["split_into_turns"] == "0.00"
    assert row["status"] == "missing" and row["details"] == "split_into_turns: missing"
    assert list(row)[4:6] == ["commit_turn", "split_into_turns"]


def test_duplicate_submissions_do_not_stop_the_batch_and_a_missing_path_is_a_usage_error(tmp_path, capsys):
    first, second = tmp_path / "a" / "work", tmp_path / "b" / "work"
    for folder in (first, second):
        folder.mkdir(parents=True)
    shutil.copyfile(ROOT / "solutions" / "trim_by_message_count.py", second / "trim_by_message_count.py")
    out = tmp_path / "out"
    code = cli.main(
        [str(first), str(second), "--out", str(out), "--exercise", "trim_by_message_count", *QUIET]
    )  # fmt: skip
    assert code == 0
    rows = _rows(out)
    assert rows[0]["submission"] == "work" and rows[1]["submission"].startswith("work-")
    assert len(rows[1]["submission"]) == len("work-") + 8  # 8 hex of its path: the same on a regrade
    assert [row["trim_by_message_count"] for row in rows] == ["0.00", "10.00"]
    assert [row["status"] for row in rows] == ["missing", "ok"]
    # A path that does not exist, or is neither a folder nor a zip: exit 2, nothing graded.
    (tmp_path / "notes.txt").write_text("x")
    for bad in (tmp_path / "nope", tmp_path / "notes.txt"):
        assert cli.main([str(first), str(bad), "--out", str(tmp_path / "o2"), *QUIET]) == 2
        assert bad.name in capsys.readouterr().err
    assert not (tmp_path / "o2").exists()


def test_usage_errors_exit_2(tmp_path, capsys):
    assert cli.main([str(tmp_path), "--out", str(tmp_path / "o"), "--exercise", "nope", *QUIET]) == 2
    assert "Нет упражнения" in capsys.readouterr().err
    with pytest.raises(SystemExit) as raised:
        cli.main([str(tmp_path), *QUIET])  # --out is required
    assert raised.value.code == 2


def test_broken_case_file_exits_2(tmp_path, capsys):
    course = tmp_path / "course"
    for name in ("exercises", "course_lib", "solutions"):
        shutil.copytree(ROOT / name, course / name, ignore=shutil.ignore_patterns("__pycache__"))
    (course / "exercises" / "cases" / "commit_turn.json").write_text('{"format": 1, "cases": 5}')
    code = cli.main([str(tmp_path), "--out", str(tmp_path / "o"), "--course-root", str(course), *QUIET])
    assert code == 2
    assert "commit_turn.json" in capsys.readouterr().err


def test_weak_sandbox_is_refused_unless_allowed(tmp_path, capsys):
    """The basic tier hides nothing, so grading refuses it by default (exit 3)."""
    args = [str(ROOT / "solutions"), "--out", str(tmp_path / "o"), "--exercise", "commit_turn"]
    assert cli.main([*args, "--no-progress", "--sandbox-tier", "basic"]) == 3
    assert "не скрывает" in capsys.readouterr().err
    assert cli.main([*args, "--no-progress", "--sandbox-tier", "basic", "--allow-weak-sandbox"]) == 0
    assert "ВНИМАНИЕ" in capsys.readouterr().err
    assert _rows(tmp_path / "o")[0]["commit_turn"] == "10.00"


def test_hidden_visibility_option_and_public_only_course(tmp_path):
    course = tmp_path / "course"
    for name in ("exercises", "course_lib"):
        shutil.copytree(ROOT / name, course / name, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "out"
    code = cli.main(
        [str(ROOT / "solutions"), "--out", str(out), "--course-root", str(course),
         "--exercise", "build_chat_messages", "--hidden-visibility", "hidden", *QUIET]
    )  # fmt: skip
    assert code == 0  # no grading/hidden here: public cases only, said on stderr
    results = json.loads((out / "solutions" / "results.json").read_text(encoding="utf-8"))
    assert {test["extra_data"]["kind"] for test in results["tests"]} == {"public"}
    code = cli.main(
        [str(ROOT / "solutions"), "--out", str(tmp_path / "o2"), "--exercise", "commit_turn",
         "--hidden-visibility", "hidden", *QUIET]
    )  # fmt: skip
    results = json.loads((tmp_path / "o2" / "solutions" / "results.json").read_text(encoding="utf-8"))
    hidden = [t for t in results["tests"] if t["extra_data"]["kind"] == "hidden"]
    assert hidden and {t["visibility"] for t in hidden} == {"hidden"}


def test_hidden_failures_show_name_and_hint_only(tmp_path):
    submission = tmp_path / "s"
    submission.mkdir()
    # Correct except for bool budgets: fails exactly one hidden case.
    source = (ROOT / "solutions" / "select_recent_turns.py").read_text(encoding="utf-8")
    (submission / "select_recent_turns.py").write_text(
        source.replace("    if not _is_int(available_tokens):", "    if type(available_tokens) not in (int, bool):"),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert cli.main([str(submission), "--out", str(out), "--exercise", "select_recent_turns", *QUIET]) == 0
    before = (out / "s" / "feedback.md").read_text(encoding="utf-8")  # before publication
    assert "available_tokens bool" not in before and "Подсказка" not in before and "Скрытые тесты уже проверены" in before
    feedback = (out / "s" / "feedback_after_publication.md").read_text(encoding="utf-8")
    assert "- ❌ «available_tokens bool — TypeError». Подсказка:" in feedback  # no reason: name and hint
    assert "Подсказка: bool — подкласс int, но здесь он не годится." in feedback
    assert "Вопрос 1" not in feedback  # the hidden case's inputs are never shown
    results = json.loads((out / "s" / "results.json").read_text(encoding="utf-8"))
    (failed,) = [t for t in results["tests"] if t["status"] == "failed"]
    assert failed["output"] == "Не пройден. Подсказка: bool — подкласс int, но здесь он не годится."
    assert failed["extra_data"]["reason"] == "failed"


def test_public_failures_explain_what_differs(tmp_path):
    submission = tmp_path / "s"
    submission.mkdir()
    (submission / "commit_turn.py").write_text(
        "def commit_turn(history, user_text, assistant_text):\n"
        "    print('отладка:', user_text)\n"
        "    history.append({'role': 'user', 'content': user_text})\n"
        "    return len(history)\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    cli.main([str(submission), "--out", str(out), "--exercise", "commit_turn", *QUIET])
    feedback = (out / "s" / "feedback.md").read_text(encoding="utf-8")
    assert "результат: ожидалось 2, получено 1" in feedback
    assert "Вывод решения:" in feedback and "отладка:   Номер заказа 8041." in feedback
