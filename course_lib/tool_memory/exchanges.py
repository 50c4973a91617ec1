"""A history with tool calls, in turns: one turn is the customer's message, every tool exchange the
model made for it, and its final reply. Windows, trimming and summaries take or drop whole turns, so
a `tool` result never loses the assistant `tool_calls` message it answers (the HTTP 400 that
providers answer, see `course_lib.llm.offline.tools`).

    user → assistant(tool_calls=[a, b]) → tool(a) → tool(b) → assistant("…")     one turn
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from course_lib.messages import Message


class ToolExchangeError(ValueError):
    """The history is not a sequence of whole turns: a result without its call, a call without its
    result, or a turn that does not end with the assistant's reply."""


def group_tool_exchanges(history: Sequence[Message]) -> list[list[Message]]:
    """The history's turns, in order; each message copied (the caller's history is never shared).

    Raises `ToolExchangeError` naming the message that breaks the rule."""
    turns: list[list[Message]] = []
    current: list[Message] | None = None
    waiting: list[str] = []  # ids of the open tool_calls message still without a result
    for index, message in enumerate(history):
        role = message.get("role")
        where = f"сообщение №{index} ({role})"
        if role == "user":
            if current is not None:
                raise ToolExchangeError(f"{where}: предыдущий ход не закончен ответом ассистента.")
            current = [dict(message)]
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if current is None or call_id not in waiting:
                raise ToolExchangeError(
                    f"{where}: результат инструмента без вызова (tool_call_id={call_id!r} не ждёт ответа)."
                )
            waiting.remove(call_id)
            current.append(dict(message))
        elif role == "assistant":
            if current is None:
                raise ToolExchangeError(f"{where}: ответ ассистента без сообщения клиента перед ним.")
            if waiting:
                raise ToolExchangeError(f"{where}: у вызовов {', '.join(waiting)} нет результатов.")
            current.append(dict(message))
            calls = message.get("tool_calls") or []
            if calls:
                waiting = [call["id"] for call in calls]
            else:
                turns.append(current)
                current = None
        else:
            raise ToolExchangeError(f"{where}: в истории бывают только user, assistant и tool.")
    if current is not None:
        missing = f" (у вызовов {', '.join(waiting)} нет результатов)" if waiting else ""
        raise ToolExchangeError(f"последний ход не закончен ответом ассистента{missing}.")
    return turns


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
