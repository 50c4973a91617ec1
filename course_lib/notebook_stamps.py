"""Whether a notebook's stored outputs are still current: `make notebooks` skips the ones that are.

A notebook's outputs depend on its own cells and on what they run: `course_lib` (code and data)
and `exercises/` (stubs and public cases, which `check()` reports on). The SHA-256 of those inputs
is kept in the notebook's metadata (`course_outputs.inputs`) when it is executed; re-running `make
notebooks` leaves a notebook whose inputs hash the same untouched (not even rewritten), so stored
outputs of unchanged notebooks never churn. `--force` executes them anyway, and a notebook whose
new outputs equal the stored ones byte for byte is not rewritten either.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

STAMP_KEY = "course_outputs"
ROOT = Path(__file__).resolve().parent.parent
INPUT_DIRS = ("course_lib", "exercises")
SKIPPED_PARTS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache"}


def _input_files(root: Path) -> list[Path]:
    files = []
    for folder in INPUT_DIRS:
        for path in (root / folder).rglob("*"):
            relative = path.relative_to(root)
            if path.is_file() and not SKIPPED_PARTS & set(relative.parts) and path.suffix not in (".pyc",):
                files.append(path)
    return sorted(files)


def inputs_digest(notebook: Path, root: Path = ROOT) -> str:
    """SHA-256 over the notebook's cells (type and source) and every input file (path and bytes)."""
    digest = hashlib.sha256()
    cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
    for cell in cells:
        source = cell.get("source", "")
        digest.update(cell.get("cell_type", "").encode() + b"\0")
        digest.update(("".join(source) if isinstance(source, list) else source).encode() + b"\0")
    for path in _input_files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def stored_digest(notebook: Path) -> str | None:
    try:
        metadata = json.loads(notebook.read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError):
        return None
    stamp = metadata.get(STAMP_KEY)
    return stamp.get("inputs") if isinstance(stamp, dict) else None


def is_current(notebook: Path, root: Path = ROOT) -> bool:
    return stored_digest(notebook) == inputs_digest(notebook, root)
