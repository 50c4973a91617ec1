"""Benchmark (not a test): grade N submissions of all exercises and report the throughput.

    .venv/bin/python benchmarks/bench_grader.py [--submissions 100] [--jobs N]

The submissions are built from the course's own files: 70% reference solutions, 20% untouched
stubs, 10% half reference and half stubs. Every exercise of every submission runs in its own
sandboxed child with all public and hidden cases, exactly as `python -m grader grade` does
(the benchmark calls that command's `main`), so the wall time also covers writing the reports,
updating grades.csv under its lock and the similarity report.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader import cli  # noqa: E402
from course_lib.checking.catalog import EXERCISES  # noqa: E402
from course_lib.checking.sandbox import detect_tier  # noqa: E402


def build_submissions(folder: Path, count: int) -> None:
    for index in range(count):
        target = folder / f"student{index:03d}"
        target.mkdir(parents=True)
        kind = index % 10
        for number, exercise in enumerate(EXERCISES):
            use_reference = kind < 7 or (kind == 9 and number % 2 == 0)
            source = ROOT / ("solutions" if use_reference else "exercises") / f"{exercise.name}.py"
            shutil.copyfile(source, target / f"{exercise.name}.py")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-grader-") as temp:
        base = Path(temp)
        build_submissions(base / "subs", args.submissions)
        folders = sorted(str(path) for path in (base / "subs").iterdir())
        tier = detect_tier()
        started = time.perf_counter()
        code = cli.main([*folders, "--out", str(base / "out"), "--jobs", str(args.jobs), "--no-progress"])
        elapsed = time.perf_counter() - started
        with open(base / "out" / "grades.csv", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    runs = args.submissions * len(EXERCISES)
    print(f"exit code            {code}")
    print(f"sandbox tier         {tier}")
    print(f"cpus / jobs          {os.cpu_count()} / {args.jobs}")
    print(f"submissions          {len(rows)} x {len(EXERCISES)} exercises = {runs} sandboxed runs")
    print(f"full marks           {sum(row['score'] == row['max_score'] for row in rows)}")
    print(f"wall time            {elapsed:.2f} s")
    print(f"throughput           {len(rows) / elapsed:.2f} submissions/s "
          f"({runs / elapsed:.1f} exercise runs/s)")  # fmt: skip
    return code


if __name__ == "__main__":
    raise SystemExit(main())
