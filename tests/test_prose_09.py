"""Notebook 09's prose: the numbers it states come from the code, the student's functions drive the
tool chat, the measured comparison is labelled with the model that produced it, and the practice
and hand-in are wired (the quizzes: tests/test_quizzes.py, for every notebook)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from course_lib.checking.catalog import EXERCISES
from course_lib.russian import plural
from course_lib.tool_memory.agent import MAX_STEPS, TIMES
from notebook_text import all_output_text, cell_by_id, hidden_check_cells, markdown_text

ROOT = Path(__file__).resolve().parent.parent
STEM = "09_tool_memory"
NOTEBOOK = ROOT / "notebooks" / f"{STEM}.ipynb"


@pytest.fixture(scope="module")
def cells():
    return nbformat.read(NOTEBOOK, as_version=4).cells


def _code(cells) -> str:
    return "\n".join(cell.source for cell in cells if cell.cell_type == "code")


def test_outputs_hold_no_temporary_paths_or_random_ids(cells):
    text = all_output_text(cells)
    assert "/tmp" not in text and str(ROOT) not in text
    assert not re.search(r"\b[0-9a-f]{32}\b", text)


def test_the_chat_runs_every_exercise_and_the_fill_in_of_09(cells):
    code = _code(cells)
    names = [exercise.name for exercise in EXERCISES if exercise.notebook == "09"]
    assert names == ["group_tool_exchanges", "run_tool_calls", "edit_core_memory", "run_tool_loop"]
    for name in names:
        assert f'{name} = your_code("{name}")' in code
        assert f"{name}={name}" in code  # passed into ToolMemoryChat, not only shown
    assert "add_exchange=add_exchange" in code and "try_fill_in(add_exchange" in code


def test_the_numbers_in_the_prose_are_the_codes(cells):
    prose, code = markdown_text(cells), _code(cells)
    limit = re.search(r'LIMITS = \{"клиент": (\d+)', code).group(1)
    assert f"нарочно маленький — {limit} символов" in prose
    assert f"после `MAX_STEPS` кругов" in prose
    assert f"Модель вызывала инструменты {plural(MAX_STEPS, TIMES)} подряд" in all_output_text(cells)


def test_the_comparison_names_the_model_that_produced_it(cells):
    prose = markdown_text(cells)
    assert "отвечает офлайн-модель — цифры про её правила" in prose
    assert "Её нужно измерять заново" in " ".join(prose.split())
    assert "Qwen2.5-Coder-0.5B" in prose  # the real-model claim names the model that was measured
    assert "bench memory" in prose


def test_every_claim_with_a_model_dependent_figure_has_a_hidden_check(cells):
    checks = hidden_check_cells(cells)
    assert len(checks) >= 8
    for check in checks:
        assert check.source.startswith("# Проверка для CI")


def test_practice_links_and_checks_every_exercise_and_the_hand_in_is_last(cells):
    names = [exercise.name for exercise in EXERCISES if exercise.notebook == "09"]
    practice, check = cell_by_id(cells, "nb09-practice").source, cell_by_id(cells, "nb09-check").source
    for name in names:
        assert f"[exercises/{name}.py](../exercises/{name}.py)" in practice
        assert f'check("{name}")' in check
    headings = [c.source.splitlines()[0] for c in cells if c.cell_type == "markdown"]
    assert headings[-3:] == ["## Итоги", "## Практика", "## Как сдать работу"]
    assert "Впереди ноутбук 10, последний" in cell_by_id(cells, "nb09-handin").source  # only 10 is the last


def test_the_glossary_has_the_terms_of_09():
    glossary = (ROOT / "notebooks" / "glossary.md").read_text(encoding="utf-8")
    for term in ("инструмент", "вызов инструмента", "результат инструмента", "обмен", "основная память",
                 "архивная память"):
        assert f"| **{term}**" in glossary, term
