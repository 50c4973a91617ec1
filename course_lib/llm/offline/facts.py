"""`Facts`: what the offline model can know about a support case, and `extract_facts(text)`.

The extractor reads one piece of customer text (a message, or a summary the model wrote earlier) and
returns the facts stated in it. It understands inflected forms ("с кофемашиной", "на подставке") and
stores values in canonical form ("кофемашина", "трещина на подставке"), so facts from different
messages can be compared and merged, and a summary written from facts reads back to the same facts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import TypeVar

from course_lib.llm.offline import lexicon as lx

T = TypeVar("T")

CHECK_KEYS: dict[str, str] = {phrase: key for key, phrase, _ in lx.CHECKS}


@dataclass(frozen=True)
class Facts:
    """Facts about one support case. Empty fields are unknown; `merge` lets newer values win."""

    order_number: str | None = None
    product: str | None = None
    problem: str | None = None
    damaged_part: str | None = None
    checks: tuple[str, ...] = ()
    customer_name: str | None = None
    preferences: tuple[str, ...] = ()
    open_question: str | None = None
    rule_change_requested: bool = False

    def __post_init__(self) -> None:
        # One canonical order (actions, then states), the order a summary writes them in.
        object.__setattr__(self, "checks", ordered_checks(self.checks))

    def merge(self, newer: Facts) -> Facts:
        """These facts updated by `newer`: its known values replace ours.

        Checks and preferences are kept per kind (one state of the box, one contact channel), in the
        order they were first reported.
        """
        return Facts(
            order_number=newer.order_number or self.order_number,
            product=newer.product or self.product,
            problem=newer.problem or self.problem,
            damaged_part=newer.damaged_part or self.damaged_part,
            checks=_merge_keyed(self.checks, newer.checks, CHECK_KEYS),
            customer_name=newer.customer_name or self.customer_name,
            preferences=_merge_keyed(self.preferences, newer.preferences, lx.PREFERENCE_KEYS),
            open_question=newer.open_question or self.open_question,
            rule_change_requested=self.rule_change_requested or newer.rule_change_requested,
        )

    @property
    def has_subject(self) -> bool:
        """Whether anything tells which order or item the conversation is about."""
        return any((self.order_number, self.product, self.problem, self.damaged_part))

    def is_empty(self) -> bool:
        return self == Facts()

    def known_fields(self) -> tuple[str, ...]:
        """Names of the fields that hold a value (handy in lessons and tests)."""
        return tuple(f.name for f in fields(self) if getattr(self, f.name))


def ordered_checks(checks: Iterable[str]) -> tuple[str, ...]:
    """Actions first, then observed states, each in the order reported — the summary's order, so
    a summary reads back to the same facts."""
    checks = tuple(checks)
    return tuple(sorted(checks, key=lambda check: CHECK_KEYS.get(check) in lx.STATE_CHECK_KEYS))


def _merge_keyed(
    older: tuple[str, ...], newer: tuple[str, ...], keys: dict[str, str]
) -> tuple[str, ...]:
    merged = list(older)
    for phrase in newer:
        key = keys.get(phrase, phrase)
        positions = [i for i, old in enumerate(merged) if keys.get(old, old) == key]
        if positions:
            merged[positions[0]] = phrase
        else:
            merged.append(phrase)
    return tuple(merged)


@lru_cache(maxsize=4096)
def extract_facts(text: str) -> Facts:
    """The facts stated in one piece of customer text.

    Cached: a chat resends the same history on every turn, and `Facts` is immutable.
    """
    norm = lx.normalize(text)
    problem, damaged_part = _problem_and_damaged_part(norm)
    return Facts(
        order_number=_order_number(norm),
        product=_product(norm),
        problem=problem,
        damaged_part=damaged_part,
        checks=_checks(norm),
        customer_name=_customer_name(text),
        preferences=_preferences(norm),
        open_question=_topic(norm),
        rule_change_requested=any(p.search(norm) for p in lx.RULE_CHANGE_PATTERNS),
    )


# --- order number ----------------------------------------------------------------------------

_ORDER_PATTERNS = (
    re.compile(r"\bзаказ(?:а|у|ом|е|ы|ов)?\s*(?:[:—–-]\s*)?(?:№|#|n|номер)?\s*(\d{3,})\b"),
    re.compile(
        r"\bномер\w*\s+(?:вашего\s+|моего\s+|нашего\s+)?заказа\s*(?:[:—–-]\s*)?(?:№|#)?\s*(\d{3,})\b"
    ),
)


def _order_number(norm: str) -> str | None:
    found = [(m.start(), m.group(1)) for p in _ORDER_PATTERNS for m in p.finditer(norm)]
    return min(found)[1] if found else None


# --- product -----------------------------------------------------------------------------------


def find_product(norm: str) -> lx.Noun | None:
    """The first product named in normalized text."""
    found = [
        (m.start(), index)
        for index, product in enumerate(lx.PRODUCTS)
        for m in product.pattern.finditer(norm)
    ]
    return lx.PRODUCTS[min(found)[1]] if found else None


def _product(norm: str) -> str | None:
    product = find_product(norm)
    return product.nominative if product else None


def product_noun(nominative: str | None) -> lx.Noun | None:
    """The lexicon entry of a product stored in `Facts.product`."""
    return next((p for p in lx.PRODUCTS if p.nominative == nominative), None)


def part_noun(nominative: str | None) -> lx.Noun | None:
    """The lexicon entry of a part stored in `Facts.damaged_part`."""
    return next((p for p in lx.PARTS if p.nominative == nominative), None)


# --- problem and damaged part ------------------------------------------------------------------

_CLAUSE_SPLIT = re.compile(r"[.!?;,\n]+|\s(?:но|а|однако|зато)\s|\s[—–]\s")


def _first(pattern_items: Iterable[tuple[T, re.Pattern[str]]], clause: str) -> tuple[int, T] | None:
    """(position, value) of the earliest match among (value, pattern) pairs, or None."""
    found = [(m.start(), value) for value, pattern in pattern_items if (m := pattern.search(clause))]
    return min(found, key=lambda item: item[0]) if found else None


def _problem_and_damaged_part(norm: str) -> tuple[str | None, str | None]:
    problem: str | None = None
    damaged_part: str | None = None
    for clause in _CLAUSE_SPLIT.split(norm):
        clause_problem, clause_part = _clause_problem(clause)
        problem = problem or clause_problem
        damaged_part = damaged_part or clause_part
    return problem, damaged_part


def _clause_problem(clause: str) -> tuple[str | None, str | None]:
    candidates: list[tuple[int, str | None, str | None]] = []

    damage = _clause_damage(clause)
    if damage:
        candidates.append(damage)
    missing = _first(lx.MISSING_ITEMS, clause)
    if missing:
        candidates.append((missing[0], lx.MISSING_ITEM_PROBLEM.format(item=missing[1]), None))
    verb = _first(((phrase, pattern) for phrase, pattern, _ in lx.PROBLEMS), clause)
    if verb:
        candidates.append((verb[0], verb[1], None))

    if not candidates:
        return None, None
    problem = next((c[1] for c in sorted(candidates, key=lambda c: c[0]) if c[1]), None)
    part = next((c[2] for c in candidates if c[2]), None)
    return problem, part


def _clause_damage(clause: str) -> tuple[int, str | None, str | None] | None:
    """Damage stated in one clause: (position, problem or None, damaged part or None)."""
    if lx.NO_DAMAGE.search(clause):
        return None
    noun = _first(lx.DAMAGE_NOUNS, clause)
    participle = _first(lx.DAMAGE_PARTICIPLES, clause)
    generic = lx.GENERIC_DAMAGE.search(clause)
    if not (noun or participle or generic):
        return None
    part_hit = _first(((part, part.pattern) for part in lx.PARTS), clause)
    if part_hit is None:
        if noun and not lx.BOX.search(clause):
            return noun[0], noun[1], None  # "монитор пришёл с трещиной": no part named
        return None
    position, part = part_hit
    if noun:
        problem: str | None = f"{noun[1]} на {part.prepositional}"
    elif participle:
        problem = f"{part.participle(participle[1])} {part.nominative}"
    else:
        problem = None  # "повреждена подставка": the part is known, the kind of damage is not
    return position, problem, part.nominative


def problem_kind(problem: str | None) -> str | None:
    """"damage", "missing", "power", "delivery" or "other" for a canonical problem phrase."""
    if problem is None:
        return None
    for phrase, _, kind in lx.PROBLEMS:
        if problem == phrase:
            return kind
    if problem.startswith(lx.MISSING_ITEM_PROBLEM.split("{")[0]):
        return "missing"
    return "damage"


# --- checks, name, preferences, topic ----------------------------------------------------------


def _checks(norm: str) -> tuple[str, ...]:
    found: dict[str, tuple[int, str]] = {}
    for key, phrase, pattern in lx.CHECKS:
        if key in found:
            continue  # the first listed phrase of a kind wins ("две розетки" over "розетка")
        match = pattern.search(norm)
        if match:
            found[key] = (match.start(), phrase)
    return tuple(phrase for _, phrase in sorted(found.values()))


_NAME_WORD = r"([А-ЯЁA-Z][а-яёa-z]+(?:-[А-ЯЁA-Z][а-яёa-z]+)?)"
_NAME_PATTERNS = (
    re.compile(
        r"(?i:\bменя\s+зовут|\bзовут\s+меня|\bмо[её]\s+имя|\bимя\s+клиента)\s*[:—–-]?\s*" + _NAME_WORD
    ),
    # "Клиент Анна." as a summary may put it; "Клиент Вашего магазина" is not a name.
    re.compile(r"(?i:\bклиент(?:ка)?)\s*[:—–-]?\s+" + _NAME_WORD + r"\b(?!\s+[а-яёa-z])"),
)


def _customer_name(text: str) -> str | None:
    for pattern in _NAME_PATTERNS:
        match = pattern.search(text)
        if match:
            return match.group(1)
    return None


_SENTENCE_SPLIT = re.compile(r"[.!?\n]+")


def _preferences(norm: str) -> tuple[str, ...]:
    contact: str | None = None
    resolution: str | None = None
    for sentence in _SENTENCE_SPLIT.split(norm):
        if contact is None and lx.CONTACT_WISH.search(sentence):
            hit = _first(lx.CONTACT_CHANNELS, sentence)
            contact = hit[1] if hit else None
        if resolution is None and lx.RESOLUTION_WISH.search(sentence):
            hit = _first(lx.RESOLUTIONS, sentence)
            resolution = hit[1] if hit else None
    return tuple(p for p in (contact, resolution) if p)


def _topic(norm: str) -> str | None:
    for _, phrase, pattern in lx.TOPICS:
        if pattern.search(norm):
            return phrase
    return None
