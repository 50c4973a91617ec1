"""CI's promise: every reference solution scores 100%, every stub 0%, with the real grader."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from grader import cli
from course_lib.checking.catalog import EXERCISES

ROOT = Path(__file__).resolve().parents[1]
GRADESCOPE_TEST_KEYS = {"name", "score", "max_score", "status", "output", "visibility"}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    out = tmp_path_factory.mktemp("reference") / "out"
    code = cli.main(
        [str(ROOT / "solutions"), str(ROOT / "exercises"), "--out", str(out), "--no-progress",
         "--allow-weak-sandbox"]  # trusted code: fine in the basic tier where namespaces are missing
    )
    with open(out / "grades.csv", encoding="utf-8") as handle:
        rows = {row["submission"]: row for row in csv.DictReader(handle)}
    return code, out, rows


def _results(out: Path, name: str) -> dict:
    return json.loads((out / name / "results.json").read_text(encoding="utf-8"))


def test_exit_code_is_0(graded):
    assert graded[0] == 0


@pytest.mark.parametrize("exercise", [exercise.name for exercise in EXERCISES])
def test_reference_solution_scores_100_percent(graded, exercise):
    _, out, rows = graded
    assert float(rows["solutions"][exercise]) == 10.0
    info = _results(out, "solutions")["extra_data"]["exercises"][exercise]
    # Hidden results are concealed by default (after_published): extra_data counts public cases only.
    assert info["status"] == "ok" and info["public_passed"] == info["public_total"] >= 2
    assert info["public_score"] == info["public_max_score"] > 0
    tests = [t for t in _results(out, "solutions")["tests"] if t["extra_data"]["exercise"] == exercise]
    assert len(tests) >= 12 and all(t["status"] == "passed" for t in tests)


@pytest.mark.parametrize("exercise", [exercise.name for exercise in EXERCISES])
def test_stub_scores_0_percent(graded, exercise):
    _, out, rows = graded
    assert float(rows["exercises"][exercise]) == 0.0
    tests = [t for t in _results(out, "exercises")["tests"] if t["extra_data"]["exercise"] == exercise]
    assert tests and all(t["status"] == "failed" and t["score"] == 0 for t in tests)
    public = [t for t in tests if t["extra_data"]["kind"] == "public"]
    hidden = [t for t in tests if t["extra_data"]["kind"] == "hidden"]
    assert public and all(t["extra_data"]["reason"] == "not_implemented" for t in public)
    assert hidden and all(t["extra_data"]["reason"] == "failed" for t in hidden)  # no reason shown


def test_totals_and_status(graded):
    _, _, rows = graded
    assert rows["solutions"]["status"] == rows["exercises"]["status"] == "ok"
    assert float(rows["solutions"]["score"]) == sum(e.points for e in EXERCISES)
    assert float(rows["exercises"]["score"]) == 0.0
    assert list(rows["solutions"]) == [
        "submission", "status", "score", "max_score", *[e.name for e in EXERCISES], "details",
        "source",
    ]  # fmt: skip
    assert rows["solutions"]["source"] == cli.shown_path(ROOT / "solutions")
    assert not rows["solutions"]["source"].startswith("/")  # never an absolute path


def test_results_json_follows_gradescope_format(graded):
    _, out, _ = graded
    results = _results(out, "solutions")
    assert results["score"] == sum(e.points for e in EXERCISES)
    assert results["visibility"] == "visible" and results["stdout_visibility"] == "hidden"
    for test in results["tests"]:
        assert GRADESCOPE_TEST_KEYS <= set(test)
        assert test["status"] in ("passed", "failed")
        assert test["visibility"] in ("visible", "after_published")
        assert test["extra_data"]["exercise"] in {e.name for e in EXERCISES}
    assert round(sum(test["score"] for test in results["tests"]), 2) == sum(e.points for e in EXERCISES)
    kinds = {test["extra_data"]["kind"]: test["visibility"] for test in results["tests"]}
    assert kinds == {"public": "visible", "hidden": "after_published"}


def test_feedback_for_stubs_is_short_and_russian(graded):
    _, out, _ = graded
    feedback = (out / "exercises" / "feedback.md").read_text(encoding="utf-8")
    assert feedback.startswith("# Результаты проверки: exercises")
    assert feedback.count("Не реализовано: все тесты получили NotImplementedError") == len(EXERCISES)
    reference = (out / "solutions" / "feedback_after_publication.md").read_text(encoding="utf-8")
    assert reference.count("Все тесты пройдены") == len(EXERCISES)
    before = (out / "solutions" / "feedback.md").read_text(encoding="utf-8")
    assert before.count("Все открытые тесты пройдены") == len(EXERCISES)
