"""Reference solution for exercises/build_memory_message.py (the statement lives in the stub)."""

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


def _value(fact: dict[str, str]) -> str:
    value = fact["value"]
    if not isinstance(value, str):
        raise TypeError("значение факта должно быть строкой")
    if fact["kind"] not in LABELS:
        raise ValueError(f"неизвестный вид факта: {fact['kind']}")
    value = " ".join(value.split())
    if not value:
        raise ValueError("пустое значение факта")
    if len(value) > MAX_VALUE_CHARS:
        value = value[: MAX_VALUE_CHARS - 1] + "…"
    return value.replace("<", "&lt;")


def build_memory_message(facts: list[dict[str, str]]) -> dict[str, str] | None:
    values = [_value(fact) for fact in facts]
    if not values:
        return None
    order = list(LABELS)
    ranked = sorted(range(len(facts)), key=lambda i: order.index(facts[i]["kind"]))
    lines = "\n".join(f"- {LABELS[facts[i]['kind']]}: {values[i]}" for i in ranked)
    return {"role": "user", "content": f"<user_memory>\n{lines}\n</user_memory>"}
