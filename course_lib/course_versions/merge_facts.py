"""The course's version of exercises/merge_facts.py (notebook 08)."""

KINDS = ("name", "order_number", "product", "problem", "phone", "email", "preference")


def _validated(fact: object) -> tuple[str, str]:
    if not isinstance(fact, dict):
        raise TypeError("факт должен быть словарём")
    if fact.keys() != {"kind", "value"}:
        raise ValueError("у факта должны быть ровно ключи kind и value")
    if not (isinstance(fact["kind"], str) and isinstance(fact["value"], str)):
        raise TypeError("kind и value должны быть строками")
    if fact["kind"] not in KINDS:
        raise ValueError(f"неизвестный вид факта: {fact['kind']}")
    value = " ".join(fact["value"].split())
    if not value:
        raise ValueError("пустое значение факта")
    return fact["kind"], value


def merge_facts(current: list[dict], new: list[dict]) -> list[dict]:
    incoming = [_validated(fact) for fact in new]  # all or nothing: one bad fact stops the merge
    merged = [fact.copy() for fact in current]
    for kind, value in incoming:
        active = [fact for fact in merged if fact["kind"] == kind and fact["active"]]
        if active and active[-1]["value"].casefold() == value.casefold():
            continue
        for fact in active:
            fact["active"] = False
        merged.append({"kind": kind, "value": value, "active": True})
    return merged
