"""Notebook 10's fill-in `category_scores`: the per-category figures of the benchmark's table.

The course's version (course_lib.memory_eval.report.category_scores) gives exactly the figures the
harness computes (`StrategyResult.accuracy(c)`, `.evidence_recall(c)`), so the stored notebook's
tables do not change; `category_table` builds its cells from the function it is given; the
notebook's examples turn down each typical wrong body (the course's version runs then) and accept a
right one written differently.
"""

from __future__ import annotations

import copy
from collections import defaultdict

import nbformat
import pytest

from course_lib.fill_in import try_fill_in
from course_lib.memory_eval import lesson
from course_lib.memory_eval.dataset import CATEGORY_TITLES, load_dataset
from course_lib.memory_eval.report import category_scores, category_table, percent, results_from_json
from notebook_text import NOTEBOOKS

DATASET = load_dataset()
RUNS = ("offline", "qwen2.5-coder-0.5b-instruct")


def _check_cell() -> str:
    notebook = nbformat.read(NOTEBOOKS / "10_measuring_memory.ipynb", as_version=4)
    return next(cell.source for cell in notebook.cells if cell.get("id") == "nb10-scores-check")


def _verdict(function) -> tuple[bool, str]:
    """What the notebook's check cell makes of `function` written as the student's `category_scores`:
    whether it runs from then on, and the line the cell prints."""

    def category_scores(records):  # the stub's name, as the student's cell defines it
        return function(records)

    lines: list[str] = []
    namespace = {"category_scores": category_scores, "lesson": lesson,
                 "try_fill_in": lambda *args, **kwargs: try_fill_in(*args, announce=lines.append, **kwargs)}
    exec(_check_cell(), namespace)  # noqa: S102 - the notebook's own cell
    return namespace["category_scores"] is category_scores, lines[0]


@pytest.mark.parametrize("run_name", RUNS)
def test_the_course_version_gives_the_harness_figures(run_name):
    for result in results_from_json(lesson.stored_run(run_name).data, DATASET):
        records = [record.as_json() for record in result.records]
        before = copy.deepcopy(records)
        scores = category_scores(records)
        assert records == before, "the records are only read"
        assert list(scores) == list(dict.fromkeys(record["category"] for record in records))  # first seen first
        for category, figures in scores.items():
            assert figures == {"questions": len(result.of(category)), "accuracy": result.accuracy(category),
                               "evidence_recall": result.evidence_recall(category)}, (result.name, category)


@pytest.mark.parametrize("run_name", RUNS)
def test_the_table_prints_what_the_harness_measured(run_name):
    results = results_from_json(lesson.stored_run(run_name).data, DATASET)
    table = category_table(results, DATASET.categories)
    for row, result in zip(table.rows[1:], results):
        expected = [percent(result.accuracy(c)) + (f" ({percent(r)})" if (r := result.evidence_recall(c)) is not None
                                                   else "") for c in DATASET.categories]  # fmt: skip
        assert list(row) == [result.title, *expected]


def test_the_table_is_built_from_the_function_it_is_given():
    results = results_from_json(lesson.stored_run("offline").data, DATASET)[:2]
    seen = []

    def scores(records):
        seen.append(records)
        return {"update": {"questions": 1, "accuracy": 0.25, "evidence_recall": None},
                "temporal": {"questions": 1, "accuracy": 0.5, "evidence_recall": 0.75}}

    table = category_table(results, ["update", "temporal", "abstention"], scores=scores)
    assert [len(records) for records in seen] == [result.questions for result in results]
    assert seen[0][0] == results[0].records[0].as_json()
    assert table.rows[0] == ("Стратегия", CATEGORY_TITLES["update"], CATEGORY_TITLES["temporal"],
                             CATEGORY_TITLES["abstention"])  # fmt: skip
    assert table.rows[1][1:] == ("25 %", "50 % (75 %)", "—")  # a category the function left out: «—»


def test_the_notebook_passes_the_filled_function_to_both_tables():
    notebook = nbformat.read(NOTEBOOKS / "10_measuring_memory.ipynb", as_version=4)
    code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    tables = [source for source in code if "category_table(" in source and "import" not in source]
    assert len(tables) == 2 and all("scores=category_scores)" in source for source in tables)
    ids = [cell.get("id") for cell in notebook.cells]
    assert ids.index("nb10-scores-check") < ids.index("226a0292") < ids.index("b8e0cfec")  # checked, then used


def test_a_right_body_written_differently_is_used():
    def by_counting(records):
        groups = defaultdict(list)
        for record in records:
            groups[record["category"]].append(record)
        return {category: {"questions": len(rows), "accuracy": sum(r["correct"] for r in rows) / len(rows),
                           "evidence_recall": (sum(r["evidence_found"] for r in rows)
                                               / sum(r["evidence_total"] for r in rows))
                           if any(r["evidence_total"] for r in rows) else None}
                for category, rows in groups.items()}  # fmt: skip

    used, line = _verdict(by_counting)
    assert used and line.startswith("✔ category_scores: ваши строки работают")
    assert _verdict(category_scores)[0]


def _tally(records, *, recall_of=lambda found, needed: found / needed if needed else None,
           share=lambda part, whole: part / whole, divide_by_all=False, correct=lambda r: r["correct"]):
    totals: dict[str, list[int]] = {}
    for record in records:
        tally = totals.setdefault(record["category"], [0, 0, 0, 0])
        tally[0] += 1
        tally[1] += correct(record)
        tally[2] += record["evidence_found"]
        tally[3] += record["evidence_total"]
    return {c: {"questions": q, "accuracy": share(k, len(records) if divide_by_all else q),
                "evidence_recall": recall_of(f, n)} for c, (q, k, f, n) in totals.items()}


def _all_records(records):
    return _tally(records, divide_by_all=True)


def _swapped(records):
    return {c: {**s, "accuracy": s["evidence_recall"], "evidence_recall": s["accuracy"]}
            for c, s in _tally(records).items()}


def _whole_division(records):
    return _tally(records, share=lambda part, whole: part // whole)


def _rounded(records):
    return _tally(records, share=lambda part, whole: round(part / whole, 2))


def _only_correct_categories(records):
    kept = {r["category"] for r in records if r["correct"]}
    return {c: s for c, s in _tally(records).items() if c in kept}


def _mean_of_questions(records):
    scores = _tally(records)
    for category, figures in scores.items():
        shares = [r["evidence_found"] / r["evidence_total"] for r in records
                  if r["category"] == category and r["evidence_total"]]
        figures["evidence_recall"] = sum(shares) / len(shares) if shares else None
    return scores


def _abstained_is_correct(records):
    return _tally(records, correct=lambda r: r["abstained"] if r["category"] in ("abstention", "forgotten")
                  else r["correct"])


def _zero_without_evidence(records):
    return _tally(records, recall_of=lambda found, needed: found / needed if needed else 0.0)


def _writes_into_records(records):
    for record in records:
        record["recall"] = record["evidence_found"] / record["evidence_total"] if record["evidence_total"] else None
    return _tally(records)


def _pops_the_category(records):
    return _tally([{**r, "category": r.pop("category")} for r in records])


MISTAKES = [_all_records, _swapped, _whole_division, _rounded, _only_correct_categories, _mean_of_questions,
            _abstained_is_correct, _zero_without_evidence, _writes_into_records, _pops_the_category]


@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda f: f.__name__.strip("_"))
def test_each_typical_mistake_is_turned_down_and_the_course_version_runs(mistake):
    used, line = _verdict(mistake)
    assert not used, line
    assert line.startswith("↪ category_scores: category_scores(") and "дальше работает версия курса" in line


def test_the_helper_without_a_mistake_passes():
    used, line = _verdict(_tally)
    assert used, line


def test_changing_a_record_says_so_in_russian():
    _, line = _verdict(_writes_into_records)
    assert "TypeError: записи прогона только читают" in line


def test_an_example_record_is_read_only_and_its_copy_is_the_students():
    record = lesson.example_record("update", True, 1, 2)
    assert record == {"category": "update", "correct": True, "abstained": False, "evidence_total": 2,
                      "evidence_found": 1}  # fmt: skip
    assert copy.deepcopy(record) is record
    mine = copy.copy(record)
    mine["correct"] = False
    assert type(mine) is dict and record["correct"] is True
    with pytest.raises(TypeError, match="только читают"):
        record["correct"] = False
    run_record = lesson.stored_run("offline").data["records"][0]
    assert set(record) <= set(run_record)  # the run's field names
