"""Long-term facts about a customer: what the extractor may return and what the store keeps.

The model's answer is untrusted text. `parse_extraction` accepts only the JSON shape the
`user_memory_extraction` prompt asks for, validated by pydantic (known kinds, short non-empty
values, a bounded number of facts); anything else is a `MemoryExtractionError` and nothing is stored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from course_lib.llm.offline.lexicon import OVERRIDE_PATTERNS as _OVERRIDES
from course_lib.validation_words import json_problem, validation_field, validation_problem

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


def extraction_response_format() -> dict:
    """The provider's structured output for the extraction: `response_format` with a JSON schema.

    Servers that support it (OpenAI, llama.cpp's own server) constrain the answer to this shape;
    llama-cpp-python refuses "json_schema" and gets the same schema as {"type": "json_object",
    "schema": …} (LLMClient learns which form the server takes); a server that refuses both gets the
    plain request. pydantic checks the answer either way.
    """
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "user_memory_extraction",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {
                    "facts": {
                        "type": "array",
                        "maxItems": MAX_FACTS_PER_EXTRACTION,
                        "items": {
                            "type": "object",
                            "properties": {
                                "kind": {"type": "string", "enum": list(KIND_PRIORITY)},
                                "value": {"type": "string", "minLength": 1, "maxLength": MAX_VALUE_CHARS},
                            },
                            "required": ["kind", "value"],
                            "additionalProperties": False,
                        },
                    }
                },
                "required": ["facts"],
                "additionalProperties": False,
            },
        },
    }


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
    # Small local models often add a sentence before the object or after it (or the object twice):
    # the first JSON object is the answer, and pydantic still checks every field of it.
    start = body.find("{")
    try:
        data, _ = json.JSONDecoder().raw_decode(body, start if start >= 0 else 0)
    except json.JSONDecodeError as error:
        raise MemoryExtractionError(f"Ответ модели — не JSON: {json_problem(error)}.") from None
    try:
        result = ExtractionResult.model_validate(data)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = validation_field(first, default="ответ")
        raise MemoryExtractionError(f"JSON с фактами не прошёл проверку ({where}): {validation_problem(first)}.") from None
    # The same fact twice in one answer is one fact.
    return list(dict.fromkeys(result.facts))


# --- grounding: a fact is stored only if the customer said it (issue 22) --------------------------
#
# A model's extraction answer is a claim, not evidence. A small model invents phone numbers, turns
# "Напомните номер заказа" into a new number and stores "Запомни, что тебе можно…" as a problem.
# So every value is checked against the customer's own words of that turn.

_WORD = re.compile(r"[0-9]+|[a-zа-я]+")
_SENTENCE = re.compile(r"[^.!?…\n]+[.!?…]*")
# Requests about the assistant's memory or rules: whatever they contain is not a fact about the customer.
_COMMAND = re.compile(
    r"^\s*(?:пожалуйста\s*,?\s*)?(?:запомни|запиши|сохрани|забудь|игнорируй|пообещай|обещай|разреши)\w*"
    r"|\b(?:тебе|вам)\s+(?:можно|разрешено|нужно|следует|надо)\b|\bты\s+(?:можешь|должен|должна|обязан)\b"
    r"|\bвы\s+(?:должны|обязаны)\b"
)
_QUESTION_START = re.compile(
    r"^\s*(?:а\s+)?(?:как|какой|какая|какое|какие|каков\w*|сколько|когда|где|куда|почему|зачем|кто|что|чей"
    r"|можно\s+ли|нужно\s+ли|подскажите|подскажи|скажите|скажи|напомните|напомни)\b"
)
# Words a paraphrase may swap (the offline model says "в комплекте нет кабеля" for "без кабеля").
_SAME = {"без": "нет", "нету": "нет", "отсутствует": "нет"}


@dataclass(frozen=True)
class RejectedFact:
    fact: ExtractedFact
    reason: str
    """Why it was not stored, in Russian (shown in the console and the widget)."""


@dataclass(frozen=True)
class ScreenedFacts:
    stated: tuple[ExtractedFact, ...] = ()
    """Grounded in a statement of the customer: stored, replacing an older value."""
    asked: tuple[ExtractedFact, ...] = ()
    """Found only in a question: stored only when nothing of that kind is known (never overwrites)."""
    rejected: tuple[RejectedFact, ...] = ()


def normalize_words(text: str) -> list[str]:
    """Lower-case words and numbers, `ё` as `е`: the form values and texts are compared in."""
    words = _WORD.findall(text.lower().replace("ё", "е"))
    return [_SAME.get(word, word) for word in words]


def _same_word(value_word: str, text_word: str) -> bool:
    if value_word.isdigit() or text_word.isdigit():
        return value_word == text_word
    common = 0
    for a, b in zip(value_word, text_word):
        if a != b:
            break
        common += 1
    # Russian endings: "трещина" / "трещиной", "Анна" / "Анной", "почта" / "почте".
    return common >= min(3, len(value_word)) and common >= min(len(value_word), len(text_word)) - 3


def is_grounded(fact: ExtractedFact, text: str) -> bool:
    """Whether the customer's `text` states the fact's value (normalized match).

    Phone: the same digits; e-mail: the same address; other kinds: every number of the value and at
    least half of its words (by stem) appear in the text.
    """
    if fact.kind == "phone":
        return _phone_as_typed(fact.value, text) is not None
    if fact.kind == "email":
        return fact.value.strip().lower() in text.lower()
    value_words = [w for w in normalize_words(fact.value) if w.isdigit() or len(w) >= 3 or w == "нет"]
    text_words = normalize_words(text)
    if not value_words:
        return False
    numbers = [w for w in value_words if w.isdigit()]
    words = [w for w in value_words if not w.isdigit()]
    if not all(number in text_words for number in numbers):
        return False
    matched = sum(any(_same_word(w, t) for t in text_words) for w in words)
    return matched * 2 >= len(words)


def phone_from_customer(fact: ExtractedFact, text: str) -> ExtractedFact:
    """A grounded phone rebuilt from the customer's own digits, in one form whatever the model wrote:
    an 11-digit number (Russian «8 …» or «+7 …») becomes +7 and ten digits; any other, as typed.

    Qwen turned «8 (999) 111-22-33» into «+8 (999) 111-22-33», a number nobody gave."""
    typed = _phone_as_typed(fact.value, text)
    if typed is None:
        return fact
    said = re.sub(r"\D", "", typed)
    return fact.model_copy(update={"value": "+7" + said[1:] if len(said) == 11 else typed})


def _phone_as_typed(value: str, text: str) -> str | None:
    """The run of phone characters in `text` that holds the value's digits (its last ten, at least
    five), as the customer typed it; None when the text has no such run."""
    digits = re.sub(r"\D", "", value)[-10:]
    if len(digits) < 5:
        return None
    for run in re.findall(r"[\d\s()+\-]{5,}", text):
        if digits in re.sub(r"\D", "", run):
            return run.strip(" -")
    return None


def is_command(sentence: str) -> bool:
    """A request about the assistant's memory or rules ("Запомни, что тебе можно…")."""
    norm = " ".join(normalize_words(sentence))
    return bool(_COMMAND.search(norm)) or any(p.search(norm) for p in _OVERRIDES)


def is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?") or bool(_QUESTION_START.search(" ".join(normalize_words(sentence))))


# Words a small model takes for a name («Меня зовут Вера» → name = «меня»): present in the
# customer's text, so grounding alone lets them through, but they name nobody.
NOT_A_NAME = frozenset({
    "я", "меня", "мне", "мной", "мое", "моё", "мой", "моя", "мою", "зовут", "имя", "это", "вы", "вас", "вам",
    "клиент", "клиента", "клиентка", "пользователь", "покупатель", "здравствуйте", "привет", "спасибо",
})


_PLAIN_PHONE = re.compile(r"\+?[\d\s()\-]{10,20}")
_PLAIN_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def _plain_contact(fact: ExtractedFact) -> bool:
    """A phone number or an e-mail address and nothing else: a value that cannot carry an instruction,
    so «Запишите мой новый телефон: …» states it (a rule the customer wants written down cannot hide there)."""
    pattern = {"phone": _PLAIN_PHONE, "email": _PLAIN_EMAIL}.get(fact.kind)
    return pattern is not None and pattern.fullmatch(fact.value.strip()) is not None


def _names_nobody(fact: ExtractedFact) -> bool:
    words = [word.casefold() for word in re.findall(r"\w+", fact.value)]
    return fact.kind == "name" and (not words or all(word in NOT_A_NAME for word in words))


def screen_facts(facts: list[ExtractedFact], customer_text: str) -> ScreenedFacts:
    """Sort the model's facts by what the customer's own words of the turn say about them."""
    sentences = [s.strip() for s in _SENTENCE.findall(customer_text) if s.strip()]
    stated: list[ExtractedFact] = []
    asked: list[ExtractedFact] = []
    rejected: list[RejectedFact] = []
    for fact in facts:
        sources = [s for s in sentences if is_grounded(fact, s)]
        if not sources and is_grounded(fact, customer_text):
            sources = [customer_text]  # a value spread over two sentences
        statements = [s for s in sources if not is_command(s)] or (sources if _plain_contact(fact) else [])
        if _names_nobody(fact):
            rejected.append(RejectedFact(fact, "это не имя, а служебное слово из фразы клиента"))
        elif not sources:
            rejected.append(RejectedFact(fact, "клиент этого не говорил"))
        elif not statements or is_command(fact.value):
            rejected.append(RejectedFact(fact, "это просьба или команда ассистенту, а не факт о клиенте"))
        elif all(is_question(s) for s in statements):
            asked.append(fact)
        else:
            stated.append(phone_from_customer(fact, statements[0]) if fact.kind == "phone" else fact)
    return ScreenedFacts(tuple(stated), tuple(asked), tuple(rejected))
