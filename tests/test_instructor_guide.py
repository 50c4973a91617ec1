"""INSTRUCTOR.md's generated sections are current; the student bundle's README, .gitignore, handin."""

from __future__ import annotations

import json
import re
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader import instructor, release
from course_lib.checking.catalog import EXERCISES, CourseLayout

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = CourseLayout(ROOT)
GUIDE = (ROOT / "INSTRUCTOR.md").read_text(encoding="utf-8")


def _section(name: str) -> str:
    return GUIDE.split(f"<!-- generated:{name} -->\n", 1)[1].split(f"<!-- /generated:{name} -->", 1)[0]


def test_quiz_key_is_generated_from_every_quiz_the_notebooks_show():
    key = _section("quiz-key")
    assert key == instructor.quiz_key(LAYOUT)
    shown = set()
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "notebooks").glob("bonus/*.ipynb")):
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            shown |= {qid for _, qid in instructor.SHOW_QUIZ.findall("".join(cell["source"]))}
    assert shown and all(f"(`{qid}`)" in key for qid in shown)
    assert key.count("— ответ:") == sum(key.count(f"(`{qid}`)") for qid in shown)


def test_common_mistakes_are_generated_from_the_mutant_catalogue():
    assert _section("mistakes") == instructor.mistakes(LAYOUT)
    for exercise in EXERCISES:
        assert f"### `{exercise.name}`" in _section("mistakes")


def test_timings_table_comes_from_the_measured_file():
    measured = json.loads((Path(instructor.__file__).with_name(instructor.TIMINGS_FILE)).read_text())
    # The stored notebooks are counted when the guide is written: run `course-grader instructor write`
    # after changing a notebook (and `instructor timings` to measure the run times again).
    assert _section("timings") == instructor.timings_table(LAYOUT, measured)
    notebooks = ROOT / "notebooks"
    expected = [path.relative_to(notebooks).as_posix() for path in
                sorted(notebooks.glob("[0-9][0-9]_*.ipynb")) + sorted(notebooks.glob("bonus/[0-9][0-9]_*.ipynb"))]
    assert sorted(measured) == sorted(expected)  # one measured run time per notebook, bonus ones too
    assert all(set(row) == {"run_seconds"} and row["run_seconds"] > 0 for row in measured.values())


def test_the_guide_prints_the_time_model_and_rows_for_bonus_notebooks():
    section = _section("timings")
    model = instructor.TIME_MODEL
    for constant in (f"{model.prose_words_per_minute} слов в минуту", f"{model.code_lines_per_minute} непустых строк в минуту",
                     f"{model.output_lines_per_minute} строк в минуту", f"вопрос для самопроверки: {model.quiz_minutes:g} мин",
                     f"(`try_fill_in`): {model.fill_in_minutes:g} мин", f"исправления): {model.exercise_minutes:g} мин"):
        assert constant in section, constant
    for bonus in sorted((ROOT / "notebooks").glob("bonus/*.ipynb")):
        assert f"| ↳ `bonus/{bonus.name}` (бонус) |" in section
    totals = re.search(r"основной путь \(ноутбуки 00–\d\d\) — ≈(\d+) мин .*; с бонусными ноутбуками — ≈(\d+) мин", section)
    assert totals and int(totals.group(1)) < int(totals.group(2))
    rows = [line for line in section.splitlines() if line.startswith("| **`")]
    assert sum(int(re.search(r"\*\*(\d+)\*\* \|$", row).group(1)) for row in rows) == pytest.approx(int(totals.group(1)), abs=len(rows))


def test_the_time_model_adds_its_parts():
    load = instructor.NotebookLoad(words=300, code_lines=20, output_lines=80, figures=1, quizzes=2, fill_ins=1,
                                   exercises=("a", "b"))
    minutes = instructor.notebook_minutes(load, 30, instructor.TimeModel())
    assert minutes == {"prose": 2, "code": 2, "output": 3, "quizzes": 2, "fill_ins": 10, "exercises": 60,
                       "run": 0.5, "total": 79.5}


def test_a_notebook_is_counted_as_a_student_reads_it(tmp_path):
    notebooks = tmp_path / "notebooks"
    (notebooks / "bonus").mkdir(parents=True)
    hidden = {"jupyter": {"source_hidden": True}}
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": "# 04. Заголовок\n\nДва слова."},
        {"cell_type": "code", "metadata": {}, "outputs": [{"output_type": "stream", "name": "stdout", "text": "a\nb\n"}],
         "source": "x = 1\n\nprint(x)", "execution_count": 1},
        {"cell_type": "code", "metadata": hidden, "outputs": [], "source": "# Проверка для CI\nassert x", "execution_count": 2},
        {"cell_type": "code", "metadata": hidden, "outputs": [{"output_type": "display_data", "metadata": {},
         "data": {"text/plain": "▶ Вопрос"}}], "source": 'show_quiz("04_x", "q")', "execution_count": 3},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": "f = try_fill_in(f, reference=g, examples=[])",
         "execution_count": 4},
        {"cell_type": "code", "metadata": {}, "outputs": [
            {"output_type": "display_data", "metadata": {}, "data": {"image/png": "", "text/plain": "<Figure>"}},
            {"output_type": "display_data", "metadata": {}, "data": {"text/markdown": "| a |\n|---|\n| 1 |", "text/plain": "<Markdown>"}},
            {"output_type": "display_data", "metadata": {}, "data": {"text/latex": "\\begin{Verbatim}", "text/html": "<pre>",
                                                                     "text/plain": "def f():\n    return 1"}},
        ], "source": "show()", "execution_count": 5},
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    for path in (notebooks / "04_x.ipynb", notebooks / "bonus" / "04_y.ipynb"):
        path.write_text(json.dumps(notebook), encoding="utf-8")
    layout = CourseLayout(tmp_path)
    main = instructor.notebook_load(layout, notebooks / "04_x.ipynb")
    assert (main.words, main.code_lines, main.output_lines, main.figures, main.quizzes, main.fill_ins) == (
        5, 2 + 1 + 1 + 2, 2 + 3, 1, 1, 1)  # the hidden cells are not read; show() displays two lines of code
    assert main.exercises == tuple(e.name for e in EXERCISES if e.notebook == "04")
    assert instructor.notebook_load(layout, notebooks / "bonus" / "04_y.ipynb").exercises == ()
    assert [instructor._key(layout, path) for path in instructor._notebooks(layout)] == ["04_x.ipynb", "bonus/04_y.ipynb"]


def test_written_lines_count_what_a_student_types():
    function = (
        "def g(a):\n"
        '    """Docstring: given."""\n'
        "    # a comment: not code\n"
        "    if a:\n"
        "\n"
        "        return 1\n"
        "    return 2\n"
    )
    assert instructor.written_lines(function, "g") == 3
    assert instructor.written_lines(function, "missing") == 0
    module = '"""Module docstring."""\nimport re\nfrom x import y\n\nWORD = re.compile("a")\n\n\n' + function
    assert instructor.written_lines(module) == 1 + 3  # the constant and the body; imports and docstrings are given
    assert instructor.written_lines("%pip install x") == 0  # a cell Python cannot parse writes nothing


def test_the_guide_counts_fill_ins_and_exercises_as_written(tmp_path):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    versions = tmp_path / "course_lib" / "course_versions"
    versions.mkdir(parents=True)
    own = [e.name for e in EXERCISES if e.notebook == "04"]
    for name in own:
        (versions / f"{name}.py").write_text(f"def {name}(x):\n    y = x\n    return y\n", encoding="utf-8")
    cells = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 1,
         "source": "def course_f(a):\n    # why\n    b = a + 1\n    return b"},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 2,
         "source": "f = try_fill_in(f, reference=course_f, examples=[((1,), 2)])"},
    ]
    path = notebooks / "04_x.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    assert instructor.notebook_load(CourseLayout(tmp_path), path).written == 2 + 2 * len(own)


def test_the_guide_prints_lines_written_against_lines_read():
    section = (ROOT / "INSTRUCTOR.md").read_text(encoding="utf-8")
    found = re.search(r"студент пишет (\d+) строк\w* кода и читает (\d+) \(1 : ([\d,]+)\)", section)
    assert found, "the written : read line is missing"
    written, read = int(found.group(1)), int(found.group(2))
    assert written > 300 and read > written
    assert found.group(3) == f"{read / written:.1f}".replace(".", ",")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle") / "b"
    assert release.main(["--out", str(out)]) == 0
    return out


def test_bundle_readme_is_for_students(bundle):
    readme = (bundle / "README.md").read_text(encoding="utf-8")
    assert readme != (ROOT / "README.md").read_text(encoding="utf-8")
    for needed in ("make lab", "notebooks/", "00_setup.ipynb", "exercises/", "check(", "make test",
                   "handin", "handin.zip", "скрытые тесты"):  # fmt: skip
        assert needed in readme, needed
    for exercise in EXERCISES:
        assert f"`exercises/{exercise.name}.py`" in readme
    assert "notebooks/bonus/" in readme  # the bonus notebooks are named, and shipped
    shipped = sorted(path.relative_to(bundle).as_posix() for path in (bundle / "notebooks").rglob("*.ipynb"))
    assert shipped == sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "notebooks").rglob("*.ipynb")
                             if ".ipynb_checkpoints" not in path.parts)
    assert any(name.startswith("notebooks/bonus/") for name in shipped)
    for marker in release.INSTRUCTOR_ONLY:
        assert marker.lower() not in readme.lower()
    ignore = (bundle / ".gitignore").read_text(encoding="utf-8").split()
    assert {".venv/", ".env", "__pycache__/", ".ipynb_checkpoints/", "handin.zip"} <= set(ignore)


def test_verification_catches_an_instructor_readme(bundle, tmp_path):
    import shutil

    copy = tmp_path / "b"
    shutil.copytree(bundle, copy)
    shutil.copyfile(ROOT / "README.md", copy / "README.md")
    problems = release.verify_bundle(copy, LAYOUT)
    assert any("README.md содержит текст для преподавателя" in p for p in problems)


def test_handin_zips_the_exercise_files_only(bundle):
    env = {**os.environ, "PYTHONPATH": str(bundle), "LLM_BACKEND": "offline", "COURSE_DOTENV": "0"}
    result = subprocess.run([sys.executable, "-P", "-m", "course_lib", "handin"], cwd=bundle, env=env,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stderr
    names = zipfile.ZipFile(bundle / "handin.zip").namelist()
    assert sorted(names) == sorted(f"exercises/{e.name}.py" for e in EXERCISES)
    assert "Ещё не решены" in result.stdout  # stubs
    (bundle / "handin.zip").unlink()


def test_the_goals_table_names_each_exercise_in_its_own_notebooks_row():
    # The registry's notebook is where check() runs; the table said 05 for rolling_compress (06).
    text = (ROOT / "INSTRUCTOR.md").read_text(encoding="utf-8")
    rows = {line.split("`")[1][:2]: line for line in text.splitlines() if re.match(r"^\| `\d\d_\w+` \|", line)}
    assert len(rows) == len(list((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")))
    for exercise in EXERCISES:
        where = sorted(number for number, row in rows.items() if f"`{exercise.entry}`" in row or f"`{exercise.name}`" in row)
        # Never in another notebook's row (a freshly scaffolded exercise is in none yet).
        assert where in ([], [exercise.notebook]), (exercise.name, where)
    assert sum(any(f"`{e.entry}`" in row for row in rows.values()) for e in EXERCISES) >= 15


def test_output_lines_do_not_depend_on_how_the_kernel_cut_the_stream(tmp_path):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()

    def load(chunks: list[str]) -> int:
        outputs = [{"output_type": "stream", "name": "stdout", "text": chunk} for chunk in chunks]
        cells = [{"cell_type": "code", "metadata": {}, "outputs": outputs, "source": "run()", "execution_count": 1}]
        path = notebooks / "04_x.ipynb"
        path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
        return instructor.notebook_load(CourseLayout(tmp_path), path).output_lines

    assert load(["Вы: Клавиатура пришла без кабеля.\n--- без истории (01)\n"]) == 2
    assert load(["Вы: Клавиатура пришла без кабеля.", "\n--- без истории (01)\n"]) == 2
