"""The contract of your own memory strategy (`exercises/my_strategy.py`, notebook 10).

A strategy of your own design cannot be graded by fixed expected values, so `check("my_strategy")`
checks what every strategy must do for the benchmark to run it, clause by clause:

- it is built as `MyStrategy(budget, count_tokens, summarize)`;
- `build_request(instruction, user_message)` returns a new list: the instruction first, the new
  message last, in between only user/assistant messages with exactly the keys role and content;
- every request fits the budget by `count_tokens` (once the instruction and the new message fit);
- `commit(user_message, assistant_message)` and `build_request` change none of their arguments;
- after `forget()` nothing said before reaches a request (nor the summarizer);
- after `new_session()` the strategy goes on working;
- a deep copy is independent: the benchmark asks each question on a copy.

The clauses run in a separate Python process with a time limit (`python -m
course_lib.memory_eval.contract FILE` prints them as JSON), so a loop in your file cannot hang the
notebook; `count_tokens` and `summarize` there are simple stand-ins, not the tokenizer or a model.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

from course_lib.checking.cases import Case
from course_lib.checking.catalog import Exercise
from course_lib.checking.results import CaseResult, ExerciseResult
from course_lib.russian import tokens

TIME_LIMIT_SECONDS = 20
BUDGET = 260
INSTRUCTION = {"role": "developer", "content": "Ты помогаешь клиенту в чате поддержки."}
SECRET = "Мой телефон +7 912 000-42-42, заказ 424242."

CLAUSES = (
    ("создаётся как MyStrategy(budget, count_tokens, summarize)", "init"),
    ("первый запрос: инструкция первой, новое сообщение последним", "first"),
    ("запрос — новый список сообщений с ключами role и content", "shape"),
    ("длинный разговор: каждый запрос в пределах бюджета", "budget"),
    ("аргументы build_request и commit не меняются", "untouched"),
    ("после forget() в запросах нет ничего из прошлого", "forget"),
    ("после new_session() стратегия работает", "new_session"),
    ("копия стратегии независима от оригинала", "copy"),
)


def count_tokens(messages: list[dict]) -> int:
    """A stand-in for the course's counter: 3 per message + 3, and a token per 4 characters."""
    if not isinstance(messages, list):
        raise TypeError("count_tokens принимает список сообщений")
    return 3 + sum(3 + len(str(m.get("content", ""))) // 4 + 1 for m in messages)


class Summarizer:
    """A stand-in for the course's summarizer: checks its arguments and says what it got."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, previous_summary: str | None, messages: list[dict]) -> str:
        if previous_summary is not None and not isinstance(previous_summary, str):
            raise TypeError("previous_summary — строка или None")
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise TypeError("messages — список сообщений-словарей")
        self.seen.append("\n".join(str(m.get("content", "")) for m in messages) + (previous_summary or ""))
        return f"Сводка: {len(messages)} сообщ., предыдущая сводка {'есть' if previous_summary else 'нет'}."


def user(text: str) -> dict:
    return {"role": "user", "content": f"<customer_message>\n{text}\n</customer_message>"}


def assistant(text: str) -> dict:
    return {"role": "assistant", "content": text}


def dialogue(turns: int, start: int = 0) -> list[tuple[str, str]]:
    return [(f"Сообщение клиента номер {start + i}: уточняю детали заказа и жду ответа поддержки.",
             f"Ответ поддержки номер {start + i}.") for i in range(turns)]  # fmt: skip


def _check_request(request: object, new_message: dict) -> str | None:
    if not isinstance(request, list) or not request:
        return f"build_request вернул {type(request).__name__}, а нужен непустой список"
    if request[0] != INSTRUCTION:
        return "первым в запросе должна идти инструкция (как её передали)"
    if request[-1] != new_message:
        return "последним в запросе должно идти новое сообщение клиента"
    for index, message in enumerate(request):
        if not isinstance(message, dict) or set(message) != {"role", "content"}:
            return f"сообщение {index}: нужен словарь ровно с ключами role и content (лишний ключ провайдер отклонит)"
        if not isinstance(message["content"], str):
            return f"сообщение {index}: content — не строка"
        if index and message["role"] not in ("user", "assistant"):
            return f"сообщение {index}: роль {message['role']!r}; после инструкции — только user и assistant"
    return None


def run_clauses(strategy_class) -> list[tuple[str, bool, str]]:
    """(clause, passed, why) for each clause; a clause whose predecessor failed is not run."""
    results: list[tuple[str, bool, str]] = []
    state: dict = {}

    def clause(key: str, body) -> None:
        name = next(title for title, k in CLAUSES if k == key)
        if results and not results[0][1]:  # nothing to check without a strategy
            results.append((name, False, results[0][2]))
            return
        try:
            problem = body()
        except NotImplementedError:
            results.append((name, False, "NotImplementedError: метод ещё не реализован"))
            return
        except Exception as error:  # noqa: BLE001 - the student's code: reported, never raised
            results.append((name, False, f"выброшено {type(error).__name__}: {error}"))
            return
        results.append((name, problem is None, problem or ""))

    def fed(turns: int):
        """A fresh strategy that has committed `turns` turns of the test dialogue."""
        strategy = strategy_class(BUDGET, count_tokens, Summarizer())
        for text, reply in dialogue(turns):
            strategy.commit(user(text), assistant(reply))
        return strategy

    def init():
        state["summarizer"] = Summarizer()
        state["strategy"] = strategy_class(BUDGET, count_tokens, state["summarizer"])

    def first():
        message = user("Здравствуйте!")
        return _check_request(state["strategy"].build_request(dict(INSTRUCTION), message), message)

    def shape():
        strategy = fed(3)
        message = user("Что дальше?")
        request = strategy.build_request(dict(INSTRUCTION), message)
        problem = _check_request(request, message)
        if problem is None and strategy.build_request(dict(INSTRUCTION), message) is request:
            return "build_request вернул тот же список второй раз: нужен новый"
        return problem

    def budget():
        strategy = strategy_class(BUDGET, count_tokens, Summarizer())
        for number, (text, reply) in enumerate(dialogue(40)):
            message = user(text)
            request = strategy.build_request(dict(INSTRUCTION), message)
            problem = _check_request(request, message)
            if problem:
                return f"ход {number + 1}: {problem}"
            used = count_tokens(request)
            if used > BUDGET:
                return f"ход {number + 1}: запрос занимает {tokens(used)} при бюджете {BUDGET}"
            strategy.commit(message, assistant(reply))

    def untouched():
        strategy = strategy_class(BUDGET, count_tokens, Summarizer())
        for text, reply in dialogue(12):
            message, answer = user(text), assistant(reply)
            keep = (copy.deepcopy(message), copy.deepcopy(answer))
            instruction = dict(INSTRUCTION)
            strategy.build_request(instruction, message)
            strategy.commit(message, answer)
            if (message, answer) != keep or instruction != INSTRUCTION:
                return "стратегия изменила переданное сообщение: храните копии, а не правьте аргументы"

    def forget():
        summarizer = Summarizer()
        strategy = strategy_class(BUDGET, count_tokens, summarizer)
        strategy.commit(user(SECRET), assistant("Записал."))
        for text, reply in dialogue(15):
            strategy.commit(user(text), assistant(reply))
        strategy.forget()
        seen_before = len(summarizer.seen)
        for text, reply in dialogue(15, start=100):
            message = user(text)
            request = strategy.build_request(dict(INSTRUCTION), message)
            if any(mark in json.dumps(request, ensure_ascii=False) for mark in ("000-42-42", "424242")):
                return "после forget() в запросе осталось то, что клиент просил забыть"
            strategy.commit(message, assistant(reply))
        if any(mark in text for text in summarizer.seen[seen_before:] for mark in ("000-42-42", "424242")):
            return "после forget() забытое ушло в сводку"

    def new_session():
        strategy = fed(5)
        strategy.new_session()
        message = user("Это снова я.")
        return _check_request(strategy.build_request(dict(INSTRUCTION), message), message)

    def independent_copy():
        strategy = fed(6)
        message = user("Вопрос о прошлом.")
        before = strategy.build_request(dict(INSTRUCTION), message)
        twin = copy.deepcopy(strategy)
        for text, reply in dialogue(20, start=50):
            twin.build_request(dict(INSTRUCTION), user(text))
            twin.commit(user(text), assistant(reply))
        twin.forget()
        if strategy.build_request(dict(INSTRUCTION), message) != before:
            return "изменения копии (copy.deepcopy) задели оригинал: храните состояние в самом объекте"

    clause("init", init)
    clause("first", first)
    clause("shape", shape)
    clause("budget", budget)
    clause("untouched", untouched)
    clause("forget", forget)
    clause("new_session", new_session)
    clause("copy", independent_copy)
    return results


def contract_result(exercise: Exercise, source_path: Path) -> ExerciseResult:
    """The contract's clauses for the file as cases of a report (see `check()`), run in a subprocess."""

    def case(title: str) -> Case:
        return Case(exercise.name, title, "public", "", {"name": title, "init": [], "steps": []})

    titles = [title for title, _ in CLAUSES]
    if not source_path.is_file():
        return ExerciseResult(exercise, "missing", [CaseResult(case(t), False, "missing", f"нет файла {source_path.name}")
                                                    for t in titles], message=f"нет файла {source_path.name}")  # fmt: skip
    try:
        completed = subprocess.run(
            [sys.executable, "-m", "course_lib.memory_eval.contract", str(source_path)],
            capture_output=True, text=True, timeout=TIME_LIMIT_SECONDS, cwd=source_path.parent,
        )  # fmt: skip
        clauses = json.loads(completed.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        message = f"проверка не закончилась за {TIME_LIMIT_SECONDS} с: нет ли бесконечного цикла?"
        return ExerciseResult(exercise, "timeout", [CaseResult(case(t), False, "timeout", message) for t in titles],
                              message=message)  # fmt: skip
    except (ValueError, IndexError):
        tail = (completed.stderr or completed.stdout).strip().splitlines()[-1:] or ["нет вывода"]
        message = f"файл не загружается: {tail[0]}"
        return ExerciseResult(exercise, "import_error", [CaseResult(case(t), False, "import_error", message)
                                                         for t in titles], message=message)  # fmt: skip
    results = []
    for title, passed, why in clauses:
        category = "passed" if passed else ("not_implemented" if why.startswith("NotImplementedError") else "wrong_value")
        results.append(CaseResult(case(title), passed, category, why))
    return ExerciseResult(exercise, "ok", results)


def main(argv: list[str] | None = None) -> int:
    import importlib.util

    path = Path((argv or sys.argv[1:])[0])
    spec = importlib.util.spec_from_file_location("my_strategy_under_check", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        strategy_class = module.MyStrategy
    except Exception as error:  # noqa: BLE001 - said in the report, as an import error
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
        return 1
    print(json.dumps(run_clauses(strategy_class), ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
