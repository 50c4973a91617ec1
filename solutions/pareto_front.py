"""Reference solution for exercises/pareto_front.py (the statement lives in the stub)."""

import math

KEYS = {"name", "accuracy", "tokens"}


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _dominates(a: dict, b: dict) -> bool:
    """`a` is at least as accurate for at most as many tokens, and strictly better in one of the two."""
    at_least_as_good = a["accuracy"] >= b["accuracy"] and a["tokens"] <= b["tokens"]
    strictly_better = a["accuracy"] > b["accuracy"] or a["tokens"] < b["tokens"]
    return at_least_as_good and strictly_better


def pareto_front(points: list[dict]) -> list[str]:
    if not isinstance(points, list):
        raise TypeError("points должен быть списком")
    names = set()
    for point in points:
        if not isinstance(point, dict) or set(point) != KEYS:
            raise TypeError("точка — словарь ровно с ключами name, accuracy и tokens")
        name, accuracy, tokens = point["name"], point["accuracy"], point["tokens"]
        if not isinstance(name, str) or not _is_number(accuracy) or not _is_number(tokens):
            raise TypeError("name — строка, accuracy и tokens — числа")
        if not 0 <= accuracy <= 1:
            raise ValueError("accuracy — число от 0 до 1")
        if not 0 <= tokens < math.inf:
            raise ValueError("tokens — конечное неотрицательное число")
        if name in names:
            raise ValueError(f"имя {name!r} встречается дважды")
        names.add(name)
    ordered = sorted(points, key=lambda point: (point["tokens"], point["name"]))
    front = [p for p in ordered if not any(_dominates(q, p) for q in points if q is not p)]
    return [point["name"] for point in front]
