"""Stage 4 of the course (notebook 04): the window built from the student's exercises, and the
service from 03 with a window.

Notebook 04 shows these classes in its cells; `tests/test_steps_match_notebooks.py` keeps the
notebook's source and this module's source identical, so notebook 05 can import them from here.

`ExerciseWindow` composes three exercise functions — `count_message_tokens`, `split_into_turns`,
`select_recent_turns` — taken through `course_lib.your_code`: the student's code once it passes its
public cases, the course's version until then. It returns `course_lib.chat_history.PreparedHistory`
with the same figures as `SlidingWindowHistory`, so `ChatService` and the widgets run on it. It
does not apply the provider's token correction (`token_factor`): the library does.

The only change to `SessionChatService.reply()` is one step between building the messages and
calling the model: the history policy's `prepare()` picks the newest whole turns that fit the
budget. The store (`self._histories`, 03's `SessionHistory`) still keeps every message; only the
request is trimmed.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter

from collections.abc import Sequence

from course_lib.chat_history import ChatHistoryError, PreparedHistory, SlidingWindowHistory
from course_lib.llm.client import LLMClient, Message
from course_lib.llm.errors import LLMClientError
from course_lib.prompts.tags import neutralize_tags
from course_lib.prompts.template import PromptTemplate
from course_lib.russian import tokens
from course_lib.steps.common import ChatServiceError, validate_reply
from course_lib.steps.sessions import SessionChatService, SessionReply, normalize_session_id
from course_lib.steps.single_history import CHAT_PROMPT
from course_lib.token_calibration import demo_budget as calibrated_demo_budget
from course_lib.tokenizer import REPLY_PRIMER_TOKENS, TokenCounter
from course_lib.your_code import on_each_call

OFFLINE_DEMO_BUDGET = 300  # notebooks 04/05: small enough that the window works after a few turns

# Chosen again on every call (the student's file may change meanwhile).
# In the notebook each of these is one line: `split_into_turns = your_code("split_into_turns")`.
count_message_tokens = on_each_call("count_message_tokens")
split_into_turns = on_each_call("split_into_turns")
select_recent_turns = on_each_call("select_recent_turns")
build_chat_messages = on_each_call("build_chat_messages")  # 02's exercise, as in the notebook


def demo_budget(llm_client: LLMClient, token_counter: TokenCounter, instruction: Message,
                offline_budget: int = OFFLINE_DEMO_BUDGET) -> int:
    """A lesson's small budget, scaled to how the active model counts the instruction.

    The offline model and OpenAI's models count like `token_counter`: `offline_budget` as is. A
    server with another tokenizer (llama.cpp, Ollama) counts the same instruction as more tokens;
    the budget grows by the same ratio, so the instruction does not eat it and not every turn
    compresses.
    """
    # One home for the scaling: course_lib.token_calibration (token_counter stays for the signature).
    return calibrated_demo_budget(llm_client, offline_budget, instruction["content"])


def turns_that_fit(turn_costs: list[int], room: int) -> int:
    # Newest first: take a turn while it fits; the first that does not fit ends the window (no gaps).
    kept = 0
    for cost in reversed(turn_costs):
        if cost > room:
            break
        room -= cost
        kept += 1
    return kept


def window_gaps(history: Sequence[Message], request_messages: Sequence[Message]) -> list[int]:
    """Turn numbers (from 1) left out of the request although an older turn went in: a gap."""
    sent = [history[i] in request_messages and history[i + 1] in request_messages
            for i in range(0, len(history) - 1, 2)]
    if True not in sent:
        return []
    oldest_sent = sent.index(True)
    return [number for number, went in enumerate(sent, start=1) if number > oldest_sent and not went]


class ExerciseWindow:
    """The sliding window from three exercises; the same figures as SlidingWindowHistory."""

    def __init__(self, token_counter: TokenCounter, input_token_budget: int) -> None:
        if input_token_budget <= 0:
            raise ValueError("Бюджет входных токенов должен быть больше нуля.")
        self.token_counter, self.input_token_budget = token_counter, input_token_budget

    def with_budget(self, input_token_budget: int) -> "ExerciseWindow":
        return ExerciseWindow(self.token_counter, input_token_budget)  # for the widget's budget slider

    def prepare(self, developer_message: Message, history: Sequence[Message], user_message: Message,
                context_messages: Sequence[Message] | None = None, *, token_factor: float = 1.0) -> PreparedHistory:
        # token_factor: the provider's correction; ChatService passes it, this window does not apply it.
        count_text = self.token_counter.count_text
        required = [developer_message, *(context_messages or []), user_message]
        room = self.input_token_budget - count_message_tokens(required, count_text)
        if room < 0:
            needed = self.input_token_budget - room
            raise ChatHistoryError(f"Инструкция и новое сообщение (со сводкой, если она есть) не помещаются: нужно "
                                   f"{tokens(needed)}, бюджет {self.input_token_budget}.")
        try:
            turns = split_into_turns(list(history))
            costs = [count_message_tokens(turn, count_text) - REPLY_PRIMER_TOKENS for turn in turns]
            selected = select_recent_turns(turns, costs, room)
        except ValueError as error:  # the exercises' ChatHistoryError is a ValueError
            raise ChatHistoryError(str(error)) from error
        messages = [*required[:-1], *selected, user_message]
        return PreparedHistory(messages, count_message_tokens(messages, count_text),
                               len(selected), len(history) - len(selected))


@dataclass(frozen=True, kw_only=True)
class WindowReply(SessionReply):
    """SessionReply from notebook 03 plus how the window built this request."""

    context_history_messages: int  # history messages that went into the request
    removed_history_messages: int  # history messages that did not
    estimated_prompt_tokens: int  # our estimate of the request before sending it


class WindowChatService(SessionChatService):
    """Stage 4: the store keeps every message; the request gets only the window."""

    def __init__(
        self, llm_client: LLMClient, history_policy: ExerciseWindow | SlidingWindowHistory,
        prompt: PromptTemplate = CHAT_PROMPT,
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
            history = self._histories.get_messages(key)
            messages = build_chat_messages(self._prompt.render(), history, neutralize_tags(text))
            try:  # new: of the history between the instruction and the new message, the window keeps what fits
                prepared = self._history_policy.prepare(messages[0], history, messages[-1])
            except ChatHistoryError as error:
                raise ChatServiceError(f"Не удалось подготовить историю: {error}") from error
            messages = prepared.messages  # new

            started_at = perf_counter()
            try:
                llm_result = self._llm_client.generate(messages)
            except LLMClientError as error:
                raise ChatServiceError(f"Не удалось получить ответ модели: {error}") from error
            elapsed_seconds = perf_counter() - started_at
            reply_text = validate_reply(llm_result)

            # The only place the store changes: after a validated reply, the whole turn at once.
            self._histories.add_turn(key, messages[-1]["content"], reply_text)
            history_messages = len(self._histories.get_messages(key))
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
