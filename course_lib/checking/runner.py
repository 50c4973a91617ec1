"""Run the exercises of one submission: the same code path for `check()` and for `grade`.

The cases run in phases (public, then hidden). A grader runs every exercise's public phase before
any hidden one, all in one sandboxed child per submission (`SubmissionChild`: each exercise is
imported when it is first used), so nothing the student's code prints or returns during a public
phase (which feedback may quote) can contain a hidden input. After a timeout, a crash or a failed
import the child is replaced and the remaining cases, and the other exercises, continue in a fresh
one; after `Limits.max_timeouts` timeouts the rest are not run. A wall-clock timeout (of an
import or of a call) is tried once more in a fresh child before it is scored: a machine busy for a
moment must not cost points, while a real hang still fails, twice, within the exercise's budget.

Wall-clock limits: each call (`case_timeout`), each import (`import_timeout`), all of one exercise
(`exercise_seconds`, restarts included) and, through `deadline`, all of one submission
(`submission_seconds`, set by the caller). The budgets stop a solution that stays just under the
per-call limits on every case; what is left is reported as "exercise_budget"/"submission_budget".
Like each wait, a budget counts the child's own time: the run-queue delay a wait was stretched by
(`ChildSession.recv`) is given back to the budget, so a loaded machine does not exhaust it.

Every frame from the child is untrusted: `judge` validates its exact shape and compares the decoded
values with the expectation, which never left this process.
"""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from course_lib.checking.cases import Case
from course_lib.checking.catalog import Exercise
from course_lib.checking.compare import ProtocolViolation
from course_lib.checking.judge import check_exc, describe_raise, judge
from course_lib.checking.results import (  # noqa: F401 - re-exported for callers of this module
    CATEGORIES,
    STATUS_OF_CATEGORY,
    STATUSES,
    CaseResult,
    ExerciseResult,
    Failure,
    status_of,
)
from course_lib.checking.safetext import one_line, shown
from course_lib.checking.sandbox import ChildGone, ChildSession, ChildTimeout, Limits, SandboxError
from course_lib.checking.source import MAX_SOURCE_BYTES, read_submission_file  # noqa: F401

_Failure = Failure  # the name older callers used
log = logging.getLogger("grader")


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


def _gone_failure(gone: ChildGone) -> Failure:
    if gone.reason == "output":
        return Failure("output_limit", "решение вывело слишком много текста, процесс остановлен")
    if gone.reason == "result_size":
        return Failure("crash", "результат слишком большой")
    if gone.reason == "protocol":
        return Failure("protocol", "процесс с решением прислал повреждённые данные")
    if gone.reason == "stalled":
        return Failure("timeout", "процесс с решением перестал принимать входные данные")
    return Failure(*_exit_description(gone.exit_code))


class SubmissionClock:
    """The wall-clock deadline of one whole submission, shared by its exercises.

    Like each wait, it counts the child's own time: the run-queue delay any wait of the submission
    was stretched by is given back (`give_back`), so a loaded machine does not exhaust it.
    """

    def __init__(self, seconds: float, *, deadline: float | None = None) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds if deadline is None else deadline

    def give_back(self, starved: float) -> None:
        self.deadline += starved


class _Budget:
    """The earlier of the exercise's and the submission's deadlines."""

    def __init__(self, limits: Limits, submission: SubmissionClock | float | None) -> None:
        self.exercise_deadline = time.monotonic() + limits.exercise_seconds
        self.exercise_seconds = limits.exercise_seconds
        if isinstance(submission, (int, float)):  # a bare deadline, as callers gave it before
            submission = SubmissionClock(limits.submission_seconds, deadline=float(submission))
        self.submission = submission
        self._paused_at: float | None = None

    @property
    def kind(self) -> str:
        if self.submission is not None and self.submission.deadline < self.exercise_deadline:
            return "submission_budget"
        return "exercise_budget"

    @property
    def deadline(self) -> float:
        if self.kind == "submission_budget":
            return self.submission.deadline  # type: ignore[union-attr]
        return self.exercise_deadline

    def pause(self) -> None:
        """Stop the exercise's clock while other exercises run (its deadline moves on resume);
        the submission's clock goes on."""
        self._paused_at = time.monotonic()

    def resume(self) -> None:
        paused_at = self._paused_at
        if paused_at is not None:
            self.exercise_deadline += time.monotonic() - paused_at
        self._paused_at = None

    def wait(self, limit: float) -> tuple[float, bool]:
        """(how long to wait, whether the budget rather than `limit` ends that wait)."""
        remaining = self.deadline - time.monotonic()
        return (max(remaining, 0.0), True) if remaining <= limit else (limit, False)

    def give_back(self, starved: float) -> None:
        """Move both deadlines by the run-queue delay a wait was extended by: like each call's limit,
        the budgets count the child's own time, so a loaded machine does not exhaust them (a hang
        accrues no such delay and still does)."""
        self.exercise_deadline += starved
        if self.submission is not None:
            self.submission.give_back(starved)

    def failure(self) -> Failure:
        kind = self.kind
        where = "упражнение" if kind == "exercise_budget" else "всю работу"
        seconds = self.exercise_seconds if kind == "exercise_budget" else self.submission.seconds  # type: ignore[union-attr]
        return Failure(kind, f"исчерпан общий лимит времени на {where} ({seconds:g} с)")


class SubmissionChild:
    """The sandboxed child that runs the exercises of one submission, one exercise at a time.

    It starts with every file of the submission in its box and imports an exercise when that
    exercise first sends it cases. Starting a child costs far more than a phase of cases (a new
    interpreter, namespaces, a root filesystem), so one child per submission instead of two per
    exercise is what lets a grader keep up with a class. A timeout, a crash or a failed import ends
    the child for everyone: the next exercise gets a fresh one (and imports afresh), so one
    exercise's failure costs the others a restart, never a case. The per-exercise limits stay per
    exercise: the wall-clock ones are the runner's, the raw output and result sizes are counted per
    batch (`ChildSession.new_account`), and CPU time is the per-exercise limit times the count.
    """

    def __init__(self, sources: dict[str, tuple[Exercise, str]], limits: Limits, hide: Sequence[str] = ()) -> None:
        self.specs = [
            {"kind": exercise.kind, "module": exercise.name, "entry": exercise.entry,
             "custom_exceptions": [list(pair) for pair in exercise.custom_exceptions], "source": source}
            for exercise, source in sources.values()
        ]  # fmt: skip
        self.limits = replace(limits, cpu_seconds=limits.cpu_seconds * max(1, len(self.specs)))
        self.hide = list(hide)
        self.session: ChildSession | None = None
        self.imported: set[str] = set()
        self.started = 0  # children started so far

    def start(self) -> ChildSession:
        """A fresh child (raises SandboxError when the sandbox cannot start one)."""
        self.drop(kill=True)
        self.session = ChildSession({"kind": "exercises", "exercises": self.specs}, self.limits, self.hide)
        self.started += 1
        return self.session

    def drop(self, kill: bool) -> None:
        if self.session is not None:
            if kill:
                self.session.kill()
            self.session.close()
        self.session = None
        self.imported = set()

    def close(self) -> None:
        self.drop(kill=False)

    def __enter__(self) -> SubmissionChild:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _ExerciseRun:
    def __init__(
        self,
        exercise: Exercise,
        source: str,
        cases: list[Case],
        limits: Limits,
        hide: list[str],
        budget: _Budget,
        child: SubmissionChild,
    ) -> None:
        self.exercise = exercise
        self.source = source
        self.cases = cases
        self.limits = limits
        self.hide = hide
        self.budget = budget
        self.child = child
        self.timeouts = 0
        self.import_retried = False
        self.retried: set[int] = set()  # cases whose timeout was already tried again
        self.results: dict[int, CaseResult] = {}
        self.import_failure: Failure | None = None
        self.stopped: Failure | None = None  # a budget ran out

    def _fail(self, index: int, failure: Failure) -> None:
        self.results[index] = CaseResult(self.cases[index], False, failure.category, failure.detail)

    @property
    def session(self) -> ChildSession | None:
        """The child, once this exercise is imported in it."""
        return self.child.session if self.exercise.name in self.child.imported else None

    def _drop_session(self, kill: bool) -> None:
        self.child.drop(kill)

    def _recv(self, session: ChildSession, wait: float) -> dict:
        before = session.starved_total
        try:
            return session.recv(wait)
        finally:
            self.budget.give_back(session.starved_total - before)

    def _start(self) -> Failure | None:
        """Import this exercise in the submission's child (a fresh child if there is none)."""
        wait, by_budget = self.budget.wait(self.limits.import_timeout)
        if wait <= 0:
            return self.budget.failure()
        session = self.child.session
        try:
            if session is None:
                session = self.child.start()
        except SandboxError as error:
            log.warning("%s: %s", self.exercise.name, one_line(str(error)))
            return Failure("sandbox", str(error))
        session.new_account()
        try:
            try:
                session.send({"type": "import", "module": self.exercise.name})
            except ChildGone:
                pass  # recv() reports the exit
            frame = self._recv(session, wait)
        except ChildTimeout:
            self._drop_session(kill=True)
            if by_budget:
                return self.budget.failure()
            if not self.import_retried:  # once more, in a fresh child: a busy machine is not a hang
                self.import_retried = True
                return self._start()
            return Failure("timeout", f"импорт файла не закончился за {self.limits.import_timeout:g} с (и при повторе)")
        except ChildGone as gone:
            failure = _gone_failure(gone)
            self._drop_session(kill=True)
            return Failure(failure.category, f"при импорте: {failure.detail}")
        kind = frame.get("type")
        if kind == "ready":
            self.child.imported.add(self.exercise.name)
            return None
        self._drop_session(kill=True)  # what a failed import left running must not meet the next exercise
        if kind == "import_error":
            return self._import_failure(frame)
        if kind == "sandbox_error":
            log.warning("%s: песочница: %.300s", self.exercise.name, one_line(str(frame.get("message"))))
            return Failure("sandbox", "песочница не запустилась")
        return Failure("protocol", "процесс с решением прислал неожиданный ответ при импорте")

    def _import_failure(self, frame: dict) -> Failure:
        if frame.get("kind") == "missing":
            noun = "класса" if self.exercise.kind == "class" else "функции"
            return Failure("missing", f"в файле {self.exercise.name}.py нет {noun} {self.exercise.entry}")
        try:
            exc = check_exc(frame)
        except ProtocolViolation:
            return Failure("protocol", "процесс с решением прислал повреждённые данные")
        if frame.get("kind") == "syntax":
            line = frame.get("line")
            named = type(exc.get("line")) is int and exc["line"] > 0  # describe_raise already says it
            where = f" (строка {line})" if type(line) is int and not named else ""
            number = exc["line"] if named else line
            return Failure("syntax_error", shown(f"{describe_raise(exc)}{where}{self._quoted_line(number)}"))
        if exc.get("name") == "MemoryError":  # a memory bomb at import: the memory status the guide promises
            return Failure("memory", shown("при импорте превышен лимит памяти (MemoryError)"))
        return Failure("import_error", shown(f"при импорте выброшено {describe_raise(exc)}"))

    def _quoted_line(self, number: object) -> str:
        """The student's own line the syntax error points at, as a second line of the message
        (their file, shown to them only); "" when the number is not a line of the file."""
        lines = self.source.splitlines()
        if type(number) is not int or not 1 <= number <= len(lines) or not lines[number - 1].strip():
            return ""
        text = lines[number - 1].rstrip()
        return f"\n    {number} | {text[:120]}{'…' if len(text) > 120 else ''}"

    def run_phase(self, indices: list[int]) -> bool:
        """Run these cases; False once nothing more can run (import failure, timeouts, budget)."""
        pending = list(indices)
        while pending:
            if self.session is None:
                failure = self._start()
                if failure is not None:
                    if failure.category == self.budget.kind:
                        self.stopped = failure
                    else:
                        self.import_failure = failure
                    return False
            session = self.session
            assert session is not None
            session.new_account()
            batch = [self.cases[i].child_input(i) for i in pending]
            try:
                session.send({"type": "cases", "module": self.exercise.name, "cases": batch})
            except ChildGone:
                pass  # recv() below reports the exit
            for position, index in enumerate(pending):
                wait, by_budget = self.budget.wait(self.limits.case_timeout)
                try:
                    frame = self._recv(session, wait)
                except ChildTimeout:
                    self._drop_session(kill=True)
                    if by_budget:
                        self.stopped = self.budget.failure()
                        self._fail(index, self.stopped)
                        return False
                    if index not in self.retried:  # once more, in a fresh child
                        self.retried.add(index)
                        pending = pending[position:]
                        break
                    timeout = Failure(
                        "timeout", f"вызов не закончился за {self.limits.case_timeout:g} с (и при повторе)"
                    )
                    self._fail(index, timeout)
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
                    self._fail(index, Failure("protocol", "ответ не на тот случай"))
                    self._drop_session(kill=True)
                    pending = pending[position + 1 :]
                    break
                self.results[index] = judge(self.cases[index], self.exercise, frame)
            else:
                pending = []
                try:
                    done = self._recv(session, min(self.limits.case_timeout, self.budget.wait(1e9)[0]))
                    if done.get("type") != "batch_done" or done.get("changed") is not False:
                        # A file that rebound builtins or a shared module's names (or imported one):
                        # the next exercise must not meet that, it gets a fresh child.
                        self._drop_session(kill=True)
                except (ChildTimeout, ChildGone):
                    self._drop_session(kill=True)
        return True

@dataclass
class PendingExercise:
    """An exercise whose public phase has run and whose hidden phases have not (yet)."""

    exercise: Exercise
    phases: list[list[Case]]
    flags: tuple[str, ...]
    run: _ExerciseRun | None  # None: no source, nothing to run
    failure: Failure | None = None  # why there is no source
    go_on: bool = True  # False once nothing more can run
    failed_in_public: bool = True
    owns_child: bool = False  # the child is this exercise's alone: closed after each phase


def start_exercise(
    exercise: Exercise,
    source: str | None,
    phases: list[list[Case]],
    limits: Limits,
    hide: Sequence[str] = (),
    source_failure: Failure | None = None,
    deadline: SubmissionClock | float | None = None,
    flags: tuple[str, ...] = (),
    child: SubmissionChild | None = None,
) -> PendingExercise:
    """Run the public phase (phase 0) and stop: `finish_exercise` runs the hidden ones.

    A grader runs every exercise's public phase before any hidden one, so nothing a hidden phase
    can leave behind — the PID counter, a file in a shared /tmp, the clock — reaches output that
    the student sees; the exercise's time budget does not run while other exercises are checked.
    `child` is the submission's (see `SubmissionChild`); without one the exercise gets a child of
    its own, closed after the public phase (the hidden phases get a new one).
    """
    if source is None:
        failure = source_failure or Failure("missing", f"нет файла {exercise.name}.py")
        return PendingExercise(exercise, phases, flags, None, failure, go_on=False)
    owns_child = child is None
    if child is None:
        child = SubmissionChild({exercise.name: (exercise, source)}, limits, hide)
    cases = [case for phase in phases for case in phase]
    run = _ExerciseRun(exercise, source, cases, limits, list(hide), _Budget(limits, deadline), child)
    pending = PendingExercise(exercise, phases, flags, run, owns_child=owns_child)
    try:
        if phases:
            pending.go_on = run.run_phase(_validation_first(cases, 0, len(phases[0])))
    finally:
        if owns_child:
            child.close()
        run.budget.pause()
    return pending


def finish_exercise(pending: PendingExercise) -> ExerciseResult:
    """Run the hidden phases of `start_exercise`'s exercise and judge everything."""
    exercise, phases, flags, run = pending.exercise, pending.phases, pending.flags, pending.run
    if run is None:
        cases = [case for phase in phases for case in phase]
        failure = pending.failure
        results = [CaseResult(case, False, failure.category, failure.detail) for case in cases]
        return ExerciseResult(exercise, status_of([], failure), results, failure.detail, flags=flags)
    cases = run.cases
    run.budget.resume()
    try:
        start = len(phases[0]) if phases else 0
        for phase in phases[1:]:
            if not pending.go_on:
                break
            pending.failed_in_public = False
            pending.go_on = run.run_phase(_validation_first(cases, start, len(phase)))
            start += len(phase)
    finally:
        if pending.owns_child:
            run.child.close()
    failed_in_public = pending.failed_in_public
    # Cases that never ran are "not_run" (feedback lists them as «не запускались», without the
    # hints of what they check); an import failure is every case's reason, as before.
    if run.import_failure is not None:
        leftover = run.import_failure
    elif run.stopped is not None:
        leftover = Failure("not_run", f"не запускался: {run.stopped.detail}")
    else:
        leftover = Failure("not_run", "не запускался: слишком много таймаутов в этом упражнении")
    results = [
        run.results.get(index) or CaseResult(case, False, leftover.category, leftover.detail)
        for index, case in enumerate(cases)
    ]
    # What happened once hidden inputs were sent is the student's to choose: the status and the
    # message a student sees come from the import and the public cases only.
    stop = run.import_failure or run.stopped
    stop_in_public = stop is not None and failed_in_public
    public = results[: len(phases[0])] if phases else []
    import_failure = stop if stop_in_public else None
    status = status_of(results, run.import_failure or run.stopped)
    shown_status = status_of(public, import_failure)
    message = stop.detail if stop_in_public else ""
    return ExerciseResult(exercise, status, results, message, shown_status, flags)


def _validation_first(cases: list[Case], start: int, count: int) -> list[int]:
    # Cheap validation cases (an exception at once) first: a solution that times out on the
    # algorithm still has them judged instead of "not run".
    return sorted(range(start, start + count), key=lambda i: cases[i].group != "validation")


def run_exercise(
    exercise: Exercise,
    source: str | None,
    phases: list[list[Case]],
    limits: Limits,
    hide: Sequence[str] = (),
    source_failure: Failure | None = None,
    deadline: SubmissionClock | float | None = None,
    flags: tuple[str, ...] = (),
) -> ExerciseResult:
    """Run every phase's cases against `source` and judge them; never raises for student errors.

    `deadline` is the submission's (a `SubmissionClock`, or a bare time.monotonic() deadline);
    phase 0 is public, later phases hidden.
    One exercise alone, in one child; a grader with several uses one `SubmissionChild` for all,
    `start_exercise` for each, then `finish_exercise` for each.
    """
    sources = {} if source is None else {exercise.name: (exercise, source)}
    with SubmissionChild(sources, limits, hide) as child:
        pending = start_exercise(exercise, source, phases, limits, hide, source_failure, deadline, flags, child)
        return finish_exercise(pending)
