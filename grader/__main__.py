"""`python -m grader COMMAND`: the instructor's command line (`course-grader` is the same).

Each command lives in its own module and is imported only when used.
"""

from __future__ import annotations

import importlib
import sys

# command -> (module with a `main(argv) -> int`, one-line help in Russian)
COMMANDS = {
    "grade": ("grader.cli", "проверка работ студентов скрытыми тестами"),
    "export": ("grader.export", "журнал оценок для Canvas или Moodle из готовой папки grade"),
    "release": ("grader.release", "сборка пакета для студентов без решений"),
    "autograder": ("grader.autograder", "zip-автогрейдер для Gradescope (setup.sh, run_autograder)"),
    "instructor": ("grader.instructor", "ключ к квизам, типичные ошибки, новое упражнение"),
}


def _usage() -> str:
    lines = ["Использование: python -m grader КОМАНДА [аргументы]", "", "Команды преподавателя:"]
    lines += [f"  {name:<11} {help_text}" for name, (_, help_text) in COMMANDS.items()]
    lines += ["", "Команды студента (чат, check, handin) — в python -m course_lib."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in {"-h", "--help"}:
        print(_usage())
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"Неизвестная команда: {name}\n\n{_usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
