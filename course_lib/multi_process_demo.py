"""Notebook 07, "beyond one machine": two app processes continue one customer's conversation.

    from course_lib.multi_process_demo import run_demo
    print(run_demo())          # against COURSE_POSTGRES_URL, or the recorded figures when unset

With a URL, two separate processes (as two app servers behind a load balancer would be) share one
PostgreSQL database: the first takes the customer's first two messages, the second (a different
PID) gets the third, "Напомните номер заказа." — and answers it from the history the first one
stored. Without a URL nothing runs: the report is the recorded run below, with the exact commands
to repeat it, so the notebook stays offline and deterministic.

    python -m course_lib.multi_process_demo [postgresql://…]
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from dataclasses import dataclass

from course_lib.russian import decimal, messages_count, turns_count
from course_lib.store_load import Turn, chat_worker, run_workers

CUSTOMER = "anna"
FIRST_PROCESS = (
    "Здравствуйте! Получил заказ 8041 с кофемашиной.",
    "Она не включается, розетку я уже проверил.",
)
SECOND_PROCESS = ("Напомните номер заказа.",)

COMMANDS = """\
# 1. Временный сервер PostgreSQL из пакетов системы (Debian: apt-get install postgresql); печатает адрес:
python -m course_lib.postgres.cluster start .course-data/postgres
export COURSE_POSTGRES_URL="$(cat .course-data/postgres/url)"
# 2. Два процесса в одной сессии (или перезапустите ноутбук 07 с этой переменной):
python -m course_lib.multi_process_demo
# 3. Консоль на той же базе — из двух терминалов:
python -m course_lib chat --store "$COURSE_POSTGRES_URL" --user anna --session case-8041
# 4. Остановить сервер и удалить его папку:
python -m course_lib.postgres.cluster stop .course-data/postgres"""

RECORDED = """\
Записанный прогон (PostgreSQL 15, Debian 12, 2 ядра; 2026-12-01):
  процесс 1 (PID 20442): 2 хода в сессии case-8041-3d830aec, 0,14 с на ход
  процесс 2 (PID 21255): 1 ход в той же сессии, 0,40 с на ход
  ответ процесса 2: «Номер вашего заказа — 8041.»
  в базе: 6 сообщений в сессии, владелец anna"""


@dataclass(frozen=True)
class DemoReport:
    lines: tuple[str, ...]
    recorded: bool

    def __str__(self) -> str:
        return "\n".join(self.lines)


def run_demo(url: str | None = None) -> DemoReport:
    """Run the two processes against `url` (default: COURSE_POSTGRES_URL); without one, the
    recorded figures and the commands to reproduce them."""
    url = url or os.environ.get("COURSE_POSTGRES_URL")
    if not url:
        text = "COURSE_POSTGRES_URL не задан: показываю записанный прогон.\n" + RECORDED
        text += "\n\nКак повторить:\n" + COMMANDS
        return DemoReport(tuple(text.splitlines()), recorded=True)
    from course_lib.memory.store import MemoryStoreError
    from course_lib.session_store import SessionStoreError
    from course_lib.store_url import StoreUrlError, open_session_store, parse_store_location

    try:
        return _run(parse_store_location(url))
    except (StoreUrlError, SessionStoreError, MemoryStoreError) as error:
        return DemoReport((f"Не получилось: {error}",), recorded=False)


def _run(location) -> DemoReport:
    from course_lib.store_url import open_session_store

    session_id = f"case-8041-{uuid.uuid4().hex[:8]}"  # a fresh conversation on every run
    first = [Turn(session_id, CUSTOMER, text) for text in FIRST_PROCESS]
    second = [Turn(session_id, CUSTOMER, text) for text in SECOND_PROCESS]
    lines = [f"База: {location.display()}"]
    reports = []
    for number, turns in ((1, first), (2, second)):  # one after the other: a hand-over, not a race
        started = time.perf_counter()
        (report,) = run_workers(chat_worker, [(location.target, number, turns)])
        reports.append(report)
        if report.errors:
            lines.append(f"  процесс {number}: ошибка — {report.errors[0]}")
            return DemoReport(tuple(lines), recorded=False)
        per_turn = (report.finished - report.started) / max(report.turns, 1)
        lines.append(f"  процесс {number} (PID {report.pid}): {turns_count(report.turns)} в сессии {session_id}, "
                     f"{decimal(per_turn)} с на ход (с запуском {decimal(time.perf_counter() - started, 1)} с)")
    lines.append(f"  ответ процесса 2: «{reports[1].replies[-1][1]}»")
    store = open_session_store(location)
    try:
        state = store.load(session_id)
    finally:
        store.close()
    lines.append(f"  в базе: {messages_count(len(state.messages))} в сессии, владелец {state.owner}")
    return DemoReport(tuple(lines), recorded=False)


if __name__ == "__main__":
    print(run_demo(sys.argv[1] if len(sys.argv) > 1 else None))
