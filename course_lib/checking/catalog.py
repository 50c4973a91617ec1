"""The course's exercises and where their files live.

The list is data: `course_lib/checking/exercises.json` (name, entry, kind, params, title, notebook,
points, custom exceptions, and the split of an exercise's points between algorithm and argument
validation cases). `grade`, `release`, `check()` and the tests read it through this module;
`registration_problems()` lists every exercise or case file of a course tree that is not
registered (an error in `grade` and `release`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

REGISTRY_FILE = Path(__file__).with_name("exercises.json")


class RegistryError(ValueError):
    """exercises.json is malformed, or a course tree does not match it."""


@dataclass(frozen=True)
class Exercise:
    name: str  # file stem in exercises/ and solutions/, and the module name in the sandbox
    entry: str  # the function or class the student implements
    kind: str  # "function" | "class"
    params: tuple[str, ...]  # argument names, for readable feedback ("class": constructor's)
    title: str  # Russian, for reports
    notebook: str
    points: float = 10.0
    # Share of the points for algorithm (expects a return) vs validation (expects an exception) cases.
    algorithm_share: float = 0.7
    # Exceptions the statement defines in the stub, with the builtin each must inherit.
    custom_exceptions: tuple[tuple[str, str], ...] = ()
    graded: bool = True
    """False for a challenge: no points and no cases; `check()` and `your_code` run its contract."""
    contract: str = ""
    """A challenge's contract: the module `check()` runs on the student's file (`python -m <module> FILE`)."""


def _load_registry(path: Path = REGISTRY_FILE) -> tuple[Exercise, ...]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise RegistryError(f"{path.name}: не читается: {error}") from error
    if type(data) is not dict or data.get("format") != 1 or type(data.get("exercises")) is not list:
        raise RegistryError(f"{path.name}: ожидался объект с format = 1 и списком exercises")
    default = data.get("weights", {"algorithm": 0.7, "validation": 0.3})
    found = []
    for number, raw in enumerate(data["exercises"], start=1):
        where = f"{path.name}: упражнение {number}"
        try:
            weights = raw.get("weights", default)
            share = float(weights["algorithm"])
            if abs(share + float(weights["validation"]) - 1.0) > 1e-9 or not 0 < share <= 1:
                raise ValueError("weights: algorithm + validation = 1, algorithm > 0")
            exercise = Exercise(
                name=str(raw["name"]),
                entry=str(raw["entry"]),
                kind=str(raw["kind"]),
                params=tuple(str(param) for param in raw["params"]),
                title=str(raw["title"]),
                notebook=str(raw["notebook"]),
                points=float(raw["points"]),
                algorithm_share=share,
                custom_exceptions=tuple(dict(raw.get("custom_exceptions", {})).items()),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise RegistryError(f"{where}: {error}") from error
        if exercise.kind not in ("function", "class") or not exercise.name.isidentifier():
            raise RegistryError(f"{where}: kind — function или class, name — имя модуля")
        if exercise.points <= 0:
            raise RegistryError(f"{where}: points должно быть больше 0")
        found.append(exercise)
    names = [exercise.name for exercise in found]
    if len(set(names)) != len(names):
        raise RegistryError(f"{path.name}: имена упражнений повторяются")
    return tuple(found)


def _load_challenges(path: Path = REGISTRY_FILE) -> tuple[Exercise, ...]:
    """The open tasks without points ("challenges"): a stub in exercises/, a contract instead of cases."""
    data = json.loads(path.read_text(encoding="utf-8"))
    found = []
    for number, raw in enumerate(data.get("challenges", []), start=1):
        try:
            challenge = Exercise(
                name=str(raw["name"]), entry=str(raw["entry"]), kind=str(raw["kind"]),
                params=tuple(str(param) for param in raw["params"]), title=str(raw["title"]),
                notebook=str(raw["notebook"]), points=0.0, graded=False, contract=str(raw["contract"]),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError) as error:
            raise RegistryError(f"{path.name}: задание {number}: {error}") from error
        found.append(challenge)
    return tuple(found)


EXERCISES: tuple[Exercise, ...] = _load_registry()
CHALLENGES: tuple[Exercise, ...] = _load_challenges()
TOTAL_POINTS = round(sum(exercise.points for exercise in EXERCISES), 4)

BY_NAME = {exercise.name: exercise for exercise in EXERCISES}


class UnknownExercise(KeyError):
    """An exercise name the registry does not know (a KeyError, with a readable message)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def get_exercise(name: str, *, challenges: bool = False) -> Exercise:
    """By file name ("session_history") or by what the student writes ("SessionHistory").

    With `challenges`, an ungraded challenge ("my_strategy") is found too (`check()`, `your_code`)."""
    key = name.removesuffix(".py")
    if key in BY_NAME:
        return BY_NAME[key]
    pool = EXERCISES + (CHALLENGES if challenges else ())
    for exercise in pool:
        if key in (exercise.name, exercise.entry):
            return exercise
    known = ", ".join(exercise.name for exercise in pool)
    raise UnknownExercise(
        f"Нет упражнения {name!r} в реестре grader/exercises.json. Есть: {known}."
    )


@dataclass(frozen=True)
class CourseLayout:
    root: Path

    @property
    def exercises_dir(self) -> Path:
        return self.root / "exercises"

    @property
    def public_cases_dir(self) -> Path:
        return self.root / "exercises" / "cases"

    @property
    def hidden_cases_dir(self) -> Path:
        return self.root / "grading" / "hidden"

    @property
    def solutions_dir(self) -> Path:
        return self.root / "solutions"

    def public_cases_file(self, exercise: Exercise) -> Path:
        return self.public_cases_dir / f"{exercise.name}.json"

    def hidden_cases_file(self, exercise: Exercise) -> Path:
        return self.hidden_cases_dir / f"{exercise.name}.json"

    def secret_paths(self) -> list[Path]:
        """What a sandboxed child must never read."""
        return [self.root, self.solutions_dir, self.hidden_cases_dir]


def registration_problems(layout: CourseLayout) -> list[str]:
    """Exercise and case files of the course tree that exercises.json does not register."""
    problems = []
    known = set(BY_NAME)
    stubs_known = known | {challenge.name for challenge in CHALLENGES}
    folders = (
        (layout.exercises_dir, "*.py"),
        (layout.public_cases_dir, "*.json"),
        (layout.hidden_cases_dir, "*.json"),
        (layout.solutions_dir, "*.py"),
    )
    for folder, pattern in folders:
        for path in sorted(folder.glob(pattern)) if folder.is_dir() else []:
            registered = stubs_known if folder == layout.exercises_dir else known
            if path.stem not in registered and not path.name.startswith(("_", ".")):
                relative = path.relative_to(layout.root)
                problems.append(
                    f"{relative}: упражнение {path.stem!r} не зарегистрировано в "
                    "course_lib/checking/exercises.json"
                )
    for exercise in EXERCISES + CHALLENGES:
        if not (layout.exercises_dir / f"{exercise.name}.py").is_file():
            problems.append(f"exercises/{exercise.name}.py: нет заготовки зарегистрированного упражнения")
        if not exercise.graded:
            continue
        if not layout.public_cases_file(exercise).is_file():
            problems.append(f"exercises/cases/{exercise.name}.json: нет открытых тестов")
    return problems


def registration_report(layout: CourseLayout) -> str | None:
    """One Russian message listing what the registry does not match; None when all is registered."""
    problems = registration_problems(layout)
    if not problems:
        return None
    return "файлы упражнений не совпадают с реестром:\n  - " + "\n  - ".join(problems)


def _is_course_root(path: Path) -> bool:
    return (path / "exercises").is_dir() and (path / "course_lib").is_dir()


def find_course_root(start: str | os.PathLike[str] | None = None) -> Path:
    """Walk up from `start` (the current directory) to the folder holding exercises/ and course_lib/."""
    here = Path(start or os.getcwd()).resolve()
    for candidate in (here, *here.parents):
        if _is_course_root(candidate):
            return candidate
    package_parent = Path(__file__).resolve().parents[2]
    if _is_course_root(package_parent):
        return package_parent
    raise FileNotFoundError(
        f"Не найдена папка курса (с exercises/ и course_lib/) ни в {here}, ни выше."
    )


def course_root(given: str | os.PathLike[str] | None = None) -> Path:
    """The course `grade` and `release` work on: `given`, else the one holding this course_lib."""
    if given is not None:
        return Path(given).resolve()
    package_parent = Path(__file__).resolve().parents[2]
    if _is_course_root(package_parent):
        return package_parent
    return find_course_root()
