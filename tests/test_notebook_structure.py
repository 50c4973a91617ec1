"""A main notebook is read in one sitting, a bonus notebook stands on its own (issue 29).

The per-notebook word cap (2,500 words of Markdown, met by cutting) is replaced by structural limits:

- a main notebook (`notebooks/NN_*.ipynb`) has at most MAX_CELLS cells and tells its story in order —
  the title, «Что вы узнаете» right after it where present, the numbered sections, then «Проверьте
  себя», «Итоги» and «Практика» as the last `##` headings (only «Как сдать работу» may follow);
- its deep dives and long side demos live in bonus notebooks (`notebooks/bonus/NN_*.ipynb`): each is
  linked from its main notebook, says in its first cell which notebook it deepens (with a link back),
  sets itself up in its first code cell (`setup_notebook()`, so it runs in a fresh kernel from
  `notebooks/bonus/`), and has no «Практика» and no graded exercise of its own unless the exercise
  registry names the bonus notebook;
- every relative link in any notebook's Markdown resolves to a file of the course.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib.checking.catalog import EXERCISES
from notebook_text import ALL_NOTEBOOKS, BONUS_NOTEBOOKS, MAIN_NOTEBOOKS, NOTEBOOKS, bonus_of, main_of, notebook_name

ROOT = NOTEBOOKS.parent

MAX_CELLS = 60
CLOSING = ["Проверьте себя", "Итоги", "Практика"]  # the last `##` headings of a main notebook, in order
MAY_FOLLOW = {"Как сдать работу"}  # a how-to-hand-in note after the practice (08, 09)
LINK = re.compile(r"\]\(([^)\s]+)\)")
CHECK = re.compile(r"""\bcheck\(\s*["'](\w+)["']""")


def cells(path: Path) -> list:
    return nbformat.read(path, as_version=4).cells


def level2_headings(notebook_cells) -> list[str]:
    return [line[3:].strip() for cell in notebook_cells if cell.cell_type == "markdown"
            for line in cell.source.splitlines() if line.startswith("## ")]


def markdown(notebook_cells) -> str:
    return "\n".join(cell.source for cell in notebook_cells if cell.cell_type == "markdown")


@pytest.mark.parametrize("path", MAIN_NOTEBOOKS, ids=notebook_name)
def test_a_main_notebook_is_read_in_one_sitting(path):
    count = len(cells(path))
    assert count <= MAX_CELLS, (
        f"{path.name}: {count} ячеек, больше {MAX_CELLS}: перенесите углубление или длинный побочный "
        "пример в бонусный ноутбук notebooks/bonus/"
    )


@pytest.mark.parametrize("path", MAIN_NOTEBOOKS, ids=notebook_name)
def test_a_main_notebook_tells_its_story_in_order(path):
    notebook_cells = cells(path)
    title = notebook_cells[0]
    assert title.cell_type == "markdown" and title.source.startswith(f"# {path.name[:2]}. "), path.name
    headings = level2_headings(notebook_cells)
    if "Что вы узнаете" in headings:  # where present, right after the title
        assert headings[0] == "Что вы узнаете" and notebook_cells[1].source.startswith("## Что вы узнаете")
    closing = [heading for heading in headings if heading not in MAY_FOLLOW][-len(CLOSING):]
    assert closing == CLOSING, f"{path.name}: the last sections are {closing}"
    tail = headings[headings.index(CLOSING[0]):]
    assert [h for h in tail if h not in CLOSING] == [h for h in tail if h in MAY_FOLLOW], tail
    assert headings.count(CLOSING[0]) == 1, f"{path.name}: one «{CLOSING[0]}»"


@pytest.mark.parametrize("path", BONUS_NOTEBOOKS, ids=notebook_name)
def test_every_bonus_notebook_is_linked_from_its_main_notebook(path):
    main = main_of(path)
    target = f"bonus/{path.name}"
    assert any(link.split("#")[0] == target for link in LINK.findall(markdown(cells(main)))), (
        f"{main.name} does not link {target}"
    )


@pytest.mark.parametrize("path", BONUS_NOTEBOOKS, ids=notebook_name)
def test_a_bonus_notebook_stands_on_its_own(path):
    notebook_cells = cells(path)
    main = main_of(path)
    intro = notebook_cells[0]
    assert intro.cell_type == "markdown"
    assert intro.source.startswith(f"# Бонус к ноутбуку {path.name[:2]}: "), intro.source.splitlines()[0]
    assert f"](../{main.name})" in intro.source, f"{path.name}: the intro links back to {main.name}"
    first_code = next(cell for cell in notebook_cells if cell.cell_type == "code")
    assert "setup_notebook()" in first_code.source, f"{path.name}: the first code cell sets the notebook up"


@pytest.mark.parametrize("path", BONUS_NOTEBOOKS, ids=notebook_name)
def test_a_bonus_notebook_grades_nothing_the_registry_does_not_put_there(path):
    notebook_cells = cells(path)
    assert "Практика" not in level2_headings(notebook_cells), f"{path.name}: the practice is the main notebook's"
    here = {exercise.name for exercise in EXERCISES if exercise.notebook == notebook_name(path)}
    code = "\n".join(cell.source for cell in notebook_cells if cell.cell_type == "code")
    assert set(CHECK.findall(code)) <= here, f"{path.name}: check() of an exercise the registry puts elsewhere"
    assert "](../../exercises/" not in markdown(notebook_cells) or here, f"{path.name}: links an exercise file"


@pytest.mark.parametrize("path", ALL_NOTEBOOKS + sorted(NOTEBOOKS.glob("*.md")),
                         ids=lambda path: path.name if path.suffix == ".md" else notebook_name(path))
def test_every_relative_link_resolves(path):
    broken = []
    text = path.read_text(encoding="utf-8") if path.suffix == ".md" else markdown(cells(path))
    for link in LINK.findall(text):
        if re.match(r"[a-z]+:", link) or link.startswith("#"):
            continue  # a web address or an anchor in the same notebook
        if not (path.parent / link.split("#")[0]).exists():
            broken.append(link)
    assert not broken, f"{path.name}: {broken}"


def test_every_main_notebook_with_a_bonus_names_it_where_the_section_was():
    # Not only in a list at the end: a pointer sits in the lesson itself (before «Проверьте себя»).
    for main in MAIN_NOTEBOOKS:
        notebook_cells = cells(main)
        end = next(i for i, cell in enumerate(notebook_cells) if cell.cell_type == "markdown"
                   and f"## {CLOSING[0]}" in cell.source.splitlines())
        lesson = markdown(notebook_cells[:end])
        for bonus in bonus_of(main):
            assert f"(bonus/{bonus.name})" in lesson, f"{main.name}: no pointer to {bonus.name} in the lesson"


def test_make_test_runs_nbval_over_the_bonus_notebooks():
    # TEST_PATHS names the folder; pytest collects notebooks/bonus/*.ipynb under it with --nbval.
    assert re.search(r"^TEST_PATHS := .*\bnotebooks\b", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "--nbval", "-p", "no:cacheprovider", "notebooks"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    ).stdout
    for path in ALL_NOTEBOOKS:
        assert f"{path.relative_to(ROOT).as_posix()}::" in collected, path.name


def test_the_lab_file_browser_lists_the_bonus_folder():
    # make lab serves the course folder with Jupyter's contents API; nothing of the course hides bonus/.
    from jupyter_server.services.contents.filemanager import FileContentsManager

    config = (ROOT / "jupyter" / "config" / "jupyter_server_config.py").read_text(encoding="utf-8")
    assert "hide_globs" not in config
    manager = FileContentsManager(root_dir=str(ROOT))
    listing = {item["name"]: item["type"] for item in manager.get("notebooks", content=True)["content"]}
    assert listing.get("bonus") == "directory"
    shown = {item["name"] for item in manager.get("notebooks/bonus", content=True)["content"]}
    assert {path.name for path in BONUS_NOTEBOOKS} <= shown
