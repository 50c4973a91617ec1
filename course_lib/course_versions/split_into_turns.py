"""The course's version of exercises/split_into_turns.py (notebook 04)."""


class ChatHistoryError(ValueError):
    """The history is not a sequence of complete user/assistant turns."""


def split_into_turns(history: list[dict[str, str]]) -> list[list[dict[str, str]]]:
    if len(history) % 2:
        raise ChatHistoryError(f"последний ход не закончен: число сообщений нечётное ({len(history)})")
    users, assistants = history[0::2], history[1::2]
    for number, (asked, answered) in enumerate(zip(users, assistants), start=1):
        if (asked.get("role"), answered.get("role")) != ("user", "assistant"):
            raise ChatHistoryError(f"ход {number}: ожидались роли user и assistant")
    return [[dict(asked), dict(answered)] for asked, answered in zip(users, assistants)]
