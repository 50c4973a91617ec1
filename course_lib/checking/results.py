"""What grading one exercise yields: per-case results, the exercise's status, the fixed vocabulary."""

from __future__ import annotations

from dataclasses import dataclass, field

from course_lib.checking.cases import Case
from course_lib.checking.catalog import Exercise

# The fixed vocabulary of outcomes (public cases and the instructor's grades.csv; a hidden case
# shows the student only passed / not passed and its hint).
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
    "exercise_budget": "исчерпан общий лимит времени на упражнение",
    "submission_budget": "исчерпан общий лимит времени на всю работу",
    "memory": "превышен лимит памяти",
    "crash": "процесс с решением аварийно завершился",
    "output_limit": "слишком большой вывод",
    "protocol": "нарушен протокол обмена с проверяющей программой",
    "syntax_error": "синтаксическая ошибка в файле",
    "import_error": "ошибка при импорте файла",
    "missing": "нет файла или нужной функции/класса",
    "ambiguous": "файл упражнения есть в работе несколько раз: неясно, какой проверять",
    "not_run": "не запускался: слишком много таймаутов в этом упражнении",
    "sandbox": "сбой песочницы проверки",
}

# Exercise status (one per exercise, and the grades.csv vocabulary).
STATUS_OF_CATEGORY = {
    "timeout": "timeout",
    "exercise_budget": "timeout",
    "submission_budget": "timeout",
    "memory": "memory",
    "crash": "crash",
    "output_limit": "crash",
    "protocol": "crash",
    "sandbox": "crash",
    "import_error": "crash",
    "syntax_error": "syntax_error",
    "missing": "missing",
    "ambiguous": "ambiguous",
}
STATUSES = ("ok", "syntax_error", "missing", "ambiguous", "timeout", "memory", "crash")


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
    status: str  # from every case: for the instructor (grades.csv)
    cases: list[CaseResult] = field(default_factory=list)
    message: str = ""  # why it failed to run, if that happened before any hidden input was sent
    shown_status: str | None = None  # from the import and public cases only: for the student
    flags: tuple[str, ...] = ()  # noted, not penalized (e.g. "hard_link")

    def __post_init__(self) -> None:
        if self.shown_status is None:
            self.shown_status = self.status

    @property
    def max_score(self) -> float:
        return self.exercise.points

    def case_points(self) -> list[float]:
        """Points of each case, in order (see `case_points`); computed once for the same cases
        (every score, discount and report line asks for them)."""
        key = tuple(id(result.case) for result in self.cases)
        cached = self.__dict__.get("_case_points")
        if cached is None or cached[0] != key:
            cached = (key, case_points(self.exercise, [result.case for result in self.cases]))
            self.__dict__["_case_points"] = cached
        return list(cached[1])

    def algorithm_fraction(self, visibility: str | None = None) -> float:
        """The share of the algorithm points earned among one visibility's cases (all cases when
        that visibility has no algorithm case, or with None): see `earned_points`."""
        earned = possible = 0.0
        for points, result in zip(self.case_points(), self.cases):
            if result.case.group == "algorithm" and visibility in (None, result.case.visibility):
                possible += points
                earned += points if result.passed else 0.0
        if not possible:
            return self.algorithm_fraction() if visibility is not None else 1.0
        return earned / possible

    def earned_points(self) -> list[float]:
        """Points each case earned. A passed algorithm case earns its points; a passed validation
        case earns its points times the `algorithm_fraction` of its own visibility, so raising the
        right exception counts only as far as the function also works (a stub that raises on every
        input earns 0), and the public cases' points never depend on hidden outcomes."""
        fractions = {v: self.algorithm_fraction(v) for v in {r.case.visibility for r in self.cases}}
        earned = []
        for points, result in zip(self.case_points(), self.cases):
            if not result.passed:
                earned.append(0.0)
            elif result.case.group == "validation":
                earned.append(round(points * fractions[result.case.visibility], 4))
            else:
                earned.append(points)
        return earned

    @property
    def score(self) -> float:
        return round(sum(self.earned_points()), 4)

    def validation_discount(self, visibility: str | None = None) -> float:
        """Validation points lost to the rule above (0 when every algorithm case passed)."""
        lost = 0.0
        for points, got, result in zip(self.case_points(), self.earned_points(), self.cases):
            if visibility not in (None, result.case.visibility):
                continue
            if result.passed and result.case.group == "validation":
                lost += points - got
        return round(lost, 4)

    def group_score(self, visibility: str) -> tuple[float, float]:
        """(points earned, points possible) over the cases of one visibility."""
        earned = possible = 0.0
        for points, got, result in zip(self.case_points(), self.earned_points(), self.cases):
            if result.case.visibility == visibility:
                possible += points
                earned += got
        return round(earned, 4), round(possible, 4)

    @property
    def passed(self) -> int:
        return sum(result.passed for result in self.cases)


def case_points(exercise: Exercise, cases: list[Case]) -> list[float]:
    """Each case's points: the exercise's points split between the "algorithm" cases (a return
    value is expected) and the "validation" cases (an exception is expected) by the registry's
    share (70 / 30 by default), then within each group by the cases' `weight` (default 1). A group
    with no cases gives its share to the other. Each value has 4 decimals and they add up to the
    exercise's points exactly (largest remainders get the last 0.0001s), so Gradescope's sum of
    the tests' max_score is the exercise's points, not 120.0024."""
    groups = {"algorithm": 0.0, "validation": 0.0}
    for case in cases:
        groups[case.group] += case.weight
    if not cases:
        return []
    shares = {"algorithm": exercise.algorithm_share, "validation": 1.0 - exercise.algorithm_share}
    if not groups["validation"]:
        shares = {"algorithm": 1.0, "validation": 0.0}
    elif not groups["algorithm"]:
        shares = {"algorithm": 0.0, "validation": 1.0}
    exact = [
        exercise.points * shares[case.group] * case.weight / groups[case.group] for case in cases
    ]
    return _apportion(exact, exercise.points)


UNITS = 10_000  # points are kept to 4 decimals


def _apportion(exact: list[float], total: float) -> list[float]:
    """Round to 1/UNITS so that the sum is exactly `total` (largest remainder method)."""
    target = round(total * UNITS)
    floors = [int(value * UNITS + 1e-9) for value in exact]
    order = sorted(range(len(exact)), key=lambda i: (-(exact[i] * UNITS - floors[i]), i))
    for index in order[: max(0, target - sum(floors))]:
        floors[index] += 1
    return [units / UNITS for units in floors]


@dataclass(frozen=True)
class Failure:
    """A case that produced no result frame."""

    category: str
    detail: str


def status_of(results: list[CaseResult], import_failure: Failure | None) -> str:
    if import_failure is not None:
        return STATUS_OF_CATEGORY.get(import_failure.category, "crash")
    for result in results:
        if result.category in STATUS_OF_CATEGORY and result.category not in ("missing", "ambiguous"):
            return STATUS_OF_CATEGORY[result.category]
    return "ok"
