"""Notebook 10's challenge: the student's own strategy (`exercises/my_strategy.py`).

It has no points and no cases: `check()` and `your_code` run its contract (course_lib.memory_eval.
contract) in a separate process; the course's version (a plain window) runs until the contract holds.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from course_lib.checking.catalog import CHALLENGES, EXERCISES, CourseLayout, get_exercise, registration_problems
from course_lib.exercises import run_check
from course_lib.memory_eval import contract
from course_lib.memory_eval.contract import run_clauses
from course_lib.your_code import COURSE, YOURS, your_code

ROOT = Path(__file__).resolve().parents[1]
PINNED = ROOT / "tests" / "support" / "my_strategy_pinned.py"


def course_copy(tmp_path: Path, strategy_source: str | None = None) -> Path:
    root = tmp_path / "course"
    (root / "exercises").mkdir(parents=True)
    (root / "course_lib").mkdir()  # marks the course folder for find_course_root
    shutil.copy(ROOT / "exercises" / "my_strategy.py", root / "exercises" / "my_strategy.py")
    if strategy_source is not None:
        (root / "exercises" / "my_strategy.py").write_text(strategy_source, encoding="utf-8")
    return root


def test_the_challenge_is_registered_apart_from_the_graded_exercises():
    assert [c.name for c in CHALLENGES] == ["my_strategy"]
    assert "my_strategy" not in {e.name for e in EXERCISES}
    assert get_exercise("MyStrategy", challenges=True).graded is False
    with pytest.raises(KeyError):
        get_exercise("my_strategy")  # grade, release and the autograder never see it as an exercise
    assert registration_problems(CourseLayout(ROOT)) == []


def test_the_stub_is_a_stub_and_the_course_version_runs(tmp_path):
    root = course_copy(tmp_path)
    result = run_check("my_strategy", root=root)
    assert all(case.category == "not_implemented" for case in result.cases)
    code = your_code("my_strategy", root=root, announce=False)
    assert code.implementation == COURSE and "заготовка" in code.status


def test_a_strategy_that_keeps_the_contract_runs(tmp_path):
    root = course_copy(tmp_path, PINNED.read_text(encoding="utf-8"))
    result = run_check("my_strategy", root=root)
    assert result.passed == len(result.cases) == len(contract.CLAUSES)
    code = your_code("my_strategy", root=root, announce=False)
    assert code.implementation == YOURS and "пункты договорённости: 8 из 8" in code.status


BROKEN = {
    "remembers after forget": ("    def forget(self):\n        self.turns, self.pinned = [], []",
                               "    def forget(self):\n        self.turns = []", "после forget()"),
    "over budget": ("            if self.count_tokens([instruction, *pinned, user, assistant, *kept, user_message]) > self.budget:",
                    "            if False:", "в пределах бюджета"),
    "changes the message": ("        text = user_message[\"content\"]",
                            "        user_message[\"content\"] += \" \"\n        text = user_message[\"content\"]",
                            "не меняются"),
    "keeps its turns in the class": ("        self.turns = []\n        self.pinned = []",
                                     "        self.pinned = []", "копия"),
}


@pytest.mark.parametrize("mistake", sorted(BROKEN))
def test_each_clause_catches_its_mistake(tmp_path, mistake):
    old, new, clause = BROKEN[mistake]
    source = PINNED.read_text(encoding="utf-8")
    assert old in source
    source = source.replace(old, new).replace("class MyStrategy:\n", "class MyStrategy:\n    turns = []  # one list for every object\n\n")
    root = course_copy(tmp_path, source)
    result = run_check("my_strategy", root=root)
    failed = [case.case.name for case in result.cases if not case.passed]
    assert failed and any(clause in name for name in failed), (mistake, failed)
    assert your_code("my_strategy", root=root, announce=False).implementation == COURSE


def test_a_hanging_strategy_cannot_hang_the_notebook(tmp_path, monkeypatch):
    monkeypatch.setattr(contract, "TIME_LIMIT_SECONDS", 3)
    source = PINNED.read_text(encoding="utf-8").replace("    def forget(self):\n", "    def forget(self):\n        while True:\n            pass\n")
    result = run_check("my_strategy", root=course_copy(tmp_path, source))
    assert {case.category for case in result.cases} == {"timeout"}


def test_the_clauses_run_in_process_too():
    from course_lib.course_versions.my_strategy import MyStrategy

    assert all(passed for _, passed, _ in run_clauses(MyStrategy))
