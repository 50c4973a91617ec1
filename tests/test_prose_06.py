"""Notebook 06's prose against its own outputs: fixed false sentences stay fixed, every number in the
text is one the notebook prints, and the lesson's structure (visible code, target explained before it
is checked, the K variant, the exercise) stays in place.

Reads the stored notebook (the outputs `make notebooks` wrote and nbval checks), so it needs no kernel.
The strategies' code moved into `bonus/06_strategy_code`, and how the figures were measured, K, money
and prompt caching and the summary's length cap into `bonus/06_cost_and_cache` (issue 29): checks of
moved cells read them there (`family`: the main notebook and both bonus notebooks), and the rule "every
number in the prose is printed" holds for each notebook on its own outputs.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from notebook_text import load_cells, markdown_sources

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "06_comparing_strategies.ipynb"
NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
NOTEBOOK_NUMBER = re.compile(r"^0\d$")  # "02", "05": the course's notebooks, not measurements
VERSION = re.compile(r"\b\d+\.\d+\.\d+\b")  # prompt versions such as 1.1.0
LIST_MARKER = re.compile(r"^\s*\d+\.\s", re.MULTILINE)
THOUSANDS = re.compile(r"(?<=\d)[\u202f\u00a0 ](?=\d{3}\b)")


BONUS = ("bonus/06_strategy_code", "bonus/06_cost_and_cache")


@pytest.fixture(scope="module")
def cells():
    return nbformat.read(NOTEBOOK, as_version=4).cells


@pytest.fixture(scope="module")
def family(cells):
    return cells + [cell for stem in BONUS for cell in load_cells(stem)]


@pytest.fixture(scope="module", params=["06_comparing_strategies", *BONUS])
def each(request):
    return load_cells(request.param)


markdown = markdown_sources


def prose(source: str) -> str:
    """Markdown without code blocks, inline code, link targets and list markers."""
    text = re.sub(r"```.*?```", "", source, flags=re.DOTALL)
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = VERSION.sub("", text)
    return LIST_MARKER.sub("", text)


def output_texts(cells) -> list[str]:
    texts = []
    for cell in cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                texts.append(output.get("text", ""))
            for mime in ("text/plain", "text/html"):
                value = output.get("data", {}).get(mime)
                if value:
                    texts.append(value if isinstance(value, str) else "".join(value))
    return texts


def numbers(text: str) -> set[float]:
    return {float(n.replace(",", ".")) for n in NUMBER.findall(THOUSANDS.sub("", text))}


# --- fixed false sentences (issue 9 §2) ---------------------------------------------------------------


def test_no_hard_coded_count_of_resummarizations(cells):
    text = "\n".join(markdown(cells))
    assert "больше двадцати раз" not in text  # the output said 17
    # the prose refers to the printed number instead
    assert re.search(r"пересказ пересказа, напечатано выше", text)


def test_last_n_messages_is_not_credited_to_the_articles_conversation_class(cells, family):
    for source in markdown(family):
        for line in source.splitlines():
            if "Последние N сообщений" in line and line.startswith("|"):
                assert "Conversation" not in line and "стать" not in line, line
        if "`Conversation`" in source:
            # every mention says what the class really does: a token trim that deletes for good
            assert "по токенам" in source and "навсегда" in source, source[:200]
    assert any("`Conversation`" in source for source in markdown(cells))


def test_every_number_in_the_prose_is_printed_by_the_notebook(each):
    printed = set().union(*(numbers(text) for text in output_texts(each)))
    for index, cell in enumerate(each):
        if cell.cell_type != "markdown":
            continue
        for number in NUMBER.findall(prose(cell.source)):
            if NOTEBOOK_NUMBER.match(number):
                continue
            assert float(number.replace(",", ".")) in printed, f"ячейка {index}: число {number} не из вывода"


def test_no_timings_in_stored_outputs(each):
    timing = re.compile(r"\d+[.,]\d+\s?(?:с|s|сек|ms|мс)\b")
    for index, cell in enumerate(each):
        for text in output_texts([cell]):
            assert not timing.search(text), f"ячейка {index}: время в сохранённом выводе"


# --- issue 10: numbers never break -------------------------------------------------------------------


def test_table_numbers_never_break(family):
    tables = [text for text in output_texts(family) if text.startswith("<table>")]
    assert tables, "the comparison table is an HTML table"
    for html in tables:
        assert not re.search(r"\d \d{3}\b", html), "a plain space inside a number"
        assert not re.search(r"\d %", html), "a plain space before %"
        for cell in re.findall(r"<td style=\"text-align: right[^\"]*\">", html):
            assert "white-space: nowrap" in cell
    assert any("\u202f" in html and "\u00a0%" in html for html in tables)


# --- structure ---------------------------------------------------------------------------------------


def code_sources(cells) -> list[str]:
    return [cell.source for cell in cells if cell.cell_type == "code"]


def test_each_strategys_reply_is_shown(cells, family):
    code = "\n".join(code_sources(family))
    for shown in (
        "FullHistoryStrategy._reply",
        "MessageCountStrategy._reply",
        "TokenWindowStrategy._reply",
        "RollingSummaryStrategy._reply",
        "RollingSummaryStrategy._compress",
        "WindowSummaryStrategy._reply",
        "ChatService.reply",
        "window_summary_k",
    ):
        assert f"show_source({shown}" in code or shown in code, shown
    assert "def table_row(run)" in "\n".join(code_sources(cells))  # the comparison table is built in visible code


def test_target_is_explained_before_it_is_checked(cells):
    explained = next(i for i, c in enumerate(cells) if c.cell_type == "markdown" and "Почему четверть" in c.source)
    checked = next(i for i, c in enumerate(cells) if c.cell_type == "code" and "share <= TARGET_SHARE" in c.source)
    assert explained < checked


def test_the_k_variant_is_compared(family):
    outputs = "\n".join(output_texts(family))
    assert "Окно + сводка + K ходов" in outputs
    assert "ходов сжатия, где предыдущий ответ в запросе: 0 из" in outputs


def test_the_summary_of_a_summary_loss_names_the_offline_rule(cells, family):
    text = "\n".join(markdown(cells))
    assert "headline" in text and "course_lib/llm/offline/dialogue.py" in text
    text = "\n".join(markdown(family))
    assert "compose_summary" in text and "1.1.0" in text


def test_ends_with_recap_and_practice_with_a_link_and_a_check(cells):
    headings = [line for c in cells if c.cell_type == "markdown" for line in c.source.splitlines() if line.startswith("## ")]
    assert headings[-2:] == ["## Итоги", "## Практика"]
    text = "\n".join(markdown(cells))
    assert "[exercises/trim_by_message_count.py](../exercises/trim_by_message_count.py)" in text
    assert cells[-1].cell_type == "code" and 'check("trim_by_message_count")' in cells[-1].source
    assert "python -m course_lib handin" in cells[-2].source  # how to hand in, next to the last exercise


def test_one_spelling_of_the_offline_model(family):
    text = "\n".join(markdown(family) + code_sources(family) + output_texts(family))
    for wrong in ("офлайн модель", "офлайн учебн", "оффлайн", "резюме"):
        assert wrong not in text.lower(), wrong


# --- issue 17: the student's functions run the two strategies; rolling_compress is practised here --------


def test_the_comparison_runs_the_students_functions(cells):
    code = "\n".join(code_sources(cells))
    assert 'your_code("trim_by_message_count")' in code and 'your_code("rolling_compress")' in code
    assert "compare_with_functions(dialogue, client, run_settings, trim=trim, compress=compress" in code
    assert "build_strategies(" not in code and "compare_strategies(" not in code


def test_rolling_compress_is_practised_after_the_summary_of_a_summary(cells):
    taught = next(i for i, c in enumerate(cells) if c.cell_type == "markdown" and "## Ловушка 2" in c.source)
    practised = next(i for i, c in enumerate(cells) if c.cell_type == "code" and 'check("rolling_compress")' in c.source)
    linked = next(i for i, c in enumerate(cells) if "](../exercises/rolling_compress.py)" in c.source)
    assert taught < linked < practised < len(cells) - 3


# --- issue 18: prompt caching is best effort and expires; the quiz does not call quality a cost ---------


def test_prompt_caching_is_presented_as_an_upper_bound_with_the_expired_figure(family):
    text = "\n".join(markdown(family))
    assert "верхняя граница" in text or "верхней границей" in text
    assert "через день" in text and "по возможности" in text
    assert "с кэшем — **дешевле** его" not in text  # the flip stated as a plain fact
    cost = next(c for c in family if c.get("id") == "nb06-cost-4000")
    assert "Кэш истёк" in "\n".join(output_texts([cost]))


def test_summary_cost_quiz_does_not_count_recall_as_a_cost():
    import json

    quizzes = json.loads((NOTEBOOK.parent.parent / "course_lib" / "data" / "quizzes" / "06_comparing_strategies.json").read_text(encoding="utf-8"))
    for option in quizzes["summary-cost"]["options"]:
        if "контрольных фактов" in option["text"]:
            assert option["correct"] is False


# --- second read (issue 18): the recap states the measured share, printed labels say «сводка» --------


def test_the_recap_states_the_share_the_notebook_printed(cells):
    recap = next(c.source for c in cells if c.cell_type == "markdown" and c.source.startswith("## Итоги"))
    assert "за четверть цены полной истории" not in recap  # 11.3 % was printed, not a quarter
    share = re.search(r"за (\d+,\d) % входных токенов полной истории", recap)
    assert share and f"доля {share.group(1)} %" in "\n".join(output_texts(cells)).replace("\u00a0", " ")


def test_printed_labels_use_the_glossary_words(family):
    outputs = "\n".join(output_texts(family))
    for wrong in ("из них summary", "Токены summary", "Стратегии с summary", "реплика клиента", "Длина реплики"):
        assert wrong not in outputs, wrong
    text = "\n".join(markdown(family))
    assert "ваша `trim_by_message_count`" not in text and "С вашей `rolling_compress`" not in text


# --- issue 29: the table's rows are the student's strategy_row ---------------------------------------------


def test_the_table_runs_on_the_students_strategy_row(cells):
    by_id = {cell.get("id"): cell for cell in cells}
    code = "\n".join(cell.source for cell in cells if cell.cell_type == "code")
    assert "def strategy_row(" not in code
    assert 'strategy_row = your_code("strategy_row")' in by_id["nb06-yours"].source
    assert "measure_records(records, dialogue, counter.count_text, row=strategy_row)" in by_id["4ec84562"].source
    row = by_id["nb06-row"]
    assert "measured = measure_runs(comparison, counter.count_text, row=strategy_row)" in row.source
    assert "strategy_row.show_mistake(" in row.source
    assert "](../exercises/strategy_row.py)" in by_id["nb06-row-md"].source
    assert 'row = measured[run.name]' in by_id["3187dc0d"].source  # the table
    assert 'measured[run.name]["lost_at"]' in by_id["1626d5f6"].source  # «пропал из запроса на ходу»
    assert 'measured["count"]' in by_id["38c202f5"].source  # the largest request
    assert "](../exercises/strategy_row.py)" in by_id["nb06-practice"].source
    assert 'check("strategy_row")' in cells[-1].source
