"""Turning the child's tagged data back into values, and comparing them by exact type.

The child encodes what the student's code returned as nested lists: ["n"] None, ["b", bool],
["i", int], ["f", float], ["s", str], ["l", [...]] list, ["t", [...]] tuple,
["d", [[key, value], ...]] dict, ["x", "TypeName"] anything else (an object the grader cannot
trust, e.g. one whose __eq__ always says True). Decoding checks every node's shape and payload
type; anything malformed is a protocol violation. Comparison happens only here, in the grader's
process, with `type(a) is type(b)` at every level: True is not 1, a str subclass is not a str.
"""

from __future__ import annotations

import math
import time
from typing import Any


class ProtocolViolation(ValueError):
    """The child sent something that is not a well-formed tagged value."""


class Opaque:
    """A value of a type the grader does not accept (the child only told us the type's name)."""

    __slots__ = ("type_name",)

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<объект типа {self.type_name}>"


class Pairs:
    """A dict whose keys are not all str (unhashable, or hashes anyone can collide): never equal
    to a dict, and never hashed here."""

    __slots__ = ("items",)

    def __init__(self, items: list[tuple[Any, Any]]) -> None:
        self.items = items

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{short_repr(k)}: {short_repr(v)}" for k, v in self.items) + "}"


MAX_DEPTH = 80
MAX_NODES = 300_000  # the child sends at most 200,000 per value
DECODE_SECONDS = 2.0


class _Budget:
    """Bounds one decode: node count (linear work) and, checked every 4,096 nodes, wall time."""

    __slots__ = ("nodes", "deadline")

    def __init__(self, seconds: float) -> None:
        self.nodes = 0
        self.deadline = time.monotonic() + seconds

    def spend(self) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise ProtocolViolation("слишком много узлов")
        if not self.nodes & 4095 and time.monotonic() > self.deadline:
            raise ProtocolViolation("разбор ответа занял слишком много времени")


def decode(node: Any, seconds: float = DECODE_SECONDS) -> Any:
    """Tagged data -> a value, in time linear in its size.

    Dicts are rebuilt only when every key is a str (str hashes are randomized per process, so keys
    chosen to collide cannot make insertion quadratic). Any other key kind — ints, floats, tuples,
    whose hashes anyone can make collide — gives `Pairs`, which never equals a dict: expected values
    come from JSON, whose keys are always str.
    """
    return _decode(node, 0, _Budget(seconds))


def _decode(node: Any, depth: int, budget: _Budget) -> Any:
    budget.spend()
    if depth > MAX_DEPTH:
        raise ProtocolViolation("слишком глубокая вложенность")
    if type(node) is not list or not node or type(node[0]) is not str:
        raise ProtocolViolation("узел должен быть списком с тегом")
    tag, payload = node[0], node[1:]
    if tag == "n" and not payload:
        return None
    if len(payload) != 1:
        raise ProtocolViolation(f"узел {tag!r}: неверная длина")
    value = payload[0]
    if tag == "b" and type(value) is bool:
        return value
    if tag == "i" and type(value) is int:
        return value
    if tag == "f" and type(value) in (float, int):
        try:
            return float(value)
        except OverflowError:
            raise ProtocolViolation("число не помещается во float") from None
    if tag == "s" and type(value) is str:
        return value
    if tag in ("l", "t") and type(value) is list:
        items = [_decode(item, depth + 1, budget) for item in value]
        return items if tag == "l" else tuple(items)
    if tag == "d" and type(value) is list:
        pairs = []
        for item in value:
            if type(item) is not list or len(item) != 2:
                raise ProtocolViolation("элемент словаря должен быть парой")
            pairs.append((_decode(item[0], depth + 1, budget), _decode(item[1], depth + 1, budget)))
        if not all(type(key) is str for key, _ in pairs):
            return Pairs(pairs)
        result = {}
        for key, item in pairs:
            if key in result:
                raise ProtocolViolation("повторяющийся ключ словаря")
            result[key] = item
        return result
    if tag == "x" and type(value) is str:
        return Opaque(value[:80])
    raise ProtocolViolation(f"неизвестный тег {tag!r}")


def strict_equal(expected: Any, actual: Any) -> bool:
    return first_difference(expected, actual) is None


def _type_label(value: Any) -> str:
    if isinstance(value, Opaque):
        return value.type_name
    if isinstance(value, Pairs):
        return "dict с ключами не-строками"
    return type(value).__name__


def first_difference(expected: Any, actual: Any, path: str = "результат") -> str | None:
    """None when equal; otherwise where and how they first differ (Russian, for feedback)."""
    if type(expected) is not type(actual):
        return (
            f"{path}: ожидался тип {_type_label(expected)}, получен {_type_label(actual)}"
            f" ({short_repr(actual)})"
        )
    if isinstance(expected, list):
        for index, (left, right) in enumerate(zip(expected, actual)):
            difference = first_difference(left, right, f"{path}[{index}]")
            if difference:
                return difference
        if len(expected) != len(actual):
            return (
                f"{path}: ожидалось элементов: {len(expected)}, получено: {len(actual)}"
                f" ({short_repr(actual)})"
            )
        return None
    if isinstance(expected, dict):
        missing = [key for key in expected if key not in actual]
        if missing:
            return f"{path}: нет ключа {short_repr(missing[0])} (получено {short_repr(actual)})"
        extra = [key for key in actual if key not in expected]
        if extra:
            return f"{path}: лишний ключ {short_repr(extra[0])} (получено {short_repr(actual)})"
        for key in expected:
            difference = first_difference(expected[key], actual[key], f"{path}[{key!r}]")
            if difference:
                return difference
        return None
    if isinstance(expected, float):
        if expected == actual or (math.isnan(expected) and math.isnan(actual)):
            return None
    elif expected == actual:
        return None
    return f"{path}: ожидалось {short_repr(expected)}, получено {short_repr(actual)}"


def short_repr(value: Any, limit: int = 300) -> str:
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text
