"""Output folder names for submissions: safe, unique, and the same on every run.

A folder name that is already safe is kept as it is. Any other is cleaned (characters outside
letters, digits and `_ . @ + -` become `_`; no leading dot or formula character `= + - @`; at most
80 characters) and gets the first 8 hex digits of the original name's SHA-256, so `student 17` can
never take `student_17`'s row. Names that end like a file the grader writes in the output folder
(`grades.csv`, `similarity.csv`, `gradebook-moodle.csv`, any `.csv`) are treated the same way.

Which submission owns which folder is remembered in `OUT/.state/names.json` (per folder: a hash
of the submission's absolute path, its own name, the path as reports show it), so a name depends on
the submission, never on the batch it came in: a regrade of one hand-in gets the folder of the full
run. A hand-in from a new path with the same own name as one graded before (a second download of
the same student) goes on in that student's folder, and the run says so. A second submission
whose name is taken otherwise gets `-<8 hex of its path>`; if even that is taken, or it is unclear
which earlier hand-in it continues, the run stops naming both (exit 2) before anything is graded.
Nothing ever silently reuses another submission's folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

RESERVED = frozenset({"grades.csv", "similarity.csv"})
RESERVED_ENDINGS = (".csv",)  # every table the grader writes next to the students' folders
REGISTRY = Path(".state") / "names.json"
MAX_CHARS = 80
_UNSAFE = re.compile(r"[^\w.@+-]")


class NameClash(Exception):
    """Two submissions would share one output folder; the message names both (in Russian)."""


def _clean(name: str) -> str:
    cleaned = _UNSAFE.sub("_", name)[:MAX_CHARS]
    if cleaned[:1] in (".", "=", "+", "-", "@"):
        cleaned = "_" + cleaned[1:]
    return cleaned or "submission"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:8]


def is_reserved(name: str) -> bool:
    lowered = name.lower()
    return lowered in RESERVED or lowered.endswith(RESERVED_ENDINGS)


def own_name(path: Path) -> str:
    """A submission's own name: its folder's, or its zip's without .zip."""
    original = Path(os.path.abspath(path)).name
    if original.lower().endswith(".zip") and len(original) > 4 and not os.path.isdir(path):
        original = original[:-4]  # a zip's results sit under its name without .zip
    return original


def output_name(path: Path) -> str:
    """The folder a submission asks for: its own name, made safe (see above)."""
    original = own_name(path)
    cleaned = _clean(original)
    if cleaned == original and not is_reserved(original):
        return original
    return f"{cleaned}-{_digest(original)}"


def _key(path: Path) -> str:
    """A submission's identity for naming: its absolute path (links not followed), hashed, so
    the output folder holds no absolute path."""
    return hashlib.sha256(os.path.abspath(path).encode("utf-8", "surrogateescape")).hexdigest()


@dataclass
class _Folder:
    key: str  # "" for a folder from before names were remembered
    base: str  # own_name() of the submission graded in it
    shown: str


def _read_registry(out: Path) -> dict[str, _Folder]:
    try:
        data = json.loads((out / REGISTRY).read_text(encoding="utf-8"))
        return {name: _Folder(str(entry["key"]), str(entry["base"]), str(entry["shown"]))
                for name, entry in data["folders"].items()}  # fmt: skip
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _existing_folders(out: Path) -> list[str]:
    """Result folders written before names were remembered (an output folder from an older grader)."""
    try:
        return [entry.name for entry in out.iterdir() if (entry / "results.json").is_file()]
    except OSError:
        return []


def assign_names(
    out: Path, paths: list[Path], *, earlier_sources: dict[str, str] | None = None, shown=str
) -> tuple[list[str], list[str]]:
    """(each submission's output folder name, notices for the instructor); call it under the
    output folder's lock.

    Raises `NameClash` (and remembers nothing) when a name cannot be given without sharing.
    `earlier_sources` (grades.csv: folder → the source it printed) lets a folder written before
    names were remembered go on with the submission it came from; `shown` turns a path into what
    a message may print.
    """
    folders = _read_registry(out)
    for name in _existing_folders(out):
        if name.lower() not in {known.lower() for known in folders}:
            source = (earlier_sources or {}).get(name, "")
            folders[name] = _Folder(_key(Path(source)) if source else "", "", source or name)
    by_key = {folder.key: name for name, folder in folders.items() if folder.key}
    taken = {name.lower() for name in folders}
    names: list[str] = []
    notices: list[str] = []
    seen: set[str] = set()
    for path in paths:
        key, own, base, here = _key(path), own_name(path), output_name(path), shown(path)
        if key in seen:
            raise NameClash(f"Работа {here} указана дважды.")
        seen.add(key)
        name = by_key.get(key)
        if name is None:
            same_base = [known for known, folder in folders.items()
                         if folder.base == own and known not in names]  # fmt: skip
            if len(same_base) > 1:
                listed = " и ".join(folders[known].shown for known in same_base)
                raise NameClash(
                    f"Работа {here}: с тем же именем уже проверены {listed} (папки {', '.join(same_base)}). "
                    "Проверьте её по прежнему пути или с другим --out."
                )
            if same_base and same_base[0] == base:  # the same student's hand-in, from a new place
                name = base
                notices.append(f"{here} продолжает папку {name} (прежде проверялась {folders[name].shown}).")
            elif base.lower() not in taken:
                name = base
            else:
                name = f"{base}-{key[:8]}"
                holder = next((known for known in folders if known.lower() == name.lower()), None)
                if holder is not None:
                    raise NameClash(
                        f"Работы {here} и {folders[holder].shown} получили бы одну папку результатов "
                        f"{name}. Переименуйте одну из них или проверьте её с другим --out."
                    )
        folders[name] = _Folder(key, own, here)
        by_key[key] = name
        taken.add(name.lower())
        names.append(name)
    target = out / REGISTRY
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    document = {"format": 1, "folders": {name: asdict(folder) for name, folder in sorted(folders.items())}}
    partial.write_text(json.dumps(document, ensure_ascii=False, indent=0), encoding="utf-8")
    os.replace(partial, target)
    return names, notices

