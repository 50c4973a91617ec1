"""`ConversationSummaryService`: asks the model to fold old turns into a short summary.

It stores nothing and does not decide when to compress (that is `ChatService`'s job); it only builds
the summary request with its own versioned prompt and checks the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from course_lib.llm.client import LLMClient, LLMResult, Message, generate_with_model
from course_lib.llm.errors import LLMClientError
from course_lib.prompts.chat_history_summary import CHAT_HISTORY_SUMMARY_PROMPT
from course_lib.prompts.tags import unwrap_tag, wrap_in_tag
from course_lib.prompts.template import PromptTemplate

SPEAKERS = {"user": "Клиент", "assistant": "Поддержка"}
NO_PREVIOUS_SUMMARY = "Отсутствует."
DEFAULT_MAX_SUMMARY_CHARS = 600


class ConversationSummaryError(RuntimeError):
    """The summary could not be produced; the caller's state must stay as it was."""


@dataclass(frozen=True)
class SummaryResult:
    """A checked summary and the model call that produced it (for cost accounting)."""

    text: str
    llm_result: LLMResult
    truncated: bool = False
    """The model's summary was longer than `max_summary_chars` and was cut to fit."""


class ConversationSummaryService:
    def __init__(
        self,
        llm_client: LLMClient,
        *,
        prompt: PromptTemplate = CHAT_HISTORY_SUMMARY_PROMPT,
        model: str | None = None,
        max_summary_chars: int = DEFAULT_MAX_SUMMARY_CHARS,
    ) -> None:
        """`model=None` uses the client's model; `max_summary_chars` fills prompts that have a cap."""
        if isinstance(max_summary_chars, bool) or not isinstance(max_summary_chars, int):
            raise TypeError("Лимит длины сводки должен быть целым числом.")
        if max_summary_chars <= 0:
            raise ValueError("Лимит длины сводки должен быть больше нуля.")
        self._llm_client = llm_client
        self.prompt = prompt
        self.model = model
        self.max_summary_chars = max_summary_chars
        # 1.0.0 has no cap; 1.1.0 states one. Render with exactly the variables the version needs.
        variables = {"max_summary_chars": max_summary_chars}
        self._instruction = prompt.render(
            **{name: variables[name] for name in prompt.required_variables if name in variables}
        )

    @property
    def instruction(self) -> str:
        """The rendered instruction the summary request starts with."""
        return self._instruction

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
            result = generate_with_model(self._llm_client, request, self.model)
        except LLMClientError as error:
            raise ConversationSummaryError(f"Не удалось создать сводку: {error}") from error

        if result.finish_reason == "length":
            raise ConversationSummaryError("Сводка не дописана: модель остановилась из-за ограничения длины.")
        if result.finish_reason != "stop":
            raise ConversationSummaryError(
                f"Модель не вернула готовую сводку. Причина завершения: {result.finish_reason}."
            )
        if result.text is None or not result.text.strip():
            raise ConversationSummaryError("Модель вернула пустую сводку.")
        # The prompt states the cap, but a real model may not keep it: the code does.
        text = cap_summary(result.text.strip(), self.max_summary_chars)
        return SummaryResult(text=text, llm_result=result, truncated=text != result.text.strip())


def cap_summary(text: str, max_chars: int) -> str:
    """`text` within `max_chars`: whole sentences while they fit, else whole words and "…".

    The summary prompt lists the most important facts first, so the end is what goes.
    """
    if len(text) <= max_chars:
        return text
    head = text[:max_chars]
    sentence_end = max(head.rfind(mark) for mark in (". ", "! ", "? ", ".\n", "\n"))
    if sentence_end >= max_chars // 3:
        return head[: sentence_end + 1].rstrip()
    cut = head[: max_chars - 1]
    word_end = cut.rfind(" ")
    return (cut[:word_end] if word_end > 0 else cut).rstrip(" ,;:—-") + "…"


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
