"""Short errors in notebooks (setup_notebook), check() feedback on the student's own lines, and the
folder that keeps notebook 07's files across a kernel restart."""

from __future__ import annotations

import os
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from course_lib import notebook_errors
from course_lib.chat_service import ChatServiceError
from course_lib.config import SettingsError, load_settings
from course_lib.exercises import format_report, import_time_calls, run_check
from course_lib.llm.errors import LLMAuthenticationError, LLMConnectionError
from course_lib.notebook_tools import notebook_data_dir, remove_notebook_data, setup_notebook

ROOT = Path(__file__).resolve().parents[1]


def chained(outer: BaseException, inner: BaseException) -> BaseException:
    try:
        try:
            raise inner
        except BaseException as error:
            raise outer from error
    except BaseException as error:
        return error


def test_a_chat_turn_that_could_not_reach_the_model_is_a_few_russian_lines() -> None:
    error = chained(ChatServiceError("Не удалось получить ответ модели."),
                    chained(LLMConnectionError("Не удалось подключиться к серверу модели."), OSError("refused")))
    short = notebook_errors.describe(error)
    assert short is not None
    lines = short.lines()
    assert len(lines) <= 8
    assert lines[0].startswith("✘ Ход чата не выполнен")
    assert any("LLMConnectionError" in line for line in lines)
    assert any("LLM_BACKEND=offline" in line for line in lines) and any("doctor --check" in line for line in lines)


def test_each_llm_error_has_its_likely_cause() -> None:
    short = notebook_errors.describe(LLMAuthenticationError("Ключ API не принят (HTTP 401)."))
    assert short is not None and "ключ OPENAI_API_KEY неверный" in "\n".join(short.lines())


def test_settings_errors_name_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHAT_INPUT_TOKEN_BUDGET", "-5")
    monkeypatch.setenv("COURSE_DOTENV", "0")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    text = notebook_errors.render_text(notebook_errors.describe(caught.value))
    assert "Настройки не прочитаны" in text and "CHAT_INPUT_TOKEN_BUDGET" in text
    assert "LLM_BACKEND=offline" not in text  # the offline model would not fix a budget


def test_a_name_error_says_to_run_the_cells_above() -> None:
    try:
        undefined_after_restart  # noqa: F821 - the point of the test
    except NameError as error:
        short = notebook_errors.describe(error)
    assert short is not None and "Run All Above Selected Cell" in notebook_errors.render_text(short)
    assert "undefined_after_restart" in short.title


def test_other_errors_keep_the_usual_traceback() -> None:
    assert notebook_errors.describe(ZeroDivisionError("division by zero")) is None


class FakeShell:
    """What the handler needs from IPython's shell."""

    def __init__(self) -> None:
        self.handler = None
        self.shown: list = []
        self.displayhook = SimpleNamespace(exec_result=SimpleNamespace(execution_count=None))

    @property
    def execution_count(self) -> int | None:  # the running cell's [N], as IPython's result has it
        return self.displayhook.exec_result.execution_count

    @execution_count.setter
    def execution_count(self, number: int) -> None:
        self.displayhook.exec_result.execution_count = number

    def set_custom_exc(self, exc_tuple, handler) -> None:
        assert exc_tuple == (Exception,)
        self.handler = handler

    def showtraceback(self, exc_tuple, tb_offset=None) -> None:
        self.shown.append(exc_tuple[0])


def test_the_handler_shows_html_with_the_traceback_collapsed(monkeypatch: pytest.MonkeyPatch) -> None:
    displayed = []
    monkeypatch.setattr("IPython.display.display", lambda data, raw=False: displayed.append(data))
    shell = FakeShell()
    assert notebook_errors.install(shell)
    other = ValueError("x")  # before any course error: the usual traceback
    shell.handler(shell, ValueError, other, None)
    assert shell.shown == [ValueError] and displayed == []
    error = chained(LLMConnectionError("Не удалось подключиться."), OSError("refused"))
    assert shell.handler(shell, type(error), error, error.__traceback__) == []
    (data,) = displayed
    assert data["text/plain"].count("\n") < 15
    assert "<details" in data["text/html"] and "<summary" in data["text/html"] and "OSError" in data["text/html"]


def test_errors_after_the_first_stop_are_explained_as_its_consequences(monkeypatch: pytest.MonkeyPatch) -> None:
    displayed = []
    monkeypatch.setattr("IPython.display.display", lambda data, raw=False: displayed.append(data))
    shell = FakeShell()
    notebook_errors.install(shell)
    shell.execution_count = 7
    cut = ChatServiceError("Ответ модели не завершён: ограничение длины (finish_reason=length).")
    shell.handler(shell, type(cut), cut, None)
    shell.execution_count = 8
    try:
        first, second = ["единственный ответ"]  # what 01 did after a failed second turn
    except ValueError as error:
        shell.handler(shell, ValueError, error, error.__traceback__)
    shell.execution_count = 9
    shell.handler(shell, ZeroDivisionError, ZeroDivisionError("division by zero"), None)
    assert shell.shown == []  # no raw traceback after the first stop
    first_stop, unpacking, division = (data["text/plain"] for data in displayed)
    assert "MAX_OUTPUT_TOKENS" in first_stop
    for text in (unpacking, division):
        assert "следствие ошибки в ячейке [7]" in text and "ограничение длины" in text
        assert "Run All Cells" in text
    assert unpacking.startswith("✘ ValueError: ") and division.startswith("✘ ZeroDivisionError: ")
    # A later course error is shown as itself, and the first stop stays the first.
    timeout = LLMConnectionError("нет связи")
    shell.handler(shell, type(timeout), timeout, None)
    assert displayed[-1]["text/plain"].startswith("✘ Запрос к модели не удался")
    shell.handler(shell, KeyError, KeyError("summary"), None)
    assert "ячейке [7]" in displayed[-1]["text/plain"]


def test_setup_notebook_starts_each_run_with_no_first_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("IPython.display.display", lambda data, raw=False: None)
    shell = FakeShell()
    notebook_errors.install(shell)
    cut = LLMConnectionError("нет связи")
    shell.handler(shell, type(cut), cut, None)
    notebook_errors.install(shell)  # Run All runs the first cell again: the old stop is forgotten
    shell.handler(shell, ZeroDivisionError, ZeroDivisionError("division by zero"), None)
    assert shell.shown == [ZeroDivisionError]


def test_the_key_never_reaches_the_short_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "fake-key-should-not-show-1234")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("COURSE_DOTENV", "0")
    text = notebook_errors.render_text(notebook_errors.describe(LLMConnectionError("нет связи")))
    assert "127.0.0.1:9" in text and "fake-key-should-not-show" not in text


def test_setup_notebook_is_silent_outside_ipython() -> None:
    assert setup_notebook() is None


# --- check(): the student's line, and import-time input()/print() -------------------------------

def write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "split_into_turns.py").write_text(text, encoding="utf-8")
    return folder


SOLUTION = (ROOT / "solutions" / "split_into_turns.py").read_text(encoding="utf-8")


def test_an_exception_in_the_students_code_shows_the_line(tmp_path: Path) -> None:
    source = SOLUTION.replace("    turns = []\n", "    turns = []\n    counts = {}\n    counts['x'] += 1\n")
    folder = write(tmp_path / "ex", source)
    report = format_report(run_check("split_into_turns", folder=folder), source=source)
    number = source.splitlines().index("    counts['x'] += 1") + 1
    assert f"KeyError: 'x' (строка {number} вашего файла)" in report
    assert f"строка {number}: counts['x'] += 1" in report


def test_input_and_print_at_import_time_are_explained(tmp_path: Path) -> None:
    source = 'name = input("Имя: ")\nprint("загружено")\n' + SOLUTION
    folder = write(tmp_path / "ex", source)
    report = format_report(run_check("split_into_turns", folder=folder), source=source)
    assert "(строка 1 вашего файла)" in report
    assert "input() на верхнем уровне файла (строка 1)" in report and "EOFError" in report
    assert "print() на верхнем уровне файла (строка 2)" in report


def test_calls_inside_functions_or_the_main_guard_are_fine() -> None:
    source = (
        "def f():\n    print('ok')\n    return input()\n"
        "class C:\n    def m(self):\n        print(1)\n"
        "if __name__ == '__main__':\n    print(f())\nelse:\n    print('imported')\n"
    )
    assert import_time_calls(source) == [("print", 10)]
    assert import_time_calls("def broken(:\n") == []


def test_a_faked_traceback_cannot_break_the_report(tmp_path: Path) -> None:
    source = SOLUTION + (
        "\nclass Sneaky(Exception):\n    @property\n    def __traceback__(self):\n        return 42\n"
        "\ndef split_into_turns(history):\n    raise Sneaky('x')\n"
    )
    folder = write(tmp_path / "ex", source)
    report = format_report(run_check("split_into_turns", folder=folder), source=source)
    assert "Sneaky: x" in report and not re.search(r"строка \d+ вашего файла\)", report.split("Sneaky: x")[1][:30])


# --- notebook 07: files that outlive the kernel -------------------------------------------------

def test_notebook_data_dir_survives_and_cleans_up(tmp_path: Path) -> None:
    folder = notebook_data_dir("07", root=tmp_path)
    assert folder == tmp_path / "notebook-07" and folder.is_dir()
    (folder / "sessions.sqlite3").write_bytes(b"x")
    assert notebook_data_dir("07", root=tmp_path) == folder and (folder / "sessions.sqlite3").exists()
    assert remove_notebook_data("07", root=tmp_path) == 1 and not folder.exists()
    for bad in ("", "../x", "a/b", "07 "):
        with pytest.raises(ValueError):
            notebook_data_dir(bad, root=tmp_path)
    assert not any(tmp_path.iterdir())


def test_the_default_data_root_is_the_ignored_course_data_folder() -> None:
    from course_lib.notebook_tools import DATA_ROOT

    assert DATA_ROOT == ROOT / ".course-data"
    assert ".course-data/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert os.path.basename(DATA_ROOT).startswith(".")  # hidden in Lab's file browser


def test_a_reply_cut_at_the_length_limit_names_max_output_tokens() -> None:
    # SmolLM2 on llama.cpp rambles until MAX_OUTPUT_TOKENS: the notebook must say what to change.
    from course_lib.chat_service import ChatServiceError

    short = notebook_errors.describe(ChatServiceError("Ответ остановлен из-за ограничения длины."))
    assert short is not None
    text = "\n".join(short.lines())
    assert "MAX_OUTPUT_TOKENS" in text and "LLM_BACKEND=offline" in text
    assert len(short.lines()) <= 15


def test_an_extraction_a_small_model_cannot_do_says_what_to_do() -> None:
    from course_lib.memory.facts import MemoryExtractionError

    short = notebook_errors.describe(MemoryExtractionError("Ответ модели — не JSON: Expecting value."))
    assert short is not None
    text = "\n".join(short.lines())
    assert "JSON" in text and "LLM_BACKEND=offline" in text and len(short.lines()) <= 15


def test_a_model_failure_a_cell_caught_explains_the_check_that_fails_later(monkeypatch: pytest.MonkeyPatch) -> None:
    """03's console prints «Ошибка чата: …» and goes on; the check below must not be a bare assert."""
    from course_lib.llm import trouble

    displayed = []
    monkeypatch.setattr("IPython.display.display", lambda data, raw=False: displayed.append(data))
    shell = FakeShell()
    notebook_errors.install(shell)
    trouble.note_cut_reply("length")  # what LLMClient notes for a real model's cut reply
    shell.execution_count = 12
    shell.handler(shell, AssertionError, AssertionError(), None)
    (text,) = (data["text/plain"] for data in displayed)
    assert text.startswith("✘ AssertionError\n")
    assert "следствие сбоя модели" in text and "поймала ошибку" in text
    assert "MAX_OUTPUT_TOKENS" in text and "Run All Cells" in text
    notebook_errors.install(shell)  # Run All again: the note is gone with the first stop
    assert trouble.first() is None


def test_only_a_real_model_leaves_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    """The offline model's faults are the lessons' own: they must never colour later errors."""
    from course_lib.llm import trouble
    from course_lib.llm.client import LLMClient
    from course_lib.llm.errors import LLMTimeoutError

    monkeypatch.setenv("COURSE_DOTENV", "0")
    monkeypatch.setenv("LLM_BACKEND", "offline")
    trouble.forget()
    client = LLMClient(load_settings())
    client.offline_model.schedule_fault("timeout")
    with pytest.raises(LLMTimeoutError):
        client.generate([{"role": "user", "content": "Здравствуйте."}])
    client.offline_model.schedule_fault("truncated")
    assert client.generate([{"role": "user", "content": "Здравствуйте."}]).finish_reason == "length"
    assert trouble.first() is None
