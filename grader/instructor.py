"""`python -m grader instructor …`: the generated parts of INSTRUCTOR.md.

    python -m grader instructor quiz-key        # the quiz answer key (Markdown) to stdout
    python -m grader instructor mistakes        # common mistakes from the mutant catalogue
    python -m grader instructor timings         # run every notebook, main and bonus (nbclient), and time it
    python -m grader instructor write [INSTRUCTOR.md]   # regenerate those sections in place
    python -m grader instructor new-exercise NAME --notebook NN [--title …] [--points 10]

quiz-key reads which quizzes each notebook shows (`show_quiz("<notebook>", "<id>")` in its code
cells, in order) and their answers from `course_lib/data/quizzes/*.json`, with the options in the
order students see them (A, B, …). mistakes runs every mutant of `tests/test_exercises_mutants.py`
(the reference with one requirement broken) through the grader's runner with the public and hidden
cases, and lists the cases it fails with the hint each shows the student. Nothing is copied by hand:
`write` replaces the text between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`.

timings prints each notebook's time by a stated model (`TIME_MODEL`, printed above the table): the
Markdown a student reads at a reading speed, the code cells a student reads (not the collapsed ones)
at lines per minute, the printed output at lines per minute and each figure, each self-check
question, each fill-in cell and each exercise of the notebook at a fixed estimate, plus the run time
of all its cells — the only measured figure (`grader/instructor_timings.json`, `timings` measures it
again). Everything else is counted in the stored notebooks when the table is written, so the table
follows the notebooks. Bonus notebooks (`notebooks/bonus/`) are rows of their own, under their main
notebook; the totals are given for the main path and for everything.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from course_lib.checking.catalog import BY_NAME, EXERCISES, CourseLayout, course_root
from course_lib.russian import decimal, plural_form

LETTERS = "АБВГДЕЖЗИК"
SHOW_QUIZ = re.compile(r"""show_quiz\(\s*["']([^"']+)["']\s*,\s*["']([^"']+)["']\s*\)""")
TIMINGS_FILE = "instructor_timings.json"  # next to this module: the last measured run times


@dataclass(frozen=True)
class TimeModel:
    """How long a notebook takes a student: every constant is printed with the timings table."""

    prose_words_per_minute: int = 150  # Russian technical prose, read attentively once
    code_lines_per_minute: int = 10  # non-blank lines of the code cells a student reads (not the collapsed ones)
    output_lines_per_minute: int = 40  # printed output and tables: scanned, not studied
    figure_minutes: float = 1.0  # each plot
    quiz_minutes: float = 1.0  # each self-check question: read, answer, read the explanation
    fill_in_minutes: float = 10.0  # each cell where the student completes a few lines (try_fill_in)
    exercise_minutes: float = 30.0  # each exercise of the notebook: statement, solution, check(), fixes


TIME_MODEL = TimeModel()
SHOW_FILL_IN = re.compile(r"\btry_fill_in\(")
FILL_IN_REFERENCE = re.compile(r"\btry_fill_in\([^)]*?\breference=(\w+)")


def _main_notebooks(layout: CourseLayout) -> list[Path]:
    return sorted((layout.root / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _bonus_notebooks(layout: CourseLayout, main: Path | None = None) -> list[Path]:
    """`notebooks/bonus/NN_*.ipynb`; with `main`, only the ones that deepen it (same number NN)."""
    bonus = sorted((layout.root / "notebooks").glob("bonus/[0-9][0-9]_*.ipynb"))
    return [path for path in bonus if main is None or path.name[:2] == main.name[:2]]


def _notebooks(layout: CourseLayout) -> list[Path]:
    """Every notebook in the order a student meets them: each main notebook, then its bonus ones."""
    return [path for main in _main_notebooks(layout) for path in (main, *_bonus_notebooks(layout, main))]


def _key(layout: CourseLayout, notebook: Path) -> str:
    """The notebook's name in the timings file and the table: `04_sliding_window.ipynb`,
    `bonus/04_provider_tokens.ipynb`."""
    return notebook.relative_to(layout.root / "notebooks").as_posix()


def _title(notebook: Path) -> str:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        if cell["cell_type"] == "markdown":
            first = "".join(cell["source"]).strip().splitlines()[0]
            return first.lstrip("# ").strip()
    return notebook.stem


def quiz_key(layout: CourseLayout) -> str:
    from course_lib.quizzes import displayed_question

    lines = []
    for notebook in _notebooks(layout):  # a bonus notebook shows its main notebook's questions
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        calls = [
            match.groups()
            for cell in cells
            if cell["cell_type"] == "code"
            for match in SHOW_QUIZ.finditer("".join(cell["source"]))
        ]
        if not calls:
            continue
        lines += [f"### {_title(notebook)}", ""]
        for number, (stem, quiz_id) in enumerate(calls, start=1):
            question = displayed_question(stem, quiz_id)
            correct = [LETTERS[i] for i, option in enumerate(question.options) if option.correct]
            lines.append(f"{number}. **{question.question}** (`{quiz_id}`) — ответ: {', '.join(correct)}")
            for index, option in enumerate(question.options):
                mark = "✔" if option.correct else "✘"
                why = f" — {option.why}" if option.why and not option.correct else ""
                lines.append(f"   - {LETTERS[index]}) {mark} {option.text}{why}")
            if question.explanation:
                lines.append(f"   - Пояснение: {question.explanation}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _mutants(layout: CourseLayout):
    path = layout.root / "tests" / "test_exercises_mutants.py"
    spec = importlib.util.spec_from_file_location("course_mutants", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = [
        (name, what, module._mutant_source(name, old, new)) for name, what, old, new in module.MUTANTS
    ]
    known = {(name, what) for name, what, _ in found}
    for exercise in EXERCISES:  # mutants kept with the hidden cases (`instructor new-exercise`)
        path = layout.hidden_cases_file(exercise)
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        reference = (layout.solutions_dir / f"{exercise.name}.py").read_text(encoding="utf-8")
        for mutant in data.get("mutants", []):
            old, new = mutant["replace"]
            if (exercise.name, mutant["mistake"]) not in known and old in reference:
                found.append((exercise.name, mutant["mistake"], reference.replace(old, new, 1)))
    return found


def mistakes(layout: CourseLayout) -> str:
    from course_lib.checking.cases import load_cases
    from course_lib.checking.runner import run_exercise
    from course_lib.checking.sandbox import Limits

    def run(mutant):
        name, what, source = mutant
        exercise = BY_NAME[name]
        cases = [
            load_cases(layout.public_cases_file(exercise), exercise, "public"),
            load_cases(layout.hidden_cases_file(exercise), exercise, "hidden"),
        ]
        return mutant, run_exercise(exercise, source, cases, Limits(), hide=[str(layout.root)])

    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(run, _mutants(layout)))
    lines = []
    current = None
    for (name, what, _), result in outcomes:
        if name != current:
            exercise = BY_NAME[name]
            lines += ["", f"### `{name}` — {exercise.title} (ноутбук {exercise.notebook})", ""]
            lines += ["| ошибка | балл | не проходят (открытые / скрытые) и подсказка студенту |", "|---|---|---|"]
            current = name
        failed = [case for case in result.cases if not case.passed]
        shown = []
        for case in failed[:4]:
            kind = "открытый" if case.case.visibility == "public" else "скрытый"
            hint = case.case.hint or case.reason
            shown.append(f"{kind} «{case.case.name}»: {hint}")
        if len(failed) > 4:
            shown.append(f"и ещё {len(failed) - 4}")
        cell = "<br>".join(text.replace("|", "\\|") for text in shown) or "—"
        score = decimal(result.score)
        lines.append(f"| {what} | {score} из {result.max_score:g} | {cell} |")
    return "\n".join(lines).strip() + "\n"


def timings(layout: CourseLayout) -> dict[str, dict]:
    """Execute every notebook, main and bonus, in a fresh kernel (nothing is saved) and time it."""
    import nbformat
    from nbclient import NotebookClient

    from course_lib.notebook_tools import use_bundle_environment

    use_bundle_environment()  # as `make notebooks`: the offline model, no key, no .env
    measured = {}
    for notebook in _notebooks(layout):
        nb = nbformat.read(notebook, as_version=4)
        started = time.perf_counter()
        NotebookClient(
            nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(notebook.parent)}}
        ).execute()
        measured[_key(layout, notebook)] = measurement(time.perf_counter() - started)
    return measured


def measurement(seconds: float) -> dict:
    """One notebook's row of the timings file: the run time of all its cells (the one measured figure)."""
    return {"run_seconds": round(seconds, 1)}


@dataclass(frozen=True)
class NotebookLoad:
    """What a notebook gives a student to do, counted in its stored cells and outputs."""

    words: int  # Markdown to read
    code_lines: int  # non-blank lines of the code cells shown open (collapsed ones are not read) and of
    # the source a cell displays (show_source)
    output_lines: int  # printed lines and table rows of the stored outputs
    figures: int
    quizzes: int
    fill_ins: int
    exercises: tuple[str, ...]  # the registry's exercises of this notebook (main notebooks only)
    written: int = 0  # lines the student writes: the course versions of its fill-ins and exercises


def _non_blank(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


def _code_lines(lines: list[str]) -> int:
    return sum(1 for line in lines if line.strip() and not line.strip().startswith("#"))


def _body_lines(node: ast.AST, lines: list[str]) -> int:
    """Code lines of a definition's body: no signature, docstring, comments or blank lines."""
    body = node.body[1:] if ast.get_docstring(node, clean=False) is not None else node.body
    return _code_lines(lines[body[0].lineno - 1 : node.end_lineno]) if body else 0


def written_lines(source: str, name: str | None = None) -> int:
    """How many lines a student writes to solve what `source` solves: the body of the function `name`
    (a fill-in's course version), or with no name every definition and statement of a module (an
    exercise's course version; imports and docstrings are given, not written)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return 0
    lines = source.splitlines()
    if name is not None:
        found = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name]
        return _body_lines(found[0], lines) if found else 0
    total = 0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            total += _body_lines(node, lines)
        elif not isinstance(node, (ast.Import, ast.ImportFrom)) and not (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        ):
            total += _code_lines(lines[node.lineno - 1 : node.end_lineno])
    return total


def _exercise_lines(layout: CourseLayout, name: str) -> int:
    path = layout.root / "course_lib" / "course_versions" / f"{name}.py"
    return written_lines(path.read_text(encoding="utf-8")) if path.is_file() else 0


def notebook_load(layout: CourseLayout, notebook: Path) -> NotebookLoad:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    words = code_lines = output_lines = figures = quizzes = fill_ins = 0
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            words += len(source.split())
            continue
        if cell["cell_type"] != "code":
            continue
        quizzes += len(SHOW_QUIZ.findall(source))
        fill_ins += len(SHOW_FILL_IN.findall(source))
        if not cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"):
            code_lines += _non_blank(source)
        if SHOW_QUIZ.search(source):
            continue  # the question is counted above; its output is the widget's placeholder
        streams: dict[str, str] = {}  # a stream's text whole: how the kernel cut it into chunks varies
        for output in cell.get("outputs", []):
            data = {mime: "".join(value) if isinstance(value, list) else value
                    for mime, value in output.get("data", {}).items()}
            if "image/png" in data or "image/svg+xml" in data:
                figures += 1
            elif output.get("output_type") == "stream":
                name = output.get("name", "stdout")
                streams[name] = streams.get(name, "") + "".join(output.get("text", ""))
            elif data.get("text/latex", "").startswith("\\begin{Verbatim}"):
                code_lines += _non_blank(data.get("text/plain", ""))  # source shown by the cell: code to read
            elif "text/markdown" in data:
                output_lines += len(data["text/markdown"].splitlines())
            elif "<tr" in data.get("text/html", ""):
                output_lines += data["text/html"].count("<tr")  # a table: one line per row
            else:
                output_lines += len(data.get("text/plain", "").splitlines())
        output_lines += sum(len(text.splitlines()) for text in streams.values())
    main = notebook.parent == layout.root / "notebooks"
    own = tuple(e.name for e in EXERCISES if main and e.notebook == notebook.name[:2])
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    references = [name for source in code for name in FILL_IN_REFERENCE.findall(source)]
    written = sum(max((written_lines(source, name) for source in code), default=0) for name in references)
    written += sum(_exercise_lines(layout, name) for name in own)
    return NotebookLoad(words, code_lines, output_lines, figures, quizzes, fill_ins, own, written)


def notebook_minutes(load: NotebookLoad, run_seconds: float, model: TimeModel = TIME_MODEL) -> dict[str, float]:
    """Minutes per part of the model (the table's columns) and their total."""
    parts = {
        "prose": load.words / model.prose_words_per_minute,
        "code": load.code_lines / model.code_lines_per_minute,
        "output": load.output_lines / model.output_lines_per_minute + load.figures * model.figure_minutes,
        "quizzes": load.quizzes * model.quiz_minutes,
        "fill_ins": load.fill_ins * model.fill_in_minutes,
        "exercises": len(load.exercises) * model.exercise_minutes,
        "run": run_seconds / 60,
    }
    parts["total"] = sum(parts.values())
    return parts


def _minutes(value: float) -> str:
    return str(round(value))


def _ratio(read: int, written: int) -> str:
    return decimal(read / written, 1) if written else "—"


def _hours(minutes: float) -> str:
    return decimal(minutes / 60, 1)


def time_model_text(model: TimeModel = TIME_MODEL) -> str:
    """The constants of the model, as the guide prints them above the table."""
    figure = decimal(model.figure_minutes, None)
    return "\n".join([
        "Модель времени (константы `TimeModel` в `grader/instructor.py`):",
        "",
        f"- текст (Markdown): {model.prose_words_per_minute} слов в минуту — русский технический текст, прочитанный внимательно один раз;",
        f"- код, который читают: {model.code_lines_per_minute} непустых строк в минуту — открытые ячейки кода; свёрнутые "
        "(проверки для CI, версии курса к заполняемым ячейкам, вопросы) не читают;",
        f"- вывод ячеек: {model.output_lines_per_minute} строк в минуту (напечатанные строки и строки таблиц), "
        f"каждый график — {figure} мин;",
        f"- вопрос для самопроверки: {model.quiz_minutes:g} мин;",
        f"- ячейка, которую студент дописывает сам (`try_fill_in`): {model.fill_in_minutes:g} мин;",
        f"- упражнение ноутбука (файл в `exercises/`: условие, решение, `check()`, исправления): {model.exercise_minutes:g} мин;",
        "- выполнение всех ячеек: замер — ноутбук выполнен в новом ядре на офлайн-модели "
        "(`course-grader instructor timings` замеряет заново).",
        "",
        "Слова, строки, графики, вопросы и заполняемые ячейки посчитаны в сохранённых ноутбуках, упражнения — "
        "по реестру. Бонусные ноутбуки (`notebooks/bonus/`) — отдельные строки под своим основным ноутбуком; в них "
        "нет упражнений.",
    ])


def timings_table(layout: CourseLayout, measured: dict[str, dict]) -> str:
    """The time model, then one row per notebook (bonus notebooks as rows of their own) and the totals
    of the main path and of everything, in minutes (and hours)."""
    model = TIME_MODEL
    lines = [
        time_model_text(model),
        "",
        "| ноутбук | текст: слов → мин | код: строк → мин | вывод: строк, графиков → мин | вопросы → мин | "
        "дописать в ноутбуке → мин | упражнения | на упражнения, мин | пишет студент, строк | выполнение, с (замер) | "
        "всего, мин |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    totals = {"main": 0.0, "all": 0.0}
    written = read = 0  # lines the student writes and lines of code to read, main path
    for notebook in _notebooks(layout):
        key = _key(layout, notebook)
        info = measured.get(key)
        if info is None:
            continue
        load = notebook_load(layout, notebook)
        parts = notebook_minutes(load, info["run_seconds"], model)
        bonus = "/" in key
        totals["all"] += parts["total"]
        if not bonus:
            totals["main"] += parts["total"]
            written, read = written + load.written, read + load.code_lines
        name = f"↳ `{key}` (бонус)" if bonus else f"**`{key}`**"
        exercises = f"{', '.join(f'`{e}`' for e in load.exercises)} | {_minutes(parts['exercises'])}" if load.exercises else "— | 0"
        run = decimal(info["run_seconds"], None)
        lines.append(
            f"| {name} | {load.words} → {_minutes(parts['prose'])} | {load.code_lines} → {_minutes(parts['code'])} | "
            f"{load.output_lines}, {load.figures} → {_minutes(parts['output'])} | "
            f"{load.quizzes} → {_minutes(parts['quizzes'])} | {load.fill_ins} → {_minutes(parts['fill_ins'])} | "
            f"{exercises} | {load.written} | {run} | **{_minutes(parts['total'])}** |"
        )
    mains = [path.name[:2] for path in _main_notebooks(layout)]
    lines += [
        "",
        f"Всего: основной путь (ноутбуки {mains[0]}–{mains[-1]}) — ≈{_minutes(totals['main'])} мин (≈{_hours(totals['main'])} ч); "
        f"с бонусными ноутбуками — ≈{_minutes(totals['all'])} мин (≈{_hours(totals['all'])} ч).",
        "",
        f"На основном пути студент пишет {written} {plural_form(written, ('строку', 'строки', 'строк'))} кода "
        f"и читает {read} (1 : {_ratio(read, written)}). "
        "«Пишет» — строки версий курса его упражнений и заполняемых ячеек: тела функций без сигнатур, "
        "докстрингов, комментариев и пустых строк.",
    ]
    return "\n".join(lines) + "\n"


def _replace_section(text: str, name: str, body: str) -> str:
    start, end = f"<!-- generated:{name} -->", f"<!-- /generated:{name} -->"
    if start not in text or end not in text:
        raise ValueError(f"нет разметки {start} … {end}")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{body.rstrip()}\n{end}{tail}"


def _new_exercise(argv: list[str]) -> int:
    from grader.invocation import command_name, full_path
    from grader.scaffold import ScaffoldError, add_practice_cells, new_exercise, notebook_cells

    parser = argparse.ArgumentParser(
        prog=command_name("instructor new-exercise"),
        description="Новое упражнение по шаблону: заготовка, решение, тесты, строка реестра.",
    )
    parser.add_argument("name", help="имя файла и функции, например trim_by_tokens")
    parser.add_argument("--notebook", required=True, help="номер ноутбука с практикой, например 04")
    parser.add_argument("--title", default="Новое упражнение", help="название по-русски для отчётов")
    parser.add_argument("--points", type=float, default=10.0, help="баллы за упражнение")
    parser.add_argument("--course-root", type=Path)
    parser.add_argument("--no-notebook", action="store_true",
                        help="не добавлять ячейки практики в ноутбук, только напечатать их")
    args = parser.parse_args(argv)
    layout = CourseLayout(course_root(args.course_root))
    try:
        written = new_exercise(layout, args.name, args.notebook, args.title, args.points)
        notebook = None if args.no_notebook else add_practice_cells(layout, args.name, args.notebook, args.title)
    except ScaffoldError as error:
        print(f"Ошибка: {error}", file=sys.stderr)
        return 2
    print("Созданы файлы:")
    for path in written:
        print(f"  {full_path(path)}")
    print(
        "\nШаблон — рабочее упражнение: замените условие, решение, тесты и ошибки-мутанты "
        "(«mutants» в скрытых тестах) своими. Правила, которые проверяют тесты курса, — в "
        "INSTRUCTOR.md, раздел «Adding an exercise»."
    )
    if notebook is None:
        print(f"\nДобавьте в notebooks/{args.notebook}_*.ipynb ссылку и ячейку и перевыполните его "
              f"(make notebooks).\n\n{notebook_cells(args.name, args.title)}")
    else:
        from course_lib.notebook_tools import execute_notebook, use_bundle_environment

        print(f"\nВ ноутбук {full_path(notebook)} добавлены ссылка на упражнение и ячейка check(); "
              "перевыполняю его, чтобы сохранённые выводы совпадали…")
        use_bundle_environment()
        try:
            seconds = execute_notebook(notebook)
        except Exception as error:  # a cell failed: the instructor sees which, nothing else is touched
            print(f"Ноутбук не выполнился ({type(error).__name__}): выполните make notebooks и посмотрите "
                  "ошибку.", file=sys.stderr)
            return 1
        print(f"{notebook.name}: {seconds:.1f} с")
        stored = json.loads(_timings_path().read_text(encoding="utf-8"))
        stored[_key(layout, notebook)] = measurement(seconds)
        _store_timings(stored)
    guide = layout.root / "INSTRUCTOR.md"
    if guide.is_file():  # in a fresh process: this one loaded the registry before the new line
        import subprocess

        command = [sys.executable, "-m", "grader", "instructor", "write", str(guide), "--course-root", str(layout.root)]
        if subprocess.run(command, cwd=layout.root, stdout=subprocess.DEVNULL).returncode != 0:
            print("INSTRUCTOR.md не обновлён: выполните команду instructor write и посмотрите ошибку.", file=sys.stderr)
            return 1
        print(f"{full_path(guide)}: обновлены разделы timings, quiz-key, mistakes "
              f"({'новый замер ' + notebook.name if notebook else 'без нового замера'}).")
    print(
        "Проверить курс: make test (только это упражнение: .venv/bin/python -m pytest "
        f"tests/test_exercises_statements.py tests/test_grading_cases.py tests/test_course_versions.py -q -k {args.name})"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    from grader.invocation import command_name

    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["new-exercise"]:
        return _new_exercise(argv[1:])
    parser = argparse.ArgumentParser(prog=command_name("instructor"))
    parser.add_argument("what", choices=["quiz-key", "mistakes", "timings", "write", "new-exercise"])
    parser.add_argument("path", nargs="?", type=Path, help="INSTRUCTOR.md (для write)")
    parser.add_argument("--course-root", type=Path)
    parser.add_argument("--measure", action="store_true", help="write: заново замерить ноутбуки")
    args = parser.parse_args(argv)
    layout = CourseLayout(course_root(args.course_root))
    stored = _timings_path()
    if args.what == "quiz-key":
        sys.stdout.write(quiz_key(layout))
    elif args.what == "mistakes":
        sys.stdout.write(mistakes(layout))
    elif args.what == "timings":
        measured = timings(layout)
        _store_timings(measured)
        sys.stdout.write(timings_table(layout, measured))
    else:
        path = args.path or layout.root / "INSTRUCTOR.md"
        if args.measure or not stored.is_file():
            _store_timings(timings(layout))
        write_guide(layout, path)
        print(f"{path.name}: обновлены разделы timings, quiz-key, mistakes.")
    return 0


def _timings_path() -> Path:
    return Path(__file__).with_name(TIMINGS_FILE)


def _store_timings(measured: dict[str, dict]) -> None:
    _timings_path().write_text(json.dumps(measured, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def write_guide(layout: CourseLayout, path: Path) -> None:
    """Regenerate the guide's generated sections from the stored timings and the course's files."""
    measured = json.loads(_timings_path().read_text(encoding="utf-8"))
    text = path.read_text(encoding="utf-8")
    text = _replace_section(text, "timings", timings_table(layout, measured))
    text = _replace_section(text, "quiz-key", quiz_key(layout))
    text = _replace_section(text, "mistakes", mistakes(layout))
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
