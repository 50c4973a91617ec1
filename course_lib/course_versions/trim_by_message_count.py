"""The course's version of exercises/trim_by_message_count.py (notebook 06)."""

INSTRUCTION_ROLES = ("system", "developer")


def trim_by_message_count(messages: list[dict[str, str]], max_messages: int) -> list[dict[str, str]]:
    if isinstance(max_messages, bool) or not isinstance(max_messages, int):
        raise TypeError("max_messages должен быть целым числом")
    if max_messages < 0:
        raise ValueError("max_messages не может быть отрицательным")
    keeps_instruction = len(messages) > 0 and messages[0].get("role") in INSTRUCTION_ROLES
    head, dialogue = (messages[:1], messages[1:]) if keeps_instruction else ([], messages[:])
    if len(dialogue) <= max_messages:
        return list(head) + list(dialogue)
    window = dialogue[len(dialogue) - max_messages:]  # not dialogue[-max_messages:]: -0 means all
    # A reply whose question was cut off means nothing on its own: drop it, and anything else before
    # the first user message of the window.
    first_user = next((i for i, message in enumerate(window) if message.get("role") == "user"), len(window))
    return list(head) + window[first_user:]
