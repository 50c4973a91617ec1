"""Reference solution for exercises/merge_facts.py (the statement lives in the stub)."""

KINDS = ("name", "order_number", "product", "problem", "phone", "email", "preference")


def _checked(fact: object) -> dict:
    if not isinstance(fact, dict):
        raise TypeError("факт должен быть словарём")
    if set(fact) != {"kind", "value"}:
        raise ValueError("у факта должны быть ровно ключи kind и value")
    kind, value = fact["kind"], fact["value"]
    if not isinstance(kind, str) or not isinstance(value, str):
        raise TypeError("kind и value должны быть строками")
    if kind not in KINDS:
        raise ValueError(f"неизвестный вид факта: {kind}")
    value = " ".join(value.split())
    if not value:
        raise ValueError("пустое значение факта")
    return {"kind": kind, "value": value}


def merge_facts(
    current: list[dict],
    new: list[dict],
) -> list[dict]:
    incoming = [_checked(fact) for fact in new]
    history = [dict(fact) for fact in current]
    for fact in incoming:
        active = next((old for old in history if old["kind"] == fact["kind"] and old["active"]), None)
        if active is not None and active["value"].casefold() == fact["value"].casefold():
            continue
        if active is not None:
            active["active"] = False
        history.append({**fact, "active": True})
    return history
