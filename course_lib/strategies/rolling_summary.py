"""Strategy 4: a rolling summary plus the K most recent messages (the design retrospective's
`compress` / `maybe_compress`).

Stored messages are the dialogue and at most one summary message, marked `is_summary`. When the
request would exceed the input budget and there are more than K dialogue messages, everything but the
K newest is folded into a new summary, which *replaces* the old one:

    [instruction, summary (is_summary), recent × K, new message]

The marker is what lets `compress` tell its own summary from the customer's words. Without it
(`mark_summary=False`, the pitfall) the old summary is just another message: at the next compression
it is summarized again as if the customer had said it — a summary of a summary — and the summarizer
is told there is no previous summary at all.

The size is bounded by a message count (K), not by tokens: K long messages stay long.
"""

from __future__ import annotations

from collections.abc import Callable

from course_lib.conversation_summary_service import (
    DEFAULT_MAX_SUMMARY_CHARS,
    ConversationSummaryError,
    ConversationSummaryService,
)
from course_lib.messages import Message
from course_lib.prompts.tags import unwrap_tag, wrap_in_tag
from course_lib.strategies.base import StrategyBase, StrategyError, assistant_message, user_message
from course_lib.strategies.metering import GeneratingClient
from course_lib.tokenizer import TokenCounter

SUMMARY_FLAG = "is_summary"
SUMMARY_TAG = "conversation_summary"


def split_summary(messages: list[dict]) -> tuple[dict | None, list[dict]]:
    """(the marked summary or None, the dialogue messages); two marked summaries are an error."""
    summaries = [m for m in messages if m.get(SUMMARY_FLAG) is True]
    if len(summaries) > 1:
        raise StrategyError("В истории больше одной сводки (is_summary): сжатие должно заменять старую сводку.")
    dialogue = [m for m in messages if m.get(SUMMARY_FLAG) is not True]
    return (summaries[0] if summaries else None), dialogue


class RollingSummaryStrategy(StrategyBase):
    """Instruction + one summary + the K newest messages; compress when over the budget."""

    name = "rolling"
    title = "Сводка + K сообщений"

    def __init__(
        self,
        llm_client: GeneratingClient,
        token_counter: TokenCounter,
        input_token_budget: int,
        keep_recent: int = 4,
        *,
        mark_summary: bool = True,
        compress: Callable[[list[dict], Callable[[str], str], int], list[dict]] | None = None,
        max_summary_chars: int = DEFAULT_MAX_SUMMARY_CHARS,
        **kwargs,
    ) -> None:
        """`compress` is a `rolling_compress(messages, summarize, keep)` (the exercise's signature;
        notebook 06 passes the student's); None means the strategy's own `_compress`."""
        if isinstance(keep_recent, bool) or not isinstance(keep_recent, int) or keep_recent < 0:
            raise ValueError("keep_recent должен быть целым числом не меньше 0.")
        if isinstance(input_token_budget, bool) or not isinstance(input_token_budget, int) or input_token_budget <= 0:
            raise ValueError("Бюджет входных токенов должен быть целым числом больше нуля.")
        super().__init__(llm_client, **kwargs)
        self.token_counter = token_counter
        self.input_token_budget = input_token_budget
        self.keep_recent = keep_recent
        self.mark_summary = mark_summary
        self.compress = compress
        self.summary_service = ConversationSummaryService(
            self._meter.client("summary"), max_summary_chars=max_summary_chars  # type: ignore[arg-type]
        )
        self._messages: list[dict] = []
        self._last_summary_content: str | None = None
        self.compressions = 0
        self.resummarized = 0
        """Compressions that fed the previous summary to the summarizer as a dialogue line."""

    def _reply(self, text: str) -> tuple[list[Message], str]:
        new_message = user_message(text)
        stored = self._messages
        request = self._request(stored, new_message)
        folded: tuple[list[dict], bool] | None = None
        if self.token_counter.count_messages(request) > self.input_token_budget:
            folded = self._compress(stored)
            if folded is not None:
                stored = folded[0]
                request = self._request(stored, new_message)
        reply = self._chat(request)
        # The state changes only now, after a checked reply.
        if folded is not None:
            self.compressions += 1
            self.resummarized += int(folded[1])
            self._last_summary_content = stored[0]["content"]
        self._messages = [*stored, new_message, assistant_message(reply)]
        return request, reply

    def stored_messages(self) -> tuple[Message, ...]:
        return tuple(dict(m) for m in self._messages)  # type: ignore[misc]

    @property
    def summary_messages(self) -> int:
        """How many stored messages carry the summary marker (0 or 1)."""
        return sum(1 for m in self._messages if m.get(SUMMARY_FLAG) is True)

    def _request(self, stored: list[dict], new_message: Message) -> list[Message]:
        # Only role and content travel to the model; the marker stays in our storage.
        return [
            self._developer_message,
            *({"role": m["role"], "content": m["content"]} for m in stored),
            new_message,
        ]  # type: ignore[list-item]

    def _compress(self, stored: list[dict]) -> tuple[list[dict], bool] | None:
        """Fold all but the K newest dialogue messages into a new summary.

        Returns the new stored list and whether the previous summary was among the folded
        *dialogue* (the unmarked pitfall), or None when there is nothing old enough to fold.
        """
        if self.compress is not None:
            return self._compress_with_function(stored)
        summary, dialogue = split_summary(stored)
        if len(dialogue) <= self.keep_recent:
            return None  # nothing old enough to fold
        split_at = len(dialogue) - self.keep_recent
        old, recent = dialogue[:split_at], dialogue[split_at:]
        previous = unwrap_tag(SUMMARY_TAG, summary["content"]) if summary else None
        try:
            new_summary = self.summary_service.summarize(previous, old)  # type: ignore[arg-type]
        except ConversationSummaryError as error:
            raise StrategyError(f"Не удалось сжать историю: {error}") from error
        summary_message: dict = {"role": "user", "content": wrap_in_tag(SUMMARY_TAG, new_summary)}
        if self.mark_summary:
            summary_message[SUMMARY_FLAG] = True
        resummarized = any(m["content"] == self._last_summary_content for m in old)
        return [summary_message, *recent], resummarized

    def _compress_with_function(self, stored: list[dict]) -> tuple[list[dict], bool] | None:
        """The same fold through a `rolling_compress`: it picks what to fold and builds the text;
        the summarizer still gets the previous summary and the folded messages separately."""
        summary, dialogue = split_summary(stored)
        split_at = max(len(dialogue) - self.keep_recent, 0)
        old = dialogue[:split_at]
        expected = "\n".join(f"{m['role']}: {m['content']}" for m in old)
        if summary is not None:
            expected = f"Предыдущее summary:\n{summary['content']}\n\nНовые сообщения:\n{expected}"
        called = []

        def summarize(text: str) -> str:
            if text != expected:
                raise StrategyError(
                    "rolling_compress передал суммаризатору не тот текст, что описан в упражнении "
                    "(старая сводка и сжимаемые сообщения): проверьте check(\"rolling_compress\")."
                )
            called.append(text)
            previous = unwrap_tag(SUMMARY_TAG, summary["content"]) if summary else None
            try:
                return wrap_in_tag(SUMMARY_TAG, self.summary_service.summarize(previous, old))  # type: ignore[arg-type]
            except ConversationSummaryError as error:
                raise StrategyError(f"Не удалось сжать историю: {error}") from error

        folded = [dict(m) for m in self.compress([dict(m) for m in stored], summarize, self.keep_recent)]
        if not called:
            return None  # nothing old enough to fold
        if not self.mark_summary:
            for message in folded:
                message.pop(SUMMARY_FLAG, None)
        resummarized = any(m["content"] == self._last_summary_content for m in old)
        return folded, resummarized
