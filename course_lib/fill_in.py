"""Fill-in cells: the few lines that are a lesson's point, written by the student in the notebook.

A fill-in cell defines a small function whose body the student completes (it starts as
`raise NotImplementedError`). The cell right under it calls

    build_request = try_fill_in(build_request, examples=[...], reference=course_build_request)

which runs the student's function on the examples in the notebook's own process, prints one Russian
line (✔ the student's lines run from here on / ↪ not filled in or wrong yet, the course's lines run)
and returns the function the rest of the notebook uses. The course's lines (the `reference`) live in
a collapsed cell the student may open, or in `course_lib.steps`.

An example is `(args, expected)`; `expected` is the return value, or an exception class the call must
raise. A failing example prints what was passed, what was expected and what came back, so the line
under the cell is the whole feedback.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["try_fill_in"]

Example = tuple[tuple[Any, ...], Any]
SHOWN = 160  # characters of a value shown in a failure line


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def _first_problem(function: Callable, examples: Sequence[Example]) -> str | None:
    for args, expected in examples:
        call = f"{function.__name__}({', '.join(_short(arg) for arg in args)})"
        try:
            actual = function(*copy.deepcopy(args))
        except NotImplementedError:
            return "не заполнено"
        except Exception as error:  # the student's mistake is the feedback, never a crash
            if inspect.isclass(expected) and isinstance(error, expected):
                continue
            return f"{call} выбросила {type(error).__name__}: {error}"
        if inspect.isclass(expected) and issubclass(expected, BaseException):
            return f"{call} вернула {_short(actual)}, а должна выбросить {expected.__name__}"
        if actual != expected:
            return f"{call} вернула {_short(actual)}, ожидалось {_short(expected)}"
    return None


def try_fill_in(
    function: Callable,
    *,
    examples: Sequence[Example],
    reference: Callable,
    name: str | None = None,
    announce: Callable[[str], None] | None = print,
) -> Callable:
    """The student's `function` when it gives every example's answer, `reference` otherwise."""
    label = name or function.__name__
    problem = _first_problem(function, examples)
    if problem is None:
        line = f"✔ {label}: ваши строки работают — дальше ноутбук использует их."
        chosen = function
    elif problem == "не заполнено":
        line = (f"↪ {label}: ячейка ещё не заполнена — дальше работает версия курса "
                f"(её можно раскрыть в свёрнутой ячейке ниже).")
        chosen = reference
    else:
        line = f"↪ {label}: {problem} — дальше работает версия курса."
        chosen = reference
    if announce is not None:
        announce(line)
    return chosen
