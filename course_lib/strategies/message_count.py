"""Strategy 2: the last N messages, the instruction always kept — the simplest baseline.

The limit is a count of messages (`history[-N:]` with the instruction in front), not tokens: ten short
"Спасибо." and ten pasted letters are the same "10 messages", so the request size follows whatever
the customer happens to write. Trimmed messages are dropped from storage for good. (The blog
article's `Conversation` class also deletes for good, but it trims by *tokens*, counted with tiktoken;
the course's token window keeps the whole history and trims only the request.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from course_lib.messages import Message
from course_lib.strategies.base import StrategyBase, assistant_message, user_message
from course_lib.strategies.metering import GeneratingClient

INSTRUCTION_ROLES = frozenset({"system", "developer"})


def trim_by_message_count(messages: Sequence[Message], max_messages: int) -> list[Message]:
    """The leading instruction (if any) plus at most `max_messages` last messages of the dialogue.

    The kept window never starts with an assistant message: a reply without its question is dropped
    too, so whole user/assistant pairs leave together.
    """
    if isinstance(max_messages, bool) or not isinstance(max_messages, int):
        raise TypeError("max_messages должен быть целым числом.")
    if max_messages < 0:
        raise ValueError("max_messages не может быть отрицательным.")
    has_instruction = bool(messages) and messages[0]["role"] in INSTRUCTION_ROLES
    head = list(messages[:1]) if has_instruction else []
    dialogue = list(messages[1:] if has_instruction else messages)
    window = dialogue[len(dialogue) - min(max_messages, len(dialogue)) :]
    while window and window[0]["role"] != "user":
        window.pop(0)
    return head + window


class MessageCountStrategy(StrategyBase):
    """Keeps the instruction and the last `max_messages` messages (the new one included)."""

    name = "count"
    title = "Последние N сообщений"

    def __init__(
        self,
        llm_client: GeneratingClient,
        max_messages: int = 24,
        *,
        trim: Callable[[Sequence[Message], int], list[Message]] | None = None,
        **kwargs,
    ) -> None:
        """`trim` replaces `trim_by_message_count` (notebook 06 passes the student's version)."""
        if isinstance(max_messages, bool) or not isinstance(max_messages, int) or max_messages < 1:
            raise ValueError("max_messages должен быть целым числом не меньше 1: новое сообщение отправляется всегда.")
        super().__init__(llm_client, **kwargs)
        self.max_messages = max_messages
        self.trim = trim or trim_by_message_count
        self._history: list[Message] = []

    def _reply(self, text: str) -> tuple[list[Message], str]:
        new_message = user_message(text)
        request = self.trim(
            [self._developer_message, *self._history, new_message], self.max_messages
        )
        reply = self._chat(request)
        # The trimmed part is gone; the instruction is not history (a `trim` that lost it shows in the request).
        self._history = [*(m for m in request if m["role"] not in INSTRUCTION_ROLES), assistant_message(reply)]
        return request, reply

    def stored_messages(self) -> tuple[Message, ...]:
        return tuple(self._history)
