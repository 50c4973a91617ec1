"""The in-notebook check: `check("build_chat_messages")` runs the public cases of one exercise.

It reads `exercises/<name>.py` from the course folder (found by walking up from the current
directory to the folder that holds exercises/ and course_lib/), runs the public cases through the
same sandboxed runner as `python -m grader grade`, and prints a short Russian report. The
report is deterministic (no timings, no paths outside the course), because notebooks store it and
nbval compares it. Hidden cases run only at grading; the report says so.
"""

from __future__ import annotations

import ast
import html
import importlib
import re
from pathlib import Path

from IPython.display import display

from course_lib.checking.cases import load_cases
from course_lib.checking.catalog import EXERCISES, CourseLayout, find_course_root, get_exercise
from course_lib.checking.runner import ExerciseResult, read_submission_file, run_exercise
from course_lib.checking.sandbox import Limits

__all__ = ["CheckReport", "check", "run_check", "EXERCISE_NAMES"]

EXERCISE_NAMES = tuple(exercise.name for exercise in EXERCISES)
HIDDEN_NOTE = (
    "Скрытые тесты здесь не запускаются: они проверяют те же требования на других данных "
    "при проверке работы преподавателем."
)
CHALLENGE_NOTE = (
    "Это задание без баллов и скрытых тестов: здесь проверяется только договорённость, без которой бенчмарк "
    "не сможет запустить вашу стратегию. Насколько она хороша, покажет бенчмарк ноутбука 10."
)
DETAIL_LIMIT = 600


def run_check(
    name: str,
    *,
    root: str | Path | None = None,
    folder: str | Path | None = None,
    limits: Limits | None = None,
) -> ExerciseResult:
    """Run the public cases of one exercise; `folder` defaults to the course's exercises/.

    For an ungraded challenge ("my_strategy") its contract runs instead, clause by clause."""
    exercise = get_exercise(name, challenges=True)
    layout = CourseLayout(find_course_root(root))
    if not exercise.graded:
        contract = importlib.import_module(exercise.contract)
        source_dir = Path(folder) if folder is not None else layout.exercises_dir
        return contract.contract_result(exercise, source_dir / f"{exercise.name}.py")
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


# Marks from ordinary text fonts (DejaVu has them), never emoji: without an emoji font those render
# as empty boxes and pass looks like fail. The words say it again for anyone who cannot see colour.
PASS_MARK, FAIL_MARK = "✔", "✘"
PASS_COLOR, FAIL_COLOR = "#1e8449", "#c0392b"

# A report is a list of (kind, text) lines; kind decides the mark and the colour.
TITLE, PASS, FAIL, DETAIL, TOTAL_PASS, TOTAL_FAIL, NOTE, NOTE_WARN = (
    "title", "pass", "fail", "detail", "total_pass", "total_fail", "note", "note_warn"
)


_LINE_MARK = re.compile(r"\(строка (\d+) вашего файла\)")
_IMPORT_TIME_WHY = {
    "input": ("input() на верхнем уровне файла (строка {line}) ждёт ввода с клавиатуры при импорте, а "
              "при проверке ввода нет, и файл падает с EOFError. Функция получает данные через "
              "параметры: уберите input() или перенесите его в if __name__ == \"__main__\":."),
    "print": ("print() на верхнем уровне файла (строка {line}) выполняется при каждом импорте — "
              "в check(), при проверке работы и в ноутбуке, где вывод смешивается с чужим. "
              "Уберите его или перенесите в функцию либо в if __name__ == \"__main__\":."),
}


def import_time_calls(source: str) -> list[tuple[str, int]]:
    """input()/print() calls that run when the file is imported (outside def/class and outside
    `if __name__ == "__main__":`), as (name, line), first of each kind."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found: dict[str, int] = {}

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return
        if isinstance(node, ast.If) and _is_main_guard(node.test):
            for child in node.orelse:
                visit(child)
            return
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in _IMPORT_TIME_WHY):
            found.setdefault(node.func.id, node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return sorted(found.items(), key=lambda item: item[1])


def _is_main_guard(test: ast.expr) -> bool:
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
            and test.left.id == "__name__" and any(
                isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators))


def with_source_lines(source: str | None, lines: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The report with the student's own lines it names, each right under the first line that names it
    (not at the end, where it would read as part of the last case), then why import-time input() or
    print() hurt."""
    if not source:
        return lines
    text_lines = source.splitlines()
    shown: set[int] = set()
    result: list[tuple[str, str]] = []
    for kind, text in lines:
        result.append((kind, text))
        for match in _LINE_MARK.finditer(text):
            number = int(match.group(1))
            if number not in shown and 1 <= number <= len(text_lines):
                shown.add(number)
                result.append((DETAIL, f"строка {number}: {_clip(text_lines[number - 1].strip())}"))
    for name, line in import_time_calls(source):
        result.append((NOTE_WARN, _IMPORT_TIME_WHY[name].format(line=line)))
    return result


def report_lines(result: ExerciseResult, folder_name: str = "exercises",
                 source: str | None = None) -> list[tuple[str, str]]:
    exercise = result.exercise
    where = f"{folder_name}/{exercise.name}.py"
    lines = [(TITLE, f"Упражнение {exercise.name} — «{exercise.title}» ({where})")]
    total = len(result.cases)
    noun = "Класс" if exercise.kind == "class" else "Функция"
    if total == 0:
        lines.append((NOTE, "Открытых тестов для этого упражнения нет."))
    elif all(case.category == "not_implemented" for case in result.cases):
        done = "реализована" if exercise.kind == "function" else "реализован"
        lines.append((FAIL, f"{noun} {exercise.entry} ещё не {done}: замените raise NotImplementedError "
                            "своим решением."))
    elif result.message and all(case.detail == result.message for case in result.cases):
        reason = result.cases[0].reason
        lines.append((FAIL, f"{reason[:1].upper()}{reason[1:]}:"))
        lines.append((DETAIL, _clip(result.message)))
    else:
        for case in result.cases:
            if case.passed:
                lines.append((PASS, f"пройден: {case.case.name}"))
                continue
            lines.append((FAIL, f"не пройден: {case.case.name} — {case.reason}"))
            if case.detail:
                lines.append((DETAIL, _clip(case.detail)))
            if case.output:
                lines.append((DETAIL, f"вывод: {_clip(case.output.rstrip())}"))
    lines = with_source_lines(source, lines)
    passed = result.passed
    what = "открытые тесты" if exercise.graded else "пункты договорённости"
    if total and passed == total:
        lines.append((TOTAL_PASS, f"Все {what} пройдены: {passed} из {total}."))
    elif total:
        lines.append((TOTAL_FAIL, f"{what[:1].upper()}{what[1:]}: пройдено {passed} из {total}."))
    lines.append((NOTE, HIDDEN_NOTE if exercise.graded else CHALLENGE_NOTE))
    return lines


def _text_line(kind: str, text: str) -> str:
    if kind in (PASS, TOTAL_PASS):
        return f"{PASS_MARK} {text}"
    if kind in (FAIL, TOTAL_FAIL):
        return f"{FAIL_MARK} {text}"
    if kind == DETAIL:
        return "   " + text
    if kind == NOTE_WARN:
        return "⚠ " + text
    return text


def _html_line(kind: str, text: str) -> str:
    body = html.escape(text)
    if kind == TITLE:
        return f'<div style="font-weight:bold">{body}</div>'
    if kind in (PASS, FAIL):
        mark, color = (PASS_MARK, PASS_COLOR) if kind == PASS else (FAIL_MARK, FAIL_COLOR)
        return (f'<div class="course-check-{kind}"><span style="color:{color};font-weight:bold">'
                f"{mark}</span> {body}</div>")
    if kind == DETAIL:
        return (f'<pre style="margin:0 0 2px 1.4em;white-space:pre-wrap;font-size:12px;'
                f'color:#444">{body}</pre>')
    if kind in (TOTAL_PASS, TOTAL_FAIL):
        good = kind == TOTAL_PASS
        color, background = (PASS_COLOR, "#eafaf1") if good else (FAIL_COLOR, "#fdecea")
        return (f'<div class="course-check-{"passed" if good else "failed"}" style="color:{color};'
                f"background:{background};font-weight:bold;border-radius:4px;padding:3px 6px;"
                f'margin:3px 0">{PASS_MARK if good else FAIL_MARK} {body}</div>')
    if kind == NOTE_WARN:
        return f'<div class="course-check-warn" style="color:#9a5b00">⚠ {body}</div>'
    return f'<div style="color:#555;font-size:12px">{body}</div>'


class CheckReport:
    """check()'s result as a notebook shows it: coloured HTML, and the same lines as text/plain."""

    def __init__(self, result: ExerciseResult, folder_name: str = "exercises",
                 source: str | None = None) -> None:
        self.result = result
        self.lines = report_lines(result, folder_name, source)

    @property
    def passed(self) -> bool:
        return bool(self.result.cases) and self.result.passed == len(self.result.cases)

    def __str__(self) -> str:
        return "\n".join(_text_line(kind, text) for kind, text in self.lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return ('<div class="course-check" style="line-height:1.45">'
                + "".join(_html_line(kind, text) for kind, text in self.lines) + "</div>")


def format_report(result: ExerciseResult, folder_name: str = "exercises", source: str | None = None) -> str:
    return str(CheckReport(result, folder_name, source))


def check(name: str, *, root: str | Path | None = None, folder: str | Path | None = None) -> None:
    """Show the public-case report for exercise `name` (e.g. "commit_turn" or "SessionHistory").

    In a notebook: coloured HTML with a plain-text twin; elsewhere (a console, pytest) the text.
    """
    result = run_check(name, root=root, folder=folder)
    display(CheckReport(result, Path(folder).name if folder is not None else "exercises",
                        _read_source(name, root, folder)))


def _read_source(name: str, root: str | Path | None, folder: str | Path | None) -> str | None:
    """The student's file as check() ran it (None when it cannot be read: the report says why)."""
    exercise = get_exercise(name, challenges=True)
    directory = Path(folder) if folder is not None else CourseLayout(find_course_root(root)).exercises_dir
    try:
        return (directory / f"{exercise.name}.py").read_text(encoding="utf-8-sig", errors="replace")
    except OSError:
        return None
