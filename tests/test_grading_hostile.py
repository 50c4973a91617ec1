"""The hostile catalogue: every submission in tests/hostile/ gets exactly the score it earned.

All of them are graded in one batch (next to the reference solutions, which must still score 100%),
with small timeouts, through the real `python -m course_lib grade` entry point. Each hostile folder
holds the hostile exercise files and a hostile.json:

    {"description": "...",
     "companions": ["commit_turn"],              # reference files added to the same submission:
                                                 #   the hostile file must not cost them a point
     "symlinks": {"commit_turn.py": "solutions/commit_turn.py"},   # optional, made at test time
     "expect": {"<exercise>": {"status": "timeout" | ... | "any",
                               "score": "zero" | "full" | "raises_only" | "returns_only"
                                        | {"fails_only": ["case name", ...]}}}}
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from course_lib.grading import cli
from course_lib.grading.catalog import BY_NAME, CourseLayout
from course_lib.grading.cases import load_cases
from course_lib.grading.sandbox import SANDBOX_UID_RANGE, detect_tier

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "hostile"
LAYOUT = CourseLayout(ROOT)
FAST = [
    "--case-timeout", "1.5", "--import-timeout", "3", "--max-timeouts", "2",
    "--jobs", "3", "--memory-mb", "256", "--no-progress",
]  # fmt: skip
CATALOGUE = {path.name: json.loads((path / "hostile.json").read_text(encoding="utf-8"))
             for path in sorted(HOSTILE.iterdir()) if (path / "hostile.json").is_file()}

pytestmark = pytest.mark.skipif(
    os.name != "posix" or detect_tier() == "basic",
    reason="the hostile catalogue needs the namespace sandbox (root or user namespaces)",
)


def _sandbox_pids() -> list[int]:
    """Live processes under a sandbox uid. Zombies are already dead: the host's init reaps them."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = dict(
                line.split(":", 1) for line in (entry / "status").read_text().splitlines()
            )
        except (OSError, ValueError):
            continue
        uid = int(status.get("Uid", "0").split()[0])
        state = status.get("State", "").split()[:1]
        if SANDBOX_UID_RANGE[0] <= uid < SANDBOX_UID_RANGE[1] and state != ["Z"]:
            found.append(int(entry.name))
    return found


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    submissions = base / "submissions"
    for name, spec in CATALOGUE.items():
        target = submissions / name
        target.mkdir(parents=True)
        for path in (HOSTILE / name).glob("*.py"):
            shutil.copyfile(path, target / path.name)
        for companion in spec.get("companions", []):
            shutil.copyfile(LAYOUT.solutions_dir / f"{companion}.py", target / f"{companion}.py")
        for link, points_to in spec.get("symlinks", {}).items():
            (target / link).symlink_to(ROOT / points_to)
    reference = submissions / "reference"
    shutil.copytree(LAYOUT.solutions_dir, reference)
    before = set(Path(tempfile.gettempdir()).glob("course-sandbox-*"))
    out = base / "out"
    folders = [str(path) for path in sorted(submissions.iterdir())]
    code = cli.main([*folders, "--out", str(out), *FAST])
    after = set(Path(tempfile.gettempdir()).glob("course-sandbox-*"))
    # Killed launchers are reaped at once, but a namespace's init may still be tearing the
    # namespace down (its processes already have SIGKILL pending) for a few milliseconds.
    deadline = time.monotonic() + 5
    while _sandbox_pids() and time.monotonic() < deadline:
        time.sleep(0.05)
    return {"code": code, "out": out, "leftover_dirs": after - before, "pids": _sandbox_pids()}


def _tests_of(out: Path, submission: str, exercise: str) -> dict[str, dict]:
    results = json.loads((out / submission / "results.json").read_text(encoding="utf-8"))
    return {
        test["extra_data"]["case"]: test
        for test in results["tests"]
        if test["extra_data"]["exercise"] == exercise
    }


def _exercise_status(out: Path, submission: str, exercise: str) -> str:
    results = json.loads((out / submission / "results.json").read_text(encoding="utf-8"))
    return results["extra_data"]["exercises"][exercise]["status"]


def _expected_passes(exercise: str, rule) -> set[str]:
    spec = BY_NAME[exercise]
    cases = load_cases(LAYOUT.public_cases_file(spec), spec, "public") + load_cases(
        LAYOUT.hidden_cases_file(spec), spec, "hidden"
    )
    names = {case.name for case in cases}
    if rule == "zero":
        return set()
    if rule == "full":
        return names
    if rule in ("raises_only", "returns_only"):
        key = "raises" if rule == "raises_only" else "return"
        return {case.name for case in cases if key in case.data["expect"]}
    missing = set(rule["fails_only"]) - names
    assert not missing, f"hostile.json names unknown cases: {missing}"
    return names - set(rule["fails_only"])


def test_batch_finishes_with_exit_0(graded):
    assert graded["code"] == 0


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_hostile_submission_scores_exactly_what_it_earned(graded, name):
    out = graded["out"]
    for exercise, expectation in CATALOGUE[name]["expect"].items():
        tests = _tests_of(out, name, exercise)
        passed = {case for case, test in tests.items() if test["status"] == "passed"}
        assert passed == _expected_passes(exercise, expectation["score"]), exercise
        for test in tests.values():
            assert test["score"] == (test["max_score"] if test["status"] == "passed" else 0)
        if expectation["status"] != "any":
            assert _exercise_status(out, name, exercise) == expectation["status"], exercise


@pytest.mark.parametrize(
    "name", sorted(name for name, spec in CATALOGUE.items() if spec.get("companions"))
)
def test_hostile_file_costs_no_other_exercise_a_point(graded, name):
    for companion in CATALOGUE[name]["companions"]:
        tests = _tests_of(graded["out"], name, companion)
        assert tests and all(test["status"] == "passed" for test in tests.values()), companion
        assert _exercise_status(graded["out"], name, companion) == "ok"


def test_reference_in_the_same_batch_still_scores_100(graded):
    with open(graded["out"] / "grades.csv", encoding="utf-8") as handle:
        rows = {row["submission"]: row for row in csv.DictReader(handle)}
    assert rows["reference"]["status"] == "ok"
    assert float(rows["reference"]["score"]) == float(rows["reference"]["max_score"]) == 90.0
    assert set(rows) == {*CATALOGUE, "reference"}


def test_nothing_is_left_running_or_lying_around(graded):
    assert graded["pids"] == []  # the fork bomb's sleeping children included
    assert graded["leftover_dirs"] == set()


def test_missing_files_are_reported_as_missing(graded):
    assert _exercise_status(graded["out"], "missing_function", "build_chat_messages") == "missing"
    feedback = (graded["out"] / "missing_function" / "feedback.md").read_text(encoding="utf-8")
    assert "нет функции split_into_turns" in feedback
    assert "нет файла build_chat_messages.py" in feedback


def test_the_thief_found_nothing(graded):
    """import_solution prints what it found; its public feedback shows it found nothing."""
    feedback = (graded["out"] / "import_solution" / "feedback.md").read_text(encoding="utf-8")
    assert "найдено: []" in feedback
    assert "solutions" not in feedback.split("найдено: []", 1)[1].split("путь:", 1)[0]


def test_symlinked_solution_is_refused(graded):
    feedback = (graded["out"] / "symlink_solution" / "feedback.md").read_text(encoding="utf-8")
    assert "символическая ссылка" in feedback


def test_status_column_names_the_problem(graded):
    with open(graded["out"] / "grades.csv", encoding="utf-8") as handle:
        rows = {row["submission"]: row for row in csv.DictReader(handle)}
    assert rows["infinite_loop"]["status"] == "timeout"
    assert rows["memory_bomb"]["status"] == "memory"
    assert rows["segfault"]["status"] == "crash"
    assert rows["syntax_error"]["status"] == "syntax_error"
    assert rows["symlink_solution"]["status"] == "missing"
    assert "build_chat_messages: timeout" in rows["infinite_loop"]["details"]


def _hidden_only_strings() -> set[str]:
    """String inputs that occur in hidden cases only (not in public cases, names or hints)."""
    def strings(value):
        if isinstance(value, str):
            yield value
        elif isinstance(value, list):
            for item in value:
                yield from strings(item)
        elif isinstance(value, dict):
            for key, item in value.items():
                yield key
                yield from strings(item)

    public_text = " ".join(
        path.read_text(encoding="utf-8") for path in LAYOUT.public_cases_dir.glob("*.json")
    ) + " ".join(path.read_text(encoding="utf-8") for path in LAYOUT.exercises_dir.glob("*.py"))
    found = set()
    for path in LAYOUT.hidden_cases_dir.glob("*.json"):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            shown = case["name"] + " " + case.get("hint", "")
            for text in strings({k: v for k, v in case.items() if k not in ("name", "hint")}):
                text = text.strip()
                if len(text) >= 6 and text not in public_text and text not in shown:
                    found.add(text)
    return found


def test_no_hidden_case_data_reaches_any_report(graded):
    hidden = _hidden_only_strings()
    assert len(hidden) > 20  # the check below is meaningful
    for path in graded["out"].rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            leaked = sorted(item for item in hidden if item in text)
            assert not leaked, f"{path.relative_to(graded['out'])}: {leaked[:3]}"
