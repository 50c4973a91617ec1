"""Limits that cover the child as a whole, and what runs at the same time as what."""

from __future__ import annotations

import errno
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from grader import cli
from course_lib.checking import sandbox
from course_lib.checking.cases import load_cases
from course_lib.checking.catalog import BY_NAME, CourseLayout
from course_lib.checking.child import seccomp
from course_lib.checking.runner import SubmissionChild, finish_exercise, run_exercise, start_exercise
from course_lib.checking.sandbox import Limits, detect_tier, selftest

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = CourseLayout(ROOT)
namespaced = pytest.mark.skipif(
    os.name != "posix" or detect_tier() == "basic", reason="needs the namespace sandbox"
)


@namespaced
def test_the_child_cannot_fork_make_keys_or_read_global_counters():
    """memory_fanout, keyring, sysinfo: refused by the seccomp filter, threads still work."""
    if os.uname().machine not in seccomp.ARCHES:
        pytest.skip("no seccomp table for this architecture")
    report = selftest(Limits(), [], probe_syscalls=True)
    calls = report["syscalls"]
    assert calls.pop("thread") == 0
    assert calls and set(calls.values()) == {errno.EPERM}, calls


def test_the_filter_is_well_formed_for_every_supported_architecture():
    for machine in seccomp.ARCHES:
        program = seccomp.build(machine)
        assert program and len(program) % 8 == 0 and len(program) // 8 < 4096
    assert seccomp.build("sparc") is None


def _shifted(source: str, exercise) -> str:
    return source + f"\nimport time as _t\n_real = {exercise.entry}\n" + (
        f"def {exercise.entry}(*args):\n    _t.sleep(0.3)\n    return _real(*args)\n"
    )


def test_the_exercise_budget_stops_a_slow_but_correct_solution():
    exercise = BY_NAME["commit_turn"]
    source = _shifted((ROOT / "solutions" / "commit_turn.py").read_text(encoding="utf-8"), exercise)
    public = load_cases(LAYOUT.public_cases_file(exercise), exercise, "public")
    started = time.monotonic()
    result = run_exercise(exercise, source, [public], Limits(exercise_seconds=0.8, tier=detect_tier()))
    assert time.monotonic() - started < 3
    by_group = {}
    for case in result.cases:
        by_group.setdefault(case.case.group, []).append(case.category)
    # Cheap exception cases run first and pass; the budget stops the case in flight; what is left
    # is "not run", never a failure with an unrelated hint.
    assert by_group["validation"][0] == "passed"
    assert "exercise_budget" in by_group["validation"] + by_group["algorithm"]
    assert set(by_group["algorithm"]) <= {"passed", "exercise_budget", "not_run"} and "not_run" in by_group["algorithm"]
    assert result.status == "timeout"
    assert "исчерпан общий лимит времени на упражнение (0.8 с)" in result.message


def test_the_submission_budget_stops_what_is_left():
    exercise = BY_NAME["commit_turn"]
    source = (ROOT / "solutions" / "commit_turn.py").read_text(encoding="utf-8")
    public = load_cases(LAYOUT.public_cases_file(exercise), exercise, "public")
    result = run_exercise(exercise, source, [public], Limits(), deadline=time.monotonic() - 1)
    assert {case.category for case in result.cases} == {"not_run"}
    assert all("общий лимит времени на всю работу" in case.detail for case in result.cases)
    assert result.status == "timeout"


def test_no_two_children_of_one_submission_ever_run_at_once(tmp_path, monkeypatch):
    """sysinfo_covert_channel: a hidden phase never has a concurrent sibling to signal to."""
    spans: list[tuple[str, float, float]] = []
    lock = threading.Lock()
    original_init, original_close = sandbox.ChildSession.__init__, sandbox.ChildSession.close

    def init(self, config, limits, hide=()):
        sources = [spec["source"] for spec in config.get("exercises", [])] or [config.get("source") or ""]
        marker = sources[0].rsplit("# submission ", 1)[-1] if "# submission " in sources[0] else None
        self._span = (marker, time.monotonic()) if marker else None
        original_init(self, config, limits, hide)

    def close(self):
        original_close(self)
        if getattr(self, "_span", None):
            with lock:
                spans.append((self._span[0], self._span[1], time.monotonic(), self))
            self._span = None

    monkeypatch.setattr(sandbox.ChildSession, "__init__", init)
    monkeypatch.setattr(sandbox.ChildSession, "close", close)
    folders = []
    for index in range(4):
        folder = tmp_path / f"student{index}"
        shutil.copytree(ROOT / "solutions", folder)
        for path in folder.glob("*.py"):  # tells the children of each submission apart
            path.write_text(path.read_text(encoding="utf-8") + f"\n# submission {index}\n", encoding="utf-8")
        folders.append(str(folder))
    out = tmp_path / "out"
    names = ["commit_turn", "split_into_turns", "count_message_tokens"]
    args = [*folders, "--out", str(out), "--jobs", "2", "--no-progress", "--allow-weak-sandbox"]
    assert cli.main([*args, *[f"--exercise={name}" for name in names]]) == 0
    by_submission: dict[str, list[tuple[float, float]]] = {}
    for key, start, end, _ in spans:
        by_submission.setdefault(key, []).append((start, end))
    assert len(by_submission) == 4 and all(len(v) >= 1 for v in by_submission.values())
    for intervals in by_submission.values():
        intervals.sort()
        for (_, end), (start, _) in zip(intervals, intervals[1:]):
            assert end <= start  # one after another within a submission
    all_spans = sorted((s, e) for _, s, e, _ in spans)
    overlapping_across = any(b[0] < a[1] for a, b in zip(all_spans, all_spans[1:]))
    assert overlapping_across  # while different submissions did run in parallel


def test_every_public_phase_runs_before_any_hidden_one(tmp_path, monkeypatch):
    """pid_counter_channel (uid tier): a hidden phase once advanced the machine's PID counter and
    the next exercise's failing public case printed it. No case a student sees runs after a hidden
    case of the same submission, so nothing a hidden phase leaves behind (PIDs, the clock, files)
    can reach that output, in any tier."""
    from course_lib.checking import runner

    sent: list[tuple[str, str]] = []
    original = runner._ExerciseRun.run_phase

    def run_phase(self, indices):
        sent.append((self.exercise.name, "/".join(sorted({self.cases[i].visibility for i in indices}))))
        return original(self, indices)

    monkeypatch.setattr(runner._ExerciseRun, "run_phase", run_phase)
    folder = tmp_path / "student"
    shutil.copytree(ROOT / "solutions", folder)
    names = ["commit_turn", "split_into_turns", "count_message_tokens"]
    args = [str(folder), "--out", str(tmp_path / "out"), "--no-progress", "--allow-weak-sandbox"]
    assert cli.main([*args, *[f"--exercise={name}" for name in names]]) == 0
    assert {exercise for exercise, _ in sent} == set(names)
    assert all(visibility in ("public", "hidden") for _, visibility in sent), sent  # never mixed
    kinds = [visibility for _, visibility in sent]
    assert kinds == sorted(kinds, key=lambda kind: kind == "hidden"), sent  # all public, then all hidden
    assert kinds.count("hidden") == len(names)


def test_an_exercises_time_budget_does_not_run_while_other_exercises_are_checked():
    from course_lib.checking.runner import _Budget

    budget = _Budget(Limits(exercise_seconds=10), None)
    before = budget.deadline
    budget.pause()
    time.sleep(0.05)
    budget.resume()
    assert budget.deadline - before >= 0.05


def _grade_with_one_child(sources: dict[str, str]) -> tuple[dict[str, float], int]:
    """Public, then hidden phases of these exercises through one SubmissionChild, as `grade` does."""
    limits = Limits(tier=detect_tier())
    given = {name: (BY_NAME[name], source) for name, source in sources.items()}
    pending = []
    with SubmissionChild(given, limits) as child:
        for name, source in sources.items():
            exercise = BY_NAME[name]
            phases = [load_cases(LAYOUT.public_cases_file(exercise), exercise, "public"),
                      load_cases(LAYOUT.hidden_cases_file(exercise), exercise, "hidden")]  # fmt: skip
            pending.append(start_exercise(exercise, source, phases, limits, child=child))
        scores = {item.exercise.name: finish_exercise(item).score for item in pending}
        return scores, child.started


def test_one_child_runs_a_whole_clean_submission():
    names = ["commit_turn", "count_message_tokens", "run_tool_calls", "merge_facts"]
    sources = {name: (ROOT / "solutions" / f"{name}.py").read_text(encoding="utf-8") for name in names}
    scores, started = _grade_with_one_child(sources)
    assert scores == {name: BY_NAME[name].points for name in names}
    assert started == 1


def test_a_file_that_patches_a_shared_module_gets_the_next_exercise_a_fresh_child():
    """It imports json and puts its own function there (or rebinds a builtin): the exercises after
    it must not meet that, so each phase starts them in a new child; their scores do not change."""
    reference = {name: (ROOT / "solutions" / f"{name}.py").read_text(encoding="utf-8")
                 for name in ("commit_turn", "run_tool_calls")}  # fmt: skip
    for patch in ("import json\njson.loads = lambda *args, **kwargs: {}\n", "import builtins\nbuiltins.len = lambda obj: 0\n"):
        sources = {"commit_turn": reference["commit_turn"] + "\n" + patch, "run_tool_calls": reference["run_tool_calls"]}
        scores, started = _grade_with_one_child(sources)
        assert scores["run_tool_calls"] == BY_NAME["run_tool_calls"].points, patch
        assert started >= 2, patch
