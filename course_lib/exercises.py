"""The in-notebook check: `check("build_chat_messages")` runs the public cases of one exercise.

It reads `exercises/<name>.py` from the course folder (found by walking up from the current
directory to the folder that holds exercises/ and course_lib/), runs the public cases through the
same sandboxed runner as `python -m course_lib grade`, and prints a short Russian report. The
report is deterministic (no timings, no paths outside the course), because notebooks store it and
nbval compares it. Hidden cases run only at grading; the report says so.
"""

from __future__ import annotations

from pathlib import Path

from course_lib.grading.cases import load_cases
from course_lib.grading.catalog import EXERCISES, CourseLayout, find_course_root, get_exercise
from course_lib.grading.runner import ExerciseResult, read_submission_file, run_exercise
from course_lib.grading.sandbox import Limits

__all__ = ["check", "run_check", "EXERCISE_NAMES"]

EXERCISE_NAMES = tuple(exercise.name for exercise in EXERCISES)
HIDDEN_NOTE = (
    "Скрытые тесты здесь не запускаются: они проверяют те же требования на других данных "
    "при проверке работы (python -m course_lib grade)."
)
DETAIL_LIMIT = 600


def run_check(
    name: str,
    *,
    root: str | Path | None = None,
    folder: str | Path | None = None,
    limits: Limits | None = None,
) -> ExerciseResult:
    """Run the public cases of one exercise; `folder` defaults to the course's exercises/."""
    exercise = get_exercise(name)
    layout = CourseLayout(find_course_root(root))
    cases = load_cases(layout.public_cases_file(exercise), exercise, "public")
    source_dir = Path(folder) if folder is not None else layout.exercises_dir
    source, failure = read_submission_file(source_dir, exercise)
    return run_exercise(
        exercise,
        source,
        [cases],
        limits or Limits(),
        hide=[str(layout.root)],
        source_failure=failure,
    )


def _clip(text: str) -> str:
    return text if len(text) <= DETAIL_LIMIT else text[: DETAIL_LIMIT - 1] + "…"


def format_report(result: ExerciseResult, folder_name: str = "exercises") -> str:
    exercise = result.exercise
    where = f"{folder_name}/{exercise.name}.py"
    lines = [f"Упражнение {exercise.name} — «{exercise.title}» ({where})"]
    total = len(result.cases)
    noun = "Класс" if exercise.kind == "class" else "Функция"
    if total == 0:
        lines.append("Открытых тестов для этого упражнения нет.")
    elif all(case.category == "not_implemented" for case in result.cases):
        lines.append(
            f"❌ {noun} {exercise.entry} ещё не реализована: замените raise NotImplementedError "
            "своим решением."
            if exercise.kind == "function"
            else f"❌ {noun} {exercise.entry} ещё не реализован: замените raise "
            "NotImplementedError своим решением."
        )
    elif result.message and all(case.detail == result.message for case in result.cases):
        lines.append(f"❌ {result.cases[0].reason[:1].upper()}{result.cases[0].reason[1:]}:")
        lines.append(f"   {_clip(result.message)}")
    else:
        for case in result.cases:
            if case.passed:
                lines.append(f"✅ {case.case.name}")
                continue
            lines.append(f"❌ {case.case.name} — {case.reason}")
            if case.detail:
                lines.append(f"   {_clip(case.detail)}")
            if case.output:
                lines.append(f"   вывод: {_clip(case.output.rstrip())}")
    passed = result.passed
    if total and passed == total:
        lines.append(f"Все открытые тесты пройдены: {passed} из {total}.")
    elif total:
        lines.append(f"Открытые тесты: пройдено {passed} из {total}.")
    lines.append(HIDDEN_NOTE)
    return "\n".join(lines)


def check(name: str, *, root: str | Path | None = None, folder: str | Path | None = None) -> None:
    """Print the public-case report for exercise `name` (e.g. "commit_turn" or "SessionHistory")."""
    result = run_check(name, root=root, folder=folder)
    print(format_report(result, Path(folder).name if folder is not None else "exercises"))
