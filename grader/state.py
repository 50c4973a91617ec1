"""What a grading run remembers in its output folder, so that a regrade keeps everything else.

`OUT/.state/<submission>.json` (the instructor's, never inside a student's folder) holds each
exercise's case outcomes — case name, visibility, hint, group, weight, passed, reason, what the
public case printed — and the exercise files as read. Hidden inputs and expectations are never
stored. A regrade with `--exercise X` rebuilds the other exercises' results from it, so
results.json and feedback.md keep every section and the total; a regrade of some submissions
updates only their pairs in similarity.csv (`update_similarity`), keeping every other row.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from pathlib import Path

from grader import similarity
from course_lib.checking.cases import Case
from course_lib.checking.catalog import BY_NAME, CourseLayout, Exercise
from course_lib.checking.results import CaseResult, ExerciseResult

STATE_DIR = ".state"
FORMAT = 1


def _path(out: Path, name: str) -> Path:
    return out / STATE_DIR / f"{name}.json"


def _case_record(result: CaseResult) -> dict:
    case = result.case
    return {
        "name": case.name, "visibility": case.visibility, "hint": case.hint, "group": case.group,
        "weight": case.weight, "passed": result.passed, "category": result.category,
        "detail": result.detail if case.visibility == "public" else "",
        "output": result.output if case.visibility == "public" else "",
    }  # fmt: skip


def save(out: Path, name: str, results: list[ExerciseResult], sources: dict[str, str | None]) -> None:
    """Merge this run's exercises into the submission's stored state."""
    path = _path(out, name)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    stored = _read(path)
    exercises = stored.get("exercises", {})
    files = stored.get("sources", {})
    for result in results:
        exercises[result.exercise.name] = {
            "status": result.status, "shown_status": result.shown_status, "message": result.message,
            "flags": list(result.flags), "cases": [_case_record(r) for r in result.cases],
        }  # fmt: skip
    files.update(sources)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(
        json.dumps({"format": FORMAT, "exercises": exercises, "sources": files}, ensure_ascii=False),
        encoding="utf-8",
    )
    os.replace(partial, path)


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if type(data) is dict and data.get("format") == FORMAT else {}


def _case(exercise: Exercise, record: dict) -> Case:
    expect = {"raises": "Exception"} if record["group"] == "validation" else {"return": None}
    data = {"expect": expect, "weight": record.get("weight", 1), "group": record["group"]}
    return Case(exercise.name, record["name"], record["visibility"], record.get("hint", ""), data)


def earlier_results(out: Path, name: str, skip: set[str]) -> dict[str, ExerciseResult]:
    """The stored results of this submission's exercises not in `skip` (and still registered)."""
    found = {}
    for exercise_name, record in _read(_path(out, name)).get("exercises", {}).items():
        exercise = BY_NAME.get(exercise_name)
        if exercise is None or exercise_name in skip:
            continue
        try:
            cases = [
                CaseResult(_case(exercise, c), bool(c["passed"]), c["category"], c.get("detail", ""),
                           c.get("output", ""))  # fmt: skip
                for c in record["cases"]
            ]
            found[exercise_name] = ExerciseResult(
                exercise, record["status"], cases, record.get("message", ""),
                record.get("shown_status"), tuple(record.get("flags", ())),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError):
            continue  # a damaged record: that exercise is simply not shown until regraded
    return found


def stored_sources(out: Path, skip: set[str]) -> dict[str, dict[str, str | None]]:
    """Every other submission's stored exercise files: submission -> exercise -> source."""
    folder = out / STATE_DIR
    found = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        if path.stem in skip:
            continue
        sources = _read(path).get("sources")
        if type(sources) is dict:
            found[path.stem] = sources
    return found


def _old_rows(path: Path) -> list[list[str]]:
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8", errors="replace") as handle:
        rows = list(csv.reader(handle))
    return [row for row in rows[1:] if len(row) == 5]


def update_similarity(
    out: Path, layout: CourseLayout, exercises: list[Exercise],
    fresh: dict[str, dict[str, str | None]], threshold: float,
) -> tuple[int, int]:  # fmt: skip
    """Rewrite similarity.csv: rows of the graded exercises that name a submission graded now are
    computed again (with each other, with every stored submission, with course code); all other rows
    stay. Returns (rows kept, rows computed)."""
    path = out / "similarity.csv"
    graded = {exercise.name for exercise in exercises}
    kept = [
        row for row in _old_rows(path)
        if row[0] not in graded or (row[2] not in fresh and (row[1] != "submissions" or row[3] not in fresh))
    ]  # fmt: skip
    cache = PrintCache(out)
    computed = similarity.similarity_rows(
        layout, exercises, fresh, threshold, lambda exercise, files: cache.prints(layout, exercise, files),
        cache.course(),
    )  # fmt: skip
    others = stored_sources(out, set(fresh))
    for exercise in exercises:  # fresh × stored, fingerprinted exactly as in a batch
        computed += similarity.pair_rows(
            exercise,
            cache.prints(layout, exercise, {name: files.get(exercise.name) for name, files in fresh.items()}),
            cache.prints(layout, exercise, {name: files.get(exercise.name) for name, files in others.items()}),
            threshold,
        )
    cache.save()
    similarity.write_similarity(path, kept + computed)
    return len(kept), len(computed)


COURSE_PRINTS = ".course"  # no submission's folder starts with a dot (grader.names)


class PrintCache:
    """Fingerprints of graded files, kept in `OUT/.state/prints/<submission>.json` by the file's
    SHA-256 and the normalization's version: a late hand-in is compared with 299 stored ones
    without fingerprinting those 299 again."""

    def __init__(self, out: Path) -> None:
        self._folder = out / STATE_DIR / "prints"
        self._loaded: dict[str, dict] = {}
        self._changed: set[str] = set()
        # Fingerprints already built in this run: a batch's are asked for twice (pairs among
        # them, then against the stored ones) and are not decoded again.
        self._built: dict[tuple[str, str, str], similarity.Fingerprint | None] = {}

    def _records(self, submission: str) -> dict:
        if submission not in self._loaded:
            try:
                data = json.loads((self._folder / f"{submission}.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                data = {}
            self._loaded[submission] = data if type(data) is dict else {}
        return self._loaded[submission]

    def prints(
        self, layout: CourseLayout, exercise: Exercise, sources: dict[str, str | None]
    ) -> dict[str, similarity.Fingerprint]:
        found: dict[str, similarity.Fingerprint] = {}
        missing: dict[str, str | None] = {}
        digests = {}
        for submission, source in sources.items():
            digest = hashlib.sha256((source or "").encode("utf-8", "surrogatepass")).hexdigest()
            digests[submission] = digest
            key = (submission, exercise.name, digest)
            if key not in self._built:
                record = self._records(submission).get(exercise.name)
                if type(record) is dict and record.get("sha") == digest and record.get("version") == similarity.VERSION:
                    try:
                        printed = record.get("print")
                        self._built[key] = None if printed is None else similarity.from_record(printed)
                    except (KeyError, TypeError, ValueError):
                        pass  # a damaged record: computed again below
            if key not in self._built:
                missing[submission] = source
            elif self._built[key] is not None:
                found[submission] = self._built[key]
        computed = similarity.hand_in_prints(layout, exercise, missing) if missing else {}
        for submission in missing:
            printed = computed.get(submission)
            self._built[(submission, exercise.name, digests[submission])] = printed
            self._records(submission)[exercise.name] = {
                "sha": digests[submission], "version": similarity.VERSION, "print": similarity.to_record(printed),
            }  # fmt: skip
            self._changed.add(submission)
            if printed is not None:
                found[submission] = printed
        return found

    def course(self) -> tuple[dict, dict]:
        """(known, learned) for similarity.course_functions: the course code's fingerprints by
        source; what this run saw replaces what was stored, so nothing stale piles up."""
        known = self._records(COURSE_PRINTS).get("sources")
        learned: dict = {}
        self._loaded[COURSE_PRINTS] = {"sources": learned}
        self._changed.add(COURSE_PRINTS)
        return (known if type(known) is dict else {}), learned

    def save(self) -> None:
        if not self._changed:
            return
        self._folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        for submission in sorted(self._changed):
            path = self._folder / f"{submission}.json"
            partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            partial.write_text(json.dumps(self._loaded[submission]), encoding="utf-8")
            os.replace(partial, path)
        self._changed.clear()
