"""The benchmark's data: customers, their sessions and the questions about them.

`load_dataset()` reads `course_lib/data/memory_eval.json` (written by `generate.py`) and checks its
shape, so that a broken file fails here with a Russian message, not deep inside a run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from course_lib.memory_eval.generate import CATEGORIES, DATASET_PATH

CATEGORY_TITLES = {
    "single_session": "факт из одной сессии",
    "multi_session": "факты из нескольких сессий",
    "update": "обновлённый факт",
    "temporal": "порядок во времени",
    "abstention": "не было сказано",
    "forgotten": "забытое по просьбе",
}


class DatasetError(ValueError):
    """The benchmark file is missing or broken."""


@dataclass(frozen=True)
class Turn:
    customer: str
    support: str
    action: str | None = None
    """"forget": after this turn the application erases what it keeps about the customer."""


@dataclass(frozen=True)
class Session:
    id: str
    day: int
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Evidence:
    """A turn that states a value the answer needs, and the value's written forms."""

    session: int
    turn: int
    kind: str
    value: str
    forms: tuple[str, ...]


@dataclass(frozen=True)
class Question:
    id: str
    customer: str
    category: str
    text: str
    expected: tuple[tuple[str, ...], ...]
    """Values the answer must give: each a group of accepted written forms."""
    rejected: tuple[tuple[str, ...], ...]
    """Values the answer must not give (an old phone, another product, what was forgotten)."""
    abstain: bool
    """The right answer is «не знаю» / a clarifying question."""
    evidence: tuple[Evidence, ...]


@dataclass(frozen=True)
class Customer:
    id: str
    name: str
    gender: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @property
    def turns(self) -> int:
        return sum(len(session.turns) for session in self.sessions)

    def turn(self, session: int, turn: int) -> Turn:
        return self.sessions[session].turns[turn]


@dataclass(frozen=True)
class Dataset:
    title: str
    description: str
    categories: tuple[str, ...]
    customers: tuple[Customer, ...]

    @property
    def questions(self) -> tuple[Question, ...]:
        return tuple(q for customer in self.customers for q in customer.questions)

    def customer(self, customer_id: str) -> Customer:
        return next(c for c in self.customers if c.id == customer_id)

    def question(self, question_id: str) -> Question:
        return next(q for q in self.questions if q.id == question_id)


def _groups(raw) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(group) for group in raw)


def parse_dataset(data: dict) -> Dataset:
    try:
        if data.get("format") != 1:
            raise DatasetError("Неизвестный формат файла бенчмарка (нужен format 1).")
        customers = []
        for raw in data["customers"]:
            sessions = tuple(
                Session(s["id"], s["day"], tuple(Turn(t["customer"], t["support"], t.get("action")) for t in s["turns"]))
                for s in raw["sessions"]
            )
            questions = tuple(
                Question(q["id"], raw["id"], q["category"], q["text"], _groups(q["expected"]), _groups(q["rejected"]),
                         q["abstain"], tuple(Evidence(e["session"], e["turn"], e["kind"], e["value"], tuple(e["forms"])) for e in q["evidence"]))  # fmt: skip
                for q in raw["questions"]
            )
            customers.append(Customer(raw["id"], raw["name"], raw["gender"], sessions, questions))
        dataset = Dataset(data["title"], data["description"], tuple(data["categories"]), tuple(customers))
    except (KeyError, TypeError) as error:
        raise DatasetError(f"Файл бенчмарка повреждён: нет поля или неверный тип ({error}).") from None
    unknown = {q.category for q in dataset.questions} - set(CATEGORIES)
    if unknown:
        raise DatasetError(f"Неизвестные категории вопросов: {', '.join(sorted(unknown))}.")
    return dataset


@lru_cache(maxsize=2)
def load_dataset(path: Path = DATASET_PATH) -> Dataset:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise DatasetError(f"Не удалось прочитать {path}: {error.strerror}.") from None
    except json.JSONDecodeError as error:
        raise DatasetError(f"{path} — не JSON: {error}.") from None
    return parse_dataset(data)
