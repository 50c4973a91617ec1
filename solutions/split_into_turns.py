"""Reference solution for exercises/split_into_turns.py (the statement lives in the stub)."""


class ChatHistoryError(ValueError):
    """The history is not a sequence of complete user/assistant turns."""


def split_into_turns(
    history: list[dict[str, str]],
) -> list[list[dict[str, str]]]:
    if len(history) % 2 != 0:
        raise ChatHistoryError(f"нечётное число сообщений: {len(history)}")
    turns = []
    for start in range(0, len(history), 2):
        pair = [dict(history[start]), dict(history[start + 1])]
        roles = [message.get("role") for message in pair]
        if roles != ["user", "assistant"]:
            raise ChatHistoryError(f"ход {start // 2 + 1}: роли {roles}, ожидались user/assistant")
        turns.append(pair)
    return turns
