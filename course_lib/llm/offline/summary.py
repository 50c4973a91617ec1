"""The summaries of the offline model: facts written as a few short labelled sentences.

The format is compact (well under 80 tokens for a typical case) and is read back by the same
extractor when the summary later arrives inside `<conversation_summary>`:
`extract_facts(compose_summary(facts)) == facts`. Instructions found in the conversation are never
copied; an attempt to change the rules is only noted as something that is not done.
"""

from __future__ import annotations

import re

from course_lib.llm.offline import lexicon as lx
from course_lib.llm.offline.facts import CHECK_KEYS, Facts, extract_facts
from course_lib.llm.offline.ledger import ORDERS_LABEL, CustomerRecord

NOTHING_YET = "Существенных фактов пока нет."


# The priority the summary prompt states since 1.1.0: under a length cap, the lower ones go first.
# Earlier orders belong to item 1 («номер заказа и товар»), the customer's phone, e-mail and city
# to item 6 («ограничения и пожелания»: how and where to reach them).
PRIORITY = (
    "case", "orders", "problem", "open_question", "checks", "states", "name", "preferences", "contacts",
    "rule_change",
)
_CAP = re.compile(r"не длиннее\s+(\d+)\s+символ", re.IGNORECASE)


def length_cap(instruction: str) -> int | None:
    """The cap in characters that a summary instruction states ("не длиннее 600 символов")."""
    match = _CAP.search(instruction)
    return int(match.group(1)) if match else None


def compose_summary(facts: Facts, max_chars: int | None = None, record: CustomerRecord | None = None) -> str:
    """The facts (and the customer's `record`: earlier orders, contacts) as labelled sentences, in
    reading order.

    With `max_chars`, sentences are taken by `PRIORITY` while they fit and the first one that does
    not fit ends the summary (like the history window: no lower-priority fact jumps a higher one).
    The first sentence is always kept, even alone over the cap: an empty summary helps no one.
    """
    sentences = _sentences(facts, record or CustomerRecord())
    if not sentences:
        return NOTHING_YET
    if max_chars is not None:
        kept: set[str] = set()
        length = -1  # sentences are joined by one space
        for key in PRIORITY:
            if key not in sentences:
                continue
            added = length + 1 + len(sentences[key])
            if kept and added > max_chars:
                break
            kept.add(key)
            length = added
        sentences = {key: text for key, text in sentences.items() if key in kept}
    return " ".join(sentences.values())


def _sentences(facts: Facts, record: CustomerRecord) -> dict[str, str]:
    """Every sentence the summary could hold, keyed by its priority name, in reading order."""
    sentences: dict[str, str] = {}
    if facts.customer_name:
        sentences["name"] = f"Имя клиента: {facts.customer_name}."
    # The product stated together with the order, when the customer said it: «Есть новости по заказу
    # 6442?» after a new order 23411 makes 6442 the current case, with its own product.
    product = record.product_of(facts.order_number) or facts.product
    if facts.order_number and product:
        sentences["case"] = f"Заказ {facts.order_number}, товар: {product}."
    elif facts.order_number:
        sentences["case"] = f"Заказ {facts.order_number}."
    elif product:
        sentences["case"] = f"Товар: {product}."
    if len(record.orders) > 1:  # in the order they were first mentioned: the ledger reads it so
        items = "; ".join(f"{number} — {name}" if name else number for number, name in record.orders)
        sentences["orders"] = f"{ORDERS_LABEL} {items}."
    problem: list[str] = []
    if facts.problem:
        problem.append(f"Проблема: {facts.problem}.")
    if facts.damaged_part and not _problem_names_part(facts):
        problem.append(f"Повреждено: {facts.damaged_part}.")
    if problem:
        sentences["problem"] = " ".join(problem)
    # What the customer did and what they observed are different facts; each keeps its label.
    done = [check for check in facts.checks if CHECK_KEYS.get(check) not in lx.STATE_CHECK_KEYS]
    states = [check for check in facts.checks if CHECK_KEYS.get(check) in lx.STATE_CHECK_KEYS]
    if done:
        sentences["checks"] = f"Уже сделано: {'; '.join(done)}."
    if states:
        sentences["states"] = f"Установлено: {'; '.join(states)}."
    if facts.preferences:
        sentences["preferences"] = f"Пожелания: {'; '.join(facts.preferences)}."
    contacts = [f"телефон {record.phone}" if record.phone else "", f"e-mail {record.email}" if record.email else "",
                f"живёт в {_city_prepositional(record.city)}" if record.city else ""]  # fmt: skip
    if any(contacts):
        sentences["contacts"] = f"Контакты: {'; '.join(c for c in contacts if c)}."
    if facts.open_question:
        sentences["open_question"] = f"Открытый вопрос: {facts.open_question}."
    if facts.rule_change_requested:
        sentences["rule_change"] = lx.RULE_CHANGE_NOTE.capitalize() + "."
    return sentences


def _city_prepositional(city: str) -> str:
    return next((c.prepositional for c in lx.CITIES if c.nominative == city), city)


def _problem_names_part(facts: Facts) -> bool:
    """Whether "Проблема: …" already tells the damaged part (then "Повреждено: …" is redundant)."""
    if not facts.problem:
        return False
    return extract_facts(f"Проблема: {facts.problem}.").damaged_part == facts.damaged_part
