"""Output folder names for submissions: safe, unique, and stable.

A folder name that is already safe is kept as it is. Any other is cleaned (characters outside
letters, digits and `_ . @ + -` become `_`; no leading dot or formula character `= + - @`; at most
80 characters) and gets the first 8 hex digits of the original name's SHA-256, so `student 17` can
never take `student_17`'s row, and the same folder gets the same name in every batch. Names of the
grader's own outputs (grades.csv) are reserved. Two folders with the same name in different places
are told apart by -2, -3 … in the order given; results.json and grades.csv record each original path.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

RESERVED = frozenset({"grades.csv"})
MAX_CHARS = 80
_UNSAFE = re.compile(r"[^\w.@+-]")


def _clean(name: str) -> str:
    cleaned = _UNSAFE.sub("_", name)[:MAX_CHARS]
    if cleaned[:1] in (".", "=", "+", "-", "@"):
        cleaned = "_" + cleaned[1:]
    return cleaned or "submission"


def output_name(path: Path) -> str:
    original = Path(os.path.abspath(path)).name
    if original.lower().endswith(".zip") and len(original) > 4 and not os.path.isdir(path):
        original = original[:-4]  # a zip's results sit under its name without .zip
    cleaned = _clean(original)
    if cleaned == original and original.lower() not in RESERVED:
        return original
    digest = hashlib.sha256(original.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{cleaned}-{digest}"


def output_names(paths: list[Path]) -> list[str]:
    names: list[str] = []
    for path in paths:
        base = output_name(path)
        name, counter = base, 2
        while name in names or name.lower() in RESERVED:
            name, counter = f"{base}-{counter}", counter + 1
        names.append(name)
    return names
