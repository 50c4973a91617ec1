"""`course-grader instructor new-exercise NAME --notebook NN`: a new exercise that passes every check.

Writes a complete, working template exercise (a string-cleaning function) in the course's layout,
so the course's tests pass at once and the instructor edits a working example instead of
guessing the rules:

* `exercises/NAME.py` — the stub: the statement in its docstring («Упражнение «NAME»», sections
  «Требования» and «Пример», `check("NAME")`), every function body `raise NotImplementedError`;
* `solutions/NAME.py` — the reference, with the stub's signature, importing nothing from the course;
* `course_lib/course_versions/NAME.py` — the course's own version, what the notebook runs until the
  student's passes: the same behaviour written differently (a student who hands it in is flagged
  as copying the course's version; one who hands in the reference is not);
* `exercises/cases/NAME.json` — 4 public cases (3–10 allowed), the first named «пример из условия…»,
  both returned values and exceptions;
* `grading/hidden/NAME.json` — 10 hidden cases (at least 10), each with a hint, plus `mutants`:
  typical mistakes (a text replacement in the reference) that must fail a public and a hidden case;
* one line in `course_lib/checking/exercises.json`.

The notebook gets its practice (`add_practice_cells`): a link to `../exercises/NAME.py` in the list
of its «## Практика» cell (a Markdown cell of its own if the notebook has no such list), and right
after the practice section's `check(...)` cell a code cell that runs `check("NAME")`, takes the
function through `your_code("NAME")` and shows a failing one on the statement's example
(`show_mistake`), as every lesson does. The command then re-executes that notebook so its stored
outputs (what nbval compares) include the new cell, records the notebook's run time in
`grader/instructor_timings.json`, and regenerates INSTRUCTOR.md's generated sections (the timings
table recounts the notebook).
`--no-notebook` leaves the notebook alone and prints the cells instead.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

from course_lib.checking.catalog import CourseLayout

STUB = '''"""Упражнение «{name}» (ноутбук {notebook}): {title}.

ШАБЛОН: замените это условие своим (и решение, и тесты — вместе с ним).

Реализуйте {name}(text).

Требования
• text должен быть строкой (str). Если это не так, выбросьте TypeError.
• Очистите text через strip(). Если после очистки строка пуста, выбросьте ValueError.
• Верните очищенную строку.

Пример
    {name}("  Номер заказа 8041. ")
    # 'Номер заказа 8041.'

Сторонние библиотеки не нужны. Проверка в ноутбуке: check("{name}").
"""


def {name}(text: str) -> str:
    raise NotImplementedError("Реализуйте {name}")
'''

SOLUTION = '''"""Reference solution of the exercise «{name}» (a template: replace it with your own)."""


def {name}(text: str) -> str:
    if not isinstance(text, str):
        raise TypeError("text должен быть строкой")
    cleaned = text.strip()
    if not cleaned:
        raise ValueError("пустой текст")
    return cleaned
'''

COURSE_VERSION = '''"""The course's version of exercises/{name}.py (notebook {notebook}): a template, like the exercise."""


def {name}(text: str) -> str:
    if not isinstance(text, str):
        raise TypeError(f"ожидалась строка (str), а не {{type(text).__name__}}")
    # The same characters str.strip() removes (str.isspace), found from both ends.
    start, end = 0, len(text)
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start == end:
        raise ValueError("в тексте одни пробельные символы")
    return text[start:end]
'''

EXAMPLE = "  Номер заказа 8041. "  # the statement's example: the practice cell shows a failing function on it

PUBLIC = [
    ("пример из условия", [EXAMPLE], {"return": "Номер заказа 8041."}),
    ("текст без пробелов по краям", ["Спасибо"], {"return": "Спасибо"}),
    ("не строка — TypeError", [8041], {"raises": "TypeError"}),
    ("одни пробелы — ValueError", ["   "], {"raises": "ValueError"}),
]
HIDDEN = [
    ("переводы строк по краям", ["\n\tПривет\n"], {"return": "Привет"}, "strip() убирает и переводы строк, и табуляцию."),
    ("пробелы внутри остаются", ["  a  b  "], {"return": "a  b"}, "Убирайте пробелы только по краям."),
    ("одна буква", [" я "], {"return": "я"}, "Короткая строка — тоже строка."),
    ("длинная строка", ["x" * 300 + " "], {"return": "x" * 300}, "Длина строки не важна."),
    ("уже очищенная строка", ["ok"], {"return": "ok"}, "Чистая строка возвращается как есть."),
    ("пустая строка — ValueError", [""], {"raises": "ValueError"}, "Пустая строка пуста и до strip()."),
    ("табуляция — ValueError", ["\t\n"], {"raises": "ValueError"}, "После strip() строка пуста."),
    ("None — TypeError", [None], {"raises": "TypeError"}, "Проверьте тип до strip()."),
    ("список — TypeError", [["a"]], {"raises": "TypeError"}, "Список — не строка."),
    ("словарь — TypeError", [{"text": "a"}], {"raises": "TypeError"}, "Словарь — не строка."),
]
MUTANTS = [
    ("returns the text unstripped", "    return cleaned\n", "    return text\n"),
    ("empty text accepted", '    if not cleaned:\n        raise ValueError("пустой текст")\n', ""),
    ("no type check", '    if not isinstance(text, str):\n        raise TypeError("text должен быть строкой")\n', ""),
]


class ScaffoldError(ValueError):
    """The exercise cannot be created (Russian message)."""


def _cases(name: str, rows, hidden: bool) -> dict:
    cases = []
    for row in rows:
        case = {"name": row[0], "args": row[1], "expect": row[2]}
        if hidden:
            case["hint"] = row[3]
        cases.append(case)
    document = {"format": 1, "exercise": name, "cases": cases}
    if hidden:
        document["mutants"] = [{"mistake": m, "replace": [old, new]} for m, old, new in MUTANTS]
    return document


def _notebook(layout: CourseLayout, number: str) -> Path:
    if not re.fullmatch(r"\d\d", number):
        raise ScaffoldError(f"--notebook: две цифры номера ноутбука (например 04), а не {number!r}")
    found = sorted((layout.root / "notebooks").glob(f"{number}_*.ipynb"))
    if not found:
        raise ScaffoldError(f"нет ноутбука notebooks/{number}_*.ipynb")
    return found[0]


def _registry_add(path: Path, entry: dict) -> None:
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    data["exercises"].append(entry)
    line = json.dumps(entry, ensure_ascii=False)
    closing = re.search(r"\}\s*\n(\s*)\]\s*\}\s*$", text)
    if closing:  # keep the file's one-exercise-per-line layout
        indent = closing.group(1) + " "
        text = text[: closing.start() + 1] + f",\n{indent}{line}" + text[closing.start() + 1 :]
    else:
        text = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
    if json.loads(text) != data:
        text = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
    path.write_text(text, encoding="utf-8")


def new_exercise(layout: CourseLayout, name: str, notebook: str, title: str, points: float) -> list[Path]:
    """Create the files (see the module's docstring); ScaffoldError before anything is written."""
    if not name.isidentifier() or not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        raise ScaffoldError(f"имя упражнения — имя модуля Python в нижнем регистре (a-z, 0-9, _), а не {name!r}")
    if not 0 < points <= 1000:
        raise ScaffoldError("--points: число больше 0")
    _notebook(layout, notebook)
    registry = layout.root / "course_lib" / "checking" / "exercises.json"
    known = {e["name"] for e in json.loads(registry.read_text(encoding="utf-8"))["exercises"]}
    targets = {
        layout.exercises_dir / f"{name}.py": STUB.format(name=name, notebook=notebook, title=title),
        layout.solutions_dir / f"{name}.py": SOLUTION.format(name=name),
        layout.public_cases_dir / f"{name}.json": _cases(name, PUBLIC, hidden=False),
        layout.hidden_cases_dir / f"{name}.json": _cases(name, HIDDEN, hidden=True),
        layout.root / "course_lib" / "course_versions" / f"{name}.py": COURSE_VERSION.format(name=name, notebook=notebook),
    }
    existing = [path for path in targets if path.exists()]
    if name in known or existing:
        where = ", ".join(str(p.relative_to(layout.root)) for p in existing) or "exercises.json"
        raise ScaffoldError(f"упражнение {name} уже есть ({where})")
    for path, content in targets.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, dict):
            content = json.dumps(content, ensure_ascii=False, indent=1) + "\n"
        path.write_text(content, encoding="utf-8")
    entry = {"name": name, "entry": name, "kind": "function", "params": ["text"], "title": title,
             "notebook": notebook, "points": float(points)}  # fmt: skip
    _registry_add(registry, entry)
    return [*targets, registry]


PRACTICE = "## Практика"
LINK = re.compile(r"^(?P<mark>- |(?P<number>\d+)\. )\[exercises/\w+\.py\]\(\.\./exercises/\w+\.py\)")


def practice_link(name: str, title: str, mark: str = "- ") -> str:
    """One item of a practice list, in the notebooks' own form."""
    return f"{mark}[exercises/{name}.py](../exercises/{name}.py) — {title[:1].lower()}{title[1:]}"


def practice_markdown(name: str, title: str) -> str:
    """A cell of its own, for a notebook without a practice list."""
    return (f"### Упражнение: {title}\n\n"
            f"Откройте [exercises/{name}.py](../exercises/{name}.py): условие — в начале файла. "
            "Замените `raise NotImplementedError` решением, сохраните файл и запустите проверку ниже.")


def practice_code(name: str) -> str:
    return (
        "from course_lib.exercises import check\n"
        "from course_lib.your_code import your_code\n\n"
        f'check("{name}")\n'
        f'{name} = your_code("{name}")  # ваша функция, как только пройдёт открытые тесты\n'
        f"{name}.show_mistake({EXAMPLE!r})  # пока не прошла: она и версия курса на примере из условия\n"
        f"print({name}({EXAMPLE!r}))"
    )


def _add_to_list(markdown: str, name: str, title: str) -> str:
    """Add the exercise after the last exercise link of the list (and its continuation lines), in
    the list's own form: «- …;» items with a final «.», or numbered sentences."""
    lines = markdown.split("\n")
    last = max(i for i, line in enumerate(lines) if LINK.match(line))
    found = LINK.match(lines[last])
    end = last + 1
    while end < len(lines) and lines[end].startswith("  ") and lines[end].strip():
        end += 1
    previous = lines[end - 1].rstrip()
    if found["number"]:
        item = practice_link(name, title, f"{int(found['number']) + 1}. ") + "."
    else:
        item = practice_link(name, title) + ("." if previous.endswith(".") else "")
        if previous.endswith("."):
            lines[end - 1] = previous[:-1] + ";"
    lines.insert(end, item)
    return "\n".join(lines)


def add_practice_cells(layout: CourseLayout, name: str, notebook: str, title: str) -> Path:
    """Link the exercise in the practice list and add its check() cell after the practice
    section's check() cell (see the module's docstring); return the notebook's path."""
    import nbformat

    path = _notebook(layout, notebook)
    document = nbformat.read(path, as_version=4)
    cells = document.cells
    checks = [i for i, cell in enumerate(cells) if cell.cell_type == "code" and "check(" in cell.source]
    practice = [i for i, cell in enumerate(cells)
                if cell.cell_type == "markdown" and cell.source.startswith(PRACTICE)
                and any(LINK.match(line) for line in cell.source.splitlines())]  # fmt: skip
    new = []
    if practice:
        cells[practice[-1]].source = _add_to_list(cells[practice[-1]].source, name, title)
        after = [i for i in checks if i > practice[-1]]
        at = after[0] + 1 if after else practice[-1] + 1
    else:
        new.append(nbformat.v4.new_markdown_cell(practice_markdown(name, title)))
        at = checks[-1] + 1 if checks else len(cells)
    new.append(nbformat.v4.new_code_cell(practice_code(name)))
    for offset, cell in enumerate(new):
        cell["id"] = f"practice-{name}-{offset}"
    cells[at:at] = new
    nbformat.write(document, path)
    return path


def notebook_cells(name: str, title: str) -> str:
    """The practice to add to the notebook (printed with --no-notebook; the notebook is not edited)."""
    code = textwrap.indent(practice_code(name), "    ")
    return (
        "В список раздела «Практика» ноутбука:\n\n"
        f"    {practice_link(name, title)}\n\n"
        "Ячейка с кодом после ячейки check(...) раздела «Практика»:\n\n"
        f"{code}\n"
    )
