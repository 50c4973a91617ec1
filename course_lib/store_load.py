"""Several app processes on one store: the multi-process test, the store benchmark and the demo.

Each worker is a separate process (a fresh one, as a second app server would be) that opens the store
by its location (a SQLite path or a PostgreSQL URL), waits at a barrier so that all workers really
overlap, and then:
- `chat_worker`: runs the course's chat (`ChatService` with the offline model) through a list of
  turns, and reports what it sent and got back;
- `store_worker`: does what a turn does to the store without the model (session lock, load,
  commit of one more user/assistant turn), as fast as it can, for the benchmark.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Turn:
    session_id: str
    user_id: str | None
    text: str


@dataclass
class WorkerReport:
    worker: int
    pid: int
    started: float = 0.0
    finished: float = 0.0
    replies: list[tuple[Turn, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    turns: int = 0


def chat_worker(location: str, worker: int, turns: list[Turn], barrier=None) -> WorkerReport:
    """One app process: the chat with long-term memory, on the store at `location`."""
    os.environ["LLM_BACKEND"] = "offline"
    os.environ["COURSE_DOTENV"] = "0"
    from course_lib.app import build_chat_app
    from course_lib.chat_service import ChatServiceError
    from course_lib.config import load_settings
    from course_lib.store_url import open_memory_store, open_session_store

    report = WorkerReport(worker, os.getpid())
    with_memory = any(turn.user_id for turn in turns)
    app = build_chat_app(
        load_settings(llm_backend="offline"),
        store=open_session_store(location),
        memory_store=open_memory_store(location) if with_memory else None,
    )
    with app:
        if barrier is not None:
            barrier.wait(timeout=300)
        report.started = time.time()
        for turn in turns:
            try:
                reply = app.chat_service.reply(turn.session_id, turn.text, user_id=turn.user_id)
            except ChatServiceError as error:
                report.errors.append(f"{turn.session_id}: {error}")
                continue
            report.replies.append((turn, reply.text))
            report.turns += 1
        report.finished = time.time()
    return report


def store_worker(location: str, worker: int, turns: int, sessions: list[str], barrier=None) -> WorkerReport:
    """One process doing store turns without the model: lock, load, commit one more turn."""
    from course_lib.store_url import open_session_store

    report = WorkerReport(worker, os.getpid())
    store = open_session_store(location)
    try:
        if barrier is not None:
            barrier.wait(timeout=300)
        report.started = time.time()
        for index in range(turns):
            session_id = sessions[index % len(sessions)]
            question = {"role": "user", "content": f"Процесс {worker}, вопрос {index}: где заказ 8041?"}
            answer = {"role": "assistant", "content": f"Заказ 8041 в пути (ответ {worker}-{index})."}
            with store.session_lock(session_id):
                state = store.load(session_id)
                messages = [*state.messages, question, answer]
                store.commit(session_id, state.version, messages, state.summary,
                             unchanged_prefix=len(state.messages), now=time.time())
            report.turns += 1
        report.finished = time.time()
    finally:
        store.close()
    return report


# What every worker imports: the fork server loads it once, and each worker starts from that copy
# instead of importing the chat (openai, pydantic, tiktoken: about a second of CPU) on its own.
WORKER_PRELOAD = ["course_lib.app", "course_lib.store_url"]


def _process_context() -> multiprocessing.context.BaseContext:
    """"forkserver" where the platform has it (Linux, macOS), else "spawn": never a plain fork of
    the caller, whose threads (a kernel's, a test runner's) a forked child would inherit."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(WORKER_PRELOAD)  # takes effect when the server first starts
    return context


def _in_environment(environment: dict[str, str], target, *args):
    # The fork server was started earlier, with the environment of that moment: a worker runs
    # with the caller's environment as it is now, as a spawned process would.
    os.environ.clear()
    os.environ.update(environment)
    return target(*args)


def run_workers(target, jobs: list[tuple]) -> list[WorkerReport]:
    """Run `target(*job, barrier)` in one separate process per job, all starting together."""
    context = _process_context()
    environment = dict(os.environ)
    with context.Manager() as manager:
        barrier = manager.Barrier(len(jobs))
        with ProcessPoolExecutor(max_workers=len(jobs), mp_context=context) as pool:
            futures = [pool.submit(_in_environment, environment, target, *job, barrier) for job in jobs]
            return [future.result(timeout=600) for future in futures]


def turns_per_second(reports: list[WorkerReport]) -> float:
    """All workers' turns over the wall-clock time from the first start to the last finish."""
    elapsed = max(r.finished for r in reports) - min(r.started for r in reports)
    return sum(r.turns for r in reports) / elapsed if elapsed > 0 else float("inf")
