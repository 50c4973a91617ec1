"""Benchmark (not a test): grade N submissions of all exercises and report the throughput.

    .venv/bin/python benchmarks/bench_grader.py [--submissions 100] [--jobs N] [--layouts L1,L2]

The submissions are built from the course's own files: 70% reference solutions, 20% untouched
stubs, 10% half reference and half stubs, each file made distinct by a comment naming its
student. Every exercise of every submission runs with all public and hidden cases, sandboxed,
exactly as `python -m grader grade` does (the benchmark calls that command's `main`), so the wall
time also covers writing the reports, updating grades.csv under its lock and the similarity report.

Each layout is a fresh run with cold caches: "per-submission" is the grader's (one child runs all
exercises of a submission, `runner.SubmissionChild`), "per-exercise" gives each exercise and phase
a child of its own, as the grader did before; the table shows the two side by side.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import functools
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader import cli, similarity  # noqa: E402
from course_lib.checking.catalog import EXERCISES  # noqa: E402
from course_lib.checking.sandbox import ChildSession, detect_tier  # noqa: E402


def build_submissions(folder: Path, count: int) -> None:
    for index in range(count):
        target = folder / f"student{index:03d}"
        target.mkdir(parents=True)
        kind = index % 10
        for number, exercise in enumerate(EXERCISES):
            use_reference = kind < 7 or (kind == 9 and number % 2 == 0)
            source = ROOT / ("solutions" if use_reference else "exercises") / f"{exercise.name}.py"
            # Every file differs from every other (as a class's do), so no cache keyed by the
            # text makes the benchmark faster than a real batch.
            text = source.read_text(encoding="utf-8") + f"\n# работа {index:03d}\n"
            (target / f"{exercise.name}.py").write_text(text, encoding="utf-8")


class _Counted:
    """Children started and seconds spent in each part of one grading run."""

    def __init__(self) -> None:
        self.children = 0
        self.seconds = {"similarity.csv": 0.0, "reports": 0.0, "course-version flag": 0.0}


def _grade(folders: list[str], out: Path, jobs: int, layout: str) -> tuple[int, float, _Counted]:
    """One `grade` run; `layout` "per-exercise" gives every exercise and phase a child of its own
    (the grader's layout before SubmissionChild), by handing start_exercise no shared child."""
    counted = _Counted()
    patches = []
    # Cold caches for every layout: fingerprints are memoized per process (grader.similarity).
    similarity.fingerprint.cache_clear()
    similarity._entry_fingerprint.cache_clear()
    similarity._COURSE_MEMO.clear()

    def patch(owner, name, wrapper):
        original = getattr(owner, name)
        patches.append((owner, name, original))
        setattr(owner, name, wrapper(original))

    def counting_init(original):
        def init(self, *args, **kwargs):
            counted.children += 1
            original(self, *args, **kwargs)
        return init

    def timed(part):
        def wrap(original):
            @functools.wraps(original)
            def run(*args, **kwargs):
                begun = time.perf_counter()
                try:
                    return original(*args, **kwargs)
                finally:
                    counted.seconds[part] += time.perf_counter() - begun
            return run
        return wrap

    patch(ChildSession, "__init__", counting_init)
    patch(cli.state, "update_similarity", timed("similarity.csv"))
    patch(cli, "_report", timed("reports"))
    patch(cli, "copies_course_version", timed("course-version flag"))
    if layout == "per-exercise":
        patch(cli, "SubmissionChild", lambda original: lambda *args, **kwargs: contextlib.nullcontext())
    try:
        started = time.perf_counter()
        code = cli.main([*folders, "--out", str(out), "--jobs", str(jobs), "--no-progress"])
        return code, time.perf_counter() - started, counted
    finally:
        for owner, name, original in reversed(patches):
            setattr(owner, name, original)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--layouts", default="per-submission,per-exercise",
                        help="per-submission (the grader's), per-exercise (one child per exercise and phase)")
    args = parser.parse_args(argv)
    layouts = [name.strip() for name in args.layouts.split(",") if name.strip()]
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-grader-") as temp:
        base = Path(temp)
        build_submissions(base / "subs", args.submissions)
        folders = sorted(str(path) for path in (base / "subs").iterdir())
        tier = detect_tier()
        for layout in layouts:
            out = base / f"out-{layout}"
            code, elapsed, counted = _grade(folders, out, args.jobs, layout)
            with open(out / "grades.csv", encoding="utf-8") as handle:
                rows = list(csv.DictReader(handle))
            results[layout] = (code, elapsed, counted, rows)
    runs = args.submissions * len(EXERCISES)
    print(f"sandbox tier         {tier}")
    print(f"cpus / jobs          {os.cpu_count()} / {args.jobs}")
    print(f"submissions          {args.submissions} x {len(EXERCISES)} exercises = {runs} exercise runs")
    header = "".join(f"{layout:>16}" for layout in layouts)
    print(f"{'':34}{header}")
    lines = [
        ("exit code", lambda r: f"{r[0]}"),
        ("full marks", lambda r: f"{sum(row['score'] == row['max_score'] for row in r[3])}"),
        ("children started", lambda r: f"{r[2].children}"),
        ("wall time, s", lambda r: f"{r[1]:.2f}"),
        ("submissions/s", lambda r: f"{len(r[3]) / r[1]:.2f}"),
        *[(f"  in {part}, s", lambda r, part=part: f"{r[2].seconds[part]:.2f}") for part in results[layouts[0]][2].seconds],
    ]
    for label, value in lines:
        print(f"{label:34}" + "".join(f"{value(results[layout]):>16}" for layout in layouts))
    if len(layouts) > 1:
        first, other = results[layouts[0]], results[layouts[1]]
        print(f"{layouts[0]} is {other[1] / first[1]:.2f}x as fast as {layouts[1]}; "
              f"same scores: {[r['score'] for r in first[3]] == [r['score'] for r in other[3]]}")
    print("(the course-version flag runs in the grading workers; similarity.csv after them, in the main thread)")
    return max(result[0] for result in results.values())


if __name__ == "__main__":
    raise SystemExit(main())
