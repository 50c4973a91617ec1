"""Turns per second of the session stores with several app processes: SQLite (one file) vs PostgreSQL.

    .venv/bin/python benchmarks/bench_stores.py [--turns 150] [--processes 1,2,4,8] [--url postgresql://…]

A "turn" here is what a chat turn does to the store, without the model: take the session's lock,
load the session, commit one more user/assistant turn (one transaction with the version check).
Each process works on its own 10 sessions, all processes start together (a barrier), and turns/s
is all turns over the wall-clock time from the first start to the last finish. The model call is
left out on purpose: with it, the model (not the store) would set the pace.

PostgreSQL: `--url` (or COURSE_POSTGRES_URL) for an existing server, else a throwaway durable server
from the system's packages (fsync on, like SQLite's commits). A run ends with one line per store
saying where adding processes stopped paying (less than +10 % turns/s).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from course_lib.postgres.cluster import TempCluster, missing_reason  # noqa: E402
from course_lib.store_load import run_workers, store_worker, turns_per_second  # noqa: E402

GAIN_THRESHOLD = 1.10  # +10 % turns/s or more counts as "still scaling"


def measure(location: str, processes: int, turns: int) -> float:
    jobs = [(location, worker, turns, [f"p{worker}-s{index}" for index in range(10)]) for worker in range(processes)]
    return turns_per_second(run_workers(store_worker, jobs))


def fresh_postgres_database(url: str, name: str) -> str:
    """An empty database on the server at `url`, so every run starts from the same state."""
    import psycopg
    from urllib.parse import urlsplit, urlunsplit

    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def stops_scaling(figures: dict[int, float]) -> str:
    counts = sorted(figures)
    for previous, current in zip(counts, counts[1:]):
        if figures[current] < figures[previous] * GAIN_THRESHOLD:
            return f"перестаёт расти после {previous} процесс(ов): при {current} — ×{figures[current] / figures[previous]:.2f}"
    return f"растёт до {counts[-1]} процессов включительно"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=150, help="ходов на процесс (по умолчанию 150)")
    parser.add_argument("--processes", default="1,2,4,8", help="числа процессов через запятую")
    parser.add_argument("--url", default=os.environ.get("COURSE_POSTGRES_URL"), help="сервер PostgreSQL")
    args = parser.parse_args()
    counts = [int(part) for part in args.processes.split(",")]

    columns: dict[str, dict[int, float]] = {"SQLite (один файл)": {}}
    cluster = None
    url = args.url
    if url is None and missing_reason() is None:
        cluster = TempCluster(durable=True)
        url = cluster.start()
    if url is not None:
        columns["PostgreSQL"] = {}
    else:
        print(f"PostgreSQL пропущен: {missing_reason()}")
    print(f"Ходов на процесс: {args.turns}; ядер CPU: {os.cpu_count()}; модель не вызывается (только хранилище).")
    try:
        with tempfile.TemporaryDirectory(prefix="course-bench-stores-") as folder:
            for count in counts:
                path = Path(folder) / f"sessions-{count}.sqlite3"
                columns["SQLite (один файл)"][count] = measure(str(path), count, args.turns)
                if url is not None:
                    database = fresh_postgres_database(url, f"course_bench_{count}")
                    columns["PostgreSQL"][count] = measure(database, count, args.turns)
    finally:
        if cluster is not None:
            cluster.stop()

    names = list(columns)
    print()
    print(f"{'процессов':>10} | " + " | ".join(f"{name + ', ходов/с':>28} | {'×к 1':>5}" for name in names))
    for count in counts:
        cells = []
        for name in names:
            value, base = columns[name][count], columns[name][counts[0]]
            cells.append(f"{value:>28.0f} | {value / base:>5.2f}")
        print(f"{count:>10} | " + " | ".join(cells))
    print()
    for name in names:
        print(f"{name}: {stops_scaling(columns[name])}")
    return 0


if __name__ == "__main__":
    started = time.perf_counter()
    code = main()
    print(f"\nВремя прогона: {time.perf_counter() - started:.0f} с")
    sys.exit(code)
