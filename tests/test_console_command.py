"""Notebook 03's exercise `console_command` decides what the console does with a typed line (issue 29).

- `course_lib.console.run_console` (`python -m course_lib chat`) asks its `decide` parameter about
  every line, the course's version by default: a blank line or an unknown command never reaches the
  model, /NEW and /Exit are commands, "/exit сейчас" does not quit;
- `chat --your-code` passes the student's function through `your_code` (the course's version while
  it fails its public cases, and the line printed says so);
- a student's function that sends a blank line or misses /New is shown under notebook 03's
  section 4 (`show_mistake`) beside the course's decision, while the console keeps the course's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib.console import run_console
from course_lib.course_versions.console_command import console_command
from course_lib.your_code import COURSE, YOURS

from helpers import make_app
from support.student_course import course_copy, write_exercise, fix_mistake, with_mistake

ROOT = Path(__file__).resolve().parents[1]
EMPTY = "Сообщение не должно быть пустым: модели ничего не отправлено."


def _run(app, lines: list[str], **options) -> list[str]:
    inputs, ids, printed = iter(lines), iter(["first", "second", "third"]), []

    def read(prompt: str) -> str:
        for line in inputs:
            return line
        raise EOFError  # the end of a piped file

    run_console(app.chat_service, "test", "gpt-4.1", "offline", read=read, out=printed.append,
                new_session_id=lambda: next(ids), **options)  # fmt: skip
    return printed


def test_the_course_version_decides_each_kind_of_line():
    never = lambda: pytest.fail("new_session_id is only for /new")  # noqa: E731
    assert console_command(" Где мой заказ 8041? ", " s-1 ", never) == {
        "action": "send", "session_id": "s-1", "text": "Где мой заказ 8041?", "notice": None}
    assert console_command("  /New \n", "s-1", lambda: " s-2 ") == {
        "action": "new", "session_id": "s-2", "text": None, "notice": "Новый Session ID: s-2"}
    assert console_command("   ", "s-1", never)["notice"] == EMPTY
    assert console_command("/exit сейчас", "s-1", never)["action"] == "unknown"
    assert console_command("/EXIT", "s-1", never)["action"] == "exit"
    first, second = console_command("Привет", "s-1", never), console_command("Привет", "s-1", never)
    assert first == second and first is not second  # a new dict every time
    for args, error in [(("/new", "s-1", lambda: "s-1"), ValueError), (("x", "  ", never), ValueError),
                        (("x", "s-1", "s-2"), TypeError), ((None, "s-1", never), TypeError)]:
        with pytest.raises(error):
            console_command(*args)


def test_the_console_decides_every_line_with_the_function_it_is_given(offline_settings):
    seen: list[str] = []

    def decide(line, session_id, new_session_id):
        seen.append(line)
        return console_command(line, session_id, new_session_id)

    with make_app(offline_settings) as app:
        printed = _run(app, ["Заказ 8041, кофемашина.", "/New", "/exit", "не прочитано"], decide=decide)
        assert app.chat_service.get_session("first").messages == ()  # /New cleared the old one
    assert seen == ["Заказ 8041, кофемашина.", "/New", "/exit"]
    assert "Новый Session ID: second" in printed


def test_blank_lines_and_unknown_commands_never_reach_the_model(offline_settings):
    with make_app(offline_settings) as app:
        calls = app.llm_client.offline_model.calls
        printed = _run(app, ["   ", "/help", "/exit сейчас", "/EXIT", "не прочитано"])
        assert app.llm_client.offline_model.calls == calls
        assert app.chat_service.get_session("first").messages == ()
    assert EMPTY in printed
    assert sum(line.startswith("Неизвестная команда:") for line in printed) == 2


def test_a_wrong_decision_is_what_the_console_does_and_a_raising_one_does_not_stop_it(offline_settings):
    def sends_everything(line, session_id, new_session_id):  # a typical mistake: /new goes to the model
        if line.strip() == "boom":
            raise ValueError("сломалось")
        return {"action": "send", "session_id": session_id, "text": line, "notice": None}

    with make_app(offline_settings) as app:
        printed = _run(app, ["boom", "/new"], decide=sends_everything)
        stored = app.chat_service.get_session("first").messages
        assert len(stored) == 2 and "/new" in stored[0]["content"]  # sent to the model, no new session
    assert any(line.startswith("Строка не разобрана (ValueError): сломалось.") for line in printed)


def test_a_failing_function_is_shown_beside_the_course_decision(tmp_path):
    course = course_copy(tmp_path)
    code, lines = with_mistake(course, "console_command", "    command = text.lower()\n", "    command = text\n")
    assert code.implementation == COURSE and "не проходит открытые тесты" in lines[-1]
    assert code("/New", "s-1", lambda: "s-2")["action"] == "new"  # the console keeps the course's rules
    shown: list[str] = []
    assert code.show_mistake("  /New ", "s-1", lambda: "s-2", describe=lambda d: d["action"], out=shown.append)
    assert shown[0].endswith(": unknown") and shown[1] == "  Версия курса на том же примере: new"

    fix_mistake(course, "console_command")
    assert code.refresh() == YOURS
    assert code("/New", "s-1", lambda: "s-2")["session_id"] == "s-2"


def test_chat_your_code_runs_the_students_console_command(tmp_path):
    course = tmp_path / "course"
    course_copy(course)
    (course / "course_lib").rmdir()
    (course / "course_lib").symlink_to(ROOT / "course_lib")
    write_exercise(course, "console_command", (ROOT / "solutions" / "console_command.py").read_text(encoding="utf-8"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLM_", "CHAT_"))}
    env.update(LLM_BACKEND="offline", COURSE_DOTENV="0", PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-m", "course_lib", "chat", "--no-stream", "--your-code"],
                            input="   \n/Exit\nне прочитано\n", capture_output=True, text=True, cwd=course,
                            env=env, timeout=300)  # fmt: skip
    assert result.returncode == 0, result.stderr
    head = result.stdout.split("Окружение:")[0]
    assert "✔ console_command: работает ваша функция console_command" in head
    assert EMPTY in result.stdout and "Поддержка:" not in result.stdout
