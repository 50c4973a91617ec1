"""Which code answered, always true: a reply carries the implementations its exercises ran (recorded
by the `your_code` stand-ins during that reply), and the chat widget and the context inspector show
that record. A status line shown earlier under a cell is rewritten when the choice changes.

Headless: the real `ChatService` on notebook 04's `ExerciseWindow` (the student's three functions
through `your_code`) in a course folder of the test's own, over a scripted model.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from course_lib import your_code as your_code_module
from course_lib.chat_history import TokenCounter
from course_lib.chat_service import ChatService
from course_lib.checking.catalog import get_exercise
from course_lib.console import print_reply
from course_lib.llm.client import LLMResult
from course_lib.scenarios import COFFEE_DIALOGUE
from course_lib.steps.window import ExerciseWindow
from course_lib.widgets import chat_panel
from course_lib.your_code import COURSE, YOURS, ExerciseCode, recording, used_line

ROOT = Path(__file__).resolve().parents[1]
WINDOW = ("count_message_tokens", "split_into_turns", "select_recent_turns")


class ScriptedLLM:
    def __init__(self) -> None:
        self.calls = 0

    def generate(self, messages):
        self.calls += 1
        prompt = TokenCounter().count_messages(messages)
        return LLMResult(text=f"Ответ №{self.calls}.", finish_reason="stop", model="scripted",
                         response_id=f"r{self.calls}", prompt_tokens=prompt, completion_tokens=5,
                         total_tokens=prompt + 5)


@pytest.fixture()
def course(tmp_path, monkeypatch):
    """A course folder as a student has it (stubs in exercises/), the current directory of the test:
    the window's stand-ins find their files here."""
    course = tmp_path / "course"
    shutil.copytree(ROOT / "exercises", course / "exercises")
    (course / "course_lib").symlink_to(ROOT / "course_lib")
    monkeypatch.chdir(course)
    return course


def save_solution(course: Path, name: str) -> None:
    path = course / "exercises" / f"{name}.py"
    path.write_text((ROOT / "solutions" / f"{name}.py").read_text(encoding="utf-8"), encoding="utf-8")
    stat = path.stat()  # a new mtime even where timestamps are coarse
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def say(panel, text: str) -> None:
    panel.chat.message_box.value = text
    panel.chat.send_button.click()
    assert panel.chat.controller.error is None, panel.chat.controller.error


def test_the_chat_and_the_inspector_name_the_code_of_the_last_reply(course):
    service = ChatService(ScriptedLLM(), ExerciseWindow(TokenCounter(), 300), None)
    panel = chat_panel(service, session_id="coffee")
    assert panel.chat.code_html.value == ""  # nothing answered yet

    say(panel, COFFEE_DIALOGUE[0])
    reply = panel.chat.controller.last_reply
    assert reply.implementations == tuple((name, COURSE) for name in WINDOW)
    line = "Ответ собран: " + ", ".join(f"{name} — версия курса" for name in WINDOW) + "."
    assert panel.chat.controller.code_line == line
    for html in (panel.chat.code_html.value, panel.inspector.html.value):
        assert "Ответ собран" in html and "ваш код" not in html
        assert all(f"<code>{name}</code> — " in html for name in WINDOW)

    save_solution(course, "select_recent_turns")  # saved in the editor: no restart, no cell re-run
    say(panel, COFFEE_DIALOGUE[1])
    reply = panel.chat.controller.last_reply
    assert dict(reply.implementations) == {"count_message_tokens": COURSE, "split_into_turns": COURSE,
                                           "select_recent_turns": YOURS}
    assert panel.chat.controller.code_line.endswith("select_recent_turns — ваш код.")
    for html in (panel.chat.code_html.value, panel.inspector.html.value):
        assert "<code>select_recent_turns</code> — <span class=\"course-impl-yours\"" in html
        assert html.count("версия курса") == 2
    # The metrics under the reply do not repeat it; the console prints it with the reply.
    assert not any(entry.startswith("Ответ собран") for entry in panel.chat.controller.metrics)
    printed: list[str] = []
    print_reply(reply, printed.append)
    assert printed[1] == panel.chat.controller.code_line

    panel.chat.new_dialog_button.click()
    assert panel.chat.code_html.value == ""  # a new dialogue: no last reply to speak for


def test_a_reply_with_no_exercise_says_nothing(offline_settings):
    from course_lib.app import build_chat_app

    with build_chat_app(offline_settings) as app:  # the library's own window: no exercise runs
        reply = app.chat_service.reply("s", "Здравствуйте")
    assert reply.implementations == () and used_line(reply.implementations) is None


def test_records_nest_and_keep_the_order_of_first_use(course):
    code = ExerciseCode(get_exercise("split_into_turns"), course, announce=None)
    other = ExerciseCode(get_exercise("commit_turn"), course, announce=None)
    with recording() as outer:
        other([], "Вопрос", "Ответ")
        with recording() as inner:
            code([])
        code([])
    assert inner == {"split_into_turns": COURSE}
    assert list(outer.items()) == [("commit_turn", COURSE), ("split_into_turns", COURSE)]
    assert code.calls == {YOURS: 0, COURSE: 2} and other.calls == {YOURS: 0, COURSE: 1}


class FakeHandle:
    """IPython's DisplayHandle as far as the stand-in uses it."""

    def __init__(self, text: str) -> None:
        self.text = text

    def update(self, bundle, raw=False):
        assert raw
        self.text = bundle["text/plain"]


def test_a_line_under_a_cell_is_rewritten_when_the_file_changes(course, monkeypatch):
    """In Jupyter a status line is a display the stand-in keeps; after the student saves a fix, the
    next use of the stand-in rewrites the old line (marked as updated) and shows the new one."""
    handles: list[FakeHandle] = []

    def display(bundle, raw=False, display_id=None):
        assert raw and display_id is True
        handles.append(FakeHandle(bundle["text/plain"]))
        return handles[-1]

    monkeypatch.setattr(your_code_module, "_kernel_display", lambda: display)
    code = ExerciseCode(get_exercise("select_recent_turns"), course)  # announce=print: the notebook's voice
    assert [handle.text for handle in handles] == [code.status] and "пока заготовка" in code.status

    save_solution(course, "select_recent_turns")
    code([[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]], [5], 10)

    assert code.implementation == YOURS
    assert handles[0].text == f"{code.status} ⟳ обновлено: файл изменился."  # the old line holds again
    assert handles[-1].text == code.status and code.status.startswith("✔ select_recent_turns")
    assert len(handles) == 2


def test_outside_jupyter_lines_are_printed(course, capsys):
    ExerciseCode(get_exercise("commit_turn"), course)
    assert "↪ commit_turn: в exercises/commit_turn.py пока заготовка" in capsys.readouterr().out
