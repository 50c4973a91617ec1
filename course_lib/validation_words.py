"""Pydantic's and json's complaints in Russian, for messages a student reads in a notebook.

pydantic and `json` describe a problem in English («Input should be a valid list», «Extra inputs are
not permitted», «Expecting value»). The course checks untrusted model output with them in two
places — a tool call's arguments (notebook 09, `tool_memory.registry.describe_validation`) and the
facts an extraction returns (notebook 08, `memory.facts.parse_extraction`) — and both show the
problem to the student. This module turns one pydantic error (a dict of `ValidationError.errors()`)
or one `json.JSONDecodeError` into Russian; an error type it does not know keeps pydantic's text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from course_lib.russian import plural

__all__ = ["json_problem", "validation_field", "validation_problem"]

_WORDS = {
    "missing": "обязательное поле не задано",
    "extra_forbidden": "лишнее поле",
    "string_type": "нужна строка",
    "string_too_short": "пустая строка или слишком короткая",
    "string_too_long": "слишком длинная строка",
    "int_type": "нужно целое число",
    "int_parsing": "нужно целое число",
    "bool_type": "нужно true или false",
    "list_type": "нужен список",
    "dict_type": "нужен объект",
    "model_type": "нужен объект",
    "model_attributes_type": "нужен объект",
    "greater_than_equal": "слишком маленькое число",
    "less_than_equal": "слишком большое число",
    "too_long": "слишком много элементов",
    "too_short": "слишком мало элементов",
}

_JSON_WORDS = {
    "Expecting value": "ожидалось значение",
    "Extra data": "после JSON идут лишние данные",
    "Expecting property name enclosed in double quotes": "имя поля должно быть в двойных кавычках",
    "Expecting ',' delimiter": "пропущена запятая",
    "Expecting ':' delimiter": "пропущено двоеточие",
    "Unterminated string starting at": "строка не закрыта кавычкой",
    "Invalid control character at": "недопустимый управляющий символ в строке",
}


def validation_field(problem: Mapping[str, Any], default: str = "аргументы") -> str:
    """Where the problem is: `facts.0.kind`, or `default` for the whole object."""
    return ".".join(str(part) for part in problem.get("loc", ())) or default


def validation_problem(problem: Mapping[str, Any]) -> str:
    """What is wrong, in Russian: one error of `ValidationError.errors()`."""
    kind, context = problem.get("type", ""), problem.get("ctx") or {}
    if kind == "literal_error" and "expected" in context:
        allowed = re.findall(r"'([^']*)'", str(context["expected"]))
        return "допустимые значения: " + ", ".join(allowed) if allowed else "недопустимое значение"
    words = _WORDS.get(kind)
    if words is None:
        return str(problem.get("msg", ""))
    if kind == "string_too_long" and "max_length" in context:
        return f"{words} (не больше {plural(context['max_length'], ('символа', 'символов', 'символов'))})"
    if kind == "too_long" and "max_length" in context:
        return f"{words} (не больше {context['max_length']})"
    return words


def json_problem(error: json.JSONDecodeError) -> str:
    """What `json` could not read, in Russian, with the character where it stopped."""
    return f"{_JSON_WORDS.get(error.msg, error.msg)} (символ {error.pos + 1})"
