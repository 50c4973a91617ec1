"""Your exercise code inside the course's chat: the notebooks run what you wrote in exercises/.

    from course_lib.your_code import your_code
    split_into_turns = your_code("split_into_turns")
    split_into_turns(history)          # your function once it passes its public cases

`your_code(name)` returns a stand-in for the exercise's function (or class) that, on every call,
looks at `exercises/<name>.py` as you saved it last:

- the file changed since the last look → its public cases run again, in the same sandbox as
  `check(name)`; a kernel restart is never needed;
- every public case passes → your code runs (the file is executed in the notebook's own process,
  like an import, so its line numbers show in a traceback);
- a stub, a failing case, a syntax error or a missing file → the course's own version runs
  (`course_lib.course_versions.<name>`, which passes every public and hidden case).

Each time the choice is made or changes, one Russian line says which implementation runs and, for
the course's, why and what to do (`check("name")`). The fallback never hides the lesson: while the
student's function fails its public cases, `show_mistake(*example)` runs it once on the lesson's
example beside the course's version and prints both (`.students` is that function itself). `.implementation` is "yours" or "course", for
notebooks that want to show or assert it. An exception raised by your code keeps its traceback and
gains a note naming your file: the notebook shows the mistake instead of hiding it behind the
course's version.

Which code answered, always true: a line printed under a cell says what was chosen when that cell
ran. In Jupyter the line is a display that the stand-in rewrites when the choice changes (the file
was saved, the next use re-checked it), so an old «работает версия курса» under the setup cell turns
into the new status, marked «обновлено»; outside Jupyter a new line is printed instead. What
really ran for one reply is recorded, not re-derived: inside `recording()` every stand-in that is
called notes its implementation, and `ChatService.reply()` (and 09's `ToolMemoryChat`) hand that
record to the reply (`.implementations`), which the chat widget and the context inspector show as
`used_line()`: «Ответ собран: select_recent_turns — ваш код, …». Each stand-in also counts its calls
per implementation (`.calls`; `calls_so_far()` for all), so a test can prove the student's code ran.
"""

from __future__ import annotations

import contextvars
import copy
import hashlib
import importlib
import os
import sys
import threading
import types
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from course_lib.checking.catalog import BY_NAME, Exercise, find_course_root, get_exercise

__all__ = ["ExerciseCode", "YOURS", "COURSE", "your_code", "which_code", "recording", "used_line", "calls_so_far"]

YOURS, COURSE = "yours", "course"
STUB, FAILING, BROKEN = "stub", "failing", "broken"
WHO_RAN = {YOURS: "ваш код", COURSE: "версия курса"}
REFRESHED = "⟳ обновлено: файл изменился"
SHOWN_LINES = 50  # a stand-in keeps the handles of its newest lines shown in a notebook, no more

_registry: dict[tuple[str, str], ExerciseCode] = {}
_registry_lock = threading.Lock()
# The records open around the current reply (nested replies each get every call).
_recordings: contextvars.ContextVar[tuple[dict[str, str], ...]] = contextvars.ContextVar(
    "course_your_code_recordings", default=()
)


@contextmanager
def recording() -> Iterator[dict[str, str]]:
    """Inside the block, every stand-in that is called notes which implementation ran:
    {exercise name: "yours" | "course"} in the order of first use (the latest choice if it
    changed midway). A chat service wraps one reply in it and hands the record to the reply."""
    used: dict[str, str] = {}
    token = _recordings.set((*_recordings.get(), used))
    try:
        yield used
    finally:
        _recordings.reset(token)


def used_line(used: Iterable[tuple[str, str]] | dict[str, str]) -> str | None:
    """«Ответ собран: split_into_turns — ваш код, select_recent_turns — версия курса.», or None
    when no exercise ran for the reply."""
    pairs = list(used.items()) if isinstance(used, dict) else list(used)
    if not pairs:
        return None
    return "Ответ собран: " + ", ".join(f"{name} — {WHO_RAN[implementation]}" for name, implementation in pairs) + "."


def _kernel_display() -> Callable[..., Any] | None:
    """IPython's `display` inside a Jupyter kernel (where a shown line can be rewritten later);
    None in a console, a script or a test, where lines are printed."""
    if "IPython" not in sys.modules:  # a console or a script: IPython was never imported
        return None
    from IPython import get_ipython
    from IPython.display import display

    shell = get_ipython()
    return display if shell is not None and getattr(shell, "kernel", None) is not None else None


def _noun(exercise: Exercise) -> tuple[str, str]:
    """("ваша функция split_into_turns", "функция") or the class forms."""
    if exercise.kind == "class":
        return f"ваш класс {exercise.entry}", "класс"
    return f"ваша функция {exercise.entry}", "функция"


def status_line(exercise: Exercise, state: str, passed: int = 0, total: int = 0, reason: str = "") -> str:
    """The one line a notebook prints about which implementation of `exercise` runs."""
    where = f"exercises/{exercise.name}.py"
    yours, _ = _noun(exercise)
    check = f'check("{exercise.name}")'
    cases = "открытые тесты" if exercise.graded else "пункты договорённости"
    if state == YOURS:
        return f"✔ {exercise.name}: работает {yours} из {where} ({cases}: {passed} из {total})."
    if state == STUB:
        return (f"↪ {exercise.name}: в {where} пока заготовка — работает версия курса. "
                f"Когда решите упражнение, здесь заработает ваш код; проверка: {check}.")
    if state == FAILING:
        return (f"↪ {exercise.name}: {yours} пока не проходит {cases} ({passed} из {total}) — "
                f"работает версия курса. Что не так: {check}.")
    return f"↪ {exercise.name}: {where} не загружается ({reason}) — работает версия курса. Подробности: {check}."


class ExerciseCode:
    """A callable that runs the student's exercise code when it passes, the course's otherwise."""

    def __init__(self, exercise: Exercise, root: Path, *, announce: Callable[[str], None] | None = print) -> None:
        self.exercise = exercise
        self.root = root
        self.path = root / "exercises" / f"{exercise.name}.py"
        self._announce = announce
        self._lock = threading.Lock()
        self._stat_key: tuple | None = None
        self._digest: str | None = None
        self._entry: Any = None
        self._students: Any = None  # the student's own entry, also while it fails its public cases
        self._shown: list[Any] = []  # display handles of this stand-in's lines in a notebook
        self.implementation = COURSE
        self.status = ""
        self.calls = {YOURS: 0, COURSE: 0}
        """How many calls ran each implementation (`show_mistake` is not counted)."""
        self.refresh()

    # -- choosing -------------------------------------------------------------------------------

    def refresh(self) -> str:
        """Re-read the student's file if it changed; return "yours" or "course"."""
        with self._lock:
            key = self._file_key()
            if key is not None and key == self._stat_key and self._entry is not None:
                return self.implementation
            self._stat_key = key
            data = self._read()
            digest = hashlib.sha256(data).hexdigest() if data is not None else None
            if digest == self._digest and self._entry is not None:
                return self.implementation
            self._digest = digest
            implementation, entry, status, students = self._choose(data)
            changed = status != self.status
            self.implementation, self._entry, self.status, self._students = implementation, entry, status, students
        if changed:
            self._rewrite_shown(status)
            self.say(status)
        return implementation

    # -- the line under a cell ----------------------------------------------------------------

    def say(self, status: str) -> None:
        """Show one status line: in a Jupyter kernel as a display the stand-in can rewrite later,
        elsewhere with the announcer it was given (print, or a test's list)."""
        if self._announce is None:
            return
        display = _kernel_display() if self._announce is print else None
        if display is None:
            self._announce(status)
            return
        handle = display({"text/plain": status}, raw=True, display_id=True)
        if handle is not None:
            self._shown = [*self._shown[-(SHOWN_LINES - 1):], handle]

    def _rewrite_shown(self, status: str) -> None:
        """The lines shown before no longer hold: each becomes the new status, marked as updated."""
        for handle in self._shown:
            try:
                handle.update({"text/plain": f"{status} {REFRESHED}."}, raw=True)
            except Exception:  # noqa: BLE001 - a closed front end must not stop the chat
                pass

    def _file_key(self) -> tuple | None:
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size, info.st_ino)

    def _read(self) -> bytes | None:
        try:
            return self.path.read_bytes()
        except OSError:
            return None

    def _choose(self, data: bytes | None) -> tuple[str, Any, str, Any]:
        """(implementation, entry that runs, status line, the student's own entry or None)."""
        exercise = self.exercise
        if data is None:
            return COURSE, self._course_entry(), status_line(exercise, BROKEN, reason="файла нет"), None
        # Imported here: the grading modules are only needed once a notebook asks for student code.
        from course_lib.exercises import run_check

        result = run_check(exercise.name, root=self.root)
        total, passed = len(result.cases), result.passed
        if total and all(case.category == "not_implemented" for case in result.cases):
            return COURSE, self._course_entry(), status_line(exercise, STUB), None
        if result.message and all(case.detail == result.message for case in result.cases):
            reason = result.cases[0].reason if result.cases else "ошибка"
            return COURSE, self._course_entry(), status_line(exercise, BROKEN, reason=reason), None
        try:
            students = self._load_student_entry(data)
        except Exception as error:  # the sandbox ran it, the kernel could not: say so and go on
            reason = f"{type(error).__name__}: {error}"
            return COURSE, self._course_entry(), status_line(exercise, BROKEN, reason=reason), None
        if not total or passed < total:
            return COURSE, self._course_entry(), status_line(exercise, FAILING, passed, total), students
        return YOURS, students, status_line(exercise, YOURS, passed, total), students

    def _course_entry(self) -> Any:
        module = importlib.import_module(f"course_lib.course_versions.{self.exercise.name}")
        return getattr(module, self.exercise.entry)

    def _load_student_entry(self, data: bytes) -> Any:
        # A fresh module per version of the file: objects made by an older version keep working.
        module = types.ModuleType(f"exercises_{self.exercise.name}", f"exercises/{self.exercise.name}.py")
        module.__file__ = str(self.path)
        code = compile(data.decode("utf-8-sig"), str(self.path), "exec")
        sys.modules[module.__name__] = module  # dataclasses and pickling look their module up here
        exec(code, module.__dict__)
        entry = getattr(module, self.exercise.entry)
        if not callable(entry):
            raise TypeError(f"{self.exercise.entry} не функция и не класс")
        return entry

    # -- using ----------------------------------------------------------------------------------

    @property
    def entry(self) -> Any:
        """The function or class that runs now (after looking at the file again)."""
        self.refresh()
        return self._entry

    @property
    def students(self) -> Any:
        """The student's own function (or class) as saved, even while it fails its public cases;
        None for a stub, a missing file or one that does not load."""
        self.refresh()
        return self._students

    def show_mistake(self, *args: Any, describe: Callable[[Any], str] = repr, out: Callable[[str], None] = print,
                     **kwargs: Any) -> Shown:
        """While the student's function fails its public cases: run it once on the lesson's example
        beside the course's version and print both, each through `describe` (the lesson's terms:
        the window's gaps, the turns, the blocks). Returns whether anything was shown (`Shown`: true or
        false, and no «False» under the cell when it is a cell's last line); with the student's code
        running, or a stub, nothing is (the lesson's own output says it all)."""
        self.refresh()
        students, implementation = self._students, self.implementation
        if implementation == YOURS or students is None:
            return Shown(False)

        def outcome(function: Callable[..., Any]) -> tuple[str, BaseException | None]:
            try:
                value = function(*_copied(args), **_copied(kwargs))
            except Exception as error:  # the mistake itself (or the lesson's refusal): shown, never raised
                return f"выбросила {type(error).__name__}: {error}", error
            try:
                return describe(value), None
            except Exception:  # noqa: BLE001 - a value of a shape the lesson does not expect
                shown = repr(value)
                return f"вернула {shown if len(shown) <= 160 else shown[:159] + '…'}", None

        (theirs, error), (expected, _) = outcome(students), outcome(self._course_entry())
        yours, _ = _noun(self.exercise)
        where = self._where(error) if error is not None else ""  # the line of the student's file that raised
        out(f"↪ {yours[0].upper()}{yours[1:]} на примере урока (открытые тесты пока не пройдены): {theirs}{where}")
        out(f"  Версия курса на том же примере: {expected}")
        if theirs == expected:  # the same refusal counts as the same result, wherever it was raised
            out(f"  На этом примере результаты совпали: ошибка видна в другом случае — check(\"{self.exercise.name}\").")
        return Shown(True)

    def _where(self, error: BaseException) -> str:
        """« (exercises/x.py, строка N)» for the deepest frame of the student's file, if any."""
        line = None
        frame = error.__traceback__
        while frame is not None:
            if frame.tb_frame.f_code.co_filename == str(self.path):
                line = frame.tb_lineno
            frame = frame.tb_next
        return f" (exercises/{self.exercise.name}.py, строка {line})" if line else ""

    def module_attribute(self, name: str) -> Any:
        """A name from the module that runs now, e.g. the student's `ChatHistoryError`."""
        self.refresh()
        return getattr(sys.modules.get(self._entry.__module__), name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.refresh()
        entry, implementation = self._entry, self.implementation
        self.calls[implementation] += 1
        for used in _recordings.get():
            used[self.exercise.name] = implementation  # a dict keeps the order of first use
        try:
            return entry(*args, **kwargs)
        except Exception as error:
            if implementation == YOURS:
                error.add_note(
                    f"Ошибка в вашем коде: exercises/{self.exercise.name}.py. Открытые тесты он прошёл, "
                    f"а на данных этого ноутбука упал — найдите в трассировке строку из вашего файла."
                )
            raise

    def __repr__(self) -> str:
        return self.status


class Shown:
    """What `show_mistake` returns: whether it printed anything. True or false like a bool; as the
    last line of a notebook cell it displays nothing (the printed lines are the output)."""

    __slots__ = ("value",)

    def __init__(self, value: bool) -> None:
        self.value = value

    def __bool__(self) -> bool:
        return self.value

    def __repr__(self) -> str:
        return repr(self.value)

    def _ipython_display_(self) -> None:
        pass


def _copied(value: Any) -> Any:
    """A deep copy, so neither version sees what the other changed; a value that cannot be copied
    (a registry of tools bound to an open store) is passed as it is."""
    try:
        return copy.deepcopy(value)
    except Exception:  # noqa: BLE001 - pickling errors come in many types
        return value


def your_code(name: str, *, root: str | Path | None = None, announce: bool = True) -> ExerciseCode:
    """The stand-in for exercise `name` (its file stem or entry, e.g. "SessionHistory").

    One stand-in per exercise and course folder: asking twice gives the same object and prints
    nothing new unless the file changed.
    """
    exercise = get_exercise(name, challenges=True)
    course_root = find_course_root(root)
    key = (str(course_root), exercise.name)
    with _registry_lock:
        found = _registry.get(key)
    if found is not None:
        if announce and found._announce is None:
            found._announce = print  # a course module made it silently first; the notebook's line speaks
        if announce:
            before = found.status
            found.refresh()
            if found.status == before:
                found.say(found.status)
        return found
    code = ExerciseCode(exercise, course_root, announce=print if announce else None)
    with _registry_lock:
        return _registry.setdefault(key, code)


def which_code(*names: str) -> dict[str, str]:
    """{"split_into_turns": "yours", ...} for the named exercises (all when none is named)."""
    chosen = names or tuple(BY_NAME)
    return {get_exercise(name).name: your_code(name, announce=False).refresh() for name in chosen}


def calls_so_far() -> dict[str, dict[str, int]]:
    """{"commit_turn": {"yours": 3, "course": 0}, ...}: the calls of every stand-in made in this
    process (a test asks the kernel after a notebook ran)."""
    with _registry_lock:
        codes = list(_registry.values())
    calls: dict[str, dict[str, int]] = {}
    for code in codes:  # one stand-in per course folder: a process with two folders adds them up
        counted = calls.setdefault(code.exercise.name, {YOURS: 0, COURSE: 0})
        for implementation, number in code.calls.items():
            counted[implementation] += number
    return calls


def on_each_call(name: str) -> Callable[..., Any]:
    """For course modules: exercise `name`, chosen again on every call, announcing nothing.

    A notebook's own `your_code(name)` line announces which implementation runs; a module that
    creates the stand-in lazily, at call time, never takes that announcement away.
    """

    def call(*args: Any, **kwargs: Any) -> Any:
        return your_code(name, announce=False)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call
