"""Notebook 04's prose stays true: fixed false sentences never come back, prose numbers match outputs.

Also keeps the windowed service shown in the notebook identical to `course_lib/steps/window.py`
(notebook 05 imports it from there) and checks the widget call of section 8.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import nbformat
import pytest
from notebook_text import cell_text, markdown_text

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "04_sliding_window.ipynb"
QUIZZES = ROOT / "course_lib" / "data" / "quizzes" / "04_sliding_window.json"
WINDOW_MODULE = ROOT / "course_lib" / "steps" / "window.py"

# From COURSE_SPEC.md (2026-12-01): llama-cpp-python server + SmolLM2-135M-Instruct, one Russian turn.
RECORDED_ESTIMATE, RECORDED_PROMPT_TOKENS = 174, 452


@pytest.fixture(scope="module")
def notebook():
    return nbformat.read(NOTEBOOK, as_version=4)


markdown = markdown_text


def cell(notebook, cell_id: str):
    matches = [c for c in notebook.cells if c.get("id") == cell_id]
    assert len(matches) == 1, f"cell {cell_id} not found"
    return matches[0]


def output_text(code_cell) -> str:
    return cell_text(code_cell, mimes=("text/markdown", "text/plain"))


def everything(notebook) -> str:
    return "\n".join(c.source + "\n" + (output_text(c) if c.cell_type == "code" else "") for c in notebook.cells)


# --- fixed false sentences (issue 9 §2) ------------------------------------------------------

@pytest.mark.parametrize("pattern", [
    r"небольш\w* разниц",      # "у настоящего провайдера возможна небольшая разница"
    r"незначительн\w* (разниц|отлич|расхожд)",
    r"(слегка|немного|чуть) (отлича|расход)",
    r"\bslightly\b",
])
def test_provider_count_is_never_called_slightly_different(notebook, pattern):
    assert not re.search(pattern, everything(notebook), re.IGNORECASE)


def test_no_timing_is_stated_in_prose(notebook):
    # Machine-dependent: printed by the cell, never written in markdown (the old text had "11,17 с").
    # (a version such as "0.3.36 с моделью" is not a timing: no digit or dot before the number)
    assert not re.search(r"(?<![\d.,])\d+[.,]\d+\s?(с|сек|s|мс|ms)\b", markdown(notebook))
    timing = output_text(cell(notebook, "nb04-31b"))
    assert len(re.findall(r"\d+\.\d+ с", timing)) == 3


def test_one_spelling_of_the_offline_model(notebook):
    text = everything(notebook)
    assert not re.search(r"офлайн учебн|офлайн модел|оффлайн", text, re.IGNORECASE)


# --- prose numbers come from the outputs ------------------------------------------------------

def test_recorded_provider_numbers_and_what_they_do_to_a_budget(notebook):
    source = cell(notebook, "nb04-15h").source
    assert f"RECORDED_ESTIMATE = {RECORDED_ESTIMATE}" in source
    assert f"RECORDED_PROMPT_TOKENS = {RECORDED_PROMPT_TOKENS}" in source
    out = output_text(cell(notebook, "nb04-15h"))
    ratio = RECORDED_PROMPT_TOKENS / RECORDED_ESTIMATE
    assert f"= {ratio:.1f}" in out
    budget = f"{round(6000 * ratio, -2):,.0f}".replace(",", "\u00a0")
    assert f"≈ {budget} токенов" in out
    assert "4096: вход + ответ" in out and "не помещается" in out
    # The quiz quotes the same figures.
    quiz = json.loads(QUIZZES.read_text("utf-8"))["provider-tokenizer"]
    whys = " ".join(option.get("why", "") for option in quiz["options"])
    assert f"{ratio:.1f}".replace(".", ",") in whys
    assert budget.replace("\u00a0", " ") in whys
    # The prose says "в разы", not a number that could disagree.
    assert "втрое" not in markdown(notebook)


def test_hundred_times_fewer_counts(notebook):
    assert "в сто раз меньше подсчётов" in markdown(notebook)
    out = output_text(cell(notebook, "nb04-30"))
    naive, ours = (int(n) for n in re.findall(r"сообщений — (\d+)", out))
    assert naive // ours == 100


def test_character_estimate_is_roughly_twice_tiktoken(notebook):
    assert "примерно вдвое" in markdown(notebook)
    table = output_text(cell(notebook, "nb04-15j"))
    rows = [row.split("|")[1:-1] for row in table.splitlines()[2:] if row.startswith("|")]
    assert len(rows) == 4
    assert all(1.8 < float(row[-1]) < 2.5 for row in rows)                     # "примерно вдвое"
    assert "2–3 символа" in markdown(notebook)
    assert all(float(row[3]) > 3 and 2 <= float(row[4]) <= 3 for row in rows)  # only cl100k: 2-3


def test_window_drops_are_shown_not_only_counted(notebook):
    out = output_text(cell(notebook, "nb04-39b"))
    assert "✗ не отправлено" in out and "✓ в запросе" in out
    assert "8041" in out.split("История сессии до хода")[1]


# --- the student's service: notebook cell == course_lib/steps/window.py -------------------------

def class_sources(text: str) -> dict[str, str]:
    tree = ast.parse(text)
    lines = text.splitlines()
    found = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            found[node.name] = "\n".join(lines[start - 1 : node.end_lineno])
    return found


def test_window_service_cell_matches_the_module(notebook):
    in_notebook = class_sources(cell(notebook, "nb04-37c").source)
    in_module = class_sources(WINDOW_MODULE.read_text("utf-8"))
    assert set(in_notebook) == {"WindowReply", "WindowChatService"}
    for name, source in in_notebook.items():
        assert source == in_module[name], f"{name} differs between notebook 04 and {WINDOW_MODULE.name}"


def test_reply_diff_and_library_comparison_follow_the_service(notebook):
    ids = [c.get("id") for c in notebook.cells]
    assert ids.index("nb04-37c") < ids.index("nb04-37e") < ids.index("nb04-38") < ids.index("nb04-44c")
    assert "unified_diff" in cell(notebook, "nb04-37e").source
    assert "+        return WindowReply(" in output_text(cell(notebook, "nb04-37e"))
    assert "from course_lib.steps.sessions import SessionChatService" in cell(notebook, "nb04-06").source


# --- widgets and practice (issue 10) --------------------------------------------------------------

def test_panel_uses_the_scenario_and_a_service_without_summary(notebook):
    source = cell(notebook, "nb04-46").source
    assert "probe_text=COFFEE_RECALL" in source and "library_service" in source
    assert "summary_service=None" in cell(notebook, "nb04-44c").source


def test_panel_of_a_window_service_says_nothing_about_summary(make_settings):
    """Section 8's panel: a ChatService without a summary service, the notebook's recall question."""
    from course_lib.chat_history import SlidingWindowHistory, TokenCounter
    from course_lib.chat_service import ChatService
    from course_lib.llm.client import LLMClient
    from course_lib.scenarios import COFFEE_DIALOGUE, COFFEE_RECALL
    from course_lib.steps.single_history import CHAT_PROMPT
    from course_lib.widgets import chat_panel

    service = ChatService(LLMClient(make_settings()), SlidingWindowHistory(TokenCounter(), 300),
                          summary_service=None, prompt=CHAT_PROMPT)
    for text in COFFEE_DIALOGUE:
        service.reply("coffee", text)
    panel = chat_panel(service, session_id="coffee", probe_text=COFFEE_RECALL)
    panel.chat.controller.send(COFFEE_RECALL)
    assert panel.budget.probe_box.value == COFFEE_RECALL
    shown = panel.budget.summary_html.value + panel.budget.html.value + panel.inspector.html.value
    visible = re.sub(r"<[^>]+>", " ", shown)  # HTML's own <details><summary> tags are not text
    assert "summary" not in visible.lower()
    assert "выпадает" in panel.budget.summary_html.value


def test_quiz_cells_are_hidden_and_defined(notebook):
    quizzes = json.loads(QUIZZES.read_text("utf-8"))
    used = []
    for c in notebook.cells:
        match = re.fullmatch(r'show_quiz\("04_sliding_window", "([a-z0-9-]+)"\)', c.source.strip())
        if match:
            assert c.metadata.get("jupyter", {}).get("source_hidden") is True
            used.append(match.group(1))
    assert "Quiz(" not in everything(notebook)
    # Seed 000 steps 5-7 stay, plus the provider question.
    assert {"why-not-full-history", "window-rules", "removed-history-messages"} <= set(used)
    assert set(used) == set(quizzes)


@pytest.mark.parametrize("name", ["count_message_tokens", "split_into_turns", "select_recent_turns"])
def test_practice_links_and_checks(notebook, name):
    practice = cell(notebook, "nb04-48").source
    assert f"[exercises/{name}.py](../exercises/{name}.py)" in practice
    assert (ROOT / "exercises" / f"{name}.py").is_file()
    assert f'check("{name}")' in cell(notebook, "nb04-49").source


def test_ends_with_recap_and_practice(notebook):
    headings = [c.source.splitlines()[0] for c in notebook.cells if c.cell_type == "markdown"]
    assert headings[-2:] == ["## Итоги", "## Практика"]
