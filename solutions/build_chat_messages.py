"""Reference solution for exercises/build_chat_messages.py (the statement lives in the stub)."""


def build_chat_messages(
    instruction: str,
    history: list[dict[str, str]],
    user_text: str,
) -> list[dict[str, str]]:
    if not isinstance(instruction, str) or not isinstance(user_text, str):
        raise TypeError("instruction и user_text должны быть строками")
    instruction = instruction.strip()
    user_text = user_text.strip()
    if not instruction or not user_text:
        raise ValueError("instruction и user_text не должны быть пустыми")
    return [
        {"role": "developer", "content": instruction},
        *history,
        {"role": "user", "content": f"<customer_message>\n{user_text}\n</customer_message>"},
    ]
