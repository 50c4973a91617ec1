"""Notebook 10's sentences say what the stored runs measured, and no notebook claims a real model's
behaviour that no stored measurement shows (the benchmark's figures are the evidence)."""

from __future__ import annotations

import re

import nbformat
import pytest

from course_lib.memory_eval import lesson
from course_lib.memory_eval.dataset import load_dataset
from course_lib.memory_eval.report import results_from_json
from notebook_text import ALL_NOTEBOOKS, MAIN_NOTEBOOKS, NOTEBOOKS, load_cells, markdown_text, notebook_name

DATASET = load_dataset()
OFFLINE = {r.name: r for r in results_from_json(lesson.stored_run("offline").data, DATASET)}
REAL_RUN = lesson.stored_run("qwen2.5-coder-0.5b-instruct")
REAL = {r.name: r for r in results_from_json(REAL_RUN.data, DATASET)}


def pct(value: float) -> str:
    return f"{round(value * 100)} %"


@pytest.fixture(scope="module")
def text():
    return markdown_text(load_cells("10_measuring_memory"))


def test_section_5_quotes_the_stored_offline_run(text):
    low, high = sorted(round(OFFLINE[name].evidence_recall() * 100) for name in ("count", "window"))
    assert f"{low}–{high} %" in text
    for name in ("window_summary", "window_summary_k", "rolling"):  # «держат все доказательства»
        assert OFFLINE[name].evidence_recall() == 1.0
        assert OFFLINE[name].total_input_per_question <= OFFLINE["full"].total_input_per_question / 2.9  # «трети»
    assert "дороже полной истории" in text
    assert OFFLINE["facts"].total_input_per_question > OFFLINE["full"].total_input_per_question


def test_section_7_quotes_the_stored_real_model_run(text):
    meta = REAL_RUN.data["meta"]
    assert meta["model_name"] == "qwen2.5-coder-0.5b-instruct" and meta["server"].startswith("llama-cpp-python")
    assert f"на {meta['questions']} первых вопросах ({meta['customers']} клиентов)" in text
    full, window, summary = REAL["full"], REAL["window"], REAL["window_summary"]
    assert full.evidence_recall() == 1.0 and f"верных ответов — {pct(full.accuracy())}" in text
    assert all(result.abstention_accuracy() == 0 for result in REAL.values()) and "Ни одного отказа" in text
    summary_row = next(s for s in REAL_RUN.data["summary"] if s["strategy"] == "window_summary")
    assert f"не приняла {summary_row['refused_turns']} сообщения" in text
    assert f"на {summary.errors} вопросов" in text and f"за {meta['max_output_tokens']} токенов" in text
    assert f"({pct(window.evidence_recall())} доказательств в запросе у обеих моделей)" in text
    offline_window = lesson.same_questions([OFFLINE["window"]], [window])[0]
    assert pct(offline_window.evidence_recall()) == pct(window.evidence_recall())


def test_06_quotes_the_real_model_run_where_it_says_facts_and_answers_differ():
    text = " ".join(markdown_text(load_cells("06_comparing_strategies")).split())
    full = REAL["full"]
    assert ("у модели `Qwen2.5-Coder-0.5B` с полной историей нужный факт был в запросе у всех вопросов прогона, "
            "а верной оказалась лишь примерно треть ответов") in text
    assert full.evidence_recall() == 1.0 and 0.28 <= full.accuracy() <= 0.38


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=notebook_name)
def test_no_notebook_claims_what_a_real_model_does_without_a_measurement(path):
    text = " ".join(markdown_text(nbformat.read(path, as_version=4)).split())
    for claim in (r"[Нн]астоящая модель ведёт себя похоже", r"[Нн]астоящая модель тоже обычно справляется",
                  r"настоящие модели часто тоже"):
        assert not re.search(claim, text), (path.name, claim)


def test_the_benchmark_terms_are_in_the_glossary_and_10_links_it(text):
    glossary = (NOTEBOOKS / "glossary.md").read_text(encoding="utf-8")
    for term in ("бенчмарк памяти", "доказательство", "верный ответ", "отказ от ответа", "фронт Парето"):
        assert f"**{term}**" in glossary, term
    assert "](glossary.md)" in text


def test_only_the_last_main_notebook_says_it_is_the_last():
    last = MAIN_NOTEBOOKS[-1]
    for path in ALL_NOTEBOOKS:
        said = "последний ноутбук курса" in markdown_text(nbformat.read(path, as_version=4).cells)
        assert said == (path == last), notebook_name(path)


# --- issue 29: the Pareto front is the student's exercise --------------------------------------------------


def _cell(cells, cell_id):
    return next(cell for cell in cells if cell.get("id") == cell_id)


def test_the_front_runs_on_the_students_pareto_front():
    from notebook_text import cell_text

    cells = load_cells("10_measuring_memory")
    code = "\n".join(cell.source for cell in cells if cell.cell_type == "code")
    assert "def pareto_front(" not in code
    assert 'pareto_front = your_code("pareto_front")' in _cell(cells, "50b24462").source
    assert "front=pareto_front" in _cell(cells, "5e9fd5e5").source  # the plot
    assert "lesson.front_table(points, front=pareto_front)" in _cell(cells, "1d4bd14b").source
    mine = _cell(cells, "cc4ce1ca").source  # section 8: the table, «обгоняет» and the plot
    assert mine.count("front=pareto_front") == 3 and "lesson.beaten_by(mine_points, MINE, front=pareto_front)" in mine
    shown = _cell(cells, "b3e8d152")
    assert "pareto_front.show_mistake(lesson.as_dicts(points), describe=on_front)" in shown.source
    assert cell_text(shown).strip() == "на фронте 2 стратегии: Последние N сообщений, Окно + сводка"
    assert "](../exercises/pareto_front.py)" in _cell(cells, "a7c41e90").source
    assert 'check("pareto_front")' in _cell(cells, "2933e73b").source
    assert "](../exercises/pareto_front.py)" in _cell(cells, "384053d3").source


# --- issue 29: the per-category table is the student's fill-in ----------------------------------------------


def test_the_category_table_runs_on_the_students_category_scores():
    from notebook_text import cell_text

    cells = load_cells("10_measuring_memory")
    ids = [cell.get("id") for cell in cells]
    intro = _cell(cells, "nb10-scores-intro").source
    assert "**Заполните** `category_scores`" in intro and "`None`" in intro and "без округления" in intro
    assert 'raise NotImplementedError("Заполните доли по видам вопросов")' in _cell(cells, "nb10-scores-stub").source
    check = _cell(cells, "nb10-scores-check")
    assert cell_text(check).strip() == ("↪ category_scores: ячейка ещё не заполнена — дальше работает версия курса "
                                        "(её можно раскрыть в свёрнутой ячейке ниже).")
    assert check.source.count("    # ") == 5  # each example but the empty one says what it catches
    assert "scores=category_scores" in _cell(cells, "226a0292").source  # section 5's table
    assert "scores=category_scores" in _cell(cells, "b8e0cfec").source  # section 6's tight summary
    assert ids.index("nb10-scores-intro") < ids.index("nb10-scores-check") < ids.index("226a0292")
    assert len(cells) <= 60
