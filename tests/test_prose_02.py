"""Notebook 02 (one history): what its prose and structure promise stays true.

Checks the second edition's items (issue 9): the `build_chat_messages` exercise sits here, after
history is introduced; seed 003's "Меня зовут Вася" demonstration asserts on the request; the
taught classes are the ones `course_lib.steps.single_history` holds; quizzes come from the data file;
the service checks its history with the exercise `validate_history` before every request (issue 29).
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import nbformat
import pytest

from course_lib.steps import single_history
from notebook_text import cell_text
from test_steps_match_notebooks import without_docstrings

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "02_single_history.ipynb"
QUIZ_FILE = ROOT / "course_lib" / "data" / "quizzes" / "02_single_history.json"


@pytest.fixture(scope="module")
def cells():
    return nbformat.read(NOTEBOOK, as_version=4).cells


def normalized(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip("\n").splitlines())


text_output = cell_text


def heading_index(cells, heading: str) -> int:
    return next(i for i, c in enumerate(cells) if c.cell_type == "markdown" and heading in c.source)


def same_code(first: str, second: str) -> bool:
    # Syntax trees without docstrings: the cell may carry Russian comments and docstrings.
    return without_docstrings(first) == without_docstrings(second)


@pytest.mark.parametrize("name", ["HistoryReply", "SingleHistoryChatService"])
def test_taught_class_is_the_module_code(cells, name):
    module_source = inspect.getsource(getattr(single_history, name))
    matches = [c for c in cells if c.cell_type == "code" and c.source.lstrip().startswith(("class", "@"))
               and same_code(c.source, module_source)]
    assert len(matches) == 1, f"02 must show {name} exactly as course_lib/steps/single_history.py holds it"


def test_notebook_01_helpers_are_imported_not_retyped(cells):
    code = "\n".join(c.source for c in cells if c.cell_type == "code")
    assert "from course_lib.steps.common import" in code
    for name in ("ChatServiceError", "ChatReply", "validate_reply", "requests_table"):
        assert not re.search(rf"^(class|def) {name}\b", code, re.MULTILINE), f"{name} is retyped in 02"


def test_vasya_demonstration_asserts_on_the_request(cells):
    demo = next(c for c in cells if c.cell_type == "code" and "Меня зовут Вася." in c.source)
    shown, check = cells[cells.index(demo) + 1], cells[cells.index(demo) + 2]
    assert "Как меня зовут?" in demo.source and "StatelessChatService" in demo.source
    assert "без истории False | с историей True" in text_output(shown)
    assert check.metadata.get("jupyter", {}).get("source_hidden") is True  # the CI check is collapsed
    assert '"Вася" not in str(without_history)' in check.source
    assert 'if llm_client.backend == "offline":' in check.source  # wording pinned only offline


def test_exercises_are_linked_and_checked_in_practice(cells):
    practice = heading_index(cells, "## Практика")
    assert practice > heading_index(cells, "## Итоги")
    text = cells[practice].source
    for name in ("build_chat_messages", "commit_turn", "validate_history"):
        assert f"[exercises/{name}.py](../exercises/{name}.py)" in text
        assert (ROOT / "exercises" / f"{name}.py").is_file()
        checks = [i for i, c in enumerate(cells) if c.cell_type == "code" and f'check("{name}")' in c.source]
        assert checks and min(checks) > practice, f'check("{name}") must run in «Практика»'
    # History is introduced (the class) before the exercise that builds a request with history.
    class_cell = next(i for i, c in enumerate(cells) if "class SingleHistoryChatService" in c.source)
    assert class_cell < practice
    assert "ноутбука 01" not in text  # build_chat_messages now belongs to 02


def test_quiz_cells_only_show_quizzes_from_the_data_file(cells):
    quizzes = json.loads(QUIZ_FILE.read_text(encoding="utf-8"))
    # Seed 002 steps 6-8.
    assert {"staged-history", "request-with-history-rules", "when-to-commit-turn"} <= set(quizzes)
    shown = []
    for cell in cells:
        if cell.cell_type != "code" or "show_quiz(" not in cell.source:
            continue
        assert cell.metadata.get("jupyter", {}).get("source_hidden") is True
        lines = [line for line in cell.source.splitlines() if line.strip()]
        assert all(line.startswith(("show_quiz(", "from course_lib.quizzes import show_quiz")) for line in lines)
        shown += re.findall(r'show_quiz\("02_single_history", "([a-z0-9-]+)"\)', cell.source)
    assert sorted(shown) == sorted(quizzes)
    assert not any("Quiz(" in c.source.replace("show_quiz(", "") for c in cells)


def test_one_spelling_and_no_unseen_lessons(cells):
    prose = "\n".join(c.source for c in cells)
    assert not re.search(r"офлайн\s+модел|оффлайн|офлайн учебн", prose, re.IGNORECASE)
    assert "резюме" not in prose.lower()
    assert not re.search(r"\bурок", prose, re.IGNORECASE)


# --- issue 17: the student's code runs the service ----------------------------------------------

def test_the_service_runs_the_students_functions(cells):
    setup = next(c for c in cells if c.cell_type == "code" and "your_code(" in c.source)
    assert 'build_chat_messages = your_code("build_chat_messages")' in setup.source
    assert 'commit_turn = your_code("commit_turn")' in setup.source
    assert 'validate_history = your_code("validate_history")' in setup.source
    shown = text_output(setup)
    assert shown.count("↪") == 3 and all(name in shown for name in ("build_chat_messages", "commit_turn",
                                                                    "validate_history"))  # one line each
    service = next(c for c in cells if c.cell_type == "code" and "class SingleHistoryChatService" in c.source)
    assert "build_chat_messages(" in service.source and "save_validated_turn(" in service.source
    # The history is checked before the request is built, and a refusal becomes the chat's error.
    assert service.source.index("validate_history(self._history)") < service.source.index("build_chat_messages(")


def test_a_half_saved_turn_is_refused_before_the_request(cells):
    demo = next(i for i, c in enumerate(cells) if c.cell_type == "code" and "broken._history.extend(eager_history)" in c.source)
    assert cells[demo - 1].cell_type == "markdown" and "validate_history" in cells[demo - 1].source
    assert "validate_history.show_mistake(eager_history" in cells[demo].source
    shown = text_output(cells[demo])
    assert "История повреждена, запрос не отправлен. Сообщение №3: ход сохранён наполовину" in shown
    assert "Запросов к модели: 0 | история прежняя: True" in shown
    check = cells[demo + 1]
    assert check.metadata.get("jupyter", {}).get("source_hidden") is True
    assert "assert offline_model.calls == calls_before" in check.source
    assert cells[demo + 2].source.startswith("## 7.")


def test_the_commit_after_a_validated_reply_is_a_fill_in(cells):
    stub = next(i for i, c in enumerate(cells) if c.cell_type == "code" and "def save_validated_turn(" in c.source)
    assert 'raise NotImplementedError("Заполните save_validated_turn")' in cells[stub].source
    check = cells[stub + 1]
    assert "save_validated_turn = try_fill_in(save_validated_turn," in check.source
    assert "UntouchableHistory()" in check.source  # saving before the check fails the fill-in
    assert "ячейка ещё не заполнена" in text_output(check)


# --- issue 18 ---------------------------------------------------------------------------------------

def test_kw_only_is_not_said_to_cover_inherited_fields(cells):
    prose = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    assert "значит, что объект создаётся\nтолько с именованными аргументами" not in prose
    assert not re.search(r"kw_only=True` значит, что объект создаётся\s+только с именованными", prose)
    assert "унаследованные от `ChatReply`" in prose


def test_02_does_not_repeat_a_quiz_question_of_01(cells):
    ours = json.loads(QUIZ_FILE.read_text(encoding="utf-8"))
    theirs = json.loads((ROOT / "course_lib" / "data" / "quizzes" / "01_stateless_call.json").read_text(encoding="utf-8"))

    def words(text):
        return set(re.findall(r"\w{4,}", text.lower()))

    for quiz in ours.values():
        for other in theirs.values():
            shared = words(quiz["question"]) & words(other["question"])
            assert len(shared) < 0.5 * min(len(words(quiz["question"])), len(words(other["question"]))), quiz["question"]


def test_practice_says_how_to_hand_in(cells):
    practice = cells[heading_index(cells, "## Практика")].source
    assert "python -m course_lib handin" in practice and "handin.zip" in practice and "exercises/*.py" in practice


# --- second review (issue 18): agreement and CI checks out of the teaching cells -------------

def _prose(cells) -> str:
    return "\n".join(cell.source for cell in cells if cell.cell_type == "markdown")


def test_fixed_agreement_does_not_come_back(cells):
    prose = _prose(cells)
    assert "поэтому оно передаётся как данные" not in prose
    assert "одна из них без ответа" not in prose
    assert "упрётся в предел контекста" not in prose  # glossary: «контекстное окно модели»


def test_the_library_cell_prints_and_the_collapsed_cell_checks(cells):
    index = next(i for i, c in enumerate(cells) if c.cell_type == "code" and "build_chat_app(offline_settings)" in c.source)
    assert "assert " not in cells[index].source
    assert "Сообщений в истории после сбоя: 2" in text_output(cells[index])
    check = cells[index + 1]
    assert check.metadata.get("jupyter", {}).get("source_hidden") is True and "assert after_fault == 2" in check.source
