"""Reference solution for exercises/count_message_tokens.py (the statement lives in the stub)."""

from collections.abc import Callable

TOKENS_PER_MESSAGE = 3
REPLY_PRIMER_TOKENS = 3
TOKENS_PER_NAME = 1


def count_message_tokens(
    messages: list[dict[str, str]],
    count_text: Callable[[str], int],
) -> int:
    total = REPLY_PRIMER_TOKENS
    for message in messages:
        if not isinstance(message, dict):
            raise TypeError("сообщение должно быть словарём")
        role = message.get("role")
        content = message.get("content")
        if not isinstance(role, str) or not isinstance(content, str):
            raise TypeError("role и content должны быть строками")
        total += TOKENS_PER_MESSAGE + count_text(role) + count_text(content)
        if "name" in message:
            name = message["name"]
            if not isinstance(name, str):
                raise TypeError("name должен быть строкой")
            total += TOKENS_PER_NAME + count_text(name)
    return total
