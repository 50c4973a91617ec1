"""Stage 2 of the course (notebook 02): `SingleHistoryChatService`, one history for the whole service.

Notebook 02 shows these classes in its cells; `tests/test_steps_match_notebooks.py` keeps the
notebook's source and this module's source identical, so later notebooks can import them from here.
`build_chat_messages`, `commit_turn` and `validate_history` (the check of the stored history before
a request is built) are the student's exercises here too, taken through `course_lib.your_code` (the
student's code once it passes its public cases, the course's version until then), exactly as in the
notebook. `save_validated_turn` is the student's fill-in cell in 02; this module holds the course's
lines of it, and they commit with the student's `commit_turn`: a fill-in left empty never takes the
student's solved exercise out of the chat.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter

from course_lib.llm.client import LLMClient, LLMResult, Message
from course_lib.llm.errors import LLMClientError
from course_lib.prompts.support_chat import get_support_chat_prompt
from course_lib.prompts.tags import neutralize_tags
from course_lib.prompts.template import PromptTemplate
from course_lib.steps.common import ChatReply, ChatServiceError, validate_reply
from course_lib.your_code import on_each_call

# In the notebook each is one line: `commit_turn = your_code("commit_turn")`; chosen again on every call.
build_chat_messages = on_each_call("build_chat_messages")
commit_turn = on_each_call("commit_turn")
validate_history = on_each_call("validate_history")

CHAT_PROMPT = get_support_chat_prompt("1.0.0")  # the plain chat prompt of notebooks 01-04


@dataclass(frozen=True, kw_only=True)
class HistoryReply(ChatReply):
    """ChatReply from notebook 01 plus one figure: the history's size after this turn."""

    history_messages: int


def save_validated_turn(history: list[Message], user_content: str, llm_result: LLMResult) -> tuple[str, int]:
    """Check the reply first, then save the whole turn: (reply text, messages in the history now)."""
    reply_text = validate_reply(llm_result)  # a bad reply raises here, before the history changes
    history_messages = commit_turn(history, user_content, reply_text)
    return reply_text, history_messages


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
        try:  # a broken history is not sent: the customer gets a clear error, the model gets nothing
            validate_history(self._history)
        except (TypeError, ValueError) as error:
            raise ChatServiceError(f"История повреждена, запрос не отправлен. {error}") from None
        messages = build_chat_messages(self._prompt.render(), self._history, neutralize_tags(text))

        started_at = perf_counter()
        try:
            llm_result = self._llm_client.generate(messages)
        except LLMClientError as error:
            raise ChatServiceError(f"Не удалось получить ответ модели: {error}") from error
        elapsed_seconds = perf_counter() - started_at

        # The only place the history changes: after a validated reply, the whole turn at once.
        reply_text, history_messages = save_validated_turn(self._history, messages[-1]["content"], llm_result)
        return HistoryReply(
            text=reply_text, history_messages=history_messages, model=llm_result.model,
            prompt_id=self._prompt.prompt_id, prompt_version=self._prompt.version,
            elapsed_seconds=elapsed_seconds, prompt_tokens=llm_result.prompt_tokens,
            completion_tokens=llm_result.completion_tokens, total_tokens=llm_result.total_tokens,
            response_id=llm_result.response_id, request_messages=tuple(messages),
        )
