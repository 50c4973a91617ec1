"""What long-term memory adds to a request, and the rule for what goes first when it is too much.

Both blocks travel as user-role data in their own tags (escaped like the others), never as an
instruction, each under its own share of the token budget:

- `<user_memory>`: active facts, by `KIND_PRIORITY` (name, order number, product, problem, phone,
  e-mail, preference); a fact that does not fit is skipped and the next, shorter one may still fit.
- `<recalled_turns>`: archived turns from earlier sessions, best BM25 match first, while they fit.
"""

from __future__ import annotations

from collections.abc import Sequence

from course_lib.messages import Message
from course_lib.memory.facts import KIND_LABELS, KIND_PRIORITY, MemoryFact
from course_lib.memory.store import ArchivedTurn
from course_lib.prompts.tags import wrap_in_tag
from course_lib.tokenizer import TokenCounter


def memory_line(fact: MemoryFact) -> str:
    return f"- {KIND_LABELS.get(fact.kind, fact.kind)}: {fact.value}"


def select_memories(facts: Sequence[MemoryFact], counter: TokenCounter, budget: int) -> list[MemoryFact]:
    """The facts to send, in priority order, whose message stays within `budget` tokens."""
    ordered = sorted(
        (fact for fact in facts if fact.active),
        key=lambda fact: (_rank(fact.kind), -fact.created_at),
    )
    chosen: list[MemoryFact] = []
    for fact in ordered:
        candidate = [*chosen, fact]
        if counter.count_message(build_memory_message(candidate)) <= budget:
            chosen = candidate
    return chosen


def build_memory_message(facts: Sequence[MemoryFact]) -> Message:
    lines = "\n".join(memory_line(fact) for fact in facts)
    return {"role": "user", "content": wrap_in_tag("user_memory", lines)}


def select_recalled_turns(
    turns: Sequence[ArchivedTurn], counter: TokenCounter, budget: int
) -> list[ArchivedTurn]:
    """The best matches, best first, while the recall message stays within `budget` tokens."""
    chosen: list[ArchivedTurn] = []
    for turn in turns:
        candidate = [*chosen, turn]
        if counter.count_message(build_recall_message(candidate)) > budget:
            break
        chosen = candidate
    return chosen


def build_recall_message(turns: Sequence[ArchivedTurn]) -> Message:
    lines = "\n".join(f"Клиент: {turn.user_text}\nПоддержка: {turn.assistant_text}" for turn in turns)
    return {"role": "user", "content": wrap_in_tag("recalled_turns", lines)}


def _rank(kind: str) -> int:
    return KIND_PRIORITY.index(kind) if kind in KIND_PRIORITY else len(KIND_PRIORITY)
