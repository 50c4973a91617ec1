"""Notebook 01's prose stays true (issue 9).

- the key moment (the stateless model does not understand "8041.") comes within the first ten cells;
- seed 002's monitor-7718 pair is sent as independent requests in a cell that runs, not a "try it" line;
- the quiz distractor "the provider stores it and finds it by response_id" never comes back, and a short
  contrast of client-side history with server-side conversation state is there;
- 01's one graded exercise is check_reply, the reply check validate_reply runs (build_chat_messages
  belongs to 02, where history is taught);
- prose numbers agree with the outputs next to them; one spelling.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from notebook_text import cell_text, markdown_text

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "01_stateless_call.ipynb"
QUIZZES = ROOT / "course_lib" / "data" / "quizzes" / "01_stateless_call.json"
MONITOR_LINES = ("Монитор пришёл с треснутой подставкой.", "Номер заказа 7718.")  # seed 002, step 2


@pytest.fixture(scope="module")
def notebook():
    return nbformat.read(NOTEBOOK, as_version=4)


@pytest.fixture(scope="module")
def quizzes():
    return json.loads(QUIZZES.read_text(encoding="utf-8"))


markdown = markdown_text


output_text = cell_text


def code_cells_with(notebook, needle: str) -> list[tuple[int, dict]]:
    return [(i, c) for i, c in enumerate(notebook.cells) if c.cell_type == "code" and needle in c.source]


# --- issue 9 §3: the key moment early -----------------------------------------------------------

def test_the_key_moment_comes_within_the_first_ten_cells(notebook):
    found = [
        (index, cell) for index, cell in enumerate(notebook.cells[:10])
        if cell.cell_type == "code" and '{"role": "user", "content": "8041."}' in cell.source
    ]
    assert found, "no cell among the first ten sends «8041.» as a request of its own"
    index, cell = found[0]
    check = notebook.cells[index + 1]
    assert 'assert "Кофемашина" not in str(second_request)' in check.source
    assert check.metadata.get("jupyter", {}).get("source_hidden") is True
    shown = output_text(cell)
    assert "user → 8041." in shown
    assert "не понимаю" in shown  # the stored output is the offline model's (make notebooks)
    explained = "\n".join(c.source for c in notebook.cells[index + 1 : 10] if c.cell_type == "markdown")
    assert "stateless" in explained


# --- seed 002, step 2: the monitor-7718 sequence as a run ----------------------------------------

def test_the_monitor_sequence_is_run_as_independent_requests(notebook):
    cells = code_cells_with(notebook, "MONITOR_LINES")
    assert cells, "no cell runs the monitor-7718 sequence"
    _, cell = cells[0]
    for line in MONITOR_LINES:
        assert line in cell.source
        assert f"Вы: {line}" in output_text(cell)
    assert "StatelessChatService(llm_client)" in cell.source
    check = notebook.cells[notebook.cells.index(cell) + 1]
    assert 'assert "Монитор" not in str(monitor_second.request_messages)' in check.source
    assert "о каком товаре" in output_text(cell)


def test_no_try_it_line_stands_in_for_the_run(notebook):
    assert "Пара реплик из урока" not in markdown(notebook)
    assert "Номер заказа 7718" not in markdown(notebook)


# --- issue 9 §2: the response_id distractor and the client/server contrast -----------------------

def all_options(quizzes):
    return [option for quiz in quizzes.values() for option in quiz["options"]]


def test_the_stateful_api_distractor_never_comes_back(quizzes, notebook):
    texts = [option["text"] for option in all_options(quizzes)] + [markdown(notebook)]
    for text in texts:
        assert "находит по response_id" not in text
        assert not re.search(r"провайдер\w*\s+хранит", text, re.IGNORECASE), text


def test_every_wrong_option_that_mentions_an_id_is_wrong_for_chat_completions(quizzes):
    for option in all_options(quizzes):
        if not option["correct"] and "response_id" in option["text"]:
            assert "Chat Completions" in option["text"], option["text"]
            assert "previous_response_id" in option["why"], option["why"]


def test_client_side_and_server_side_history_are_contrasted(notebook, quizzes):
    sections = [c.source for c in notebook.cells if c.cell_type == "markdown" and "previous_response_id" in c.source]
    assert len(sections) == 1, "one short section contrasts the two designs"
    section = sections[0]
    for aspect in ("контроль", "переносимость", "приватность", "обрез", "токен"):
        assert aspect in section.lower(), aspect
    assert "Conversations" in section and "Chat Completions" in section
    assert "client-vs-server-history" in quizzes


# --- exercises: build_chat_messages moved to 02; check_reply is 01's (issue 29) --------------------

def test_01_practises_check_reply_and_points_to_02(notebook):
    # 01 has a fill-in cell (build_messages) and one graded exercise, check_reply; the next are in 02.
    sources = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    assert set(re.findall(r"""\bcheck\(\s*["'](\w+)["']""", sources)) == {"check_reply"}
    assert notebook.cells[-1].source.endswith('check("check_reply")')
    practice = next(c.source for c in notebook.cells if c.cell_type == "markdown" and "## Практика" in c.source)
    assert "[exercises/check_reply.py](../exercises/check_reply.py)" in practice
    assert "[exercises/build_chat_messages.py](../exercises/build_chat_messages.py)" in practice
    assert "02" in practice
    assert (ROOT / "exercises" / "build_chat_messages.py").is_file()


def test_validate_reply_runs_the_students_check_reply(notebook):
    (_, cell), = code_cells_with(notebook, "def validate_reply(")
    assert 'check_reply = your_code("check_reply")' in cell.source
    assert "return check_reply(result.text, result.finish_reason)" in cell.source
    assert "работает версия курса" in output_text(cell)  # the stub of a fresh bundle
    (_, demo), = code_cells_with(notebook, 'for fault in ("truncated", "empty"):')
    assert "check_reply.show_mistake(raw.text, raw.finish_reason" in demo.source
    section = next(c.source for c in notebook.cells if c.cell_type == "markdown" and "### 4.3." in c.source)
    for name in ("CutOffReply", "BlockedReply", "EmptyReply", "ReplyError", "content_filter"):
        assert name in section, name


def test_notebook_ends_with_recap_and_practice(notebook):
    headings = re.findall(r"^## (.+)$", markdown(notebook), re.MULTILINE)
    assert headings[-2:] == ["Итоги", "Практика"]


# --- helpers written once ------------------------------------------------------------------------

@pytest.mark.parametrize("definition", [
    "class ChatServiceError", "class ChatReply", "def validate_reply", "def requests_table",
    "def build_messages", "def course_build_messages", "class StatelessChatService",
])
def test_each_helper_is_written_once(notebook, definition):
    assert len(code_cells_with(notebook, definition)) == 1


# --- prose numbers against outputs ---------------------------------------------------------------

def test_the_output_limit_in_prose_is_the_one_in_the_output(notebook):
    prose = re.search(r"пределом в (\d+) токен", markdown(notebook))
    assert prose
    (_, cell), = code_cells_with(notebook, "tiny_client = LLMClient(")
    assert f'"max_output_tokens": {prose.group(1)}' in cell.source
    assert f"completion_tokens={prose.group(1)}," in output_text(cell)


def test_prompt_tokens_do_not_grow_as_the_prose_says(notebook):
    assert "`prompt_tokens` не растёт" in markdown(notebook)
    (_, cell), = code_cells_with(notebook, 'scripted("Кофемашина не включается.", "8041.", "/exit")')
    first, second = (int(n) for n in re.findall(r"запрос \d: сообщений 2, prompt_tokens (\d+)", output_text(cell)))
    assert second <= first


BAD_SPELLINGS = [r"офлайн модел", r"офлайн учебн", r"оффлайн", r"офлайн клиент", r"\bрезюме\b", r"\bурок"]


@pytest.mark.parametrize("pattern", BAD_SPELLINGS)
def test_one_spelling(notebook, quizzes, pattern):
    text = markdown(notebook) + "\n" + json.dumps(quizzes, ensure_ascii=False)
    assert not re.search(pattern, text, re.IGNORECASE), pattern


# --- issue 17: the messages list of a stateless call is the student's fill-in ---------------------

def test_build_messages_is_a_fill_in_with_a_check_and_a_collapsed_reference(notebook):
    (stub_index, stub), = code_cells_with(notebook, "def build_messages(")
    assert 'raise NotImplementedError("Заполните build_messages")' in stub.source
    check = notebook.cells[stub_index + 1]
    assert "build_messages = try_fill_in(build_messages," in check.source
    assert "ячейка ещё не заполнена" in output_text(check)  # what a fresh bundle shows
    (_, reference), = code_cells_with(notebook, "def course_build_messages(")
    assert reference.metadata["jupyter"]["source_hidden"] is True
    assert "Версия курса" in notebook.cells[notebook.cells.index(reference) - 1].source


# --- issue 18: the privacy row and the third option -----------------------------------------------

def test_privacy_row_says_requests_still_reach_the_provider(notebook):
    section = next(c.source for c in notebook.cells if c.cell_type == "markdown" and "previous_response_id" in c.source)
    assert "переписка лежит там, где решили вы, и удаляется, когда решили вы" not in section
    row = next(line for line in section.splitlines() if line.startswith("| приватность"))
    assert "уходит провайдеру" in row and "злоупотреблений" in row and "zero data retention" in row
    assert "compaction" in section and "Responses API" in section  # server-side compaction: a third option


# --- issue 22: one chat error does not cascade ----------------------------------------------------

def test_no_unpacking_that_cascades_after_one_chat_error(notebook):
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    assert not re.search(r"^\w+, \w+ = (replies|monitor_replies)\s*$", code, re.MULTILINE)
    assert "if len(replies) < 2:" in code


# --- second review (issue 18): one meaning for «клиент», no project the student does not have ---

def test_client_means_the_customer_and_there_is_no_foreign_project(notebook):
    text = markdown(notebook)
    assert "техническую ошибку клиента" not in text  # LLMClient is not «клиент»
    assert "Реплика клиента уходит" not in text  # glossary: «сообщение»
    assert "В вашем проекте" not in text  # students have no app/prompts of their own


def test_the_library_comparison_is_checked_in_a_collapsed_cell(notebook):
    # It moved into the bonus notebook, which the lesson links where the section was (issue 29).
    bonus = nbformat.read(ROOT / "notebooks" / "bonus" / "01_course_lib_service.ipynb", as_version=4)
    assert "(bonus/01_course_lib_service.ipynb)" in markdown(notebook)
    index = next(i for i, c in enumerate(bonus.cells)
                 if c.cell_type == "code" and "build_chat_app(offline_settings)" in c.source)
    assert "assert " not in bonus.cells[index].source
    check = bonus.cells[index + 1]
    assert check.metadata.get("jupyter", {}).get("source_hidden") is True
    assert 'build_messages("8041.")[1]' in check.source
