"""Strategy 3: the token sliding window of lesson 04 (`SlidingWindowHistory`).

The whole history is stored; each request takes the newest whole turns that fit the input budget.
What falls out of the window is not deleted, it is simply not sent.
"""

from __future__ import annotations

from course_lib.chat_history import ChatHistoryError, SlidingWindowHistory
from course_lib.messages import Message
from course_lib.strategies.base import StrategyBase, StrategyError, assistant_message, user_message
from course_lib.strategies.metering import GeneratingClient


class TokenWindowStrategy(StrategyBase):
    """Instruction + the newest whole turns that fit `history_policy`'s budget + the new message."""

    name = "window"
    title = "Окно по токенам"

    def __init__(self, llm_client: GeneratingClient, history_policy: SlidingWindowHistory, **kwargs) -> None:
        super().__init__(llm_client, **kwargs)
        self.history_policy = history_policy
        self._history: list[Message] = []

    def _reply(self, text: str) -> tuple[list[Message], str]:
        new_message = user_message(text)
        try:
            prepared = self.history_policy.prepare(self._developer_message, self._history, new_message)
        except ChatHistoryError as error:
            raise StrategyError(f"Не удалось подготовить историю: {error}") from error
        reply = self._chat(prepared.messages)
        self._history.extend([new_message, assistant_message(reply)])
        return prepared.messages, reply

    def stored_messages(self) -> tuple[Message, ...]:
        return tuple(self._history)
