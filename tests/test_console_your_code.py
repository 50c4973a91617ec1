"""`python -m course_lib chat --your-code`: the console's history window runs the student's three
functions from notebook 04, says which implementation runs for each, and falls back to the course's
version for a function that fails its public cases (issue 29)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TURNS = ["Привет, заказ 8041, кофемашина не включается.", "Напомните номер заказа.", "/exit"]


def _course(tmp_path: Path) -> Path:
    """A course folder as a student has it: exercises/ of their own, the course's library."""
    course = tmp_path / "course"
    shutil.copytree(ROOT / "exercises", course / "exercises")
    (course / "course_lib").symlink_to(ROOT / "course_lib")
    return course


def _chat(course: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLM_", "CHAT_"))}
    env.update(LLM_BACKEND="offline", COURSE_DOTENV="0", CHAT_INPUT_TOKEN_BUDGET="300", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "course_lib", "chat", "--no-stream", *args],
                          input="\n".join(TURNS) + "\n", capture_output=True, text=True, cwd=course,
                          env=env, timeout=300)  # fmt: skip


def _figures(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(("Сообщений истории", "Оценка входных"))]


def test_the_window_runs_the_students_functions_and_names_each(tmp_path):
    course = _course(tmp_path)
    for name in ("count_message_tokens", "split_into_turns"):
        shutil.copyfile(ROOT / "solutions" / f"{name}.py", course / "exercises" / f"{name}.py")
    wrong = (ROOT / "solutions" / "select_recent_turns.py").read_text(encoding="utf-8").replace(
        "            break", "            continue", 1)  # the typical mistake: a window with gaps
    (course / "exercises" / "select_recent_turns.py").write_text(wrong, encoding="utf-8")
    result = _chat(course, "--your-code")
    assert result.returncode == 0, result.stderr
    head = result.stdout.split("Окружение:")[0]
    assert "работает ваша функция count_message_tokens" in head
    assert "работает ваша функция split_into_turns" in head
    assert "select_recent_turns пока не проходит открытые тесты (6 из 7) — работает версия курса" in head
    # The same figures as the course's own window: the student's two functions count the same.
    plain = _chat(course)
    assert plain.returncode == 0 and "Окно истории" not in plain.stdout
    assert _figures(result.stdout) == _figures(plain.stdout) and _figures(plain.stdout)


def test_your_code_and_tool_memory_are_refused_together():
    from course_lib.console import parse_args

    try:
        parse_args(["--your-code", "--memory", "tools", "--user", "anna", "--store", "x.db"])
    except SystemExit as stop:
        assert stop.code == 2
    else:
        raise AssertionError("--your-code with --memory tools must be a usage error")
