"""Long-term facts about a customer: what the extractor may return and what the store keeps.

The model's answer is untrusted text. `parse_extraction` accepts only the JSON shape the
`user_memory_extraction` prompt asks for, validated by pydantic (known kinds, short non-empty
values, a bounded number of facts); anything else is a `MemoryExtractionError` and nothing is stored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

FactKind = Literal["name", "order_number", "product", "problem", "phone", "email", "preference"]

KIND_PRIORITY: tuple[str, ...] = ("name", "order_number", "product", "problem", "phone", "email", "preference")
"""Which facts go into a request first when they do not all fit (see `context.select_memories`)."""

KIND_LABELS = {
    "name": "Имя",
    "order_number": "Номер заказа",
    "product": "Товар",
    "problem": "Проблема",
    "phone": "Телефон",
    "email": "E-mail",
    "preference": "Пожелание",
}

MAX_FACTS_PER_EXTRACTION = 20
MAX_VALUE_CHARS = 200


class MemoryExtractionError(ValueError):
    """The model's answer is not the JSON the extraction prompt asked for."""


class ExtractedFact(BaseModel):
    """One fact as the model returns it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: FactKind
    value: str = Field(min_length=1, max_length=MAX_VALUE_CHARS)

    @field_validator("value", mode="before")
    @classmethod
    def _strip(cls, value: object) -> object:
        # One line, no surrounding space: a value is a fact, not a paragraph.
        return " ".join(value.split()) if isinstance(value, str) else value


class ExtractionResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    facts: list[ExtractedFact] = Field(max_length=MAX_FACTS_PER_EXTRACTION)


@dataclass(frozen=True)
class MemoryFact:
    """A stored fact with where it came from. `active` is False once a newer value replaced it."""

    user_id: str
    kind: str
    value: str
    session_id: str
    turn: int
    created_at: float
    active: bool = True


def parse_extraction(text: str | None) -> list[ExtractedFact]:
    """The facts in a model's answer, or `MemoryExtractionError` saying what is wrong."""
    if text is None or not text.strip():
        raise MemoryExtractionError("Модель вернула пустой ответ вместо JSON с фактами.")
    body = text.strip()
    if body.startswith("```"):  # a fenced block is a common, harmless deviation
        body = body.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as error:
        raise MemoryExtractionError(f"Ответ модели — не JSON: {error.msg}.") from None
    try:
        result = ExtractionResult.model_validate(data)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "ответ"
        raise MemoryExtractionError(f"JSON с фактами не прошёл проверку ({where}): {first['msg']}.") from None
    # The same fact twice in one answer is one fact.
    return list(dict.fromkeys(result.facts))
