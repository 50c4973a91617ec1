"""Reading a stored notebook as text, for the prose tests (`tests/test_prose_NN.py`).

Each helper takes a notebook or its list of cells.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from grader.scaffold import LINK  # an exercise item of a practice list, as the scaffold writes it

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
TEXT_MIMES = ("text/plain", "text/markdown", "text/html")


def load_cells(stem: str) -> list:
    return nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4).cells


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
