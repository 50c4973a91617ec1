"""Notebook 08: long-term memory that runs the student's `merge_facts`, `select_memories` and
`build_memory_message`.

The library's `LongTermMemory` works with `MemoryFact` objects and its own functions; the exercises
work with plain dicts (`{"kind", "value"}`), so this module adapts one to the other and changes
nothing else:

- `MergedStore` wraps a store: before facts are written, `merge_facts(current, new)` decides which
  of them are new values (a repeated value, in any letter case, is not); the store then writes those
  in one transaction, as before.
- `MemoryWithYourFunctions` builds the `<user_memory>` block with `select_memories` (each fact's
  token cost is the tokens of its line in the message) and `build_memory_message`; recall is the
  library's.
- `search_query(fts_query)` gives `MemoryStore(path, make_query=...)` the exercise `fts_query`
  with the library's stop words: the search over archived turns (section 2) runs on it.

Pass whatever `your_code(...)` returned: the student's function once it passes its public cases,
the course's version before that.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from course_lib.messages import Message
from course_lib.memory import LongTermMemory, MemoryFact
from course_lib.memory.facts import ExtractedFact
from course_lib.memory.long_term import MemoryContext
from course_lib.memory.store import STOP_WORDS, ArchivedTurn, LongTermStore, MemoryUpdate
from course_lib.tokenizer import TokenCounter

EMPTY_BLOCK: Message = {"role": "user", "content": "<user_memory>\n</user_memory>"}


def as_dict(fact: MemoryFact) -> dict[str, str]:
    return {"kind": fact.kind, "value": fact.value}


def search_query(fts_query: Callable[[str, list[str]], str | None]) -> Callable[[str], str | None]:
    """The store's query builder (`MemoryStore(path, make_query=...)`) from the exercise's
    `fts_query(text, stop_words)`, with the library's stop words."""
    stop_words = sorted(STOP_WORDS)

    def make_query(text: str) -> str | None:
        return fts_query(text, list(stop_words))

    return make_query


class MergedStore(LongTermStore):
    """A long-term store whose new facts pass through `merge_facts(current, new)` first."""

    def __init__(self, inner: LongTermStore, merge_facts: Callable[[list[dict], list[dict]], list[dict]]) -> None:
        self.inner = inner
        self.merge_facts = merge_facts

    def remember(
        self, user_id: str, facts: Iterable[ExtractedFact], *, session_id: str, turn: int, now: float
    ) -> MemoryUpdate:
        current = [{**as_dict(fact), "active": fact.active} for fact in self.inner.fact_history(user_id)]
        merged = self.merge_facts([dict(fact) for fact in current], [{"kind": f.kind, "value": f.value} for f in facts])
        new = [ExtractedFact(kind=fact["kind"], value=fact["value"]) for fact in merged[len(current):] if fact["active"]]
        return self.inner.remember(user_id, new, session_id=session_id, turn=turn, now=now)

    def active_facts(self, user_id: str) -> list[MemoryFact]:
        return self.inner.active_facts(user_id)

    def fact_history(self, user_id: str) -> list[MemoryFact]:
        return self.inner.fact_history(user_id)

    def archive_turn(
        self, user_id: str, session_id: str, turn: int, user_text: str, assistant_text: str, *, now: float
    ) -> None:
        self.inner.archive_turn(user_id, session_id, turn, user_text, assistant_text, now=now)

    def sessions_of(self, user_id: str) -> tuple[str, ...]:
        return self.inner.sessions_of(user_id)

    def turns(self, user_id: str) -> list[ArchivedTurn]:
        return self.inner.turns(user_id)

    def search_turns(
        self, user_id: str, text: str, *, limit: int = 5, exclude_session: str | None = None
    ) -> list[ArchivedTurn]:
        return self.inner.search_turns(user_id, text, limit=limit, exclude_session=exclude_session)

    def forget(self, user_id: str) -> int:
        return self.inner.forget(user_id)

    def forget_matching(self, user_id: str, text: str) -> int:
        return self.inner.forget_matching(user_id, text)

    def core_blocks(self, user_id: str) -> dict[str, str]:
        return self.inner.core_blocks(user_id)

    def save_core_block(self, user_id: str, label: str, value: str, *, now: float) -> None:
        self.inner.save_core_block(user_id, label, value, now=now)

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str) -> Any:  # e.g. `path` of the SQLite store
        return getattr(self.inner, name)


@dataclass
class MemoryWithYourFunctions(LongTermMemory):
    """`LongTermMemory` whose `<user_memory>` block comes from `select_memories` + `build_memory_message`."""

    select_memories: Callable[[list[dict], list[int], int], list[dict]] | None = None
    build_memory_message: Callable[[list[dict]], Message | None] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.select_memories is None or self.build_memory_message is None:
            raise ValueError("Передайте select_memories и build_memory_message (например, из your_code).")

    def context_for(self, user_id: str, session_id: str, user_text: str) -> MemoryContext:
        base = super().context_for(user_id, session_id, user_text)
        others = base.messages[1:] if base.facts else base.messages  # recalled turns stay the library's
        facts, message = self.memory_block(self.store.active_facts(user_id))
        messages = ([message] if message else []) + list(others)
        tokens = sum(self.token_counter.count_message(m) for m in messages)
        return replace(base, messages=tuple(messages), facts=tuple(facts), tokens=tokens)

    def memory_block(self, active: list[MemoryFact]) -> tuple[list[MemoryFact], Message | None]:
        """The facts chosen within `memory_token_budget` and their message (None when there are none)."""
        return choose_memories(
            active, self.token_counter, self.memory_token_budget, self.select_memories, self.build_memory_message
        )


def choose_memories(
    active: list[MemoryFact],
    counter: TokenCounter,
    budget: int,
    select_memories: Callable[[list[dict], list[int], int], list[dict]],
    build_memory_message: Callable[[list[dict]], Message | None],
) -> tuple[list[MemoryFact], Message | None]:
    """The facts `select_memories` picks so that `build_memory_message` of them stays within `budget`.

    A fact's token cost is its line's share of the message: the tokens of a one-fact message minus
    those of an empty block; the budget for the lines is `budget` minus the empty block.
    """
    empty = counter.count_message(EMPTY_BLOCK)
    candidates = [as_dict(fact) for fact in active]
    costs = [max(1, counter.count_message(build_memory_message([fact])) - empty) for fact in candidates]
    lines_budget = max(0, budget - empty)
    while True:
        chosen = select_memories(candidates, costs, lines_budget)
        message = build_memory_message(chosen) if chosen else None
        if message is None or counter.count_message(message) <= budget:
            break
        lines_budget -= 1  # tokens of joined lines are not quite the sum of their parts
    by_value = {(fact.kind, fact.value): fact for fact in active}
    return [by_value[fact["kind"], fact["value"]] for fact in chosen], message
