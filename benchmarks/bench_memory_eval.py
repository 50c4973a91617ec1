"""Benchmark: the memory benchmark's own cost, per strategy and against the number of questions.

    python benchmarks/bench_memory_eval.py              # limits 100, 200 and every question
    python benchmarks/bench_memory_eval.py --limits 50 393

A run replays the customers that the chosen questions belong to and asks those questions, so its
cost grows linearly with the questions (and with those customers' turns). The table prints, side by
side for each limit, the CPU seconds of each strategy and of the whole run, and the seconds per
question, so a ratio that drifts from 1 shows at once. CPU time (`time.process_time`), not wall
time: on a shared machine the wall clock measures the neighbours too.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from course_lib.memory_eval.dataset import load_dataset  # noqa: E402
from course_lib.memory_eval.harness import run_benchmark  # noqa: E402
from course_lib.memory_eval.strategies import STRATEGY_NAMES  # noqa: E402
from course_lib.strategies import OfflineDirectClient  # noqa: E402


def cpu_run(dataset, name: str, limit: int) -> tuple[float, int]:
    started = time.process_time()
    run = run_benchmark(dataset, [name], lambda _: OfflineDirectClient(), limit=limit)
    return time.process_time() - started, len(run.questions)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limits", type=int, nargs="+", default=None)
    args = parser.parse_args(argv)
    dataset = load_dataset()
    limits = args.limits or [100, 200, len(dataset.questions)]
    seconds = {name: [cpu_run(dataset, name, limit) for limit in limits] for name in STRATEGY_NAMES}
    header = ["strategy"] + [f"{limit} q, s" for limit in limits] + [f"s/q at {limit}" for limit in limits]
    rows = [header]
    for name, runs in seconds.items():
        rows.append([name] + [f"{cpu:.2f}" for cpu, _ in runs] + [f"{cpu / asked * 1000:.2f} ms" for cpu, asked in runs])
    totals = [sum(seconds[name][i][0] for name in STRATEGY_NAMES) for i in range(len(limits))]
    asked = [seconds[STRATEGY_NAMES[0]][i][1] for i in range(len(limits))]
    rows.append(["all"] + [f"{total:.2f}" for total in totals] + [f"{t / q * 1000:.2f} ms" for t, q in zip(totals, asked)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        print("  ".join(cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)))
    print(f"\nQuestions asked: {', '.join(map(str, asked))}; total CPU time per question stays flat when the cost is linear.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
