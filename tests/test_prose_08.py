"""Notebook 08's prose: numbers come from the code they describe, the student's functions run the
memory, facts come back after a kernel restart, recall hits show both sides, quizzes, practice and
the hand-in text are wired. Extraction in the background (1.7) and the benchmark (4) moved into
`bonus/08_extraction_and_bench.ipynb` (issue 29): their checks read it (`bonus`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from course_lib.checking.catalog import EXERCISES
from course_lib.memory import LongTermMemory
from course_lib.memory.facts import MAX_FACTS_PER_EXTRACTION, MAX_VALUE_CHARS
from course_lib.memory.store import PREFIX_CHARS
from course_lib.memory_bench import SCRIPT
from notebook_text import all_output_text, cell_by_id, cell_text, hidden_check_cells, index_of, load_cells, markdown_text, stream_text

ROOT = Path(__file__).resolve().parent.parent
STEM = "08_long_term_memory"
NOTEBOOK = ROOT / "notebooks" / f"{STEM}.ipynb"
QUIZ_FILE = ROOT / "course_lib" / "data" / "quizzes" / f"{STEM}.json"
WORDS = {2: "двух", 5: "пяти"}


@pytest.fixture(scope="module")
def cells():
    return nbformat.read(NOTEBOOK, as_version=4).cells


@pytest.fixture(scope="module")
def bonus():
    return load_cells("bonus/08_extraction_and_bench")


cell, index = cell_by_id, index_of


def test_outputs_hold_no_temporary_paths_or_random_ids(cells, bonus):
    text = all_output_text(cells + bonus)
    assert "/tmp" not in text and str(ROOT) not in text
    assert not re.search(r"\b[0-9a-f]{32}\b", text)


def test_no_exercise_solution_in_the_notebook(cells, bonus):
    source = "\n".join(c.source for c in cells + bonus if c.cell_type == "code")
    for name in ("merge_facts", "select_memories", "build_memory_message", "fts_query"):
        assert f"def {name}(" not in source


# --- issue 17: the student's functions run the memory ---------------------------------------------------


def test_the_memory_runs_the_students_functions(cells):
    setup = cell(cells, "nb08-setup").source
    for name in ("merge_facts", "select_memories", "build_memory_message", "fts_query"):
        assert f'{name} = your_code("{name}")' in setup
    chat = cell(cells, "nb08-chat").source
    assert "MergedStore(MemoryStore(path, make_query=search_query(fts_query)), merge_facts)" in chat
    assert "select_memories=select_memories, build_memory_message=build_memory_message" in chat
    assert "choose_memories(" in cell(cells, "nb08-budget").source
    assert "работает версия курса" in cell_text(cell(cells, "nb08-setup"))  # a display in Jupyter


# --- issue 19: facts come back after a kernel restart; handing in at the end of the course --------------


def test_facts_come_back_after_a_kernel_restart(cells):
    assert 'notebook_data_dir("08")' in cell(cells, "nb08-setup").source
    assert "Kernel → Restart" in cell(cells, "nb08-kernel-md").source
    source = cell(cells, "nb08-kernel").source
    assert "from course_lib.memory import MemoryStore" in source and "settings" not in source
    assert "Факты Анны из файла: name=Анна" in stream_text(cell(cells, "nb08-kernel"))
    assert index(cells, "nb08-kernel") < index(cells, "nb08-forget")


def test_the_course_ends_with_how_to_hand_in_and_an_optional_cleanup(cells):
    handin = cell(cells, "nb08-handin").source
    assert "python -m course_lib handin" in handin and "handin.zip" in handin
    assert "exercises/*.py" in handin and "Архив для сдачи:" in handin and "Ещё не решены" in handin
    assert cells[-1].get("id") == "nb08-cleanup" and "Необязательно" in cells[-1].source


def test_handin_text_matches_what_the_command_prints():
    source = (ROOT / "course_lib" / "handin.py").read_text(encoding="utf-8")
    assert 'print(f"Архив для сдачи: {out}' in source
    assert "Ещё не решены (есть raise NotImplementedError): " in source


# --- prose numbers come from the code or the output beside them -----------------------------------------


def test_validation_limits_in_prose_are_the_library_limits(cells):
    text = cell(cells, "nb08-refuse-md").source
    assert f"не длиннее {MAX_VALUE_CHARS} символов" in text
    assert f"не больше\n{MAX_FACTS_PER_EXTRACTION} фактов" in text or f"не больше {MAX_FACTS_PER_EXTRACTION} фактов" in text


def test_memory_budget_in_prose_is_the_default_and_the_output(cells):
    default = LongTermMemory.__dataclass_fields__["memory_token_budget"].default
    assert f"по умолчанию {default} токенов" in cell(cells, "nb08-budget-md").source
    assert f"из {default} токенов" in stream_text(cell(cells, "nb08-budget"))


def test_prefix_length_in_prose(cells):
    assert PREFIX_CHARS == 5 and "по первым пяти буквам" in cell(cells, "nb08-recall-md").source


def test_benchmark_story_matches_the_script(bonus):
    cells = bonus
    anna = {step.session for step in SCRIPT if step.user == "anna"}
    boris = {step.session for step in SCRIPT if step.user == "boris"}
    text = cell(cells, "nb08-bench-md").source
    assert f"в {WORDS[len(anna)]} сессиях" in text and f"— в {WORDS[len(boris)]}" in text


def test_the_15_percent_target_is_explained_before_it_is_checked(bonus):
    cells = bonus
    explained = index(cells, "nb08-bench-md")
    checked = index(cells, "nb08-bench-check")
    assert explained < checked
    assert "не больше 15 %" in cells[explained].source
    assert "added <= 15" in cells[checked].source
    assert "(цель ≤ 15 %)" in stream_text(cell(cells, "nb08-bench"))


# --- issue 18: a recall hit shows both sides; prefix matches are explained ---------------------------


def test_recall_hits_show_both_sides_and_the_prose_matches(cells):
    output = stream_text(cell(cells, "nb08-recall"))
    noise = output.split("━━━ Когда придёт курьер за коробкой? ━━━")[1]
    assert "найдено №1: Клиент: Коробка была целой. / Поддержка:" in noise
    second = next(line for line in noise.splitlines() if "найдено №2" in line)
    customer, support = second.split(" / Поддержка: ")
    assert "короб" not in customer.lower() and "коробка" in support.lower()  # matched on the assistant's side
    prose = cell(cells, "nb08-recall2-md").source
    assert "«Коробка была целой»" in prose and '`"короб"*`' in prose and "«коробкой»" in prose
    assert "ответа поддержки" in prose


# --- issue 22: checks that hold only offline are not asserted on a real model ---------------------------


def test_checks_for_ci_are_hidden_and_model_words_are_checked_only_offline(cells, bonus):
    assert hidden_check_cells(cells) and hidden_check_cells(bonus)
    modes = cell(bonus, "nb08-modes-check").source
    assert "if OFFLINE:\n    assert sync[0]" in modes and "sync[1:] == background[1:]" in modes


# --- quizzes and practice ----------------------------------------------------------------------------


def test_quiz_cells_are_hidden_and_use_every_quiz_once(cells, bonus):
    quizzes = json.loads(QUIZ_FILE.read_text(encoding="utf-8"))
    used = []
    for code_cell in cells + bonus:
        if code_cell.cell_type == "code" and code_cell.source.startswith("show_quiz("):
            match = re.fullmatch(rf'show_quiz\("{STEM}", "([a-z0-9-]+)"\)', code_cell.source.strip())
            assert match, code_cell.source
            assert code_cell.metadata.get("jupyter", {}).get("source_hidden") is True
            used.append(match.group(1))
    assert sorted(used) == sorted(quizzes) and len(used) == len(set(used))


def test_practice_links_and_checks_every_exercise_of_08(cells):
    names = [exercise.name for exercise in EXERCISES if exercise.notebook == "08"]
    assert len(names) == 4
    practice, check = cell(cells, "nb08-practice").source, cell(cells, "nb08-check").source
    for name in names:
        assert f"[exercises/{name}.py](../exercises/{name}.py)" in practice
        assert (ROOT / "exercises" / f"{name}.py").is_file()
        assert f'check("{name}")' in check
    headings = [c.source.splitlines()[0] for c in cells if c.cell_type == "markdown"]
    assert headings[-3:] == ["## Итоги", "## Практика", "## Как сдать работу"]


# --- second read (issue 18): what forget_user deletes, where the article was met ------------------------


def test_forget_prose_says_which_sessions_are_deleted(cells):
    prose = cell(cells, "nb08-forget2-md").source
    assert "в которых он писал" not in prose  # forget_user deletes the sessions the user owns
    assert "сессии, которые он начал" in prose


def test_the_bonus_notebook_keeps_its_files_apart(cells, bonus):
    # Its own folder: notebook 08 empties .course-data/notebook-08/ when its chat starts.
    assert 'notebook_data_dir("08-bonus")' in cell(bonus, "b08-setup").source
    assert 'remove_notebook_data("08-bonus")' in bonus[-1].source and "Необязательно" in bonus[-1].source


def test_the_article_is_cited_as_the_one_from_notebook_04(cells):
    assert "с которой начинался курс" not in markdown_text(cells)
    assert "Статья из ноутбука 04" in cell(cells, "nb08-title").source
