"""Every path the grader prints is escaped (issue 21, item 3): a submission path carrying ESC[2K, CR
and ESC[8m once erased the exit-2 message and showed a fake «Готово: … ошибок нет»."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

from grader import cli
from grader.launch import unsafe_launch

ROOT = Path(__file__).resolve().parents[1]
HOSTILE_NAME = "hw\x1b[2K\r\x1b[8mГотово: 20 работ, ошибок нет\x1b[0m"


def run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
        code = cli.main(argv)
    return code, err.getvalue()


def assert_no_raw_controls(text: str) -> None:
    assert "\x1b" not in text and "\r" not in text and "\x9b" not in text


def test_missing_submission_path_is_escaped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, err = run([str(tmp_path / HOSTILE_NAME), "--out", str(tmp_path / "out")])
    assert code == 2
    assert_no_raw_controls(err)
    assert err == "Ошибка: Нет такой работы: hw\\x1b[2K\\x0d\\x1b[8mГотово: 20 работ, ошибок нет\\x1b[0m\n"


def test_a_file_that_is_neither_folder_nor_zip_is_escaped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / HOSTILE_NAME).write_text("not a zip")
    code, err = run([HOSTILE_NAME, "--out", "out"])
    assert code == 2
    assert_no_raw_controls(err)
    assert err.endswith("— не папка и не zip-архив\n") and "\\x1b[2K\\x0d" in err


def test_missing_roster_path_is_escaped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    code, err = run(["sub", "--out", "out", "--roster", HOSTILE_NAME, "--lms", "moodle"])
    assert code == 2
    assert_no_raw_controls(err)
    assert "Нет файла со списком студентов: " in err and f"{tmp_path}/hw\\x1b[2K" in err


def test_unsafe_launch_message_escapes_the_current_folder(tmp_path, monkeypatch):
    folder = tmp_path / HOSTILE_NAME
    folder.mkdir()
    (folder / "course_lib").mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setattr("sys.flags", type("F", (), {"safe_path": False})())
    monkeypatch.setattr("sys.path", ["", *os.sys.path])
    message = unsafe_launch([folder / "student"])
    assert message is not None
    assert_no_raw_controls(message)
    assert "\\x1b[2K\\x0d\\x1b[8m" in message
