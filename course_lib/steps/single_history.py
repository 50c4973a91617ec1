"""Stage 2 of the course (notebook 02): `SingleHistoryChatService`, one history for the whole service.

Notebook 02 shows these classes in its cells; `tests/test_steps_match_notebooks.py` keeps the
notebook's source and this module's source identical, so later notebooks can import them from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter

from course_lib.llm.client import LLMClient, Message
from course_lib.llm.errors import LLMClientError
from course_lib.prompts.support_chat import get_support_chat_prompt
from course_lib.prompts.tags import wrap_in_tag
from course_lib.prompts.template import PromptTemplate
from course_lib.steps.common import ChatReply, ChatServiceError, validate_reply

CHAT_PROMPT = get_support_chat_prompt("1.0.0")  # the plain chat prompt of notebooks 01-04


@dataclass(frozen=True, kw_only=True)
class HistoryReply(ChatReply):
    """ChatReply from notebook 01 plus one figure: the history's size after this turn."""

    history_messages: int


class SingleHistoryChatService:
    """Stage 2: one history list for the whole service (one user, one conversation)."""

    def __init__(self, llm_client: LLMClient, prompt: PromptTemplate = CHAT_PROMPT) -> None:
        self._llm_client = llm_client
        self._prompt = prompt
        self._history: list[Message] = []  # new: the state that outlives reply()

    def reply(self, user_text: str) -> HistoryReply:
        text = user_text.strip()
        if not text:
            raise ChatServiceError("Сообщение не должно быть пустым.")
        user_message: Message = {"role": "user", "content": wrap_in_tag("customer_message", text)}
        messages = [{"role": "developer", "content": self._prompt.render()}, *self._history, user_message]

        started_at = perf_counter()
        try:
            llm_result = self._llm_client.generate(messages)
        except LLMClientError as error:
            raise ChatServiceError(f"Не удалось получить ответ модели: {error}") from error
        elapsed_seconds = perf_counter() - started_at
        reply_text = validate_reply(llm_result)

        # The only place the history changes: after a validated reply, the whole turn at once.
        self._history.extend([user_message, {"role": "assistant", "content": reply_text}])
        return HistoryReply(
            text=reply_text, history_messages=len(self._history), model=llm_result.model,
            prompt_id=self._prompt.prompt_id, prompt_version=self._prompt.version,
            elapsed_seconds=elapsed_seconds, prompt_tokens=llm_result.prompt_tokens,
            completion_tokens=llm_result.completion_tokens, total_tokens=llm_result.total_tokens,
            response_id=llm_result.response_id, request_messages=tuple(messages),
        )
