"""`ConversationSummaryService`: asks the model to fold old turns into a short summary.

It stores nothing and does not decide when to compress (that is `ChatService`'s job); it only builds
the summary request with its own versioned prompt and checks the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from course_lib.llm.client import LLMClient, LLMResult, Message
from course_lib.llm.errors import LLMClientError
from course_lib.prompts.chat_history_summary import CHAT_HISTORY_SUMMARY_PROMPT
from course_lib.prompts.tags import unwrap_tag, wrap_in_tag

SPEAKERS = {"user": "Клиент", "assistant": "Поддержка"}
NO_PREVIOUS_SUMMARY = "Отсутствует."


class ConversationSummaryError(RuntimeError):
    """The summary could not be produced; the caller's state must stay as it was."""


@dataclass(frozen=True)
class SummaryResult:
    """A checked summary and the model call that produced it (for cost accounting)."""

    text: str
    llm_result: LLMResult


class ConversationSummaryService:
    def __init__(self, llm_client: LLMClient) -> None:
        self._llm_client = llm_client
        self.prompt = CHAT_HISTORY_SUMMARY_PROMPT
        self._instruction = self.prompt.render()

    def summarize(self, previous_summary: str | None, messages: Sequence[Message]) -> str:
        """A new summary of `previous_summary` plus `messages` (old turns, oldest first)."""
        return self.summarize_detailed(previous_summary, messages).text

    def summarize_detailed(
        self, previous_summary: str | None, messages: Sequence[Message]
    ) -> SummaryResult:
        """Like `summarize`, but also returns the model call's metadata and usage."""
        if not messages:
            raise ConversationSummaryError("Нет сообщений для суммаризации.")

        request: list[Message] = [
            {"role": "developer", "content": self._instruction},
            {"role": "user", "content": build_summary_source(previous_summary, messages)},
        ]
        try:
            result = self._llm_client.generate(request)
        except LLMClientError as error:
            raise ConversationSummaryError(f"Не удалось создать summary: {error}") from error

        if result.finish_reason == "length":
            raise ConversationSummaryError("Summary остановлено из-за ограничения длины.")
        if result.finish_reason != "stop":
            raise ConversationSummaryError(
                f"Модель не вернула готовое summary. Причина завершения: {result.finish_reason}."
            )
        if result.text is None or not result.text.strip():
            raise ConversationSummaryError("Модель вернула пустое summary.")
        return SummaryResult(text=result.text.strip(), llm_result=result)


def build_summary_source(previous_summary: str | None, messages: Sequence[Message]) -> str:
    """The summary request's data: the old summary and a transcript, each in its own tag."""
    old_summary = (previous_summary or "").strip() or NO_PREVIOUS_SUMMARY
    # Stored user messages carry their own <customer_message> wrapper; the transcript labels
    # speakers instead, so the wrapper is taken off.
    transcript = "\n".join(
        f"{SPEAKERS.get(message['role'], message['role'])}: "
        f"{unwrap_tag('customer_message', message['content'])}"
        for message in messages
    )
    return (
        f"{wrap_in_tag('previous_summary', old_summary)}\n\n"
        f"{wrap_in_tag('conversation_fragment', transcript)}"
    )
