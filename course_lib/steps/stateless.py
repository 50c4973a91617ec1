"""Stage 1 of the course (notebook 01): `StatelessChatService`, every reply a new, independent request.

Notebook 01 shows `build_messages` and `StatelessChatService` in its cells;
`tests/test_steps_match_notebooks.py` keeps the cells and this module identical.
"""

from __future__ import annotations

from time import perf_counter

from course_lib.llm.client import LLMClient, Message
from course_lib.llm.errors import LLMClientError
from course_lib.prompts.support_chat import get_support_chat_prompt
from course_lib.prompts.tags import wrap_in_tag
from course_lib.steps.common import ChatReply, ChatServiceError, validate_reply

CHAT_PROMPT = get_support_chat_prompt("1.0.0")  # the version notebook 01 picks explicitly
CHAT_INSTRUCTION = CHAT_PROMPT.render()


def build_messages(user_text: str) -> list[Message]:
    """A fresh list on every call: the rules and the current message, nothing else."""
    return [
        {"role": "developer", "content": CHAT_INSTRUCTION},
        {"role": "user", "content": wrap_in_tag("customer_message", user_text)},
    ]


class StatelessChatService:
    """Stage 1: every reply() is a new, independent request."""

    def __init__(self, llm_client: LLMClient) -> None:
        self._llm_client = llm_client

    def reply(self, user_text: str) -> ChatReply:
        text = user_text.strip()
        if not text:
            raise ChatServiceError("Сообщение не должно быть пустым.")
        messages = build_messages(text)

        started_at = perf_counter()
        try:
            llm_result = self._llm_client.generate(messages)
        except LLMClientError as error:
            raise ChatServiceError(f"Не удалось получить ответ модели: {error}") from error
        elapsed_seconds = perf_counter() - started_at

        return ChatReply(
            text=validate_reply(llm_result), model=llm_result.model,
            prompt_id=CHAT_PROMPT.prompt_id, prompt_version=CHAT_PROMPT.version,
            elapsed_seconds=elapsed_seconds, prompt_tokens=llm_result.prompt_tokens,
            completion_tokens=llm_result.completion_tokens, total_tokens=llm_result.total_tokens,
            response_id=llm_result.response_id, request_messages=tuple(messages),
        )
