"""Notebook helpers: `setup_notebook()` for a notebook's first cell, `notebook_data_dir()` for files
that must outlive a kernel restart, and `python -m course_lib notebooks [NAME...]`, which
re-executes notebooks — the main ones in `notebooks/` and the bonus ones in `notebooks/bonus/` —
and stores their outputs.

Each notebook runs top to bottom in a fresh kernel from its own folder, on the offline model (a key in
`.env` must not leak a real model's words into the stored outputs). The stored outputs are what
`pytest --nbval` compares against in `make test`. Widget state is not saved: it would only bloat
the file and pin a widget version.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
# Files a notebook keeps across kernel restarts (notebook 07's sessions): in the course folder,
# ignored by git, never in the student's hand-in. COURSE_DATA_DIR moves them elsewhere: the test
# suite runs the same notebook in several kernels at once, each with a folder of its own.
DATA_ROOT = Path(os.environ.get("COURSE_DATA_DIR") or Path(__file__).resolve().parent.parent / ".course-data")
CELL_TIMEOUT_SECONDS = 120
WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"


def setup_notebook() -> None:
    """The first cell of every notebook: course errors as a few Russian lines (the traceback one
    click away), a hint to run the cells above on a NameError. Silent; harmless outside IPython
    and when called twice."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    from course_lib import notebook_errors

    notebook_errors.install(get_ipython())


def notebook_data_dir(notebook: str, *, root: Path | None = None) -> Path:
    """A folder for one notebook's files that a kernel restart does not remove.

    `notebook` is a short name such as "07"; the folder is `.course-data/notebook-07/` in the
    course folder (hidden in Lab's file browser, ignored by git, not part of handin.zip).
    """
    if not notebook or not all(ch.isalnum() or ch in "-_" for ch in notebook):
        raise ValueError(f"Имя папки ноутбука: только буквы, цифры, - и _ (получено {notebook!r}).")
    folder = (root or DATA_ROOT) / f"notebook-{notebook}"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def remove_notebook_data(notebook: str, *, root: Path | None = None) -> int:
    """Delete what `notebook_data_dir(notebook)` holds (the optional clean-up cell); returns the
    number of files removed."""
    import shutil

    folder = notebook_data_dir(notebook, root=root)
    count = sum(1 for item in folder.rglob("*") if item.is_file())
    shutil.rmtree(folder)
    return count


def execute_notebook(path: Path) -> float:
    """Run one notebook in place; return the seconds it took."""
    import nbformat
    from nbclient import NotebookClient

    from course_lib.notebook_stamps import STAMP_KEY, inputs_digest

    digest = inputs_digest(path)  # before execution: what these outputs were computed from
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_SECONDS,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=False,
        record_timing=False,  # per-cell timestamps would make every regeneration a diff
    )
    started = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - started
    _strip_widget_views(notebook)
    notebook.metadata[STAMP_KEY] = {"inputs": digest}
    text = nbformat.writes(notebook) + "\n"
    if path.read_text(encoding="utf-8") != text:  # byte-identical outputs: leave the file alone
        path.write_text(text, encoding="utf-8")
    return elapsed


def _strip_widget_views(notebook) -> None:
    """Drop widget views from stored outputs: without saved widget state they cannot render, and
    their random model ids would make every regeneration a diff. The text/plain fallback stays."""
    notebook.metadata.pop("widgets", None)
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(WIDGET_VIEW_MIME, None)


def use_bundle_environment() -> None:
    """Stored outputs are what a fresh bundle shows: no key and LLM_BACKEND at its default (auto →
    the offline model), no .env; the kernels started afterwards inherit this environment."""
    for name in ("LLM_BACKEND", "OPENAI_API_KEY"):
        os.environ.pop(name, None)
    os.environ["COURSE_DOTENV"] = "0"
    os.environ["OFFLINE_STREAM_CHARS_PER_SECOND"] = "0"  # stored outputs do not wait for paced streams


def course_notebooks(folder: Path = NOTEBOOKS_DIR) -> list[Path]:
    """The main notebooks (`notebooks/*.ipynb`), then the bonus ones (`notebooks/bonus/*.ipynb`)."""
    return sorted(folder.glob("*.ipynb")) + sorted(folder.glob("bonus/*.ipynb"))


def _named(path: Path, names: set[str], folder: Path) -> bool:
    """`04_sliding_window`, `04_sliding_window.ipynb`, `bonus/04_provider_tokens[.ipynb]`, or `bonus`
    for every bonus notebook."""
    relative = path.relative_to(folder).as_posix()
    return bool({path.stem, path.name, relative, relative.removesuffix(".ipynb"), *path.relative_to(folder).parts[:-1]}
                & names)


def main(argv: list[str]) -> int:
    use_bundle_environment()
    from course_lib.notebook_stamps import is_current

    force = "--force" in argv
    names = {name.removeprefix("notebooks/") for name in argv} - {"--force"}
    paths = [p for p in course_notebooks(NOTEBOOKS_DIR) if not names or _named(p, names, NOTEBOOKS_DIR)]
    if not paths:
        print(f"Ноутбуки не найдены: {' '.join(argv) or NOTEBOOKS_DIR}", file=sys.stderr)
        return 1
    total = 0.0
    for path in paths:
        if not force and is_current(path):
            print(f"{path.relative_to(NOTEBOOKS_DIR).as_posix()}: не изменился (ячейки, course_lib и exercises те же) — пропущен")
            continue
        elapsed = execute_notebook(path)
        total += elapsed
        print(f"{path.relative_to(NOTEBOOKS_DIR).as_posix()}: {elapsed:.1f} с")
    print(f"Всего: {total:.1f} с")
    return 0
