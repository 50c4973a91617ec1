"""What the sandbox stops, tested on this machine, and what goes to the child (inputs only)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from course_lib.checking import sandbox
from course_lib.checking.cases import load_cases
from course_lib.checking.catalog import EXERCISES, CourseLayout
from course_lib.checking.runner import read_submission_file, run_exercise
from course_lib.checking.sandbox import SANDBOX_UID_RANGE, Limits, selftest

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = CourseLayout(ROOT)
SECRETS = [
    str(ROOT),
    str(LAYOUT.solutions_dir),
    str(LAYOUT.solutions_dir / "commit_turn.py"),
    str(LAYOUT.hidden_cases_dir),
    str(LAYOUT.hidden_cases_dir / "commit_turn.json"),
    str(ROOT / "course_lib" / "checking" / "cases.py"),
    "/etc/passwd",
    "/root/.bash_history",
    "/proc/self/environ",
]
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the root tier needs root")


@as_root
def test_root_tier_is_detected_and_hides_the_course():
    assert sandbox.detect_tier() == "root"
    report = selftest(Limits(tier="root"), SECRETS)
    assert report["readable"] == []
    assert report["network"].startswith("blocked")
    assert SANDBOX_UID_RANGE[0] <= report["uid"] < SANDBOX_UID_RANGE[1]
    assert report["pid"] == 2  # inside its own PID namespace, under our init


@as_root
def test_every_child_gets_its_own_uid():
    uids = {selftest(Limits(tier="root"), [])["uid"] for _ in range(3)}
    assert len(uids) == 3


def test_basic_tier_hides_nothing_which_is_why_grade_refuses_it():
    """Honest baseline: without namespaces the child reads what the grading user reads."""
    report = selftest(Limits(tier="basic"), SECRETS[:3])
    assert report["tier"] == "basic"
    assert str(LAYOUT.solutions_dir / "commit_turn.py") in report["readable"]


UNPRIVILEGED = """
import json, sys, types
package = types.ModuleType("course_lib")
package.__path__ = [{root!r} + "/course_lib"]   # skip course_lib/__init__ (it needs tiktoken)
sys.modules["course_lib"] = package
from pathlib import Path
from course_lib.checking import sandbox
from course_lib.checking.catalog import BY_NAME, CourseLayout
from course_lib.checking.cases import load_cases
from course_lib.checking.runner import read_submission_file, run_exercise
tier = sandbox.detect_tier()
report = sandbox.selftest(sandbox.Limits(tier=tier), {secrets!r})
layout = CourseLayout(Path({root!r}))
exercise = BY_NAME["commit_turn"]
source, _ = read_submission_file(layout.solutions_dir, exercise)
result = run_exercise(exercise, source, [load_cases(layout.public_cases_file(exercise), exercise, "public")],
                      sandbox.Limits(tier=tier))
print(json.dumps({{"tier": tier, "report": report, "score": result.score}}))
"""


@as_root
@pytest.mark.skipif(
    not (shutil.which("setpriv") and Path("/usr/bin/python3").exists()),
    reason="needs setpriv and a system python3 readable by nobody",
)
def test_userns_tier_for_an_ordinary_user():
    """An instructor without root: user namespaces give the same hiding, with no capabilities."""
    probe = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "unshare", "-r", "true"],
        capture_output=True,
    )
    if probe.returncode != 0:
        pytest.skip("unprivileged user namespaces are disabled here")
    # The checkout may sit in a private folder (0700, as root's home or mktemp -d are): give the
    # unprivileged grader a world-readable copy of what it runs, wherever the course was cloned.
    copy = Path(tempfile.mkdtemp(prefix="userns-grader-"))
    try:
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(ROOT / "course_lib" / "checking", copy / "course_lib" / "checking", ignore=ignore)
        for name in ("exercises/cases/commit_turn.json", "solutions/commit_turn.py"):
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / name, copy / name)
        for path in [copy, *copy.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        script = UNPRIVILEGED.format(root=str(copy), secrets=SECRETS)
        completed = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
             os.path.realpath("/usr/bin/python3"), "-I", "-S", "-c", script],
            capture_output=True, text=True, timeout=60, cwd="/",
        )  # fmt: skip
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    assert completed.returncode == 0, completed.stderr
    answer = json.loads(completed.stdout)
    assert answer["tier"] == "userns"
    assert answer["report"]["readable"] == []
    assert answer["report"]["network"].startswith("blocked")
    assert answer["score"] == 10.0


def _inputs_of(data):
    """A case without what the child must never see (expected values, names, hints)."""
    if isinstance(data, dict):
        return {key: _inputs_of(value) for key, value in data.items() if key not in ("expect", "args_after", "name", "hint")}
    if isinstance(data, list):
        return [_inputs_of(value) for value in data]
    return data


def test_only_inputs_are_ever_sent_to_the_child(monkeypatch):
    """Record every frame the grader writes to children while grading the reference."""
    sent: list[str] = []
    original = sandbox.ChildSession.send

    def recording(self, frame, **kwargs):
        # The harness's own compiled modules and the nonce are not case data.
        data = {key: value for key, value in frame.items() if key not in ("modules", "nonce")}
        sent.append(json.dumps(data, ensure_ascii=False))
        return original(self, frame, **kwargs)

    monkeypatch.setattr(sandbox.ChildSession, "send", recording)
    secrets = []
    for exercise in EXERCISES:
        public = load_cases(LAYOUT.public_cases_file(exercise), exercise, "public")
        hidden = load_cases(LAYOUT.hidden_cases_file(exercise), exercise, "hidden")
        source, _ = read_submission_file(LAYOUT.solutions_dir, exercise)
        result = run_exercise(exercise, source, [public, hidden], Limits())
        assert result.score == exercise.points
        # An expected string that is part of some input (a text returned stripped) is no secret.
        inputs = json.dumps([_inputs_of(case.data) for case in public + hidden], ensure_ascii=False)
        for case in public + hidden:
            secrets += [case.name, case.hint]
            steps = case.data.get("steps", [case.data])
            for step in steps:
                expected = step.get("expect", {}).get("return")
                if isinstance(expected, str) and json.dumps(expected, ensure_ascii=False)[1:-1] not in inputs:
                    secrets.append(expected)
    frames = [json.loads(text) for text in sent]
    everything = "\n".join(sent)
    for frame in frames:
        assert '"expect":' not in json.dumps(frame) or frame.get("type") == "end"  # a key, not a word of the source
    assert '"args_after"' not in everything and '"hint"' not in everything
    leaked = [text for text in secrets if text and json.dumps(text, ensure_ascii=False) in everything]
    assert leaked == []
    assert any("<previous_summary>" in text for text in secrets)  # the check above had teeth


def test_grader_parses_results_from_fd3_only(tmp_path):
    """The harness's own protocol frames printed to stdout mean nothing to the grader."""
    exercise = next(e for e in EXERCISES if e.name == "count_message_tokens")
    source = (
        "import json\n"
        "def count_message_tokens(messages, count_text):\n"
        "    for i in range(8):\n"
        "        print(json.dumps({'type': 'case', 'i': i, 'outcome': {'kind': 'return',"
        " 'value': ['i', 40]}, 'args_after': [None, None], 'result_is_arg': None}))\n"
        "    return -1\n"
    )
    public = load_cases(LAYOUT.public_cases_file(exercise), exercise, "public")
    result = run_exercise(exercise, source, [public], Limits())
    assert result.passed == 0 and result.status == "ok"


def test_a_child_that_stops_reading_cannot_stall_the_grader():
    spec = {
        "kind": "function",
        "module": "commit_turn",
        "entry": "commit_turn",
        "custom_exceptions": [],
        "source": "import time\ntime.sleep(60)\n",  # never gets to read its stdin again
    }
    with sandbox.ChildSession({"kind": "exercises", "exercises": [spec]}, Limits()) as session:
        session.send({"type": "import", "module": "commit_turn"})
        started = time.monotonic()
        with pytest.raises(sandbox.ChildGone) as gone:
            session.send({"type": "cases", "module": "commit_turn", "cases": [{"i": 0, "args": ["x" * (1 << 20)]}]}, timeout=0.5)
        assert gone.value.reason == "stalled"
        assert time.monotonic() - started < 3


def test_a_failing_start_leaves_nothing_behind(monkeypatch, tmp_path):
    monkeypatch.setattr(sandbox.tempfile, "tempdir", str(tmp_path))

    def broken(self, frame, **kwargs):
        raise RuntimeError("broken")

    monkeypatch.setattr(sandbox.ChildSession, "send", broken)
    with pytest.raises(RuntimeError):
        sandbox.ChildSession({"kind": "selftest", "probe_paths": []}, Limits())
    assert list(tmp_path.iterdir()) == []


def test_a_memory_bomb_at_import_is_the_memory_status_not_a_crash():
    # issue 31: it showed as `crash` («при импорте выброшено MemoryError»); the guide promises `memory`.
    exercise = next(e for e in EXERCISES if e.name == "commit_turn")
    public = load_cases(LAYOUT.public_cases_file(exercise), exercise, "public")
    result = run_exercise(exercise, "hoard = bytearray(1 << 40)\n", [public], Limits())
    assert result.status == "memory" and result.score == 0
    assert "превышен лимит памяти" in result.message and result.shown_status == "memory"


def _one_timeout(monkeypatch, when: str) -> None:
    """The first `when` ("ready": the import, "case": a call) looks timed out once, as on a machine
    that was busy for a moment; everything after is as it comes."""
    real_recv = sandbox.ChildSession.recv
    state = {"left": 1}

    def recv(self, timeout):
        frame = real_recv(self, timeout)
        if frame.get("type") == when and state["left"]:
            state["left"] -= 1
            raise sandbox.ChildTimeout("simulated")
        return frame

    monkeypatch.setattr(sandbox.ChildSession, "recv", recv)


@pytest.mark.parametrize("when", ["ready", "case"])
def test_a_wall_clock_timeout_is_tried_again_before_it_costs_points(monkeypatch, when):
    # issue 31: the same submission got 120 in one run and 110 in the next (a busy machine).
    exercise = next(e for e in EXERCISES if e.name == "commit_turn")
    public = load_cases(LAYOUT.public_cases_file(exercise), exercise, "public")
    hidden = load_cases(LAYOUT.hidden_cases_file(exercise), exercise, "hidden")
    source = (LAYOUT.solutions_dir / "commit_turn.py").read_text(encoding="utf-8")
    _one_timeout(monkeypatch, when)
    result = run_exercise(exercise, source, [public, hidden], Limits())
    assert result.status == "ok" and result.score == exercise.points


def test_a_real_hang_still_fails_and_says_it_was_tried_twice():
    exercise = next(e for e in EXERCISES if e.name == "commit_turn")
    public = load_cases(LAYOUT.public_cases_file(exercise), exercise, "public")
    started = time.monotonic()
    result = run_exercise(exercise, "import time\ntime.sleep(10**6)\n", [public], Limits(import_timeout=0.5))
    assert result.status == "timeout" and "(и при повторе)" in result.message
    assert 1.0 <= time.monotonic() - started < 5
    looping = "def commit_turn(history, user_text, assistant_text):\n    while True:\n        pass\n"
    result = run_exercise(exercise, looping, [public], Limits(case_timeout=0.3))
    failed = [case for case in result.cases if not case.passed]
    assert failed and all(case.category in ("timeout", "not_run") for case in failed)
    assert any("(и при повторе)" in case.detail for case in failed)


def test_a_shortened_call_says_where_the_whole_arguments_are():
    # issue 31: a failing public case quoted a call cut at 120 characters without saying so.
    exercise = next(e for e in EXERCISES if e.name == "split_into_turns")
    public = load_cases(LAYOUT.public_cases_file(exercise), exercise, "public")
    wrong = "def split_into_turns(history):\n    return []\n"
    result = run_exercise(exercise, wrong, [public], Limits())
    example = next(case for case in result.cases if case.case.name == "пример из условия")
    assert not example.passed and "…" in example.detail
    assert "[аргументы сокращены; целиком — в exercises/cases/split_into_turns.json, случай «пример из условия»]" in example.detail
    whole = [case for case in result.cases
             if not case.passed and all(len(repr(arg)) <= 120 for arg in case.case.data.get("args", []))]  # fmt: skip
    assert whole and all("сокращены" not in case.detail for case in whole)
