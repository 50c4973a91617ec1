"""Stage 5 of the course (notebook 05): the window from 04 plus a summary of the turns that leave it.

Notebook 05 shows these functions and classes in its cells; `tests/test_steps_match_notebooks.py`
keeps the notebook's source and this module's source identical, so later notebooks can import them.

`HistorySummarizer` builds the summary request's data with the exercise `build_summary_source`
(taken through `course_lib.your_code`: the student's code once it passes its public cases, the
course's version until then) and has `summarize_detailed()`, so `ChatService` can use it in place of
`ConversationSummaryService`. `plan_request` lets the exercise `plan_compression` decide, from what the
window kept, which stored messages fold into the new summary and which stay exact. `commit_state` is the notebook's fill-in cell (this is the course's
version of it): what the session holds after a validated reply. The summary lives in the
`SummarySession`, the exact messages in the store from 03 (`self._histories`); `replace_history`
writes a compressed history back, since `SessionHistory` has no "replace".
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter

from course_lib.chat_history import ChatHistoryError, PreparedHistory, split_into_turns
from course_lib.conversation_summary_service import ConversationSummaryError, SummaryResult, cap_summary
from course_lib.messages import Message
from course_lib.llm.errors import LLMClientError
from course_lib.prompts.chat_history_summary import CHAT_HISTORY_SUMMARY_PROMPT
from course_lib.prompts.support_chat import get_support_chat_prompt
from course_lib.prompts.tags import neutralize_tags, unwrap_tag, wrap_in_tag
from course_lib.steps.common import ChatServiceError, validate_reply
from course_lib.steps.sessions import ChatSession, normalize_session_id
from course_lib.steps.window import WindowChatService, WindowReply
from course_lib.your_code import on_each_call

# In the notebook each of these is one line: `build_summary_source = your_code("build_summary_source")`.
build_summary_source = on_each_call("build_summary_source")
plan_compression = on_each_call("plan_compression")  # what to fold into the summary, what stays exact
build_chat_messages = on_each_call("build_chat_messages")  # 02's exercise, as in the notebook

SUMMARY_CHAT_PROMPT = get_support_chat_prompt("1.1.0")  # the chat prompt that explains <conversation_summary>


def summary_source(previous_summary: str | None, messages: list[Message]) -> str:
    # The transcript names the speakers, so the <customer_message> wrapper comes off; neutralize_tags
    # keeps a stored text from closing the data blocks early (section 12).
    plain = [{"role": m["role"], "content": neutralize_tags(unwrap_tag("customer_message", m["content"]))}
             for m in messages]
    return build_summary_source(previous_summary and neutralize_tags(previous_summary), plain)


class HistorySummarizer:
    # Our ConversationSummaryService: its own prompt, one model call, checks on the answer.

    def __init__(self, llm_client, *, model: str | None = None, max_summary_chars: int = 600) -> None:
        self._llm_client = llm_client
        self.model = model  # None: the chat's own model
        self.max_summary_chars = max_summary_chars
        self.instruction = CHAT_HISTORY_SUMMARY_PROMPT.render(max_summary_chars=max_summary_chars)

    def summarize(self, previous_summary: str | None, messages: list[Message]) -> str:
        return self.summarize_detailed(previous_summary, messages).text

    def summarize_detailed(self, previous_summary: str | None, messages: list[Message]) -> SummaryResult:
        if not messages:
            raise ConversationSummaryError("Нет сообщений для сводки.")
        try:
            source = summary_source(previous_summary, messages)
        except (TypeError, ValueError) as error:  # build_summary_source rejects broken data
            raise ConversationSummaryError(f"Данные для сводки не собраны: {error}") from error
        request = [{"role": "developer", "content": self.instruction}, {"role": "user", "content": source}]
        try:
            result = self._llm_client.generate(request, model=self.model)
        except LLMClientError as error:
            raise ConversationSummaryError(f"Не удалось создать сводку: {error}") from error
        if result.finish_reason != "stop":
            raise ConversationSummaryError(f"Сводка не готова: finish_reason={result.finish_reason}.")
        text = (result.text or "").strip()
        if not text:
            raise ConversationSummaryError("Модель вернула пустую сводку.")
        capped = cap_summary(text, self.max_summary_chars)  # the prompt asks for the cap, the code keeps it
        return SummaryResult(text=capped, llm_result=result, truncated=capped != text)


@dataclass
class SummarySession(ChatSession):
    # ChatSession from notebook 03 plus the summary of the turns that left it.
    summary: str | None = None  # new


@dataclass(frozen=True, kw_only=True)
class SummaryReply(WindowReply):
    # WindowReply from notebook 04 plus what the summary did on this turn.
    summary_updated: bool  # was a new summary made on this turn?
    has_summary: bool  # does the session have one now?
    summarized_messages: int  # stored messages folded into the summary on this turn
    summary_elapsed_seconds: float | None  # the part of elapsed_seconds the summary call took


def summary_message(summary: str) -> Message:
    # The summary is data about the conversation: a user message in tags, never an instruction.
    return {"role": "user", "content": wrap_in_tag("conversation_summary", summary)}


@dataclass(frozen=True)
class RequestPlan:
    prepared: PreparedHistory  # the request to send
    summary: str | None  # the session's summary if the reply succeeds
    kept: list[Message]  # stored messages that stay exact
    summarized: int  # stored messages folded into the new summary (0: no compression)
    summary_seconds: float | None  # how long the summary call took


def plan_request(policy, summarizer, keep_recent_turns, developer, summary, history, user_message) -> RequestPlan:
    # Try the window first; plan_compression decides from what it kept what to fold into a new summary.
    context = [] if summary is None else [summary_message(summary)]
    prepared = policy.prepare(developer, history, user_message, context_messages=context)
    plan = plan_compression(history, prepared.context_history_messages, keep_recent_turns)
    if plan is None:
        return RequestPlan(prepared, summary, history, 0, None)  # the window dropped nothing: no extra model call
    older, kept = plan["fold"], plan["keep"]  # K = 0: everything is older
    started_at = perf_counter()
    new_summary = summarizer.summarize(summary, older)
    summary_seconds = perf_counter() - started_at
    prepared = policy.prepare(developer, kept, user_message, context_messages=[summary_message(new_summary)])
    return RequestPlan(prepared, new_summary, kept, len(older), summary_seconds)


def commit_state(plan: RequestPlan, user_message: Message, reply_text: str) -> tuple[str | None, list[Message]]:
    # After a validated reply: the plan's summary, and the exact messages it kept plus this turn.
    return plan.summary, [*plan.kept, user_message, {"role": "assistant", "content": reply_text}]


def replace_history(histories, key: str, messages: list[Message]) -> None:
    # SessionHistory has no "replace": reset, then add the kept turns again in order. The turns are
    # checked before the reset, so a broken list leaves the store as it was.
    turns = split_into_turns(messages)
    histories.reset(key)
    for user, assistant in turns:
        histories.add_turn(key, user["content"], assistant["content"])


class SummaryChatService(WindowChatService):
    # Stage 5: the window from notebook 04 plus a summary of the turns that leave it.

    def __init__(self, llm_client, history_policy, summarizer, prompt=SUMMARY_CHAT_PROMPT, *,
                 keep_recent_turns: int = 0) -> None:
        super().__init__(llm_client, history_policy, prompt)
        self._summarizer = summarizer  # new: writes summaries (its own prompt, maybe its own model)
        self._keep_recent_turns = keep_recent_turns  # new: K turns stay exact after a compression

    def _get_or_create_session(self, key: str) -> SummarySession:
        with self._sessions_lock:
            if key not in self._sessions:
                self._sessions[key] = SummarySession()  # new: a session with a summary
            return self._sessions[key]

    def summary_of(self, session_id: str) -> str | None:
        session = self._find_session(normalize_session_id(session_id))
        with session.lock:
            return getattr(session, "summary", None)

    def reset_session(self, session_id: str) -> None:
        # /new: forget the exact messages AND the summary, or the old context would leak in.
        key = normalize_session_id(session_id)
        session = self._find_session(key)
        with session.lock:
            self._histories.reset(key)
            session.summary = None

    def reply(self, session_id: str, user_text: str) -> SummaryReply:
        key = normalize_session_id(session_id)
        text = user_text.strip()
        if not text:
            raise ChatServiceError("Сообщение не должно быть пустым.")
        session = self._get_or_create_session(key)
        with session.lock:  # guards the stored messages AND the summary as one state
            history = self._histories.get_messages(key)
            messages = build_chat_messages(self._prompt.render(), history, neutralize_tags(text))
            started_at = perf_counter()
            try:  # new: the window first, a summary only if it dropped history
                plan = plan_request(self._history_policy, self._summarizer, self._keep_recent_turns,
                                    messages[0], session.summary, history, messages[-1])
                llm_result = self._llm_client.generate(plan.prepared.messages)
            except (ChatHistoryError, ConversationSummaryError, LLMClientError) as error:
                raise ChatServiceError(f"Не удалось ответить: {error}") from error
            elapsed_seconds = perf_counter() - started_at
            reply_text = validate_reply(llm_result)

            # The only place the session changes: after a validated reply, summary and turn together.
            summary, new_history = commit_state(plan, messages[-1], reply_text)
            if plan.summarized:  # the older turns went into the summary: the store keeps the rest
                replace_history(self._histories, key, new_history)
            else:
                self._histories.add_turn(key, messages[-1]["content"], reply_text)
            session.summary = summary
            history_messages = len(self._histories.get_messages(key))
        prepared = plan.prepared
        return SummaryReply(
            text=reply_text, session_id=key, history_messages=history_messages, model=llm_result.model,
            prompt_id=self._prompt.prompt_id, prompt_version=self._prompt.version,
            elapsed_seconds=elapsed_seconds, prompt_tokens=llm_result.prompt_tokens,
            completion_tokens=llm_result.completion_tokens, total_tokens=llm_result.total_tokens,
            response_id=llm_result.response_id, request_messages=tuple(prepared.messages),
            context_history_messages=prepared.context_history_messages,
            removed_history_messages=prepared.removed_history_messages,
            estimated_prompt_tokens=prepared.estimated_tokens,
            summary_updated=plan.summarized > 0, has_summary=plan.summary is not None,
            summarized_messages=plan.summarized, summary_elapsed_seconds=plan.summary_seconds,
        )
