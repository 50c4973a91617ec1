"""`python -m course_lib COMMAND`: the student's command line (`course-lib` is the same).

Each command lives in its own module and is imported only when used. The instructor's commands
(grade, release, autograder, export, instructor) are in the separate `grader` package.
"""

from __future__ import annotations

import importlib
import sys

# command -> (module with a `main(argv) -> int`, one-line help in Russian)
COMMANDS = {
    "chat": ("course_lib.console", "консольный чат поддержки (/new — новый диалог, /exit — выход)"),
    "doctor": ("course_lib.doctor", "проверка окружения: бэкенд, токенизатор офлайн, настройки"),
    "handin": ("course_lib.handin", "архив с решениями для сдачи (handin.zip)"),
    "bench": ("course_lib.bench", "замеры: bench strategies — стратегии памяти, bench memory — память между сессиями"),
    "notebooks": ("course_lib.notebook_tools", "перевыполнить все ноутбуки и сохранить их выводы"),
}
INSTRUCTOR_COMMANDS = ("grade", "release", "autograder", "export", "instructor")


def _usage() -> str:
    lines = ["Использование: python -m course_lib КОМАНДА [аргументы]", "", "Команды:"]
    lines += [f"  {name:<10} {help_text}" for name, (_, help_text) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in {"-h", "--help"}:
        print(_usage())
        return 0
    name, rest = args[0], args[1:]
    if name in INSTRUCTOR_COMMANDS:
        print(
            f"Команда {name} — для преподавателя: она в пакете grader (python -m grader {name}), "
            "а этот пакет студентам не раздают.",
            file=sys.stderr,
        )
        return 2
    if name not in COMMANDS:
        print(f"Неизвестная команда: {name}\n\n{_usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
