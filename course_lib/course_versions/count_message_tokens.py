"""The course's version of exercises/count_message_tokens.py (notebook 04)."""

from collections.abc import Callable

PER_MESSAGE = 3  # the wrapper tokens around every message
REPLY_PRIMER = 3  # the tokens that start the assistant's reply
PER_NAME = 1  # OpenAI's recipe: a message with a "name" costs one token more


def count_message_tokens(messages: list[dict[str, str]], count_text: Callable[[str], int]) -> int:
    total = REPLY_PRIMER
    for message in messages:
        fields = (message.get("role"), message.get("content")) if isinstance(message, dict) else (None, None)
        if not all(isinstance(value, str) for value in fields):
            raise TypeError("каждое сообщение — словарь со строками role и content")
        if "name" in message:
            if not isinstance(message["name"], str):
                raise TypeError("name должен быть строкой")
            fields += (message["name"],)
            total += PER_NAME
        total += PER_MESSAGE + sum(count_text(value) for value in fields)
    return total
