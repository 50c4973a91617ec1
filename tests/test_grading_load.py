"""The same submission scores the same on an idle and on a loaded machine (issue 31).

The load is made, not hoped for: this process, the sandboxed child it starts (which inherits the
CPU affinity) and three busy processes share one CPU, so the child gets about a quarter of it. A
solution whose first call needs half the case timeout in CPU time passes on the idle CPU; on
the loaded one it needs about 2 timeouts of wall-clock time and passes only because the wait
subtracts the time the child spent waiting for the CPU (sandbox.ChildSession.recv, run_queue). A
hang still times out on both."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from course_lib.checking.cases import load_cases
from course_lib.checking.catalog import BY_NAME, CourseLayout
from course_lib.checking.runner import run_exercise
from course_lib.checking.sandbox import Limits

ROOT = Path(__file__).resolve().parents[1]
EXERCISE = BY_NAME["commit_turn"]
LIMITS = Limits(case_timeout=1.0)

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or not Path("/proc/self/schedstat").is_file(),
                                reason="needs CPU affinity and the kernel's schedstat")  # fmt: skip


def _loops_per_second() -> float:
    started, n = time.process_time(), 0
    while time.process_time() - started < 0.2:
        for _ in range(10_000):
            pass
        n += 10_000
    return n / (time.process_time() - started)


def _slow_first_call(loops: int) -> str:
    reference = (ROOT / "solutions" / "commit_turn.py").read_text(encoding="utf-8")
    burn = (f"_CALLS = []\n\n\ndef _burn():\n    if not _CALLS:\n        _CALLS.append(1)\n"
            f"        for _ in range({loops}):\n            pass\n\n\n")  # fmt: skip
    return burn + reference.replace('    if not isinstance(user_text, str)', '    _burn()\n    if not isinstance(user_text, str)', 1)


@contextmanager
def _one_busy_cpu(hogs: int = 3):
    cpu = min(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    # Each busy process in a session of its own, like the child: with autogroup scheduling a
    # session is one group, and the CPU is shared between groups.
    busy = [subprocess.Popen([sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"],
                             start_new_session=True) for _ in range(hogs)]  # fmt: skip
    os.sched_setaffinity(0, {cpu})
    try:
        time.sleep(0.2)
        yield
    finally:
        os.sched_setaffinity(0, before)
        for process in busy:
            process.kill()
            process.wait()


def _score(source: str, limits: Limits = LIMITS):
    layout = CourseLayout(ROOT)
    phases = [load_cases(layout.public_cases_file(EXERCISE), EXERCISE, "public"),
              load_cases(layout.hidden_cases_file(EXERCISE), EXERCISE, "hidden")]  # fmt: skip
    result = run_exercise(EXERCISE, source, phases, limits)
    return result.score, sorted({r.category for r in result.cases if not r.passed})


def test_a_loaded_cpu_costs_no_points_and_a_hang_still_fails():
    loops = int(_loops_per_second() * 0.5 * LIMITS.case_timeout)  # half the timeout, in CPU time
    slow = _slow_first_call(loops)
    idle = _score(slow)
    assert idle == (EXERCISE.points, [])
    with _one_busy_cpu():
        started = time.monotonic()
        loaded = _score(slow)
        took = time.monotonic() - started
    assert loaded == idle, f"loaded: {loaded}, {took:.1f} s"
    hang = _slow_first_call(10**12)
    with _one_busy_cpu():
        started = time.monotonic()
        points, categories = _score(hang, Limits(case_timeout=LIMITS.case_timeout, max_timeouts=1))
        took = time.monotonic() - started
    # The first call hangs, and again when tried once more; the rest are not run (max_timeouts=1).
    assert points == 0 and categories == ["not_run", "timeout"]
    # Each of the two waits lasts at most its timeout plus 3 timeouts of starvation.
    assert took < 2 * (1 + 3) * LIMITS.case_timeout + 5, took


def test_a_loaded_cpu_does_not_exhaust_the_exercise_budget():
    # A solution that hangs on one case and answers the others (tests/hostile/partial_loop). The
    # hang is tried twice; on a loaded CPU each wait is stretched by the run-queue delay, and the
    # exercise's budget is given the same time back, so the other cases still run and score.
    source = (ROOT / "tests" / "hostile" / "partial_loop" / "commit_turn.py").read_text(encoding="utf-8")
    limits = Limits(case_timeout=LIMITS.case_timeout, exercise_seconds=4 * LIMITS.case_timeout)
    idle = _score(source, limits)
    assert idle[1] == ["timeout"], idle
    with _one_busy_cpu():
        loaded = _score(source, limits)
    assert loaded == idle, f"idle: {idle}, loaded: {loaded}"
