"""Stage 4 of the course (notebook 04): `WindowChatService`, the student's service from 03 with a window.

Notebook 04 shows these classes in its cells; `tests/test_prose_04.py` keeps the notebook's source
and this module's source identical, so notebook 05 can import them from here. The only change to
`SessionChatService.reply()` is one step between building the messages and calling the model: the
history policy's `prepare()` picks the newest whole turns that fit the budget. The session still
keeps every message; only the request is trimmed.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter

from course_lib.chat_history import ChatHistoryError, SlidingWindowHistory
from course_lib.llm.client import LLMClient, Message
from course_lib.llm.errors import LLMClientError
from course_lib.prompts.tags import wrap_in_tag
from course_lib.prompts.template import PromptTemplate
from course_lib.steps.common import ChatServiceError, validate_reply
from course_lib.steps.sessions import SessionChatService, SessionReply, normalize_session_id
from course_lib.steps.single_history import CHAT_PROMPT


@dataclass(frozen=True, kw_only=True)
class WindowReply(SessionReply):
    """SessionReply from notebook 03 plus how the window built this request."""

    context_history_messages: int  # history messages that went into the request
    removed_history_messages: int  # history messages that did not
    estimated_prompt_tokens: int  # our estimate of the request before sending it


class WindowChatService(SessionChatService):
    """Stage 4: the session keeps every message; the request gets only the window."""

    def __init__(
        self, llm_client: LLMClient, history_policy: SlidingWindowHistory, prompt: PromptTemplate = CHAT_PROMPT
    ) -> None:
        super().__init__(llm_client, prompt)
        self._history_policy = history_policy  # new: decides which turns fit

    def reply(self, session_id: str, user_text: str) -> WindowReply:
        key = normalize_session_id(session_id)
        text = user_text.strip()
        if not text:
            raise ChatServiceError("Сообщение не должно быть пустым.")
        session = self._get_or_create_session(key)
        with session.lock:  # one turn of this conversation at a time
            user_message: Message = {"role": "user", "content": wrap_in_tag("customer_message", text)}
            developer_message: Message = {"role": "developer", "content": self._prompt.render()}
            try:  # new: the window picks the newest whole turns that fit the budget
                prepared = self._history_policy.prepare(developer_message, session.messages, user_message)
            except ChatHistoryError as error:
                raise ChatServiceError(f"Не удалось подготовить историю: {error}") from error
            messages = prepared.messages

            started_at = perf_counter()
            try:
                llm_result = self._llm_client.generate(messages)
            except LLMClientError as error:
                raise ChatServiceError(f"Не удалось получить ответ модели: {error}") from error
            elapsed_seconds = perf_counter() - started_at
            reply_text = validate_reply(llm_result)

            # The only place the session changes: after a validated reply, the whole turn at once.
            session.messages.extend([user_message, {"role": "assistant", "content": reply_text}])
            history_messages = len(session.messages)
        return WindowReply(
            text=reply_text, session_id=key, history_messages=history_messages, model=llm_result.model,
            prompt_id=self._prompt.prompt_id, prompt_version=self._prompt.version,
            elapsed_seconds=elapsed_seconds, prompt_tokens=llm_result.prompt_tokens,
            completion_tokens=llm_result.completion_tokens, total_tokens=llm_result.total_tokens,
            response_id=llm_result.response_id, request_messages=tuple(messages),
            context_history_messages=prepared.context_history_messages,
            removed_history_messages=prepared.removed_history_messages,
            estimated_prompt_tokens=prepared.estimated_tokens,
        )
