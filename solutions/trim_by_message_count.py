"""Reference solution for exercises/trim_by_message_count.py (the statement lives in the stub)."""


def trim_by_message_count(
    messages: list[dict[str, str]],
    max_messages: int,
) -> list[dict[str, str]]:
    if isinstance(max_messages, bool) or not isinstance(max_messages, int):
        raise TypeError("max_messages должен быть целым числом")
    if max_messages < 0:
        raise ValueError("max_messages не может быть отрицательным")
    has_instruction = bool(messages) and messages[0].get("role") in ("system", "developer")
    head = list(messages[:1]) if has_instruction else []
    dialogue = list(messages[1:] if has_instruction else messages)
    if len(dialogue) <= max_messages:
        return head + dialogue
    # dialogue[-0:] would be the whole list: slice from an explicit start instead.
    window = dialogue[len(dialogue) - max_messages :]
    start = 0
    while start < len(window) and window[start].get("role") != "user":
        start += 1
    return head + window[start:]
