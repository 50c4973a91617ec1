"""The course's exercises and where their files live."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Exercise:
    name: str  # file stem in exercises/ and solutions/, and the module name in the sandbox
    entry: str  # the function or class the student implements
    kind: str  # "function" | "class"
    params: tuple[str, ...]  # argument names, for readable feedback ("class": constructor's)
    title: str  # Russian, for reports
    notebook: str
    points: float = 10.0
    # Exceptions the statement defines in the stub, with the builtin each must inherit.
    custom_exceptions: tuple[tuple[str, str], ...] = ()


EXERCISES: tuple[Exercise, ...] = (
    Exercise(
        "build_chat_messages",
        "build_chat_messages",
        "function",
        ("instruction", "history", "user_text"),
        "Запрос с историей диалога",
        "01",
    ),
    Exercise(
        "commit_turn",
        "commit_turn",
        "function",
        ("history", "user_text", "assistant_text"),
        "Сохранение завершённого хода",
        "02",
    ),
    Exercise(
        "session_history",
        "SessionHistory",
        "class",
        (),
        "Изолированное хранилище историй",
        "03",
    ),
    Exercise(
        "count_message_tokens",
        "count_message_tokens",
        "function",
        ("messages", "count_text"),
        "Токены запроса по правилу 3 + 3",
        "04",
    ),
    Exercise(
        "split_into_turns",
        "split_into_turns",
        "function",
        ("history",),
        "Разбиение истории на ходы",
        "04",
        custom_exceptions=(("ChatHistoryError", "ValueError"),),
    ),
    Exercise(
        "select_recent_turns",
        "select_recent_turns",
        "function",
        ("turns", "turn_token_costs", "available_tokens"),
        "Свежие ходы в пределах бюджета",
        "04",
    ),
    Exercise(
        "build_summary_source",
        "build_summary_source",
        "function",
        ("previous_summary", "messages"),
        "Данные для обновления summary",
        "05",
    ),
    Exercise(
        "trim_by_message_count",
        "trim_by_message_count",
        "function",
        ("messages", "max_messages"),
        "Обрезка истории по числу сообщений",
        "06",
    ),
    Exercise(
        "rolling_compress",
        "rolling_compress",
        "function",
        ("messages", "summarize", "keep"),
        "Скользящее summary с K свежими сообщениями",
        "05",
    ),
    Exercise(
        "merge_facts",
        "merge_facts",
        "function",
        ("current", "new"),
        "Новые факты о клиенте с историей",
        "07",
    ),
    Exercise(
        "select_memories",
        "select_memories",
        "function",
        ("facts", "token_costs", "budget"),
        "Факты о клиенте в пределах бюджета",
        "07",
    ),
    Exercise(
        "build_memory_message",
        "build_memory_message",
        "function",
        ("facts",),
        "Блок <user_memory> для запроса",
        "07",
    ),
)

BY_NAME = {exercise.name: exercise for exercise in EXERCISES}


def get_exercise(name: str) -> Exercise:
    """By file name ("session_history") or by what the student writes ("SessionHistory")."""
    key = name.removesuffix(".py")
    if key in BY_NAME:
        return BY_NAME[key]
    for exercise in EXERCISES:
        if exercise.entry == key:
            return exercise
    known = ", ".join(exercise.name for exercise in EXERCISES)
    raise KeyError(f"Нет упражнения {name!r}. Есть: {known}.")


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
