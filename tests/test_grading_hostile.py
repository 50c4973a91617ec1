"""The hostile catalogue: every submission in tests/hostile/ gets exactly the score it earned.

All of them are graded in one batch (next to the reference solutions, which must still score 100%),
with small timeouts, through the real `python -m grader grade` entry point. Each hostile folder
holds the hostile exercise files and a hostile.json:

    {"description": "...",
     "companions": ["commit_turn"],              # reference files added to the same submission:
                                                 #   the hostile file must not cost them a point
     "symlinks": {"commit_turn.py": "solutions/commit_turn.py"},   # optional, made at test time
     "folder_symlink": "solutions",              # optional: the submission folder is this symlink
     "expect": {"<exercise>": {"status": "timeout" | ... | "any",
                               "score": "zero" | "full" | "raises_only" | "returns_only"
                                        | {"fails_only": ["case name", ...]}}}}
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from grader import cli
from course_lib.checking.catalog import BY_NAME, EXERCISES, CourseLayout
from course_lib.checking.cases import load_cases
from course_lib.checking.sandbox import SANDBOX_UID_RANGE, ChildSession, detect_tier

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "hostile"
LAYOUT = CourseLayout(ROOT)
FAST = [
    "--case-timeout", "1.5", "--import-timeout", "3", "--max-timeouts", "2",
    "--jobs", "3", "--memory-mb", "256", "--no-progress",
    "--exercise-budget", "8", "--submission-budget", "14",
]  # fmt: skip
CATALOGUE = {path.name: json.loads((path / "hostile.json").read_text(encoding="utf-8"))
             for path in sorted(HOSTILE.iterdir()) if (path / "hostile.json").is_file()}

MAX_SCORE = sum(exercise.points for exercise in EXERCISES)

pytestmark = pytest.mark.skipif(
    os.name != "posix" or detect_tier() == "basic",
    reason="the hostile catalogue needs the namespace sandbox (root or user namespaces)",
)


def _sandbox_pids(uids: set[int]) -> list[int]:
    """Live processes under one of `uids` (the sandbox uids this batch used; another grader running on
    the machine has its own). Zombies are already dead: the host's init reaps them."""
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
        if uid in uids and state != ["Z"]:
            found.append(int(entry.name))
    return found


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    submissions = base / "submissions"
    submissions.mkdir()
    for name, spec in CATALOGUE.items():
        target = submissions / name
        if "folder_symlink" in spec:
            target.symlink_to(ROOT / spec["folder_symlink"], target_is_directory=True)
            continue
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
    # Everything the grader writes to stderr (its log included) during the batch.
    stderr = io.StringIO()
    handler = logging.StreamHandler(stderr)
    grading_log = logging.getLogger("grader")
    grading_log.addHandler(handler)
    used_uids: set[int] = set()
    start = ChildSession.__init__

    workdirs: set[Path] = set()

    def recording_start(self, *args, **kwargs):
        start(self, *args, **kwargs)
        if self._uid is not None:
            used_uids.add(self._uid)
        workdirs.add(Path(self.workdir))  # this batch's own: other test workers grade at the same time

    try:
        with contextlib.redirect_stderr(stderr), pytest.MonkeyPatch.context() as patch:
            patch.setattr(ChildSession, "__init__", recording_start)
            code = cli.main([*folders, "--out", str(out), *FAST])
    finally:
        grading_log.removeHandler(handler)
    after = set(Path(tempfile.gettempdir()).glob("course-sandbox-*"))
    # Killed launchers are reaped at once, but a namespace's init may still be tearing the
    # namespace down (its processes already have SIGKILL pending) for a few milliseconds.
    deadline = time.monotonic() + 5
    while _sandbox_pids(used_uids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return {
        "code": code,
        "out": out,
        "leftover_dirs": {path for path in after - before if path in workdirs} | {path for path in workdirs if path.exists()},
        "pids": _sandbox_pids(used_uids),
        "uids": used_uids,
        "stderr": stderr.getvalue(),
        "key_users": _sandbox_key_users(),
    }


def _sandbox_key_users() -> list[int]:
    """uids in the sandbox range that own kernel keys (they would outlive grading)."""
    try:
        lines = Path("/proc/key-users").read_text().splitlines()
    except OSError:
        return []
    uids = [int(line.split(":", 1)[0]) for line in lines if ":" in line]
    return [uid for uid in uids if SANDBOX_UID_RANGE[0] <= uid < SANDBOX_UID_RANGE[1]]


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
        # A failed case earns nothing; a passed one earns its points, except that a passed exception
        # case earns them only in proportion to the return-value cases passed (the fairness rule):
        # so a passed case never earns more than its maximum, and all of it when every case passed.
        all_passed = all(test["status"] == "passed" for test in tests.values())
        for test in tests.values():
            if test["status"] != "passed":
                assert test["score"] == 0
            elif all_passed:
                assert test["score"] == test["max_score"]
            else:
                assert 0 <= test["score"] <= test["max_score"]
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
    assert float(rows["reference"]["score"]) == float(rows["reference"]["max_score"]) == MAX_SCORE
    assert set(rows) == {*CATALOGUE, "reference"}


def test_nothing_is_left_running_or_lying_around(graded):
    if detect_tier() in ("root", "uid"):  # tiers that give each child a uid of its own
        assert len(graded["uids"]) > len(CATALOGUE)  # the check below looked at the batch's children
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


def _feedback(graded, name: str) -> str:
    return (graded["out"] / name / "feedback.md").read_text(encoding="utf-8")


def test_hidden_cases_show_only_passed_or_the_fixed_hint(graded):
    """reason_channel: how a hidden case failed is the child's choice, so it is never shown."""
    hints = {
        (exercise.name, case.name): case.hint
        for exercise in BY_NAME.values()
        for case in load_cases(LAYOUT.hidden_cases_file(exercise), exercise, "hidden")
    }
    for name in [*CATALOGUE, "reference"]:
        results = json.loads((graded["out"] / name / "results.json").read_text(encoding="utf-8"))
        for test in results["tests"]:
            extra = test["extra_data"]
            if extra["kind"] != "hidden":
                continue
            if test["status"] == "passed":
                assert test["output"] == "Пройден." and extra["reason"] == "passed"
            else:
                hint = hints[(extra["exercise"], extra["case"])]
                assert test["output"] == f"Не пройден. Подсказка: {hint}", (name, extra["case"])
                assert extra["reason"] == "failed"
    feedback = _feedback(graded, "reason_channel")
    hidden_parts = [part.split("\n## ", 1)[0] for part in feedback.split("Скрытые тесты, которые не прошли:")[1:]]
    assert not any("MemoryError" in part for part in hidden_parts)


def test_lone_surrogates_and_escapes_are_written_escaped(graded):
    feedback = _feedback(graded, "lone_surrogates")
    assert "\\ud800" in feedback and "\\x1b[31m" in feedback and "\\u202e" in feedback
    assert "\x1b" not in feedback and "\r" not in feedback
    for path in (graded["out"] / "lone_surrogates").iterdir():
        path.read_bytes().decode("utf-8")  # strict: every report is valid UTF-8


def test_nothing_from_a_child_reaches_the_graders_stderr(graded):
    """forged_sandbox_error (and every other child) leaves no escape or fake line on stderr."""
    assert "\x1b" not in graded["stderr"]
    assert "FAKE" not in graded["stderr"] and "grades.csv удалён" not in graded["stderr"]


def test_forged_frames_are_rejected_not_decoded(graded):
    tests = _tests_of(graded["out"], "forged_frames", "count_message_tokens")
    assert {test["extra_data"]["reason"] for test in tests.values() if test["extra_data"]["kind"] == "public"} == {"protocol"}


def test_slowloris_is_stopped_by_the_exercise_and_submission_budgets(graded):
    with open(graded["out"] / "grades.csv", encoding="utf-8") as handle:
        row = {r["submission"]: r for r in csv.DictReader(handle)}["slowloris"]
    assert row["status"] == "timeout"
    reasons = {
        test["extra_data"]["reason"]
        for exercise in ("build_chat_messages", "select_recent_turns", "trim_by_message_count")
        for test in _tests_of(graded["out"], "slowloris", exercise).values()
        if test["extra_data"]["kind"] == "public"
    }
    assert {"exercise_budget", "submission_budget"} <= reasons
    feedback = _feedback(graded, "slowloris")
    assert "исчерпан общий лимит времени на упражнение (8 с)" in feedback
    assert "исчерпан общий лимит времени на всю работу (14 с)" in feedback


def test_memory_fanout_and_keyring_are_refused_in_the_child(graded):
    assert "fork: PermissionError" in _feedback(graded, "memory_fanout")
    assert "keyring: RuntimeError" in _feedback(graded, "keyring")  # ctypes refused
    assert graded["key_users"] == []  # no kernel keys left behind by any child


def test_harness_is_out_of_reach(graded):
    feedback = _feedback(graded, "harness_monkeypatch")
    # A blank __main__, no gc object lists: the patches had nothing to patch.
    assert "main: ['__doc__', '__loader__', '__name__', '__package__', '__spec__']" in feedback
    assert "gc: RuntimeError" in feedback


def test_symlinked_submission_folder_is_refused(graded):
    feedback = _feedback(graded, "symlink_folder")
    assert "символическая ссылка" in feedback
    assert "Открытые тесты: 0 из" in feedback  # hidden results are concealed before publication
    results = json.loads((graded["out"] / "symlink_folder" / "results.json").read_text(encoding="utf-8"))
    assert results["score"] == 0 and all(test["score"] == 0 for test in results["tests"])
