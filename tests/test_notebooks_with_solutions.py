"""With every exercise solved, the notebooks run on the student's code and say so.

The course folder is copied, the reference solutions are put into its exercises/ (as a student who
solved everything would have them), and notebooks 02 onwards are executed top to bottom in a fresh
kernel. Each must run without an error, and every exercise it takes through `your_code(...)` must be
announced as the student's ("✔ <name>: работает ваш…"), never as the course's fallback ("↪ <name>:").
The stub configuration (the stored outputs) is checked by nbval over notebooks/.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from course_lib.checking.catalog import EXERCISES, get_exercise

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(path for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb") if path.name[:2] >= "02")
USES = re.compile(r"""your_code\(\s*["'](\w+)["']""")
IGNORED = {".git", ".venv", ".pytest_cache", "artifacts", "__pycache__", ".course-data", "node_modules"}


@pytest.fixture(scope="module")
def solved_course(tmp_path_factory):
    course = tmp_path_factory.mktemp("solved") / "course"
    shutil.copytree(ROOT, course, ignore=lambda folder, names: [n for n in names if n in IGNORED])
    for exercise in EXERCISES:
        shutil.copy(ROOT / "solutions" / f"{exercise.name}.py", course / "exercises" / f"{exercise.name}.py")
    return course


def _text_outputs(notebook) -> str:
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output.get("text", ""))
            elif "data" in output:
                parts.append(str(output["data"].get("text/plain", "")))
    return "\n".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name[:2])
def test_the_notebook_runs_on_the_students_code(solved_course, path, tmp_path):
    notebook = nbformat.read(solved_course / "notebooks" / path.name, as_version=4)
    used = {get_exercise(name).name for cell in notebook.cells if cell.cell_type == "code"
            for name in USES.findall(cell.source)}
    assert used, f"{path.name} runs none of the student's exercises through your_code()"
    env = {**os.environ, "LLM_BACKEND": "offline", "COURSE_DOTENV": "0", "OFFLINE_STREAM_CHARS_PER_SECOND": "0",
           "COURSE_DATA_DIR": str(tmp_path / "course-data")}  # nbval may run this notebook right now
    client = NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(solved_course / "notebooks")}})
    old_env = dict(os.environ)
    os.environ.update(env)
    try:
        client.execute()  # raises CellExecutionError on the first error, with the cell and traceback
    finally:
        os.environ.clear()
        os.environ.update(old_env)
    text = _text_outputs(notebook)
    for name in sorted(used):
        assert re.search(rf"✔ {name}: работает ваш", text), f"{path.name}: no line says {name} ran the student's code"
        assert f"↪ {name}:" not in text, f"{path.name}: {name} fell back to the course's version"
