"""Notebook 05's prose: the sentences issue 9 found false stay fixed, and prose matches its outputs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from notebook_text import all_output_text, markdown_text, stream_text

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "05_summary.ipynb"
QUIZ_FILE = ROOT / "course_lib" / "data" / "quizzes" / "05_summary.json"


@pytest.fixture(scope="module")
def cells():
    return nbformat.read(NOTEBOOK, as_version=4).cells


markdown = markdown_text


def code_cell(cells, cell_id: str):
    return next(c for c in cells if c.get("id") == cell_id)


stdout = stream_text


# --- issue 9 §2: the false sentences of 05 ------------------------------------------------------


def test_the_request_is_not_drawn_as_summary_plus_recent_turns_for_every_turn(cells):
    text = markdown(cells)
    # The first edition drew every request as "summary + several recent exact turns".
    assert "несколько свежих точных ходов" not in text
    # The drawing now shows the compression turn as it is (K = 0): summary and the new message only.
    assert "ход со сжатием" in text and "ни одного точного хода" in text


def test_the_reason_for_summarizing_all_messages_is_not_backwards(cells):
    text = markdown(cells)
    assert "иначе как раз они и не попали" not in text
    assert "а не только отброшенные —" not in text
    # The real reason: on a compression turn every stored message leaves the request and the session.
    assert "уходит каждое сохранённое сообщение" in text


def test_the_injection_check_claims_only_what_it_checks(cells):
    text = markdown(cells)
    assert "Проверим, что она не стала инструкцией" not in text
    assert "не стала инструкцией" not in text
    assert "**структуру** запроса" in text
    assert "**не** говорит, что модель не последует команде" in text


def test_tags_are_not_called_a_defence_by_themselves(cells):
    text = markdown(cells)
    assert "Теги сами по себе — не защита" in text
    for layer in ("**роль**", "**правило в инструкции**", "**проверка результата**", "**минимум полномочий**"):
        assert layer in text


# --- no prose number that can contradict its output ----------------------------------------------


def test_the_budget_in_prose_comes_from_the_output(cells):
    text = markdown(cells)
    assert "CHAT_INPUT_TOKEN_BUDGET=300" not in text  # the value is printed, not stated
    assert "Входной бюджет: 300 токенов" in stdout(code_cell(cells, "nb05-03"))


def test_no_table_value_is_quoted_in_prose(cells):
    # The first edition said «0 / 0» in prose next to a table that could say otherwise.
    assert "«0 / 0»" not in markdown(cells)


def test_no_timing_in_prose(cells):
    assert not re.search(r"\d+[.,]\d+\s?(?:с|мс|s|ms)\b", markdown(cells))


def test_caps_and_thresholds_are_named_by_code_not_prose(cells):
    text = markdown(cells)
    assert "`CAPS`" in text and "`THRESHOLDS`" in text
    for number in ("600 / 120 / 60", "порог 150", "порог 400"):
        assert number not in text


# --- outputs ---------------------------------------------------------------------------------------


def test_summaries_are_never_cut_short_in_outputs(cells):
    for line in all_output_text(cells).splitlines():
        if "conversation_summary" in line or "ummary" in line:
            assert not line.rstrip().endswith("…"), line


def test_the_compression_turn_is_shown_message_by_message(cells):
    out = stdout(code_cell(cells, "nb05-35b"))
    assert "свёрнуто в summary" in out and "Запрос к модели:" in out
    assert "дословно" not in out.split("Запрос к модели:")[1].replace("в запросе дословно", "")


def test_k_section_shows_the_question_lost_and_kept(cells):
    out = stdout(code_cell(cells, "nb05-k"))
    k0, k1 = out.split("K = 1")
    assert "Прислать курьера" not in k0.split("Запрос к модели:")[1].split("Ответ модели")[0]
    assert "не вижу вопроса" in k0
    assert "Прислать курьера" in k1.split("Запрос к модели:")[1]
    assert "договорились" in k1


def test_the_summary_model_of_each_request_is_shown(cells):
    out = stdout(code_cell(cells, "nb05-model"))
    assert "summary: model = gpt-4.1-mini" in out and "ответ клиенту: model = gpt-4.1" in out


# --- language, quizzes, exercises ---------------------------------------------------------------------


def test_one_spelling_and_one_word_for_summary(cells):
    text = markdown(cells)
    for wrong in ("офлайн модель", "офлайн учебн", "оффлайн", "офлайн модел"):
        assert wrong not in text.lower()
    assert "резюме" not in text.lower()  # the prompt text may say it; the prose says «summary»


def test_quiz_cells_are_hidden_one_liners_backed_by_the_json(cells):
    quizzes = json.loads(QUIZ_FILE.read_text(encoding="utf-8"))
    quiz_cells = [c for c in cells if c.cell_type == "code" and "show_quiz(" in c.source and "import" not in c.source]
    ids = []
    for cell in quiz_cells:
        match = re.fullmatch(r'show_quiz\("05_summary", "([a-z0-9-]+)"\)', cell.source.strip())
        assert match, cell.source
        assert cell.metadata.get("jupyter", {}).get("source_hidden") is True
        ids.append(match.group(1))
    assert set(ids) == set(quizzes) == {"summary-facts", "keep-recent", "tags-defence"}
    assert not any("Quiz(" in c.source for c in cells if c.cell_type == "code")
    seed_step_8 = [o["text"] for o in quizzes["summary-facts"]["options"] if o["correct"]]
    assert "Summary передаётся модели как данные о предыдущем разговоре" in seed_step_8
    for quiz in quizzes.values():
        assert all(o.get("why") for o in quiz["options"] if not o["correct"])


def test_practice_links_and_checks(cells):
    text = markdown(cells)
    assert text.rstrip().endswith("При оценке работы дополнительно запускаются скрытые тесты.")
    for name in ("build_summary_source", "rolling_compress"):
        assert f"[exercises/{name}.py](../exercises/{name}.py)" in text
        assert f'check("{name}")' in cells[-1].source
    headings = [c.source.splitlines()[0] for c in cells if c.cell_type == "markdown"]
    assert headings.index("## Итоги") < headings.index("## Практика")


def test_no_exercise_solution_before_the_exercise(cells):
    source = "\n".join(c.source for c in cells if c.cell_type == "code")
    assert "def build_summary_source" not in source and "def rolling_compress" not in source
    assert "is_summary" not in source
