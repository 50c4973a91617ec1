"""Children die with the grader (issue 21, item 5): `kill -9` or `kill -TERM` of the grader while a
child sleeps once left three sandbox processes reparented to PID 1, forever."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from course_lib.checking.sandbox import OWNER_LOCK, WORKDIR_PREFIX, _claim, detect_tier, sweep_abandoned_workdirs

ROOT = Path(__file__).resolve().parents[1]
# The sandbox uid must be able to read the interpreter: the system one, as on Gradescope.
SYSTEM_PYTHON = "/usr/bin/python3"
ENV = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}

GRADER = r"""
import sys
from course_lib.checking.cases import load_cases
from course_lib.checking.catalog import BY_NAME, CourseLayout, course_root
from course_lib.checking.runner import run_exercise
from course_lib.checking.sandbox import Limits
source = "import time\ntime.sleep(10**6)\n"
limits = Limits(tier=sys.argv[1], import_timeout=300, exercise_seconds=300, submission_seconds=300)
exercise = BY_NAME["commit_turn"]
public = load_cases(CourseLayout(course_root(None)).public_cases_file(exercise), exercise, "public")
print("started", flush=True)
run_exercise(exercise, source, [public], limits)
"""

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG is Linux's")


def _parents() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state) of every process."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            table[int(entry.name)] = (int(fields[1]), fields[0])
    return table


def _descendants(root: int) -> set[int]:
    table = _parents()
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, (parent, _) in table.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pids: set[int]) -> set[int]:
    table = _parents()
    return {pid for pid in pids if pid in table and table[pid][1] != "Z"}


def _tiers() -> list[str]:
    tier = detect_tier()
    tiers = [tier]
    if os.geteuid() == 0 and tier != "uid":
        tiers.append("uid")  # what a container without CAP_SYS_ADMIN gets
    return tiers


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "kill-TERM"])
@pytest.mark.parametrize("tier", _tiers())
def test_no_sandbox_process_outlives_the_grader(signum, tier):
    # The grader's own temporary folder: what it leaves behind is then known (the sandbox uid
    # must pass through it, as through /tmp).
    scratch = tempfile.mkdtemp(prefix="orphans-", dir="/tmp")
    os.chmod(scratch, 0o711)
    grader = subprocess.Popen(
        [SYSTEM_PYTHON if tier == "uid" else sys.executable, "-P", "-c", GRADER, tier],
        cwd=ROOT, env={**ENV, "TMPDIR": scratch}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        assert grader.stdout.readline() == b"started\n"
        expected = 3 if tier in ("root", "userns") else 1  # launcher, namespace init, harness
        deadline = time.monotonic() + 20
        children = set()
        while time.monotonic() < deadline:
            children = _alive(_descendants(grader.pid))
            if len(children) >= expected:
                break
            time.sleep(0.05)
        assert len(children) == expected, children
        time.sleep(0.3)  # the child is asleep in the student's import now
        os.kill(grader.pid, signum)
        grader.wait(timeout=10)
        deadline = time.monotonic() + 5
        while _alive(children) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _alive(children) == set()
        # A grader that died mid-case could not remove its working folder; the next one does.
        left = list(Path(scratch).glob(WORKDIR_PREFIX + "*"))
        assert len(left) == 1, left
        assert sweep_abandoned_workdirs(scratch) == 1
        assert not left[0].exists()
    finally:
        if grader.poll() is None:
            grader.kill()
            grader.wait()
        shutil.rmtree(scratch, ignore_errors=True)


def test_a_sweep_leaves_a_live_session_folder_alone(tmp_path):
    live = tmp_path / (WORKDIR_PREFIX + "live")
    dead = tmp_path / (WORKDIR_PREFIX + "dead")
    fresh = tmp_path / (WORKDIR_PREFIX + "unlocked")  # between mkdtemp and its lock
    claiming = tmp_path / (WORKDIR_PREFIX + "claiming")  # its lock file created, not yet locked
    for folder in (live, dead, fresh, claiming):
        (folder / "box").mkdir(parents=True)
    (claiming / f"{OWNER_LOCK}.{os.getpid()}").write_text("")  # _claim renames it only once locked
    holder = _claim(str(live))
    os.close(_claim(str(dead)))
    (tmp_path / (WORKDIR_PREFIX + "a-file")).write_text("")
    try:
        assert sweep_abandoned_workdirs(str(tmp_path)) == 1
        assert live.exists() and fresh.exists() and claiming.exists() and not dead.exists()
        assert sorted(p.name for p in live.iterdir()) == [OWNER_LOCK, "box"]  # no private name left
    finally:
        os.close(holder)
    assert sweep_abandoned_workdirs(str(tmp_path)) == 1
    assert not live.exists()
