"""The course's version of exercises/build_chat_messages.py (notebook 02)."""


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def build_chat_messages(instruction: str, history: list[dict[str, str]], user_text: str) -> list[dict[str, str]]:
    # Both types first, then emptiness: ("", [], 5) is a TypeError, as the statement says.
    if not (isinstance(instruction, str) and isinstance(user_text, str)):
        raise TypeError("instruction и user_text должны быть строками")
    rules, question = _text(instruction), _text(user_text)
    if not (rules and question):
        raise ValueError("instruction и user_text не должны быть пустыми")
    request = [{"role": "developer", "content": rules}]
    request.extend(history)  # the stored messages as they are: the model must see the same history
    request.append({"role": "user", "content": "<customer_message>\n" + question + "\n</customer_message>"})
    return request
