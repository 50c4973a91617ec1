"""The offline model and long-term memory (notebook 07).

- An extraction request (the customer's lines in `<memory_source>`) is answered with the JSON the
  `user_memory_extraction` prompt asks for: the facts its extractor finds in those lines, plus
  phone numbers and e-mail addresses. Requests to change the rules are not facts and never appear.
- In a chat request, `<user_memory>` and `<recalled_turns>` blocks are read like a summary: the
  facts they state count as known. That is the whole rule — no other knowledge comes in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from course_lib.llm.offline.dialogue import facts_of_turns, fragment_turns, strip_tags, tag_block
from course_lib.llm.offline.facts import Facts, extract_facts
from course_lib.llm.offline.ledger import EMAIL, PHONE  # one definition of a phone and an e-mail
from course_lib.llm.offline.summary import compose_summary

_MEMORY_TAG = re.compile(r"<(?:user_memory|recalled_turns)>")
MEMORY_LABELS = {
    "Имя": "customer_name",
    "Номер заказа": "order_number",
    "Товар": "product",
    "Проблема": "problem",
}


def is_extraction_request(messages: Sequence[Mapping[str, str]]) -> bool:
    last_user = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
    return tag_block(last_user, "memory_source") is not None


def compose_extraction(messages: Sequence[Mapping[str, str]]) -> str:
    last_user = next(m.get("content") or "" for m in reversed(messages) if m.get("role") == "user")
    source = tag_block(last_user, "memory_source") or ""
    lines = [turn.text for turn in fragment_turns(source) if turn.role == "user"]
    facts = facts_of_turns(fragment_turns(source))
    found: list[dict[str, str]] = []

    def add(kind: str, value: str | None) -> None:
        if value:
            found.append({"kind": kind, "value": value})

    add("name", facts.customer_name)
    add("order_number", facts.order_number)
    add("product", facts.product)
    add("problem", facts.problem)
    text = "\n".join(lines)
    add("phone", _last(PHONE.findall(text), _normalize_phone))
    add("email", _last(EMAIL.findall(text), str.lower))
    add("preference", facts.preferences[-1] if facts.preferences else None)
    return json.dumps({"facts": found}, ensure_ascii=False)


def read_memory_blocks(messages: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    """The request with each memory block replaced by a `<conversation_summary>` of its facts."""
    if not any(
        message.get("role") == "user" and _MEMORY_TAG.search(message.get("content") or "")
        for message in messages
    ):
        return list(messages)  # the usual case: nothing to rewrite, no copies
    rewritten: list[dict[str, str]] = []
    for message in messages:
        content = message.get("content") or ""
        facts = None
        if message.get("role") == "user":
            memory = tag_block(content, "user_memory")
            recalled = tag_block(content, "recalled_turns")
            if memory is not None:
                facts = memory_facts(memory)
            elif recalled is not None:
                facts = facts_of_turns(fragment_turns(recalled))
        if facts is None:
            rewritten.append(dict(message))
        else:
            summary = compose_summary(facts)
            rewritten.append({"role": "user", "content": f"<conversation_summary>\n{summary}\n</conversation_summary>"})
    return rewritten


def memory_facts(block: str) -> Facts:
    """Facts of a `<user_memory>` block ("- Имя: Анна" lines); unknown lines are read as text."""
    values: dict[str, str] = {}
    rest: list[str] = []
    for line in strip_tags(block).splitlines():
        label, _, value = line.lstrip("- ").partition(":")
        field = MEMORY_LABELS.get(label.strip())
        if field and value.strip():
            values[field] = value.strip()
        elif line.strip():
            rest.append(line.lstrip("- "))
    return extract_facts(". ".join(rest)).merge(Facts(**values))


def _normalize_phone(phone: str) -> str:
    digits = re.sub(r"\D", "", phone)
    return "+7" + digits[1:] if len(digits) == 11 else phone


def _last(values: list[str], normalize) -> str | None:
    return normalize(values[-1]) if values else None
