"""The summaries of the offline model: facts written as a few short labelled sentences.

The format is compact (well under 80 tokens for a typical case) and is read back by the same
extractor when the summary later arrives inside `<conversation_summary>`:
`extract_facts(compose_summary(facts)) == facts`. Instructions found in the conversation are never
copied; an attempt to change the rules is only noted as something that is not done.
"""

from __future__ import annotations

from course_lib.llm.offline import lexicon as lx
from course_lib.llm.offline.facts import Facts, extract_facts

NOTHING_YET = "Существенных фактов пока нет."


def compose_summary(facts: Facts) -> str:
    sentences: list[str] = []
    if facts.customer_name:
        sentences.append(f"Имя клиента: {facts.customer_name}.")
    if facts.order_number and facts.product:
        sentences.append(f"Заказ {facts.order_number}, товар: {facts.product}.")
    elif facts.order_number:
        sentences.append(f"Заказ {facts.order_number}.")
    elif facts.product:
        sentences.append(f"Товар: {facts.product}.")
    if facts.problem:
        sentences.append(f"Проблема: {facts.problem}.")
    if facts.damaged_part and not _problem_names_part(facts):
        sentences.append(f"Повреждено: {facts.damaged_part}.")
    if facts.checks:
        sentences.append(f"Уже сделано: {'; '.join(facts.checks)}.")
    if facts.preferences:
        sentences.append(f"Пожелания: {'; '.join(facts.preferences)}.")
    if facts.open_question:
        sentences.append(f"Открытый вопрос: {facts.open_question}.")
    if facts.rule_change_requested:
        sentences.append(lx.RULE_CHANGE_NOTE.capitalize() + ".")
    return " ".join(sentences) or NOTHING_YET


def _problem_names_part(facts: Facts) -> bool:
    """Whether "Проблема: …" already tells the damaged part (then "Повреждено: …" is redundant)."""
    if not facts.problem:
        return False
    return extract_facts(f"Проблема: {facts.problem}.").damaged_part == facts.damaged_part
