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
    """A dict whose keys could not be rebuilt here (unhashable keys): never equal to a dict."""

    __slots__ = ("items",)

    def __init__(self, items: list[tuple[Any, Any]]) -> None:
        self.items = items

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{short_repr(k)}: {short_repr(v)}" for k, v in self.items) + "}"


MAX_DEPTH = 80


def decode(node: Any, depth: int = 0) -> Any:
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
        return float(value)
    if tag == "s" and type(value) is str:
        return value
    if tag in ("l", "t") and type(value) is list:
        items = [decode(item, depth + 1) for item in value]
        return items if tag == "l" else tuple(items)
    if tag == "d" and type(value) is list:
        pairs = []
        for item in value:
            if type(item) is not list or len(item) != 2:
                raise ProtocolViolation("элемент словаря должен быть парой")
            pairs.append((decode(item[0], depth + 1), decode(item[1], depth + 1)))
        try:
            result = {}
            for key, item in pairs:
                if key in result:
                    raise ProtocolViolation("повторяющийся ключ словаря")
                result[key] = item
            return result
        except TypeError:
            return Pairs(pairs)
    if tag == "x" and type(value) is str:
        return Opaque(value[:80])
    raise ProtocolViolation(f"неизвестный тег {tag!r}")


def strict_equal(expected: Any, actual: Any) -> bool:
    return first_difference(expected, actual) is None


def _type_label(value: Any) -> str:
    if isinstance(value, Opaque):
        return value.type_name
    if isinstance(value, Pairs):
        return "dict с нехешируемыми ключами"
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
