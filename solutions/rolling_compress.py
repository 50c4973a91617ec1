"""Reference solution for exercises/rolling_compress.py (the statement lives in the stub)."""

from collections.abc import Callable


def rolling_compress(
    messages: list[dict],
    summarize: Callable[[str], str],
    keep: int,
) -> list[dict]:
    if isinstance(keep, bool) or not isinstance(keep, int):
        raise TypeError("keep должен быть целым числом")
    if keep < 0:
        raise ValueError("keep не может быть отрицательным")

    summaries = [m for m in messages if m.get("is_summary") is True]
    if len(summaries) > 1:
        raise ValueError("в истории не может быть больше одной сводки")
    system_prompts = [
        m for m in messages if m.get("role") == "system" and m.get("is_summary") is not True
    ]
    dialogue = [
        m for m in messages if m.get("role") != "system" and m.get("is_summary") is not True
    ]
    if len(dialogue) <= keep:
        return list(messages)

    # dialogue[-0:] would be the whole list: split at an explicit index instead.
    split_at = len(dialogue) - keep
    old, recent = dialogue[:split_at], dialogue[split_at:]
    text = "\n".join(f"{m['role']}: {m['content']}" for m in old)
    if summaries:
        # The previous summary is handed over as such, never re-summarized as a dialogue line.
        text = f"Предыдущее summary:\n{summaries[0]['content']}\n\nНовые сообщения:\n{text}"

    summary = summarize(text)
    if not isinstance(summary, str):
        raise TypeError("summarize должен вернуть строку")
    summary = summary.strip()
    if not summary:
        raise ValueError("summarize вернул пустую сводку")
    return [*system_prompts, {"role": "user", "content": summary, "is_summary": True}, *recent]
