"""The course's version of exercises/pareto_front.py (notebook 10): the strategies no other one beats."""

import math
from itertools import groupby

FIELDS = ("accuracy", "name", "tokens")


def _check_number(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{where}: ожидалось число (int или float), а не {type(value).__name__}")


def pareto_front(points: list[dict]) -> list[str]:
    if not isinstance(points, list):
        raise TypeError(f"points: ожидался список, а не {type(points).__name__}")
    seen = set()
    for index, point in enumerate(points):
        where = f"points[{index}]"
        if not isinstance(point, dict) or tuple(sorted(point)) != FIELDS:
            raise TypeError(f"{where}: ожидался словарь ровно с ключами name, accuracy, tokens")
        if not isinstance(point["name"], str):
            raise TypeError(f"{where}['name']: ожидалась строка")
        _check_number(point["accuracy"], f"{where}['accuracy']")
        _check_number(point["tokens"], f"{where}['tokens']")
        accuracy, tokens = point["accuracy"], point["tokens"]
        if math.isnan(accuracy) or not 0 <= accuracy <= 1:
            raise ValueError(f"{where}['accuracy']: ожидалось число от 0 до 1, а не {accuracy!r}")
        if math.isnan(tokens) or math.isinf(tokens) or tokens < 0:
            raise ValueError(f"{where}['tokens']: ожидалось конечное неотрицательное число, а не {tokens!r}")
        if point["name"] in seen:
            raise ValueError(f"{where}: имя {point['name']!r} уже было")
        seen.add(point["name"])
    # Cheapest first, and for the same cost the most accurate first: a group of equal points is on
    # the front when it is more accurate than every point before it.
    ordered = sorted(points, key=lambda p: (p["tokens"], -p["accuracy"], p["name"]))
    front, best = [], -math.inf
    for (_, accuracy), group in groupby(ordered, key=lambda p: (p["tokens"], p["accuracy"])):
        if accuracy > best:
            front.extend(p["name"] for p in group)
            best = accuracy
    return front
