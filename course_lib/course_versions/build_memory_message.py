"""The course's version of exercises/build_memory_message.py (notebook 08)."""

LABELS = {
    "name": "Имя",
    "order_number": "Номер заказа",
    "product": "Товар",
    "problem": "Проблема",
    "phone": "Телефон",
    "email": "E-mail",
    "preference": "Пожелание",
}
MAX_VALUE_CHARS = 60


def _prepared(fact: dict[str, str]) -> str:
    if not isinstance(fact["value"], str):
        raise TypeError("значение факта должно быть строкой")
    if fact["kind"] not in LABELS:
        raise ValueError(f"неизвестный вид факта: {fact['kind']}")
    value = " ".join(fact["value"].split())
    if not value:
        raise ValueError("пустое значение факта")
    if len(value) > MAX_VALUE_CHARS:
        value = value[: MAX_VALUE_CHARS - 1] + "…"
    return value.replace("<", "&lt;")  # a value can neither open nor close a tag


def build_memory_message(facts: list[dict[str, str]]) -> dict[str, str] | None:
    lines = [(list(LABELS).index(fact["kind"]) if fact.get("kind") in LABELS else 0, index, fact)
             for index, fact in enumerate(facts)]
    values = [_prepared(fact) for fact in facts]  # validated in the given order, first error wins
    if not values:
        return None
    body = [f"- {LABELS[fact['kind']]}: {values[index]}" for _, index, fact in sorted(lines, key=lambda x: x[:2])]
    return {"role": "user", "content": "<user_memory>\n" + "\n".join(body) + "\n</user_memory>"}
