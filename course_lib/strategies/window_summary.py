"""Strategies 5 and 6: the window with a summary on overflow — course_lib's own `ChatService`.

Nothing is re-implemented here: the strategy is a `ChatService` with one session, whose chat and
summary clients go through the meter, so its calls are counted like everyone else's.

`keep_recent_turns=0` (strategy `window_summary`) is the seed-000 design of lesson 05: after a
compression the request is instruction + summary + new message. `keep_recent_turns=K > 0`
(strategy `window_summary_k`) keeps the K newest whole turns that were in the window verbatim and
summarizes only the older ones, so the reply the customer is answering right now is still in the
request after a compression — at the price of a larger request.
"""

from __future__ import annotations

from course_lib.chat_history import SlidingWindowHistory
from course_lib.chat_service import ChatService, ChatServiceError
from course_lib.conversation_summary_service import DEFAULT_MAX_SUMMARY_CHARS, ConversationSummaryService
from course_lib.messages import Message
from course_lib.strategies.base import StrategyBase, StrategyError
from course_lib.strategies.metering import GeneratingClient

SESSION_ID = "comparison"


class WindowSummaryStrategy(StrategyBase):
    """`ChatService.reply()`: window first; when it drops history, fold it into the summary."""

    name = "window_summary"
    title = "Окно + сводка"

    def __init__(
        self,
        llm_client: GeneratingClient,
        history_policy: SlidingWindowHistory,
        *,
        keep_recent_turns: int = 0,
        max_summary_chars: int = DEFAULT_MAX_SUMMARY_CHARS,
        **kwargs,
    ) -> None:
        super().__init__(llm_client, **kwargs)
        self.service = ChatService(
            llm_client=self._chat_client,  # type: ignore[arg-type]  # duck-typed: .generate()
            history_policy=history_policy,
            summary_service=ConversationSummaryService(
                self._meter.client("summary"), max_summary_chars=max_summary_chars  # type: ignore[arg-type]
            ),
            prompt=self._prompt,
            keep_recent_turns=keep_recent_turns,
        )
        if keep_recent_turns > 0:
            self.name = "window_summary_k"  # type: ignore[misc]
            self.title = "Окно + сводка + K ходов"  # type: ignore[misc]

    @property
    def keep_recent_turns(self) -> int:
        return self.service.keep_recent_turns

    def _reply(self, text: str) -> tuple[list[Message], str]:
        try:
            reply = self.service.reply(SESSION_ID, text)
        except ChatServiceError as error:
            raise StrategyError(str(error)) from error
        return list(reply.request_messages), reply.text

    def snapshot(self) -> object:
        return super().snapshot(), self.service.store.snapshot()  # type: ignore[attr-defined]

    def restore(self, state: object) -> None:
        own, stored = state  # type: ignore[misc]
        super().restore(own)
        self.service.store.restore(stored)  # type: ignore[attr-defined]

    def stored_messages(self) -> tuple[Message, ...]:
        snapshot = self.service.get_session(SESSION_ID)
        summary = () if snapshot.summary is None else (ChatService.build_summary_message(snapshot.summary),)
        return (*summary, *snapshot.messages)
