"""The course's version of exercises/rolling_compress.py (notebook 06)."""

from collections.abc import Callable


def rolling_compress(messages: list[dict], summarize: Callable[[str], str], keep: int) -> list[dict]:
    if isinstance(keep, bool) or not isinstance(keep, int):
        raise TypeError("keep должен быть целым числом")
    if keep < 0:
        raise ValueError("keep не может быть отрицательным")
    old_summary, instructions, dialogue = [], [], []
    for message in messages:
        if message.get("is_summary") is True:
            old_summary.append(message)
        elif message.get("role") == "system":
            instructions.append(message)
        else:
            dialogue.append(message)
    if len(old_summary) > 1:
        raise ValueError("в истории больше одной сводки")
    if len(dialogue) <= keep:
        return messages[:]
    cut = len(dialogue) - keep  # not dialogue[-keep:]: with keep = 0 that is the whole list
    text = "\n".join(message["role"] + ": " + message["content"] for message in dialogue[:cut])
    if old_summary:
        text = "Предыдущее summary:\n" + old_summary[0]["content"] + "\n\nНовые сообщения:\n" + text
    result = summarize(text)
    if not isinstance(result, str):
        raise TypeError("summarize должен вернуть строку")
    if not result.strip():
        raise ValueError("summarize вернул пустую сводку")
    return instructions + [{"role": "user", "content": result.strip(), "is_summary": True}] + dialogue[cut:]
