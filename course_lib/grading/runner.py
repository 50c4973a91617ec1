"""Run one exercise of one submission: the same code path for `check()` and for `grade`.

The cases run in phases (public, then hidden) inside one sandboxed child per exercise. A phase's
inputs are sent only after every result of the previous phase has been received, so nothing the
student's code prints or returns during the public phase (which feedback may quote) can contain a
hidden input. After a timeout or a crash the child is replaced and the remaining cases continue in
a fresh one; after `Limits.max_timeouts` timeouts the rest are not run.

Every frame from the child is untrusted: `_check_*` validate its exact shape, `judge` compares the
decoded values with the expectation, which never left this process.
"""

from __future__ import annotations

import logging
import os
import signal
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course_lib.grading.cases import Case, is_builtin_exception, is_fake
from course_lib.grading.catalog import Exercise
from course_lib.grading.compare import (
    Opaque,
    ProtocolViolation,
    decode,
    first_difference,
    short_repr,
)
from course_lib.grading.sandbox import ChildGone, ChildSession, ChildTimeout, Limits, SandboxError

MAX_SOURCE_BYTES = 512 * 1024
log = logging.getLogger("course_lib.grading")

# The fixed vocabulary of outcomes. Hidden cases are reported with these words only.
CATEGORIES = {
    "passed": "пройден",
    "wrong_value": "неверный результат",
    "wrong_type": "результат неверного типа",
    "expected_raise": "ожидалось исключение, а функция вернула значение",
    "unexpected_raise": "выброшено исключение, а ожидался результат",
    "wrong_exception": "выброшено исключение не того типа",
    "mutated_input": "изменены входные данные",
    "returned_input": "возвращён входной объект вместо нового",
    "not_implemented": "ещё не реализовано (NotImplementedError)",
    "timeout": "превышен лимит времени",
    "memory": "превышен лимит памяти",
    "crash": "процесс с решением аварийно завершился",
    "output_limit": "слишком большой вывод",
    "protocol": "нарушен протокол обмена с проверяющей программой",
    "syntax_error": "синтаксическая ошибка в файле",
    "import_error": "ошибка при импорте файла",
    "missing": "нет файла или нужной функции/класса",
    "not_run": "не запускался: слишком много таймаутов в этом упражнении",
    "sandbox": "сбой песочницы проверки",
}

# Exercise status (one per exercise, and the grades.csv vocabulary).
STATUS_OF_CATEGORY = {
    "timeout": "timeout",
    "memory": "memory",
    "crash": "crash",
    "output_limit": "crash",
    "protocol": "crash",
    "sandbox": "crash",
    "import_error": "crash",
    "syntax_error": "syntax_error",
    "missing": "missing",
}
STATUSES = ("ok", "syntax_error", "missing", "timeout", "memory", "crash")


@dataclass
class CaseResult:
    case: Case
    passed: bool
    category: str
    detail: str = ""  # may quote inputs and outputs: shown for public cases only
    output: str = ""  # what the student's code printed (public cases only)

    @property
    def reason(self) -> str:
        return CATEGORIES[self.category]


@dataclass
class ExerciseResult:
    exercise: Exercise
    status: str
    cases: list[CaseResult] = field(default_factory=list)
    message: str = ""  # why the whole exercise failed to run, if it did (safe to show)

    @property
    def max_score(self) -> float:
        return self.exercise.points

    def case_points(self) -> float:
        return self.exercise.points / len(self.cases) if self.cases else 0.0

    @property
    def score(self) -> float:
        return round(sum(self.case_points() for result in self.cases if result.passed), 4)

    @property
    def passed(self) -> int:
        return sum(result.passed for result in self.cases)


@dataclass(frozen=True)
class _Failure:
    """A case that produced no result frame."""

    category: str
    detail: str


# --- reading a submission --------------------------------------------------------------------


def read_submission_file(folder: Path, exercise: Exercise) -> tuple[str | None, _Failure | None]:
    """The source of `<folder>/<name>.py`: a regular file, not a symlink, UTF-8, of sane size."""
    path = folder / f"{exercise.name}.py"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, _Failure("missing", f"нет файла {exercise.name}.py")
    except OSError as error:
        if path.is_symlink():
            return None, _Failure("missing", f"{exercise.name}.py — символическая ссылка, а не файл")
        return None, _Failure("missing", f"файл {exercise.name}.py не читается: {error.strerror}")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, _Failure("missing", f"{exercise.name}.py — не обычный файл")
        if info.st_size > MAX_SOURCE_BYTES:
            return None, _Failure("crash", f"файл {exercise.name}.py больше 512 КБ")
        data = os.read(fd, MAX_SOURCE_BYTES + 1)
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, _Failure("syntax_error", f"файл {exercise.name}.py не в кодировке UTF-8")


# --- validating frames -----------------------------------------------------------------------


def _require(condition: bool) -> None:
    if not condition:
        raise ProtocolViolation("неверная структура ответа")


def _check_exc(exc: Any) -> dict:
    _require(type(exc) is dict)
    mro = exc.get("mro")
    _require(type(mro) is list and 0 < len(mro) <= 64)
    for pair in mro:
        _require(type(pair) is list and len(pair) == 2)
        _require(all(type(part) is str for part in pair))
    _require(type(exc.get("message", "")) is str)
    return exc


def _check_outcome(outcome: Any) -> dict:
    _require(type(outcome) is dict and outcome.get("kind") in ("return", "raise"))
    if outcome["kind"] == "raise":
        _check_exc(outcome.get("exc"))
    else:
        _require("value" in outcome)
    return outcome


def _exception_name(exc: dict) -> str:
    return exc["mro"][0][1]


def _describe_raise(exc: dict) -> str:
    message = exc.get("message", "")
    return f"{_exception_name(exc)}: {message}" if message else _exception_name(exc)


def _has_builtin(exc: dict, name: str) -> bool:
    return ["builtins", name] in exc["mro"]


def _matches(expected: str, exc: dict, exercise: Exercise) -> bool:
    if is_builtin_exception(expected):
        return _has_builtin(exc, expected)
    base = dict(exercise.custom_exceptions)[expected]
    return [exercise.name, expected] in exc["mro"] and _has_builtin(exc, base)


# --- judging ---------------------------------------------------------------------------------


def _call_text(exercise: Exercise, args: list[Any], name: str | None = None) -> str:
    shown = ["<замена>" if is_fake(arg) else short_repr(arg, 120) for arg in args]
    return f"{name or exercise.entry}({', '.join(shown)})"


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
        if _has_builtin(exc, "NotImplementedError"):
            return "not_implemented", "функция ещё не реализована"
        if _has_builtin(exc, "MemoryError"):
            return "memory", "MemoryError: превышен лимит памяти"
        base = dict(exercise.custom_exceptions).get(wanted)
        if base and [exercise.name, wanted] in exc["mro"]:
            return "wrong_exception", f"{wanted} должен наследовать {base}"
        return "wrong_exception", f"ожидалось исключение {wanted}, выброшено {_describe_raise(exc)}"
    if outcome["kind"] == "raise":
        exc = outcome["exc"]
        if _has_builtin(exc, "NotImplementedError"):
            return "not_implemented", "функция ещё не реализована"
        if _has_builtin(exc, "MemoryError"):
            return "memory", "MemoryError: превышен лимит памяти"
        return "unexpected_raise", f"выброшено {_describe_raise(exc)}"
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
    call = _call_text(exercise, args)
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
        category = "not_implemented" if _has_builtin(exc, "NotImplementedError") else "unexpected_raise"
        return category, f"{exercise.entry}(): выброшено {_describe_raise(exc)}"
    planned = case.data["steps"]
    _require(len(steps) == len(planned))
    for number, (step, outcome) in enumerate(zip(planned, steps)):
        if "tamper" in step:
            _require(type(outcome) is dict)
            continue
        _check_outcome(outcome)
        verdict = _judge_raise_or_return(step["expect"], outcome, exercise)
        if verdict is not None:
            call = _call_text(exercise, step.get("args", []), f"store.{step['call']}")
            edited = [s["tamper"] for s in planned[:number] if "tamper" in s]
            note = " (после того как вызывающий код изменил полученный ранее список)" if edited else ""
            return verdict[0], f"шаг {number + 1}, {call}{note}: {verdict[1]}"
    return "passed", ""


def judge(case: Case, exercise: Exercise, frame: dict) -> CaseResult:
    output = frame.get("out", "")
    output = output[:2000] if type(output) is str else ""
    try:
        if case.kind == "class":
            category, detail = _judge_class(case, exercise, frame)
        else:
            category, detail = _judge_function(case, exercise, frame)
    except ProtocolViolation as error:
        category, detail = "protocol", f"ответ процесса с решением не разобран: {error}"
    return CaseResult(case, category == "passed", category, detail, output)


# --- running ---------------------------------------------------------------------------------


def _exit_description(code: int | None) -> tuple[str, str]:
    if code is None:
        return "crash", "процесс с решением перестал отвечать"
    number = code - 128 if code > 128 else (-code if code < 0 else None)
    if number is not None:
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"сигнал {number}"
        if number == signal.SIGXCPU:
            return "timeout", "процесс остановлен (SIGXCPU): исчерпан лимит процессорного времени"
        if number == signal.SIGSEGV:
            return "crash", "процесс упал с ошибкой сегментации (SIGSEGV)"
        return "crash", f"процесс завершён сигналом {name}"
    return "crash", f"процесс завершился (код {code}), не сообщив результат"


def _gone_failure(gone: ChildGone) -> _Failure:
    if gone.reason == "output":
        return _Failure("output_limit", "решение вывело слишком много текста, процесс остановлен")
    if gone.reason == "result_size":
        return _Failure("crash", "результат слишком большой")
    if gone.reason == "protocol":
        return _Failure("protocol", "процесс с решением прислал повреждённые данные")
    if gone.reason == "stalled":
        return _Failure("timeout", "процесс с решением перестал принимать входные данные")
    return _Failure(*_exit_description(gone.exit_code))


class _ExerciseRun:
    def __init__(
        self,
        exercise: Exercise,
        source: str,
        cases: list[Case],
        limits: Limits,
        hide: list[str],
    ) -> None:
        self.exercise = exercise
        self.source = source
        self.cases = cases
        self.limits = limits
        self.hide = hide
        self.session: ChildSession | None = None
        self.timeouts = 0
        self.results: dict[int, CaseResult] = {}
        self.import_failure: _Failure | None = None

    def _fail(self, index: int, failure: _Failure) -> None:
        self.results[index] = CaseResult(self.cases[index], False, failure.category, failure.detail)

    def _drop_session(self, kill: bool) -> None:
        if self.session is not None:
            if kill:
                self.session.kill()
            self.session.close()
            self.session = None

    def _start(self) -> _Failure | None:
        config = {
            "kind": self.exercise.kind,
            "module": self.exercise.name,
            "entry": self.exercise.entry,
            "source": self.source,
        }
        try:
            self.session = ChildSession(config, self.limits, self.hide)
        except SandboxError as error:
            log.warning("%s: %s", self.exercise.name, error)
            return _Failure("sandbox", str(error))
        try:
            frame = self.session.recv(self.limits.import_timeout)
        except ChildTimeout:
            self._drop_session(kill=True)
            return _Failure(
                "timeout", f"импорт файла не закончился за {self.limits.import_timeout:g} с"
            )
        except ChildGone as gone:
            failure = _gone_failure(gone)
            self._drop_session(kill=True)
            return _Failure(failure.category, f"при импорте: {failure.detail}")
        kind = frame.get("type")
        if kind == "ready":
            return None
        self._drop_session(kill=True)
        if kind == "import_error":
            return self._import_failure(frame)
        if kind == "sandbox_error":
            # Either the sandbox failed or the student's code forged this frame: log, never abort.
            log.warning("%s: песочница: %.300s", self.exercise.name, frame.get("message"))
            return _Failure("sandbox", "песочница не запустилась")
        return _Failure("protocol", "процесс с решением прислал неожиданный ответ при импорте")

    def _import_failure(self, frame: dict) -> _Failure:
        if frame.get("kind") == "missing":
            noun = "класса" if self.exercise.kind == "class" else "функции"
            return _Failure(
                "missing", f"в файле {self.exercise.name}.py нет {noun} {self.exercise.entry}"
            )
        try:
            exc = _check_exc(frame)
        except ProtocolViolation:
            return _Failure("protocol", "процесс с решением прислал повреждённые данные")
        if frame.get("kind") == "syntax":
            line = frame.get("line")
            where = f" (строка {line})" if type(line) is int else ""
            return _Failure("syntax_error", f"{_describe_raise(exc)}{where}")
        return _Failure("import_error", f"при импорте выброшено {_describe_raise(exc)}")

    def run_phase(self, indices: list[int]) -> bool:
        """Run these cases; False once nothing more can run (import failure, too many timeouts)."""
        pending = list(indices)
        while pending:
            if self.session is None:
                failure = self._start()
                if failure is not None:
                    self.import_failure = failure
                    return False
            assert self.session is not None
            batch = [self.cases[i].child_input(i) for i in pending]
            try:
                self.session.send({"type": "cases", "cases": batch})
            except ChildGone:
                pass  # recv() below reports the exit
            for position, index in enumerate(pending):
                try:
                    frame = self.session.recv(self.limits.case_timeout)
                except ChildTimeout:
                    self._fail(
                        index,
                        _Failure(
                            "timeout", f"вызов не закончился за {self.limits.case_timeout:g} с"
                        ),
                    )
                    self._drop_session(kill=True)
                    self.timeouts += 1
                    pending = pending[position + 1 :]
                    if self.timeouts >= self.limits.max_timeouts:
                        return False
                    break
                except ChildGone as gone:
                    self._fail(index, _gone_failure(gone))
                    self._drop_session(kill=True)
                    pending = pending[position + 1 :]
                    break
                if frame.get("type") != "case" or frame.get("i") != index:
                    self._fail(index, _Failure("protocol", "ответ не на тот случай"))
                    self._drop_session(kill=True)
                    pending = pending[position + 1 :]
                    break
                self.results[index] = judge(self.cases[index], self.exercise, frame)
            else:
                pending = []
                try:
                    done = self.session.recv(self.limits.case_timeout)
                    if done.get("type") != "batch_done":
                        self._drop_session(kill=True)
                except (ChildTimeout, ChildGone):
                    self._drop_session(kill=True)
        return True

    def close(self) -> None:
        self._drop_session(kill=False)


def status_of(results: list[CaseResult], import_failure: _Failure | None) -> str:
    if import_failure is not None:
        return STATUS_OF_CATEGORY.get(import_failure.category, "crash")
    for result in results:
        if result.category in STATUS_OF_CATEGORY and result.category not in ("missing",):
            return STATUS_OF_CATEGORY[result.category]
    return "ok"


def run_exercise(
    exercise: Exercise,
    source: str | None,
    phases: list[list[Case]],
    limits: Limits,
    hide: list[str] | tuple[str, ...] = (),
    source_failure: _Failure | None = None,
) -> ExerciseResult:
    """Run every phase's cases against `source` and judge them; never raises for student errors."""
    cases = [case for phase in phases for case in phase]
    if source is None:
        failure = source_failure or _Failure("missing", f"нет файла {exercise.name}.py")
        results = [CaseResult(case, False, failure.category, failure.detail) for case in cases]
        return ExerciseResult(exercise, status_of([], failure), results, failure.detail)
    run = _ExerciseRun(exercise, source, cases, limits, list(hide))
    try:
        start = 0
        for phase in phases:
            indices = list(range(start, start + len(phase)))
            start += len(phase)
            if not run.run_phase(indices):
                break
    finally:
        run.close()
    leftover = run.import_failure or _Failure(
        "not_run", "не запускался: слишком много таймаутов в этом упражнении"
    )
    results = [
        run.results.get(index) or CaseResult(case, False, leftover.category, leftover.detail)
        for index, case in enumerate(cases)
    ]
    message = run.import_failure.detail if run.import_failure else ""
    return ExerciseResult(exercise, status_of(results, run.import_failure), results, message)
