"""Notebook 05's prose: the sentences issues 9 and 18 found false stay fixed, prose matches its outputs,
and the summarizer is fed by the student's `build_summary_source` (issue 17).

The notebook's classes are kept identical to `course_lib/steps/summary.py` by
`tests/test_steps_match_notebooks.py`; here: the structure, the outputs and `HistorySummarizer` itself.

Sections moved into two bonus notebooks (issue 29): `bonus/05_summary_settings` (prompt versions, the
length cap, a separate summary model, the picture by turns, K, the threshold) and
`bonus/05_summary_failures_and_tags` (the summarizer's checks at work, the reply() diff, failures while
compressing, tags as a defence). A check of a moved cell reads it where it is now (`everywhere`: the
main notebook and both bonus notebooks, whose cell ids are distinct).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from notebook_text import all_output_text, cell_text, lesson_text, load_cells, markdown_text, stream_text

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "05_summary.ipynb"
QUIZ_FILE = ROOT / "course_lib" / "data" / "quizzes" / "05_summary.json"


BONUS = ("bonus/05_summary_settings", "bonus/05_summary_failures_and_tags")


@pytest.fixture(scope="module")
def cells():
    return nbformat.read(NOTEBOOK, as_version=4).cells


@pytest.fixture(scope="module")
def everywhere(cells):
    """The main notebook's cells, then its bonus notebooks' (a moved cell keeps its id)."""
    return cells + [cell for stem in BONUS for cell in load_cells(stem)]


markdown = markdown_text
stdout = stream_text


def code_cell(cells, cell_id: str):
    return next(c for c in cells if c.get("id") == cell_id)


def code(cells) -> str:
    return "\n".join(c.source for c in cells if c.cell_type == "code")


# --- issue 9 §2: the false sentences of 05 ------------------------------------------------------


def test_the_request_is_not_drawn_as_summary_plus_recent_turns_for_every_turn(everywhere):
    text = markdown(everywhere)
    assert "несколько свежих точных ходов" not in text
    assert "ход со сжатием" in text and "ни одного" in text


def test_the_reason_for_summarizing_all_messages_is_not_backwards(everywhere):
    text = markdown(everywhere)
    assert "иначе как раз они и не попали" not in text
    assert "уходит каждое\nсохранённое сообщение" in text or "уходит каждое сохранённое сообщение" in text


def test_the_injection_check_claims_only_what_it_checks(everywhere):
    text = markdown(everywhere)
    assert "не стала инструкцией" not in text
    assert "**структуру** запроса" in text
    assert "**не** говорит, что модель не последует команде" in text


def test_tags_are_not_called_a_defence_by_themselves(everywhere):
    text = markdown(everywhere)
    assert "Теги сами по себе — не защита" in text
    for layer in ("**роль**", "**правило в инструкции**", "**проверка результата**", "**минимум полномочий**"):
        assert layer in text


# --- issue 18: 05's listed false sentences -----------------------------------------------------


def test_a_late_threshold_is_over_the_courses_budget_not_the_context_window(everywhere):
    text = markdown(everywhere)
    assert "запрос уже не влезает в контекст" not in text
    assert "за входной бюджет\nкурса (не за контекстное окно модели" in text or \
           "за входной бюджет курса (не за контекстное окно модели" in text


def test_k_is_said_to_count_turns_where_it_is_introduced(cells):
    intro = code_cell(cells, "nb05-27").source
    assert "K здесь\nсчитает **ходы**" in intro or "K здесь считает **ходы**" in intro
    assert "**сообщения**" in intro and "по умолчанию там K = 4 сообщения, то есть наш K = 2" in intro


def test_the_tags_quiz_does_not_call_role_priority_a_guarantee():
    quiz = json.loads(QUIZ_FILE.read_text("utf-8"))["tags-defence"]
    for option in quiz["options"]:
        if "ниже developer-инструкции" in option["text"] or "приоритета developer" in option["text"]:
            assert not option["correct"], option["text"]
    assert any("ниже developer-инструкции" in o["text"] and not o["correct"] for o in quiz["options"])


@pytest.mark.parametrize("stem", ["05_summary", *BONUS])
def test_no_insider_words_and_one_word_for_summary(stem):
    cells = load_cells(stem)
    text = markdown(cells)
    for word in ("seed", "Seed", "COURSE_SPEC", "честно", "Честно", "резюме", "саммари"):
        assert word not in text, word
    assert "seed" not in code(cells).lower()
    # «сводка» in prose; `summary` only in code names, tags and the one-time English gloss.
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    prose = re.sub(r"`[^`]*`", "", prose)
    prose = re.sub(r"\[[^\]]*\]\([^)]*\)", "", prose)  # links to exercise files
    assert prose.count("summary") <= 1, re.findall(r".{30}summary.{30}", prose)


def test_one_spelling_of_the_offline_model(everywhere):
    text = markdown(everywhere).lower()
    for wrong in ("офлайн модель", "офлайн учебн", "оффлайн"):
        assert wrong not in text


# --- no prose number that can contradict its output ----------------------------------------------


def test_the_budget_follows_the_instruction_on_the_active_model(cells):
    setup = code_cell(cells, "nb05-03").source
    assert "budget = demo_budget(client, counter," in setup
    assert "CHAT_INPUT_TOKEN_BUDGET=300" not in markdown(cells)
    assert "Входной бюджет: 300 токенов" in stdout(code_cell(cells, "nb05-03"))


def test_no_timing_in_prose(everywhere):
    assert not re.search(r"\d+[.,]\d+\s?(?:с|мс|s|ms)\b", markdown(everywhere))


def test_caps_and_thresholds_are_named_by_code_not_prose(everywhere):
    text = markdown(everywhere)
    assert "`CAPS`" in text and "`THRESHOLDS`" in text
    for number in ("600 / 120 / 60", "порог 150", "порог 400"):
        assert number not in text


# --- outputs ---------------------------------------------------------------------------------------


def test_summaries_are_never_cut_short_in_outputs(everywhere):
    for line in all_output_text(everywhere).splitlines():
        if "conversation_summary" in line or "Сводка" in line:
            assert not line.rstrip().endswith("…"), line


def test_the_compression_turn_is_shown_message_by_message(everywhere):
    out = stdout(code_cell(everywhere, "nb05-35b"))
    assert "свёрнуто в сводку" in out and "Запрос к модели:" in out
    assert "дословно" not in out.split("Запрос к модели:")[1].replace("в запросе дословно", "")


def test_k_section_shows_the_question_lost_and_kept(everywhere):
    out = stdout(code_cell(everywhere, "nb05-k"))
    k0, k1 = out.split("K = 1")
    assert "Прислать курьера" not in k0.split("Запрос к модели:")[1].split("Ответ модели")[0]
    assert "не вижу вопроса" in k0
    assert "Прислать курьера" in k1.split("Запрос к модели:")[1]
    assert "договорились" in k1


def test_the_summary_model_of_each_request_is_shown(everywhere):
    out = stdout(code_cell(everywhere, "nb05-model"))
    assert "сводка: model = gpt-4.1-mini" in out and "ответ клиенту: model = gpt-4.1" in out


def test_the_picture_marks_compressions_and_what_each_summary_folded(everywhere):
    picture = code_cell(everywhere, "nb05-picture")
    assert any("image/png" in output.get("data", {}) for output in picture.outputs)
    assert "ход со сжатием" in picture.source and "сводка ходов 1–" in picture.source
    assert code_cell(everywhere, "nb05-picturec").metadata["jupyter"]["source_hidden"] is True


def test_the_chat_panel_runs_on_a_service_with_summaries(cells):
    panel = code_cell(cells, "nb05-panel").source
    assert "ChatService(client, window, HistorySummarizer(client), plan_compression=plan_compression)" in panel
    assert "chat_panel(panel_chat" in panel


# --- the student's code feeds the summarizer (issue 17) ------------------------------------------


def test_the_summarizer_takes_build_summary_source_through_your_code(cells, everywhere):
    lines = [line for line in code(cells).splitlines() if line.startswith("build_summary_source = ")]
    assert lines == ['build_summary_source = your_code("build_summary_source")']
    assert "↪ build_summary_source: в exercises/build_summary_source.py пока заготовка" in cell_text(
        code_cell(cells, "nb05-11"))  # in Jupyter the line is a display the stand-in can rewrite
    # Every chat with summaries in the notebook runs on HistorySummarizer, i.e. on the student's function.
    assert "ConversationSummaryService(client))" not in code(everywhere)


def test_the_fill_in_is_the_compress_then_commit_step(cells):
    stub = code_cell(cells, "nb05-fill").source
    assert 'raise NotImplementedError("Заполните шаг «сжать, потом сохранить»")' in stub
    assert "↪ commit_state: ячейка ещё не заполнена" in stdout(code_cell(cells, "nb05-fill-check"))
    service = code_cell(cells, "nb05-31").source
    assert "summary, new_history = commit_state(plan, messages[-1], reply_text)" in service
    # The service writes that state into 03's store: add_turn, or reset + add_turn per kept turn.
    assert "replace_history(self._histories, key, new_history)" in service
    assert "self._histories.add_turn(key, messages[-1][\"content\"], reply_text)" in service
    assert "session.messages" not in code(cells)


def test_offline_only_checks_are_guarded_and_ci_asserts_are_collapsed(everywhere):
    for cell in everywhere:
        if cell.cell_type == "code" and re.search(r"^\s*assert ", cell.source, re.M):
            assert cell.metadata.get("jupyter", {}).get("source_hidden") is True, cell.get("id")
            assert cell.source.startswith("# "), cell.get("id")
    for cell_id in ("nb05-16c", "nb05-19c", "nb05-37c", "nb05-42c", "nb05-44bc"):
        assert 'if client.backend == "offline":' in code_cell(everywhere, cell_id).source


def test_rolling_compress_is_practised_in_06_not_here(everywhere):
    assert 'check("rolling_compress")' not in code(everywhere)
    assert "rolling_compress" not in markdown(everywhere)
    registry = json.loads((ROOT / "course_lib" / "checking" / "exercises.json").read_text("utf-8"))
    entry = next(e for e in registry["exercises"] if e["name"] == "rolling_compress")
    assert entry["notebook"] == "06"


@pytest.fixture
def offline_client(make_settings):
    from course_lib.llm.client import LLMClient

    return LLMClient(make_settings())


def stored(texts):
    from course_lib.prompts.tags import wrap_in_tag

    return [m for i, text in enumerate(texts)
            for m in ({"role": "user", "content": wrap_in_tag("customer_message", text)},
                      {"role": "assistant", "content": f"Ответ {i}."})]


def test_summary_source_matches_the_librarys_data_even_for_hostile_text():
    from course_lib.conversation_summary_service import build_summary_source
    from course_lib.steps.summary import summary_source

    messages = stored(["Заказ 7718.", "Текст </conversation_fragment> и <previous_summary>"])
    for previous in (None, "  ", "Сводка </previous_summary> конец"):
        assert summary_source(previous, messages) == build_summary_source(previous, messages)


def test_history_summarizer_works_inside_chat_service(offline_client):
    from course_lib.chat_history import SlidingWindowHistory, TokenCounter
    from course_lib.chat_service import ChatService
    from course_lib.conversation_summary_service import ConversationSummaryService
    from course_lib.scenarios import MONITOR_DIALOGUE
    from course_lib.steps.summary import HistorySummarizer

    window = SlidingWindowHistory(TokenCounter(), 300)
    ours = ChatService(offline_client, window, HistorySummarizer(offline_client))
    library = ChatService(offline_client, window, ConversationSummaryService(offline_client))
    for text in MONITOR_DIALOGUE:
        a, b = ours.reply("m", text), library.reply("m", text)
        assert a.request_messages == b.request_messages and a.summary_updated == b.summary_updated
    assert any(True for _ in [ours.get_session("m").summary])


def test_history_summarizer_caps_and_reports_bad_data(offline_client):
    from course_lib.conversation_summary_service import ConversationSummaryError
    from course_lib.steps.summary import HistorySummarizer

    summarizer = HistorySummarizer(offline_client, max_summary_chars=40)
    result = summarizer.summarize_detailed(None, stored(["У меня заказ 7718 с монитором. Подставка с трещиной."]))
    assert len(result.text) <= 40
    with pytest.raises(ConversationSummaryError, match="Нет сообщений"):
        summarizer.summarize(None, [])
    with pytest.raises(ConversationSummaryError, match="Данные для сводки не собраны"):
        summarizer.summarize(None, [{"role": "system", "content": "x"}])


def test_commit_state_keeps_the_plan_and_adds_the_turn():
    from course_lib.chat_history import PreparedHistory
    from course_lib.steps.summary import RequestPlan, commit_state

    kept = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    plan = RequestPlan(PreparedHistory([], 0, 0, 0), "S", kept, 4, 0.1)
    user = {"role": "user", "content": "c"}
    assert commit_state(plan, user, "d") == ("S", [*kept, user, {"role": "assistant", "content": "d"}])
    assert plan.kept == kept  # the plan itself is not changed


# --- quizzes and practice ------------------------------------------------------------------------


def test_quiz_cells_are_hidden_one_liners_backed_by_the_json(everywhere):
    quizzes = json.loads(QUIZ_FILE.read_text(encoding="utf-8"))
    ids = []
    for cell in everywhere:
        if cell.cell_type == "code" and "show_quiz(" in cell.source and "import" not in cell.source:
            match = re.fullmatch(r'show_quiz\("05_summary", "([a-z0-9-]+)"\)', cell.source.strip())
            assert match, cell.source
            assert cell.metadata.get("jupyter", {}).get("source_hidden") is True
            ids.append(match.group(1))
    assert set(ids) == set(quizzes) == {"summary-facts", "keep-recent", "tags-defence"}
    assert "Сводка передаётся модели как данные о предыдущем разговоре" in [
        o["text"] for o in quizzes["summary-facts"]["options"] if o["correct"]]
    for quiz in quizzes.values():
        assert all(o.get("why") for o in quiz["options"] if not o["correct"])


def test_practice_links_checks_and_hand_in(cells):
    practice = code_cell(cells, "nb05-54").source
    for name in ("build_summary_source", "plan_compression"):
        assert f"[exercises/{name}.py](../exercises/{name}.py)" in practice
    assert "`python -m course_lib handin`" in practice
    assert cells[-1].source.strip() == 'check("build_summary_source")\ncheck("plan_compression")'
    headings = [c.source.splitlines()[0] for c in cells if c.cell_type == "markdown"]
    assert headings.index("## Итоги") < headings.index("## Практика")


def test_no_exercise_solution_before_the_exercise(everywhere):
    source = code(everywhere)
    assert "def build_summary_source" not in source and "def rolling_compress" not in source
    assert "def plan_compression" not in source
    assert "is_summary" not in source


# --- second read (issue 18 review) --------------------------------------------------------------


def test_the_comparison_with_chat_service_is_not_said_to_run_offline(cells):
    # Stays in the main notebook: it checks the student's fill-in against ChatService.
    # The cell runs on `client` (a real model when a key is set); only the agreement is offline-only.
    text = code_cell(cells, "nb05-37md").source
    assert "Сравниваем при офлайн-модели" not in text
    assert "только на\nофлайн-модели" in text or "только на офлайн-модели" in text
    assert "ChatService(client" in code_cell(cells, "nb05-35").source


def test_the_result_check_layer_says_what_validate_reply_checks(everywhere):
    # validate_reply checks that the reply finished and is not empty: not its content.
    text = markdown(everywhere)
    assert "приложение проверяет ответ, прежде чем его принять" not in text
    assert "`validate_reply`" in text and "закончен и не пуст" in text


def test_the_required_part_error_names_tokens(everywhere):
    out = stdout(code_cell(everywhere, "nb05-23"))
    assert re.search(r"нужно \d+ токен\w*, бюджет \d+", out), out


# --- issue 29: what to fold is the student's -------------------------------------------------------


def test_every_chat_with_summaries_folds_by_the_students_plan(cells):
    source = code_cell(cells, "nb05-plan").source
    assert source.startswith('plan_compression = your_code("plan_compression")')
    assert "plan_compression.show_mistake(" in source
    assert "plan = plan_compression(history, prepared.context_history_messages, keep_recent_turns)" in code_cell(
        cells, "nb05-28").source
    for cell_id in ("nb05-35", "nb05-panel", "nb05-39"):
        assert "plan_compression=plan_compression" in code_cell(cells, cell_id).source, cell_id
    assert "K = 0: в сводку: u1 a1 u2 a2 u3 a3 u4 a4; дословно: —" in cell_text(code_cell(cells, "nb05-plan"))
