"""`python -m course_lib notebooks [NAME...]`: re-execute notebooks and store their outputs.

Each notebook runs top to bottom in a fresh kernel from `notebooks/`, on the offline model (a key in
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
CELL_TIMEOUT_SECONDS = 120
WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"


def execute_notebook(path: Path) -> float:
    """Run one notebook in place; return the seconds it took."""
    import nbformat
    from nbclient import NotebookClient

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
    nbformat.write(notebook, path)
    return elapsed


def _strip_widget_views(notebook) -> None:
    """Drop widget views from stored outputs: without saved widget state they cannot render, and
    their random model ids would make every regeneration a diff. The text/plain fallback stays."""
    notebook.metadata.pop("widgets", None)
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(WIDGET_VIEW_MIME, None)


def main(argv: list[str]) -> int:
    os.environ["LLM_BACKEND"] = "offline"  # the kernel inherits both
    os.environ["COURSE_DOTENV"] = "0"
    names = set(argv)
    paths = sorted(p for p in NOTEBOOKS_DIR.glob("*.ipynb") if not names or p.stem in names or p.name in names)
    if not paths:
        print(f"Ноутбуки не найдены: {' '.join(argv) or NOTEBOOKS_DIR}", file=sys.stderr)
        return 1
    total = 0.0
    for path in paths:
        elapsed = execute_notebook(path)
        total += elapsed
        print(f"{path.name}: {elapsed:.1f} с")
    print(f"Всего: {total:.1f} с")
    return 0
