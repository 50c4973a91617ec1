"""Notebook 06's table runs on the exercise `strategy_row` (issue 29): the course's version by
default, the student's function once it passes, and a failing one is shown on the lesson's run.

- the course's row of each strategy is the figures `StrategyRun` measured (the offline model's
  `usage.prompt_tokens` is the rule «3 + 3»), and the plain markers of `fact_markers` find each
  control fact in exactly the requests its evidence (a regular expression) does;
- `measure_runs` / `measure_records` measure with the row function they are given;
- a student's function that looks for facts in any request is shown beside the course's version on
  «Последние N сообщений», while the table keeps the course's figures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from course_lib.checking.catalog import get_exercise
from course_lib.course_versions.strategy_row import strategy_row as course_row
from course_lib.steps.comparing import describe_row, fact_markers, measure_records, measure_runs, requests_of
from course_lib.strategies import OfflineDirectClient, StrategySettings, compare_strategies, load_long_dialogue
from course_lib.strategies.script import INSTRUCTION_ROLES
from course_lib.tokenizer import TokenCounter
from course_lib.your_code import COURSE, YOURS, ExerciseCode

from student_course import course_copy, write_exercise

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = (ROOT / "solutions" / "strategy_row.py").read_text(encoding="utf-8")
COUNTER = TokenCounter()


@pytest.fixture(scope="module")
def comparison():
    return compare_strategies(load_long_dialogue(), OfflineDirectClient(), StrategySettings(), token_counter=COUNTER)


def test_the_course_row_is_what_the_run_measured(comparison):
    rows = measure_runs(comparison, COUNTER.count_text)
    assert list(rows) == [run.name for run in comparison.runs]
    for run in comparison.runs:
        row = rows[run.name]
        assert row["total_tokens"] == run.total_prompt_tokens
        assert row["peak_tokens"] == run.max_prompt_tokens
        assert row["peak_turn"] == max(run.records, key=lambda r: r.prompt_tokens).turn
        assert row["last_tokens"] == run.prompt_tokens[-1]
    assert rows["count"]["lost_at"]["номер заказа"] == 15 and rows["window"]["lost_at"]["номер заказа"] == 19
    assert rows["full"]["facts_kept"] == list(fact_markers(comparison.dialogue)) and rows["full"]["lost_at"] == {}


def test_the_markers_find_each_fact_where_its_evidence_does(comparison):
    markers = fact_markers(comparison.dialogue)
    assert list(markers) == [fact.label for fact in comparison.dialogue.facts]
    for run in comparison.runs:
        for record in run.records:
            said = [m["content"].lower() for m in record.request if m["role"] not in INSTRUCTION_ROLES]
            for fact in comparison.dialogue.facts:
                by_marker = any(marker in text for marker in markers[fact.label] for text in said)
                assert by_marker == fact.present_in(record.request), (run.name, record.turn, fact.id)


def test_the_measures_use_the_row_function_they_are_given(comparison):
    seen = []

    def spy(requests, facts, count_tokens):
        seen.append((len(requests), facts))
        return {"total_tokens": -1}

    rows = measure_runs(comparison, COUNTER.count_text, row=spy)
    assert rows["count"] == {"total_tokens": -1} and len(seen) == len(comparison.runs)
    assert seen[0] == (comparison.turns, fact_markers(comparison.dialogue))
    run = comparison.run("window")
    assert measure_records(run.records[:5], comparison.dialogue, COUNTER.count_text, row=spy) == {"total_tokens": -1}
    assert seen[-1][0] == 5


def test_requests_are_plain_copies(comparison):
    records = comparison.run("rolling").records
    requests = requests_of(records)
    assert [len(r) for r in requests] == [len(record.request) for record in records]
    requests[0][0]["content"] = "изменено"
    assert records[0].request[0]["content"] != "изменено"


def test_describe_row_speaks_the_tables_words():
    row = {"total_tokens": 146512, "peak_tokens": 1089, "peak_turn": 130, "last_tokens": 689,
           "facts_kept": ["номер заказа"], "lost_at": {"имя клиента": 13}}
    assert describe_row(6)(row) == (
        "токенов чата 146\u202f512, самый большой запрос 1\u202f089 (ход 130), последний 689; "
        "в последнем запросе 1 факт из 6; пропали: имя клиента — ход 13"
    )


def test_a_failing_row_is_shown_and_the_table_keeps_the_courses(comparison, tmp_path):
    course = course_copy(tmp_path)
    wrong = REFERENCE.replace(
        "    kept = [name for name in facts if _mentions(last, facts[name])]",
        "    kept = [name for name in facts if any(_mentions(r, facts[name]) for r in requests)]",
    )
    write_exercise(course, "strategy_row", wrong)
    code = ExerciseCode(get_exercise("strategy_row"), course, announce=None)
    markers = fact_markers(comparison.dialogue)
    shown: list[str] = []
    requests = requests_of(comparison.run("count").records)
    describe = describe_row(len(markers))
    assert code.show_mistake(requests, markers, COUNTER.count_text, describe=describe, out=shown.append)
    assert code.implementation == COURSE
    assert shown[0].startswith("↪ Ваша функция strategy_row на примере урока (открытые тесты пока не пройдены): ")
    assert "в последнем запросе 6 фактов из 6; пропали: нет" in shown[0]
    assert shown[1].startswith("  Версия курса на том же примере: токенов чата 146\u202f512")
    assert "в последнем запросе 0 фактов из 6" in shown[1]
    rows = measure_runs(comparison, COUNTER.count_text, row=code)
    assert rows["count"]["facts_kept"] == [] and code.calls[COURSE] == len(comparison.runs)


def test_a_passing_row_draws_the_table(comparison, tmp_path):
    course = course_copy(tmp_path)
    write_exercise(course, "strategy_row", REFERENCE)
    code = ExerciseCode(get_exercise("strategy_row"), course, announce=None)
    assert measure_runs(comparison, COUNTER.count_text, row=code) == measure_runs(comparison, COUNTER.count_text)
    assert code.implementation == YOURS and code.calls[YOURS] == len(comparison.runs)
    markers = fact_markers(comparison.dialogue)
    assert not code.show_mistake(requests_of(comparison.run("count").records), markers, COUNTER.count_text, out=print)
    assert course_row is not code.entry
