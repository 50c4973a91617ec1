"""Reading a stored notebook as text, for the prose tests (`tests/test_prose_NN.py`).

Each helper takes a notebook or its list of cells. The course has main notebooks
(`notebooks/NN_*.ipynb`, the lesson in one sitting) and bonus notebooks
(`notebooks/bonus/NN_*.ipynb`, a main notebook's deep dives and long side demos, each linked from the
main notebook NN): `load_cells("bonus/04_provider_tokens")` reads a bonus one.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from grader.scaffold import LINK  # an exercise item of a practice list, as the scaffold writes it

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
TEXT_MIMES = ("text/plain", "text/markdown", "text/html")


MAIN_NOTEBOOKS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
BONUS_NOTEBOOKS = sorted(NOTEBOOKS.glob("bonus/[0-9][0-9]_*.ipynb"))
ALL_NOTEBOOKS = MAIN_NOTEBOOKS + BONUS_NOTEBOOKS


def load_cells(stem: str) -> list:
    """`"04_sliding_window"` (a main notebook) or `"bonus/04_provider_tokens"` (a bonus one)."""
    return nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4).cells


def notebook_name(path: Path) -> str:
    """`04` for a main notebook, `bonus/04_provider_tokens` for a bonus one (test ids, messages)."""
    relative = path.relative_to(NOTEBOOKS)
    return path.name[:2] if len(relative.parts) == 1 else relative.with_suffix("").as_posix()


def bonus_of(main: Path) -> list[Path]:
    """The bonus notebooks that deepen a main notebook: `bonus/NN_*.ipynb` with its number NN."""
    return [path for path in BONUS_NOTEBOOKS if path.name[:2] == main.name[:2]]


def main_of(bonus: Path) -> Path:
    """The main notebook a bonus notebook deepens (the one with its number)."""
    (main,) = [path for path in MAIN_NOTEBOOKS if path.name[:2] == bonus.name[:2]]
    return main


def _cells(notebook_or_cells) -> list:
    return notebook_or_cells.cells if hasattr(notebook_or_cells, "cells") else notebook_or_cells


def markdown_sources(notebook_or_cells) -> list[str]:
    return [cell.source for cell in _cells(notebook_or_cells) if cell.cell_type == "markdown"]


def markdown_text(notebook_or_cells) -> str:
    return "\n".join(markdown_sources(notebook_or_cells))




def lesson_text(notebook_or_cells) -> str:
    """The Markdown a student reads as the lesson: everything but the practice list's items that
    link an exercise file (with their continuation lines). That list grows by one line with each
    exercise an instructor adds (`instructor new-exercise`); the statement itself is in the file."""
    kept = []
    for source in markdown_sources(notebook_or_cells):
        in_item = False
        for line in source.split("\n"):
            if LINK.match(line):
                in_item = True
            elif in_item and not (line.startswith("  ") and line.strip()):
                in_item = False
            if not in_item:
                kept.append(line)
    return "\n".join(kept)


def stream_text(cell) -> str:
    """What the cell printed (stdout/stderr streams)."""
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def cell_text(cell, mimes: tuple[str, ...] = ("text/plain", "text/markdown")) -> str:
    """Everything textual a cell shows: its streams and the first of `mimes` each result has."""
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(output.get("text", ""))
        data = output.get("data", {})
        for mime in mimes:
            if mime in data:
                value = data[mime]
                parts.append(value if isinstance(value, str) else "".join(value))
                break
    return "".join(parts)


def all_output_text(notebook_or_cells, mimes: tuple[str, ...] = TEXT_MIMES) -> str:
    """Every output of every cell, every textual form of each (for "is this number printed?")."""
    parts = []
    for cell in _cells(notebook_or_cells):
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            data = output.get("data", {})
            parts += [data[mime] if isinstance(data[mime], str) else "".join(data[mime]) for mime in mimes if mime in data]
    return "\n".join(parts)


def cell_by_id(cells, cell_id: str):
    """The cell with this id (notebooks keep stable cell ids, so tests survive inserted cells)."""
    return next(c for c in cells if c.get("id") == cell_id)


def index_of(cells, cell_id: str) -> int:
    return next(i for i, c in enumerate(cells) if c.get("id") == cell_id)


def hidden_check_cells(cells) -> list:
    """The code cells with an assert; each must be collapsed and open with «# Проверка для CI»."""
    checks = [c for c in cells if c.cell_type == "code" and "assert" in c.source]
    for check in checks:
        assert check.metadata.get("jupyter", {}).get("source_hidden") is True, check.get("id")
        assert check.source.startswith("# Проверка для CI"), check.get("id")
    return checks
