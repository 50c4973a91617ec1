"""Notebook 07's prose: numbers come from the code they describe, quizzes and practice are wired."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from course_lib.grading.catalog import EXERCISES
from course_lib.memory import LongTermMemory
from course_lib.memory.facts import MAX_FACTS_PER_EXTRACTION, MAX_VALUE_CHARS
from course_lib.memory.store import PREFIX_CHARS
from course_lib.memory_bench import SCRIPT
from notebook_text import all_output_text, markdown_text, stream_text

ROOT = Path(__file__).resolve().parent.parent
STEM = "07_persistence_and_memory"
NOTEBOOK = ROOT / "notebooks" / f"{STEM}.ipynb"
QUIZ_FILE = ROOT / "course_lib" / "data" / "quizzes" / f"{STEM}.json"
WORDS = {2: "двух", 5: "пяти"}


@pytest.fixture(scope="module")
def cells():
    return nbformat.read(NOTEBOOK, as_version=4).cells


markdown = markdown_text


def cell(cells, cell_id: str):
    return next(c for c in cells if c.get("id") == cell_id)


def index(cells, cell_id: str) -> int:
    return next(i for i, c in enumerate(cells) if c.get("id") == cell_id)


stdout = stream_text


# --- the course's standards --------------------------------------------------------------------


def test_one_spelling_and_one_word_for_summary(cells):
    text = markdown(cells)
    for wrong in ("офлайн модель", "офлайн учебная", "оффлайн", "резюме"):
        assert wrong not in text.lower(), wrong


def test_no_machine_dependent_number_in_prose(cells):
    # Timings are printed by the cells (and masked by the sanitizer), never written in prose.
    assert not re.search(r"\d+[.,]\d+\s?(?:с|мс|сек|ms|s)\b", markdown(cells))


def test_outputs_hold_no_temporary_paths_or_random_ids(cells):
    text = all_output_text(cells)
    assert "/tmp" not in text and "course-07-" not in text
    assert not re.search(r"\b[0-9a-f]{32}\b", text)  # sessions have fixed ids here


def test_no_exercise_solution_in_the_notebook(cells):
    source = "\n".join(c.source for c in cells if c.cell_type == "code")
    for name in ("merge_facts", "select_memories", "build_memory_message"):
        assert f"def {name}(" not in source


# --- prose numbers come from the code or the output beside them -----------------------------------


def test_validation_limits_in_prose_are_the_library_limits(cells):
    text = cell(cells, "nb07-refuse-md").source
    assert f"не длиннее {MAX_VALUE_CHARS} символов" in text
    assert f"не больше\n{MAX_FACTS_PER_EXTRACTION} фактов" in text or f"не больше {MAX_FACTS_PER_EXTRACTION} фактов" in text


def test_memory_budget_in_prose_is_the_default_and_the_output(cells):
    default = LongTermMemory.__dataclass_fields__["memory_token_budget"].default
    assert f"по умолчанию {default} токенов" in cell(cells, "nb07-budget-md").source
    assert f"из {default} токенов" in stdout(cell(cells, "nb07-budget"))


def test_prefix_length_in_prose(cells):
    assert PREFIX_CHARS == 5 and "по первым пяти буквам" in cell(cells, "nb07-recall-md").source


def test_benchmark_story_matches_the_script(cells):
    anna = {step.session for step in SCRIPT if step.user == "anna"}
    boris = {step.session for step in SCRIPT if step.user == "boris"}
    text = cell(cells, "nb07-bench-md").source
    assert f"в {WORDS[len(anna)]} сессиях" in text and f"— в {WORDS[len(boris)]}" in text


def test_the_15_percent_target_is_explained_before_it_is_checked(cells):
    explained = index(cells, "nb07-bench-md")
    checked = index(cells, "nb07-bench")
    assert explained < checked
    assert "не больше 15 %" in cells[explained].source
    assert "added <= 15" in cells[checked].source
    assert "(цель ≤ 15 %)" in stdout(cells[checked])


def test_recall_noise_prose_matches_the_output(cells):
    output = stdout(cell(cells, "nb07-recall"))
    noise = output.split("━━━ Когда придёт курьер за коробкой? ━━━")[1]
    assert "найдено №1: Клиент: Коробка была целой." in noise
    assert "«Коробка была целой»" in cell(cells, "nb07-recall2-md").source


# --- quizzes and practice ---------------------------------------------------------------------


def test_quiz_cells_are_hidden_and_use_every_quiz_once(cells):
    quizzes = json.loads(QUIZ_FILE.read_text(encoding="utf-8"))
    used = []
    for code_cell in cells:
        if "show_quiz(" in code_cell.source and code_cell.cell_type == "code" and code_cell.get("id") != "nb07-setup":
            match = re.fullmatch(rf'show_quiz\("{STEM}", "([a-z0-9-]+)"\)', code_cell.source.strip())
            assert match, code_cell.source
            assert code_cell.metadata.get("jupyter", {}).get("source_hidden") is True
            used.append(match.group(1))
    assert sorted(used) == sorted(quizzes) and len(used) == len(set(used))


def test_practice_links_and_checks_every_exercise_of_07(cells):
    names = [exercise.name for exercise in EXERCISES if exercise.notebook == "07"]
    assert len(names) == 3
    practice, check = cell(cells, "nb07-practice").source, cell(cells, "nb07-check").source
    for name in names:
        assert f"[exercises/{name}.py](../exercises/{name}.py)" in practice
        assert (ROOT / "exercises" / f"{name}.py").is_file()
        assert f'check("{name}")' in check
    headings = [c.source.splitlines()[0] for c in cells if c.cell_type == "markdown"]
    assert headings[-2:] == ["## Итоги", "## Практика"]
