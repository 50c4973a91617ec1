"""A history with tool calls, in turns: one turn is the customer's message, every tool exchange the
model made for it, and its final reply. Windows, trimming and summaries take or drop whole turns, so
a `tool` result never loses the assistant `tool_calls` message it answers (the HTTP 400 that
providers answer, see `course_lib.llm.offline.tools`).

    user → assistant(tool_calls=[a, b]) → tool(a) → tool(b) → assistant("…")     one turn

`group_tool_exchanges` is the exercise of notebook 09 (the course's version; the notebook passes
the student's through `your_code`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from course_lib.course_versions.group_tool_exchanges import ToolExchangeError, group_tool_exchanges
from course_lib.messages import Message

__all__ = ["ToolExchangeError", "group_tool_exchanges", "newest_turns_that_fit", "summary_lines"]


def newest_turns_that_fit(
    turns: Sequence[Sequence[Message]], budget: int, cost: Callable[[Sequence[Message]], int]
) -> list[list[Message]]:
    """The newest whole turns whose total `cost` stays within `budget` (O(kept turns))."""
    kept: list[list[Message]] = []
    spent = 0
    for turn in reversed(turns):
        spent += cost(turn)
        if spent > budget:
            break
        kept.append(list(turn))
    kept.reverse()
    return kept


def summary_lines(turn: Sequence[Message]) -> list[str]:
    """A turn as the summary source reads it: the customer, the reply, and each tool call compactly
    (its name and the first words of its result), never the raw JSON of an exchange."""
    lines = []
    names: dict[str, str] = {}
    for message in turn:
        if message["role"] == "user":
            lines.append(f"Клиент: {message['content'].strip()}")
        elif message.get("tool_calls"):
            names.update({call["id"]: call["function"]["name"] for call in message["tool_calls"]})
        elif message["role"] == "tool":
            result = " ".join(message["content"].split())
            shown = result[:80] + ("…" if len(result) > 80 else "")
            lines.append(f"(инструмент {names.get(message['tool_call_id'], '?')}: {shown})")
        elif message["content"].strip():
            lines.append(f"Поддержка: {message['content'].strip()}")
    return lines
