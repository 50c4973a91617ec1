"""Judging one case: validate the child's frame by exact shape, compare with the expectation here.

Every frame is untrusted. Exceptions are matched by the identity the child's harness decided
(`exc["is"]`: the name of the real builtin class the exception is exactly an instance of, or the
exercise's declared custom class), never by names or MROs the student's class reports about itself;
a subclass of the expected builtin does not match.
"""

from __future__ import annotations

from typing import Any

from course_lib.checking.cases import Case, is_fake
from course_lib.checking.catalog import Exercise
from course_lib.checking.compare import (
    Opaque,
    ProtocolViolation,
    decode,
    first_difference,
    short_repr,
)
from course_lib.checking.results import CaseResult
from course_lib.checking.safetext import shown

OUTPUT_CHARS = 2000


def _require(condition: bool) -> None:
    if not condition:
        raise ProtocolViolation("неверная структура ответа")


def check_exc(exc: Any) -> dict:
    _require(type(exc) is dict)
    _require(exc.get("is") is None or type(exc.get("is")) is str)
    _require(type(exc.get("name", "")) is str and type(exc.get("message", "")) is str)
    _require(type(exc.get("inherits", False)) is bool)
    return exc


def _check_outcome(outcome: Any) -> dict:
    _require(type(outcome) is dict and outcome.get("kind") in ("return", "raise"))
    if outcome["kind"] == "raise":
        check_exc(outcome.get("exc"))
    else:
        _require("value" in outcome)
    return outcome


def describe_raise(exc: dict) -> str:
    name = exc.get("name") or "?"
    message = exc.get("message", "")
    line = exc.get("line")
    where = f" (строка {line} вашего файла)" if type(line) is int and line > 0 else ""
    return f"{name}: {message}{where}" if message else f"{name}{where}"


def _is(exc: dict, name: str) -> bool:
    return exc.get("is") == name


def _matches(expected: str, exc: dict, exercise: Exercise) -> bool:
    if expected in dict(exercise.custom_exceptions):
        return _is(exc, expected) and exc.get("inherits") is True
    return _is(exc, expected)


CALL_ARG_CHARS = 120
CASE_FILES = {"public": "exercises/cases/{}.json", "hidden": "grading/hidden/{}.json"}


def _call_text(exercise: Exercise, args: list[Any], name: str | None = None, case: Case | None = None) -> str:
    """The call as feedback quotes it; when an argument had to be shortened, where to read it whole."""
    shown_args = ["<замена>" if is_fake(arg) else short_repr(arg, CALL_ARG_CHARS) for arg in args]
    text = f"{name or exercise.entry}({', '.join(shown_args)})"
    cut = any(shown.endswith("…") and len(shown) == CALL_ARG_CHARS for shown in shown_args)
    if cut and case is not None and case.visibility in CASE_FILES:
        where = CASE_FILES[case.visibility].format(exercise.name)
        text += f" [аргументы сокращены; целиком — в {where}, случай «{case.name}»]"
    return text


def _raised_instead(exc: dict) -> tuple[str, str] | None:
    if _is(exc, "NotImplementedError"):
        return "not_implemented", "функция ещё не реализована"
    if _is(exc, "MemoryError"):
        return "memory", "MemoryError: превышен лимит памяти"
    return None


def _judge_raise_or_return(
    expect: dict, outcome: dict, exercise: Exercise
) -> tuple[str, str] | None:
    """Compare one call's outcome with its expectation: None when it matches."""
    if "raises" in expect:
        wanted = expect["raises"]
        if outcome["kind"] == "return":
            return "expected_raise", (
                f"ожидалось исключение {wanted}, а вернулось {short_repr(decode(outcome['value']))}"
            )
        exc = outcome["exc"]
        if _matches(wanted, exc, exercise):
            return None
        instead = _raised_instead(exc)
        if instead:
            return instead
        base = dict(exercise.custom_exceptions).get(wanted)
        if base and _is(exc, wanted):
            return "wrong_exception", f"{wanted} должен наследовать {base}"
        if exc.get("name") == wanted:
            return "wrong_exception", (
                f"выброшен другой класс с именем {wanted}; нужен именно {wanted}, не подкласс"
            )
        return "wrong_exception", f"ожидалось исключение {wanted}, выброшено {describe_raise(exc)}"
    if outcome["kind"] == "raise":
        exc = outcome["exc"]
        return _raised_instead(exc) or ("unexpected_raise", f"выброшено {describe_raise(exc)}")
    actual = decode(outcome["value"])
    difference = first_difference(expect["return"], actual)
    if difference is None:
        return None
    if isinstance(actual, Opaque) or type(actual) is not type(expect["return"]):
        return "wrong_type", difference
    return "wrong_value", difference


def _judge_function(case: Case, exercise: Exercise, frame: dict) -> tuple[str, str]:
    args = case.data["args"]
    outcome = _check_outcome(frame.get("outcome"))
    after = frame.get("args_after")
    _require(type(after) is list and len(after) == len(args))
    result_is_arg = frame.get("result_is_arg")
    _require(result_is_arg is None or (type(result_is_arg) is int and 0 <= result_is_arg < len(args)))
    call = _call_text(exercise, args, case=case)
    verdict = _judge_raise_or_return(case.data["expect"], outcome, exercise)
    if verdict is not None:
        return verdict[0], f"{call}: {verdict[1]}"
    if result_is_arg is not None:
        name = exercise.params[result_is_arg]
        return "returned_input", f"{call}: вернулся сам аргумент {name}, а нужен новый список"
    expected_after = case.data.get("args_after", {})
    for index, (original, state) in enumerate(zip(args, after)):
        if is_fake(original):
            continue
        _require(state is not None)
        wanted = expected_after.get(str(index), original)
        difference = first_difference(wanted, decode(state), exercise.params[index])
        if difference is not None:
            what = "аргумент после вызова" if str(index) in expected_after else "аргумент изменён"
            return "mutated_input", f"{call}: {what} — {difference}"
    return "passed", ""


def _judge_class(case: Case, exercise: Exercise, frame: dict) -> tuple[str, str]:
    init = _check_outcome(frame.get("init"))
    steps = frame.get("steps")
    _require(type(steps) is list)
    if init["kind"] == "raise":
        exc = init["exc"]
        category = "not_implemented" if _is(exc, "NotImplementedError") else "unexpected_raise"
        return category, f"{exercise.entry}(): выброшено {describe_raise(exc)}"
    planned = case.data["steps"]
    _require(len(steps) == len(planned))
    for number, (step, outcome) in enumerate(zip(planned, steps)):
        if "tamper" in step:
            _require(type(outcome) is dict)
            continue
        _check_outcome(outcome)
        verdict = _judge_raise_or_return(step["expect"], outcome, exercise)
        if verdict is not None:
            call = _call_text(exercise, step.get("args", []), f"store.{step['call']}", case)
            edited = [s["tamper"] for s in planned[:number] if "tamper" in s]
            note = " (после того как вызывающий код изменил полученный ранее список)" if edited else ""
            return verdict[0], f"шаг {number + 1}, {call}{note}: {verdict[1]}"
    return "passed", ""


def judge(case: Case, exercise: Exercise, frame: dict) -> CaseResult:
    output = frame.get("out", "")
    output = output[:OUTPUT_CHARS] if type(output) is str else ""
    try:
        if case.kind == "class":
            category, detail = _judge_class(case, exercise, frame)
        else:
            category, detail = _judge_function(case, exercise, frame)
    except ProtocolViolation as error:
        category, detail = "protocol", f"ответ процесса с решением не разобран: {error}"
    return CaseResult(case, category == "passed", category, shown(detail), shown(output))
