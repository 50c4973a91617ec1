"""Strategy 1: the whole history in every request (the single `history` list of lesson 02)."""

from __future__ import annotations

from course_lib.messages import Message
from course_lib.strategies.base import StrategyBase, assistant_message, user_message


class FullHistoryStrategy(StrategyBase):
    """Sends the instruction, every stored message and the new one. Forgets nothing, limits nothing."""

    name = "full"
    title = "Полная история"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._history: list[Message] = []

    def _reply(self, text: str) -> tuple[list[Message], str]:
        new_message = user_message(text)
        request = [self._developer_message, *self._history, new_message]
        reply = self._chat(request)
        self._history.extend([new_message, assistant_message(reply)])
        return request, reply

    def stored_messages(self) -> tuple[Message, ...]:
        return tuple(self._history)
