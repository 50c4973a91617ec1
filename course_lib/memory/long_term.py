"""`LongTermMemory`: what the chat remembers about a user across sessions, and when it learns it.

Before a reply, `context_for` builds the memory blocks for the request (facts, and optionally
recalled turns from the user's earlier sessions). After a committed reply, `after_turn` archives
the turn and extracts facts from the customer's message — either in the hot path (`"sync"`: the
reply waits for one more model call, the next turn already knows the facts) or in a background
thread (`"background"`: the reply returns at once; the facts arrive a moment later). A failed
extraction never fails the chat: it is recorded in `errors` and nothing is stored.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from time import perf_counter, time
from typing import Literal

from course_lib.llm.client import LLMResult, Message
from course_lib.memory.context import (
    build_memory_message,
    build_recall_message,
    select_memories,
    select_recalled_turns,
)
from course_lib.memory.extractor import MemoryExtractor
from course_lib.memory.facts import MemoryExtractionError, MemoryFact, RejectedFact
from course_lib.memory.store import ArchivedTurn, LongTermStore, MemoryStoreError, MemoryUpdate
from course_lib.tokenizer import TokenCounter

ExtractionMode = Literal["sync", "background"]


@dataclass(frozen=True)
class MemoryContext:
    """The memory messages of one request and what they hold."""

    messages: tuple[Message, ...] = ()
    facts: tuple[MemoryFact, ...] = ()
    recalled: tuple[ArchivedTurn, ...] = ()
    tokens: int = 0


@dataclass(frozen=True)
class ExtractionOutcome:
    """One extraction: what changed in memory, what the model call cost, how long it took."""

    update: MemoryUpdate | None
    llm_result: LLMResult | None
    elapsed_seconds: float
    error: str | None = None
    rejected: tuple[RejectedFact, ...] = ()
    """What the model returned but the customer did not say (or only asked, or asked of us)."""

    def describe(self) -> str:
        """One Russian line for the console and the chat panel: learned, nothing new, or failed."""
        if self.error is not None:
            return f"Память: факты извлечь не удалось — {self.error} Ничего не сохранено."
        parts: list[str] = []
        if self.update is not None and self.update.added:
            parts.append("запомнено " + ", ".join(f"{f.kind}={f.value}" for f in self.update.added))
        if self.update is not None and self.update.replaced:
            parts.append("обновлено " + ", ".join(f"{o.kind}: {o.value} → {n.value}" for o, n in self.update.replaced))
        if not parts:
            parts.append("новых фактов нет")
        if self.rejected:
            parts.append("отклонено " + "; ".join(f"{r.fact.kind}={r.fact.value} ({r.reason})" for r in self.rejected))
        return "Память: " + "; ".join(parts) + "."


@dataclass
class LongTermMemory:
    store: LongTermStore
    """`MemoryStore` (SQLite) or `PostgresMemoryStore`."""
    extractor: MemoryExtractor
    token_counter: TokenCounter
    memory_token_budget: int = 200
    recall_token_budget: int = 0
    """0 turns recall off; recall is the noisier of the two (see notebook 07)."""
    recall_limit: int = 3
    extraction: ExtractionMode = "sync"
    clock: Callable[[], float] = time
    errors: list[str] = field(default_factory=list)
    _executor: ThreadPoolExecutor | None = field(default=None, init=False, repr=False)
    _pending: list[Future] = field(default_factory=list, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("memory_token_budget", "recall_token_budget", "recall_limit"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} должен быть целым числом не меньше нуля.")
        if self.extraction not in ("sync", "background"):
            raise ValueError("extraction: допустимы 'sync' и 'background'.")

    def context_for(self, user_id: str, session_id: str, user_text: str) -> MemoryContext:
        messages: list[Message] = []
        facts = select_memories(self.store.active_facts(user_id), self.token_counter, self.memory_token_budget)
        if facts:
            messages.append(build_memory_message(facts))
        recalled: list[ArchivedTurn] = []
        if self.recall_token_budget > 0:
            matches = self.store.search_turns(
                user_id, user_text, limit=self.recall_limit, exclude_session=session_id
            )
            recalled = select_recalled_turns(matches, self.token_counter, self.recall_token_budget)
            if recalled:
                messages.append(build_recall_message(recalled))
        tokens = sum(self.token_counter.count_message(message) for message in messages)
        return MemoryContext(tuple(messages), tuple(facts), tuple(recalled), tokens)

    def after_turn(
        self, user_id: str, session_id: str, turn: int, user_text: str, assistant_text: str
    ) -> ExtractionOutcome | None:
        """Archive the turn, then learn from it: now (`sync`, returns the outcome) or later (None).

        Called after the reply was committed, so it never raises: a failure is recorded in `errors`.
        """
        try:
            self.store.archive_turn(user_id, session_id, turn, user_text, assistant_text, now=self.clock())
        except (sqlite3.Error, MemoryStoreError) as error:
            self.errors.append(f"Не удалось сохранить ход в архив: {error}")
        if self.extraction == "sync":
            return self._learn(user_id, session_id, turn, user_text)
        with self._lock:
            if self._executor is None:
                # One worker: updates of a user's memory happen in the order the turns did.
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory")
            self._pending = [future for future in self._pending if not future.done()]
            self._pending.append(self._executor.submit(self._learn, user_id, session_id, turn, user_text))
        return None

    def wait(self) -> None:
        """Block until background extractions finished (lessons and tests need a settled state)."""
        with self._lock:
            pending = list(self._pending)
        for future in pending:
            future.result()

    def facts(self, user_id: str) -> list[MemoryFact]:
        return self.store.active_facts(user_id)

    def forget(self, user_id: str) -> int:
        self.wait()
        return self.store.forget(user_id)

    def close(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)
        self.store.close()

    def _learn(self, user_id: str, session_id: str, turn: int, user_text: str) -> ExtractionOutcome:
        started = perf_counter()
        try:
            screened, result = self.extractor.extract_screened([user_text])
        except MemoryExtractionError as error:
            self.errors.append(str(error))
            return ExtractionOutcome(None, None, perf_counter() - started, str(error))
        rejected = list(screened.rejected)
        try:
            # A question never overwrites what the customer stated before.
            known = {fact.kind for fact in self.store.active_facts(user_id)} if screened.asked else set()
            facts = list(screened.stated)
            for fact in screened.asked:
                if fact.kind in known:
                    rejected.append(RejectedFact(fact, "из вопроса; не заменяет сказанное раньше"))
                else:
                    facts.append(fact)
            update = self.store.remember(user_id, facts, session_id=session_id, turn=turn, now=self.clock())
        except (sqlite3.Error, MemoryStoreError) as error:
            self.errors.append(f"Не удалось сохранить факты: {error}")
            return ExtractionOutcome(None, result, perf_counter() - started, str(error), tuple(rejected))
        return ExtractionOutcome(update, result, perf_counter() - started, rejected=tuple(rejected))
