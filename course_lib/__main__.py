"""`python -m course_lib COMMAND`: the course's command line.

Each command lives in its own module and is imported only when used, so `chat` does not pay for the
grader's imports and the other way round.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

# command -> (module with a `main(argv) -> int`, one-line help in Russian)
COMMANDS = {
    "chat": ("course_lib.console", "консольный чат поддержки (/new — новый диалог, /exit — выход)"),
    "doctor": ("course_lib.doctor", "проверка окружения: бэкенд, токенизатор офлайн, настройки"),
    "grade": ("course_lib.grading.cli", "проверка работ студентов скрытыми тестами"),
    "release": ("course_lib.grading.release", "сборка пакета для студентов без решений"),
    "handin": ("course_lib.grading.handin", "архив с решениями для сдачи (handin.zip)"),
    "autograder": ("course_lib.grading.autograder", "zip-автогрейдер для Gradescope (setup.sh, run_autograder)"),
    "instructor": ("course_lib.grading.instructor", "для преподавателя: ключ к квизам, типичные ошибки, новое упражнение"),
    "export": ("course_lib.grading.export", "журнал оценок для Canvas или Moodle из готовой папки grade"),
    "bench": ("course_lib.bench", "замеры: bench strategies — стратегии памяти, bench memory — память между сессиями"),
    "notebooks": ("course_lib.notebook_tools", "перевыполнить все ноутбуки и сохранить их выводы"),
}


def _available(module: str) -> bool:
    """Instructor commands are left out of the student bundle (`release`): list only what is here."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _usage() -> str:
    lines = ["Использование: python -m course_lib КОМАНДА [аргументы]", "", "Команды:"]
    lines += [
        f"  {name:<10} {help_text}"
        for name, (module, help_text) in COMMANDS.items()
        if _available(module)
    ]
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
    if not _available(COMMANDS[name][0]):
        print(f"Команда {name} — для преподавателя, в пакете курса для студентов её нет.", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
