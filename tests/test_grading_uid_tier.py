"""The "uid" tier in a simulated Gradescope-like container (issue 21, item 4).

Root without CAP_SYS_ADMIN, new namespaces refused by seccomp: the grader picks the "uid" tier by
itself. There, exercise 2's hidden-phase child once wrote every call's inputs to /tmp and exercise
5's public case printed them. Now no child sees a file written by an earlier child: with Landlock it
cannot write outside its box; without it (a container whose seccomp profile blocks Landlock, also
simulated here) its files are 0600 and cannot be widened, and the grader removes them once it dies.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from container_sim import CONTAINER

ROOT = Path(__file__).resolve().parents[1]
# The sandbox uid must be able to read the interpreter: the system one, as on Gradescope.
SYSTEM_PYTHON = "/usr/bin/python3"
ENV = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}


# Exercise 2's hidden phase: leave the inputs wherever a later child might look.
WRITER = r'''
import os
MARKER = "@MARKER@"
done = []
def attempt(label, action):
    try:
        action()
        done.append(label)
    except Exception:
        pass
def write(path, mode=None):
    with open(path, "w") as handle:
        handle.write("hidden input: SECRET-" + MARKER)
    if mode is not None:
        os.chmod(path, mode)
attempt("tmp", lambda: write(f"/tmp/{MARKER}-tmp"))
attempt("var_tmp", lambda: write(f"/var/tmp/{MARKER}-vartmp"))
attempt("dev_shm", lambda: write(f"/dev/shm/{MARKER}-shm"))
attempt("mkdir", lambda: os.mkdir(f"/tmp/{MARKER}-dir", 0o777))
attempt("in_dir", lambda: write(f"/tmp/{MARKER}-dir/inputs"))
attempt("chmod", lambda: os.chmod(f"/tmp/{MARKER}-tmp", 0o644))
attempt("umask", lambda: os.umask(0))
attempt("mkfifo", lambda: os.mkfifo(f"/tmp/{MARKER}-fifo"))
def shared_memory():
    from multiprocessing import shared_memory
    block = shared_memory.SharedMemory(name=MARKER, create=True, size=64)
    block.buf[:6] = b"SECRET"
attempt("posix_shm", shared_memory)
raise RuntimeError("WROTE " + ",".join(done))
'''

# Exercise 5's public phase: print whatever an earlier child left.
READER = r'''
import os
MARKER = "@MARKER@"
seen = []
for place in ("/tmp", "/var/tmp", "/dev/shm"):
    for top, dirs, files in os.walk(place, onerror=lambda error: None):
        for name in dirs + files:
            if MARKER in name:
                path = os.path.join(top, name)
                try:
                    with open(path) as handle:
                        seen.append(path + "=" + handle.read())
                except OSError:
                    seen.append(path)
try:
    from multiprocessing import shared_memory
    seen.append("shm=" + bytes(shared_memory.SharedMemory(name=MARKER).buf[:6]).decode())
except Exception:
    pass
raise RuntimeError("SAW " + repr(sorted(seen)))
'''

GRADER = r'''
import json, sys
from course_lib.checking.cases import load_cases
from course_lib.checking.catalog import BY_NAME, CourseLayout, course_root
from course_lib.checking.runner import run_exercise
from course_lib.checking.sandbox import Limits, detect_tier, selftest
tier = detect_tier()
report = selftest(Limits(tier=tier), [])
layout = CourseLayout(course_root(None))
def run(name, source):
    exercise = BY_NAME[name]
    public = load_cases(layout.public_cases_file(exercise), exercise, "public")
    return run_exercise(exercise, source, [public], Limits(tier=tier)).message
writer, reader = sys.argv[1], sys.argv[2]
print(json.dumps({"tier": tier, "landlock": report["landlock"], "uid": report["uid"],
                  "writer": run("build_chat_messages", writer), "reader": run("commit_turn", reader)}))
'''


def _leftovers(marker: str) -> list[str]:
    found = []
    for place in ("/tmp", "/var/tmp", "/dev/shm"):
        found += [f"{place}/{name}" for name in os.listdir(place) if marker in name] if os.path.isdir(place) else []
    return found


@pytest.mark.skipif(sys.platform != "linux" or os.uname().machine != "x86_64", reason="x86_64 seccomp wrapper")
@pytest.mark.skipif(os.geteuid() != 0, reason="the uid tier needs root (as in CI and on Gradescope)")
@pytest.mark.parametrize("landlock", ["landlock", "no-landlock"])
def test_no_child_sees_files_of_an_earlier_child(tmp_path, landlock):
    marker = f"leak{secrets.token_hex(6)}"
    wrapper = tmp_path / "container.py"
    wrapper.write_text(CONTAINER)
    result = subprocess.run(
        [SYSTEM_PYTHON, str(wrapper), landlock, SYSTEM_PYTHON, "-P", "-c", GRADER,
         WRITER.replace("@MARKER@", marker), READER.replace("@MARKER@", marker)],
        cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout.splitlines()[-1])
    assert outcome["tier"] == "uid"
    if landlock == "landlock":
        assert outcome["landlock"] >= 1
        # Nothing can be created outside the box at all.
        assert "RuntimeError: WROTE  (строка" in outcome["writer"], outcome
    else:
        assert outcome["landlock"] == 0
        # Files can be created (0600), but never made readable to anyone else.
        assert "RuntimeError: WROTE tmp,var_tmp,dev_shm,mkdir,in_dir (строка" in outcome["writer"], outcome
    assert "RuntimeError: SAW [] " in outcome["reader"], outcome
    assert _leftovers(marker) == []  # the grader removed what the writer's uid owned
