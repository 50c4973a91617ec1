"""The Gradescope autograder, run the way Gradescope runs it, with a bare system python3.

A temporary folder is bind-mounted over /autograder in a private mount namespace (`unshare -m`, as
root); the zip is unpacked into source/, setup.sh runs, run_autograder is copied next to it, and it
runs under `env -i` with /usr/bin/python3 (no pip packages: importing grader needs none).
Twice: as root with namespaces (the `root` tier), and like a default Docker container — no
CAP_SYS_ADMIN, unshare/setns/clone(CLONE_NEWUSER) refused by seccomp as Docker's default profile
does — where the grader falls back to the `uid` tier. In both, a submission that tries to read the
autograder's source, hidden cases, results and the student's metadata finds nothing readable.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader import autograder
from course_lib.checking.catalog import EXERCISES, TOTAL_POINTS

from container_sim import CONTAINER

ROOT = Path(__file__).resolve().parents[1]
SYSTEM_PYTHON = "/usr/bin/python3"


SNOOP = r'''
import os
PATHS = ["/autograder/source", "/autograder/source/grading/hidden/commit_turn.json",
         "/autograder/source/grader/cli.py", "/autograder/submission",
         "/autograder/results", "/autograder/submission_metadata.json", "/autograder/run_autograder"]

def build_chat_messages(instruction, history, user_text):
    found = []
    for path in PATHS:
        try:
            if os.path.isdir(path):
                os.listdir(path)
            else:
                open(path, "rb").read(1)
            found.append(path)
        except OSError:
            pass
    print("READABLE", found)
    return "READABLE " + repr(found)
'''

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or os.geteuid() != 0 or not shutil.which("unshare")
    or not os.path.exists(SYSTEM_PYTHON),
    reason="needs root, unshare and a system python3 (as in CI)",
)


@pytest.fixture(scope="module")
def zip_path(tmp_path_factory):
    out = tmp_path_factory.mktemp("ag") / "autograder.zip"
    assert autograder.main(["--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def mountpoint():
    target = Path("/autograder")
    created = not target.exists()
    if created:
        target.mkdir()
    yield target
    if created:
        target.rmdir()


def test_system_python_is_bare_and_new_enough():
    check = "import sys; assert sys.version_info >= (3, 11); import importlib.util as u; " \
            "print([m for m in ('tiktoken', 'openai', 'pydantic') if u.find_spec(m)])"
    result = subprocess.run([SYSTEM_PYTHON, "-c", check], capture_output=True, text=True, env={})
    assert result.returncode == 0 and result.stdout.strip() == "[]", result.stderr


def test_zip_layout(zip_path):
    names = zipfile.ZipFile(zip_path).namelist()
    assert names[:2] == ["setup.sh", "run_autograder"]
    assert "grader/cli.py" in names and "grading/hidden/commit_turn.json" in names
    assert not [n for n in names if n.startswith(("solutions/", "notebooks/", "tests/"))]
    assert "course_lib/checking/runner.py" in names
    assert not [n for n in names if n.startswith("course_lib/") and not n.startswith("course_lib/checking/")
                and n != "course_lib/__init__.py"]  # fmt: skip
    mode = zipfile.ZipFile(zip_path).getinfo("run_autograder").external_attr >> 16
    assert mode & 0o111


def _run(tmp_path: Path, zip_path: Path, files: dict[str, str], docker_like: bool) -> dict:
    tree = tmp_path / "tree"
    (tree / "source").mkdir(parents=True)
    (tree / "submission" / "hw").mkdir(parents=True)
    (tree / "results").mkdir()
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(tree / "source")
    for name in ("setup.sh", "run_autograder"):
        os.chmod(tree / "source" / name, 0o755)
    shutil.copyfile(tree / "source" / "run_autograder", tree / "run_autograder")
    os.chmod(tree / "run_autograder", 0o755)
    (tree / "submission_metadata.json").write_text('{"users": [{"email": "s@uni.example"}]}')
    for name, text in files.items():
        (tree / "submission" / "hw" / name).write_text(text, encoding="utf-8")
    wrapper = tmp_path / "docker_like.py"
    wrapper.write_text(CONTAINER)
    run = "/autograder/run_autograder"
    if docker_like:
        run = f"{SYSTEM_PYTHON} {wrapper} landlock {run}"
    script = (
        f"mount --bind {tree} /autograder && env -i PATH=/usr/bin:/bin bash /autograder/source/setup.sh >/dev/null && "
        f"exec env -i PATH=/usr/bin:/bin {run}"
    )
    result = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    document = json.loads((tree / "results" / "results.json").read_text(encoding="utf-8"))
    document["_log"] = result.stdout + result.stderr
    return document


@pytest.mark.parametrize("docker_like", [False, True], ids=["namespaces", "docker-like"])
def test_reference_gets_full_marks(tmp_path, zip_path, mountpoint, docker_like):
    files = {f"{e.name}.py": (ROOT / "solutions" / f"{e.name}.py").read_text(encoding="utf-8") for e in EXERCISES}
    document = _run(tmp_path, zip_path, files, docker_like)
    assert document["score"] == TOTAL_POINTS, document["_log"]
    assert document["output_format"] == "md" and isinstance(document["execution_time"], int)
    tier = "uid" if docker_like else "root"
    assert f"Песочница: {tier}" in document["_log"]


def test_syntax_error_gets_a_valid_result(tmp_path, zip_path, mountpoint):
    document = _run(tmp_path, zip_path, {"commit_turn.py": "def commit_turn(:\n"}, docker_like=True)
    assert document["score"] == 0 and document["tests"]
    commit = [t for t in document["tests"] if t["extra_data"]["exercise"] == "commit_turn"]
    assert commit and all(t["status"] == "failed" for t in commit)
    assert document["extra_data"]["exercises"]["commit_turn"]["status"] == "syntax_error"


@pytest.mark.parametrize("docker_like", [False, True], ids=["namespaces", "docker-like"])
def test_student_code_cannot_read_the_autograder(tmp_path, zip_path, mountpoint, docker_like):
    document = _run(tmp_path, zip_path, {"build_chat_messages.py": SNOOP}, docker_like)
    outputs = [t["output"] for t in document["tests"] if t["extra_data"]["kind"] == "public"]
    assert any("READABLE []" in output for output in outputs), outputs
    assert not any("READABLE ['" in output for output in outputs)


def test_results_json_is_written_even_when_grading_fails(tmp_path, zip_path, mountpoint):
    # No exercise file at all is still a result; a broken source tree is an error result.
    tree_zip = tmp_path / "broken.zip"
    with zipfile.ZipFile(zip_path) as source, zipfile.ZipFile(tree_zip, "w") as target:
        for info in source.infolist():
            if info.filename != "course_lib/checking/exercises.json":
                target.writestr(info, source.read(info))
    document = _run(tmp_path, tree_zip, {}, docker_like=False)
    assert document["score"] == 0 and document["tests"] == []
    assert "Автоматическая проверка не выполнилась" in document["output"]


def readable_by_others(path: Path) -> bool:
    """Whether another uid can reach and list `path`: every ancestor searchable, the folder readable."""
    if os.stat(path).st_mode & 0o005 != 0o005:
        return False
    return all(os.stat(parent).st_mode & 0o001 for parent in path.parents)


def test_uid_tier_refuses_when_the_course_is_readable(tmp_path):
    """Without namespaces the grader proves the course is unreadable to the student's uid; a
    world-readable course tree (this checkout) is refused with exit 3, not graded unprotected."""
    if not readable_by_others(ROOT):
        pytest.skip("the course folder is not readable by other users here (e.g. a 0700 parent)")
    wrapper = tmp_path / "docker_like.py"
    wrapper.write_text(CONTAINER)
    sub = tmp_path / "sub"
    sub.mkdir()
    result = subprocess.run(
        [SYSTEM_PYTHON, str(wrapper), "landlock", SYSTEM_PYTHON, "-P", "-m", "grader", "grade", str(sub),
         "--out", str(tmp_path / "out"), "--exercise", "commit_turn"],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}, cwd=tmp_path,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 3, result.stderr
    assert "Песочница: uid" in result.stderr and "не скрывает" in result.stderr
