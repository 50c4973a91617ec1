"""The case format: test cases are data (inputs and the expected result or exception), never code.

One JSON file per exercise and visibility: public cases ship in `exercises/cases/<name>.json`,
hidden ones live in `grading/hidden/<name>.json` and never leave the instructor's tree.

    {
      "format": 1,
      "exercise": "commit_turn",
      "cases": [
        {
          "name": "пример из условия",                 # unique within the exercise
          "hint": "…",                                  # required for hidden cases: shown instead of data
          "args": [[], "  Номер заказа 8041. ", " Спасибо. "],
          "expect": {"return": 2},                      # or {"raises": "ValueError"}
          "args_after": {"0": [ … ]}                    # optional: the expected state of an argument
        }                                               #   after the call; every other argument
      ]                                                 #   must come back unchanged
    }

A case's points come from one of two shares (exercises.json `weights`): "algorithm" when a value is
expected, "validation" when an exception is. Where the exception *is* the exercise's rule — a reply
refused because it was cut off, a commit refused because the version moved — the case says
`"group": "algorithm"`, so a wrong refusal rule costs algorithm points, not a share of the 30 %.

An argument written as {"$fake": "<name>"} is a deterministic callable the harness provides
(see FAKES) instead of a tokenizer or a model. A class exercise (kind "class") has scripted steps:

    {"name": "…", "init": [], "steps": [
        {"call": "add_turn", "args": ["a", "x", "y"], "expect": {"return": null}},
        {"call": "get_messages", "args": ["a"], "expect": {"return": [ … ]}},
        {"tamper": 1},                      # edit the list step 1 returned, as a careless caller would
        {"call": "get_messages", "args": ["a"], "expect": {"return": [ … ]}}
    ]}

Expected exceptions are named: a builtin name ("TypeError") matches that builtin or a subclass;
any other name must be one of the exercise's `custom_exceptions` ("ChatHistoryError") and matches
the class of that name defined in the student's file, provided it inherits the declared builtin.
Only the inputs of a case (`child_input`) are ever sent to the sandboxed child.
"""

from __future__ import annotations

import builtins
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course_lib.checking.catalog import Exercise

FORMAT = 1

FAKES = {
    "chars": "count_text: число символов строки",
    "words": "count_text: число слов строки (split())",
    "echo": "summarize: возвращает свой аргумент без изменений (второй вызов — ошибка)",
    "padded": "summarize: '\\n  Сводка: <число строк> строк(и)  \\n' (второй вызов — ошибка)",
    "forbidden": "summarize: любой вызов — ошибка RuntimeError",
    "blank": "summarize: возвращает строку из одних пробелов",
    "not_str": "summarize: возвращает число 42 вместо строки",
    "new_id": "new_session_id: возвращает 's-2' (второй вызов — ошибка)",
    "padded_new_id": "new_session_id: возвращает '  s-2\\n' (второй вызов — ошибка)",
    "no_new_id": "new_session_id: любой вызов — ошибка RuntimeError (новый Session ID нужен только для /new)",
    "blank_new_id": "new_session_id: возвращает строку из одних пробелов",
    "int_new_id": "new_session_id: возвращает число 42 вместо строки",
    "memory_tools": "tools для run_tool_calls: core_memory_append(label, text), archival_memory_search(query, page=0), "
    "memory_stats() — строка «вызов N: …» с номером вызова; archival_memory_insert(...) — RuntimeError",
    "tool_model": "ask_model для run_tool_loop: чистая функция запроса. План — в первом сообщении клиента "
    "(«план: поиск, запись+статистика, ответ»); ответ — шаг плана с номером (обменов в запросе + 1), последний "
    "шаг повторяется; вызовы круга N — call_N_1, call_N_2…; шаги «пустые вызовы» (текст и tool_calls = []), "
    "«пусто» (ни текста, ни вызовов), «пробелы», «строка» (текст ответа строкой, не словарём), «текст+поиск» (пояснение вместе с вызовом). Запрос без "
    "клиента первым или без какого-то раннего обмена (сообщение с вызовами, затем по результату на вызов) — "
    "ValueError, который называет потерянный обмен; так же — запрос после вызовов, в котором их обмена нет",
    "tool_runner": "run_calls для run_tool_loop: на каждый вызов списка tool_calls — сообщение tool с его id и "
    "строкой «вызов N: …» (N — номер вызова в тесте); не список — TypeError",
    "exchange": "add_exchange для run_tool_loop: новый список [*pending, calling, *results]; аргументы не тех "
    "типов — TypeError",
}


class CaseFormatError(ValueError):
    """A case file does not follow the format above (an authoring error, not a student's)."""


@dataclass(frozen=True)
class Case:
    exercise: str
    name: str
    visibility: str  # "public" | "hidden"
    hint: str
    data: dict[str, Any] = field(repr=False)

    @property
    def weight(self) -> float:
        """Relative weight among the exercise's cases of the same group (default 1)."""
        return float(self.data.get("weight", 1))

    @functools.cached_property  # asked for every time points are counted; the data never changes
    def group(self) -> str:
        """"validation" when the case expects an exception (its last call's, for a class), else
        "algorithm": the exercise's points are split between the two groups (exercises.json)."""
        if "group" in self.data:  # the author's word: this refusal is the rule, not argument checking
            return self.data["group"]
        return "validation" if "raises" in _last_expect(self.data) else "algorithm"

    @property
    def kind(self) -> str:
        if "steps" in self.data:
            return "class"
        return "function"

    def child_input(self, index: int) -> dict[str, Any]:
        """Exactly what the child may see: the inputs, no expectation, no name, no hint."""
        if self.kind == "class":
            steps = []
            for step in self.data["steps"]:
                if "tamper" in step:
                    steps.append({"tamper": step["tamper"]})
                else:
                    steps.append({"call": step["call"], "args": step.get("args", [])})
            return {"i": index, "init": self.data.get("init", []), "steps": steps}
        return {"i": index, "args": self.data["args"]}


def _last_expect(data: dict[str, Any]) -> dict[str, Any]:
    """A function case's expectation, or a class case's last call's."""
    if "steps" in data:
        calls = [step for step in data["steps"] if "call" in step]
        return calls[-1].get("expect", {}) if calls else {}
    return data.get("expect", {})


def is_fake(value: Any) -> bool:
    return type(value) is dict and len(value) == 1 and "$fake" in value


def is_builtin_exception(name: str) -> bool:
    value = getattr(builtins, name, None)
    return isinstance(value, type) and issubclass(value, BaseException)


def _check_value(value: Any, where: str, allow_fakes: bool) -> None:
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return
    if kind is list:
        for index, item in enumerate(value):
            _check_value(item, f"{where}[{index}]", allow_fakes)
        return
    if kind is dict:
        if is_fake(value):
            if not allow_fakes:
                raise CaseFormatError(f"{where}: $fake допустим только во входных данных")
            if value["$fake"] not in FAKES:
                raise CaseFormatError(f"{where}: неизвестная замена {value['$fake']!r}")
            return
        if any(key.startswith("$") for key in value):
            raise CaseFormatError(f"{where}: ключи на $ зарезервированы")
        for key, item in value.items():
            _check_value(item, f"{where}[{key!r}]", allow_fakes)
        return
    raise CaseFormatError(f"{where}: недопустимый тип {kind.__name__}")


def _check_expect(expect: Any, where: str, exercise: Exercise) -> None:
    if type(expect) is not dict or len(expect) != 1 or next(iter(expect)) not in ("return", "raises"):
        raise CaseFormatError(f"{where}: expect должен быть {{'return': …}} или {{'raises': …}}")
    key, value = next(iter(expect.items()))
    if key == "raises":
        custom = dict(exercise.custom_exceptions)
        if type(value) is not str or not (is_builtin_exception(value) or value in custom):
            raise CaseFormatError(f"{where}: неизвестное исключение {value!r}")
    else:
        _check_value(value, f"{where}.return", allow_fakes=False)


def _validate_case(raw: Any, exercise: Exercise, visibility: str, where: str) -> Case:
    if type(raw) is not dict:
        raise CaseFormatError(f"{where}: случай должен быть объектом")
    name = raw.get("name")
    if type(name) is not str or not name.strip():
        raise CaseFormatError(f"{where}: нужно непустое имя")
    where = f"{where} «{name}»"
    hint = raw.get("hint", "")
    if type(hint) is not str or (visibility == "hidden" and not hint.strip()):
        raise CaseFormatError(f"{where}: скрытому случаю нужна подсказка hint")
    known = {"name", "hint", "args", "expect", "args_after", "init", "steps", "weight", "group"}
    unknown = set(raw) - known
    if unknown:
        raise CaseFormatError(f"{where}: неизвестные поля {sorted(unknown)}")
    weight = raw.get("weight", 1)
    if type(weight) not in (int, float) or not 0 < weight <= 100:
        raise CaseFormatError(f"{where}: weight — число больше 0 (вес внутри своей доли)")
    if "group" in raw and raw["group"] != "algorithm":
        raise CaseFormatError(f"{where}: group может быть только \"algorithm\" (исключение — правило упражнения)")
    if exercise.kind == "class":
        init = raw.get("init", [])
        if type(init) is not list:
            raise CaseFormatError(f"{where}: init должен быть списком")
        _check_value(init, f"{where}.init", allow_fakes=True)
        steps = raw.get("steps")
        if type(steps) is not list or not steps:
            raise CaseFormatError(f"{where}: нужен непустой список steps")
        for number, step in enumerate(steps):
            at = f"{where}.steps[{number}]"
            if type(step) is not dict:
                raise CaseFormatError(f"{at}: шаг должен быть объектом")
            if "tamper" in step:
                target = step["tamper"]
                if (
                    set(step) != {"tamper"}
                    or type(target) is not int
                    or not 0 <= target < number
                    or "call" not in steps[target]
                ):
                    raise CaseFormatError(f"{at}: tamper ссылается на более ранний вызов")
                continue
            if set(step) - {"call", "args", "expect"} or type(step.get("call")) is not str:
                raise CaseFormatError(f"{at}: шаг — это call, args и expect")
            if step["call"].startswith("_"):
                raise CaseFormatError(f"{at}: вызывать можно только публичные методы")
            if type(step.get("args", [])) is not list:
                raise CaseFormatError(f"{at}: args должен быть списком")
            _check_value(step.get("args", []), f"{at}.args", allow_fakes=True)
            _check_expect(step.get("expect"), at, exercise)
    else:
        args = raw.get("args")
        if type(args) is not list or len(args) != len(exercise.params):
            raise CaseFormatError(f"{where}: нужно {len(exercise.params)} аргументов в args")
        _check_value(args, f"{where}.args", allow_fakes=True)
        _check_expect(raw.get("expect"), where, exercise)
        after = raw.get("args_after", {})
        if type(after) is not dict:
            raise CaseFormatError(f"{where}: args_after должен быть объектом")
        for key, value in after.items():
            if not key.isdigit() or int(key) >= len(args) or is_fake(args[int(key)]):
                raise CaseFormatError(f"{where}: args_after[{key!r}] — нет такого аргумента")
            _check_value(value, f"{where}.args_after[{key}]", allow_fakes=False)
    case = Case(exercise.name, name, visibility, hint.strip(), raw)
    if "group" in raw and "raises" not in _last_expect(raw):
        raise CaseFormatError(f"{where}: group ставят только случаю, где ожидается исключение")
    return case


def parse_cases(document: Any, exercise: Exercise, visibility: str, source: str) -> list[Case]:
    if type(document) is not dict or document.get("format") != FORMAT:
        raise CaseFormatError(f"{source}: ожидался объект с format = {FORMAT}")
    if document.get("exercise") != exercise.name:
        raise CaseFormatError(f"{source}: файл относится к {document.get('exercise')!r}")
    raw_cases = document.get("cases")
    if type(raw_cases) is not list:
        raise CaseFormatError(f"{source}: cases должен быть списком")
    cases = [
        _validate_case(raw, exercise, visibility, f"{source}: случай {number + 1}")
        for number, raw in enumerate(raw_cases)
    ]
    names = [case.name for case in cases]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise CaseFormatError(f"{source}: повторяются имена {duplicates}")
    return cases


def load_cases(path: Path, exercise: Exercise, visibility: str) -> list[Case]:
    """Cases from one file; a missing file means no cases of that visibility."""
    if not path.is_file():
        return []
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise CaseFormatError(f"{path}: не JSON: {error}") from error
    return parse_cases(document, exercise, visibility, str(path))
