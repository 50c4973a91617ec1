"""`python -m grader release`: the student bundle has no solutions and no hidden cases."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from grader import release
from course_lib.checking.catalog import EXERCISES, CourseLayout

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = CourseLayout(ROOT)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "bundle"
    assert release.main(["--out", str(out)]) == 0
    return out


def test_bundle_layout(bundle):
    top = {path.name for path in bundle.iterdir()}
    assert {"notebooks", "course_lib", "exercises", "README.md", "requirements.txt"} <= top
    assert not top & {"solutions", "grading", "tests", ".git", ".venv", "benchmarks"}
    for exercise in EXERCISES:
        assert (bundle / "exercises" / f"{exercise.name}.py").is_file()
        assert (bundle / "exercises" / "cases" / f"{exercise.name}.json").is_file()
    assert not list(bundle.rglob("__pycache__"))
    assert (bundle / "course_lib" / "exercises.py").is_file()  # check() ships


def test_bundle_passes_its_own_verification(bundle):
    assert release.verify_bundle(bundle, LAYOUT) == []


def test_no_file_of_the_bundle_mentions_hidden_case_data(bundle):
    hidden = []
    for path in LAYOUT.hidden_cases_dir.glob("*.json"):
        hidden += [json.dumps(case["args"], ensure_ascii=False)
                   for case in json.loads(path.read_text(encoding="utf-8"))["cases"] if "args" in case]  # fmt: skip
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in bundle.rglob("*") if p.is_file()]
    assert not [args for args in hidden if any(args in text for text in texts)]


@pytest.mark.parametrize("tamper", ["solution", "hidden_json", "reformatted_hidden", "no_raise", "extra_dir"])
def test_verification_catches_a_leak(bundle, tmp_path, tamper):
    copy = tmp_path / "bundle"
    shutil.copytree(bundle, copy)
    if tamper == "solution":
        shutil.copyfile(LAYOUT.solutions_dir / "rolling_compress.py", copy / "notebooks" / "helper.py")
        expected = "совпадает с solutions/rolling_compress.py"
    elif tamper == "hidden_json":
        shutil.copyfile(LAYOUT.hidden_cases_dir / "commit_turn.json", copy / "exercises" / "cases" / "extra.json")
        expected = "содержит скрытый тест"
    elif tamper == "reformatted_hidden":
        case = json.loads((LAYOUT.hidden_cases_dir / "trim_by_message_count.json").read_text())["cases"][3]
        (copy / "notebooks" / "data.json").write_text(json.dumps({"x": [case]}, indent=4))
        expected = f"содержит скрытый тест «{case['name']}»"
    elif tamper == "no_raise":
        source = (LAYOUT.solutions_dir / "commit_turn.py").read_text(encoding="utf-8")
        (copy / "exercises" / "commit_turn.py").write_text(source.replace("len(history)", "len(history) + 0"))
        expected = "commit_turn не выбрасывает NotImplementedError"
    else:
        (copy / "solutions").mkdir()
        expected = "лишний элемент верхнего уровня: solutions"
    problems = release.verify_bundle(copy, LAYOUT)
    assert any(expected in problem for problem in problems), problems


def test_refuses_to_overwrite_what_is_not_a_bundle(tmp_path, bundle, capsys):
    other = tmp_path / "mine"
    other.mkdir()
    (other / "thesis.txt").write_text("не трогать")
    assert release.main(["--out", str(other)]) == 2
    assert release.main(["--out", str(other), "--force"]) == 2
    assert (other / "thesis.txt").read_text() == "не трогать"
    assert release.main(["--out", str(ROOT)]) == 2
    assert release.main(["--out", str(ROOT / "exercises")]) == 2
    again = tmp_path / "again"
    assert release.main(["--out", str(again)]) == 0
    assert release.main(["--out", str(again), "--force"]) == 0
    assert "Пакет собран" in capsys.readouterr().out


def test_instructor_commands_are_not_in_the_bundle(bundle, tmp_path):
    import os
    import subprocess
    import sys

    assert not (bundle / "grader").exists() and not (bundle / "tests").exists()
    assert not (bundle / "course_lib" / "testing").exists()
    assert not list(bundle.rglob("fake_openai.py")) and not list(bundle.rglob("llamacpp_standin.py"))
    env = {**os.environ, "PYTHONPATH": str(bundle), "LLM_BACKEND": "offline", "COURSE_DOTENV": "0"}
    run = lambda *args: subprocess.run([sys.executable, "-P", "-m", "course_lib", *args], cwd=bundle,  # noqa: E731
                                       env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    listed = run("--help").stdout
    assert "handin" in listed
    for command in ("grade", "release", "autograder", "export", "instructor"):
        assert f"  {command} " not in listed, command
    probe = "import importlib.util as u; s = u.find_spec('grader'); print(s.origin if s else '')"
    found = subprocess.run([sys.executable, "-P", "-c", probe], cwd=bundle, env=env,
                           capture_output=True, text=True, timeout=60).stdout.strip()  # fmt: skip
    assert str(bundle) not in found  # this venv's editable install may point at the course; the bundle has none
    for args in (["instructor", "mistakes"], ["instructor", "quiz-key"], ["grade", "x"]):
        result = run(*args)
        assert result.returncode == 2 and "для преподавателя" in result.stderr
        assert "Traceback" not in result.stderr
    copy = tmp_path / "copy"
    shutil.copytree(bundle, copy)
    (copy / "grader").mkdir()
    shutil.copyfile(ROOT / "grader" / "instructor.py", copy / "grader" / "instructor.py")
    (copy / "course_lib" / "sneaky.py").write_text("from grader.cli import main\n", encoding="utf-8")
    (copy / "course_lib" / "test_leak.py").write_text("x = 1\n", encoding="utf-8")
    problems = release.verify_bundle(copy, LAYOUT)
    assert any("grader" in problem and "верхнего уровня" in problem for problem in problems), problems
    assert any("sneaky.py" in problem and "grader.cli" in problem for problem in problems), problems
    assert any("test_leak.py" in problem for problem in problems), problems


def test_help_names_the_command_as_invoked(monkeypatch, capsys):
    from grader import cli

    monkeypatch.setattr("sys.argv", ["/venv/bin/course-grader", "grade", "--help"])
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert capsys.readouterr().out.startswith("usage: course-grader grade")
    monkeypatch.setattr("sys.argv", ["/x/grader/__main__.py", "grade", "--help"])
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert capsys.readouterr().out.startswith("usage: python -m grader grade")


def test_a_failed_release_leaves_nothing_and_keeps_the_previous_bundle(tmp_path, monkeypatch, capsys):
    # issue 31: a bundle that failed verification used to stay at --out, the reference solution inside.
    real_build = release.build_bundle

    def leaky_build(layout, out):
        written = real_build(layout, out)
        shutil.copyfile(LAYOUT.solutions_dir / "commit_turn.py", out / "notebooks" / "helper.py")
        return written

    fresh = tmp_path / "fresh"
    monkeypatch.setattr(release, "build_bundle", leaky_build)
    assert release.main(["--out", str(fresh)]) == 1
    assert not fresh.exists() and [p.name for p in tmp_path.iterdir()] == []
    assert "ничего не изменилось" in capsys.readouterr().err
    monkeypatch.setattr(release, "build_bundle", real_build)
    previous = tmp_path / "previous"
    assert release.main(["--out", str(previous)]) == 0
    before = sorted(str(p.relative_to(previous)) for p in previous.rglob("*"))
    monkeypatch.setattr(release, "build_bundle", leaky_build)
    assert release.main(["--out", str(previous), "--force"]) == 1
    assert sorted(str(p.relative_to(previous)) for p in previous.rglob("*")) == before
    assert not (previous / "notebooks" / "helper.py").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["previous"]  # no temporary folder left
    assert previous.stat().st_mode & 0o777 == 0o777 & ~release._umask()  # as a plain mkdir makes it
