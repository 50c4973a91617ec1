"""`ChatService`: the support chat's scenario — sessions, history policy, summary, model call.

One rule runs through the whole class: a session changes only after a validated reply. Until then
the new user message, the new summary and the trimmed history live in local variables, so any
failure (bad input, broken history, budget, summary call, model call, empty or cut reply) leaves
the session exactly as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from threading import Lock
from time import perf_counter

from course_lib.chat_history import ChatHistoryError, PreparedHistory, SlidingWindowHistory
from course_lib.conversation_summary_service import (
    ConversationSummaryError,
    ConversationSummaryService,
)
from course_lib.llm.client import LLMClient, LLMResult, Message
from course_lib.llm.errors import LLMClientError
from course_lib.prompts.support_chat import SUPPORT_CHAT_PROMPT
from course_lib.prompts.tags import wrap_in_tag
from course_lib.prompts.template import PromptTemplate


class ChatServiceError(RuntimeError):
    """A reply could not be produced; the message says why, in Russian, for the user."""


@dataclass(frozen=True)
class ChatReply:
    """The reply and every figure the console prints about how it was produced."""

    text: str
    session_id: str
    history_messages: int
    context_history_messages: int
    removed_history_messages: int
    estimated_prompt_tokens: int
    summary_updated: bool
    has_summary: bool
    model: str
    prompt_id: str
    prompt_version: str
    elapsed_seconds: float
    prompt_tokens: int | None
    completion_tokens: int | None
    total_tokens: int | None
    response_id: str
    # Beyond the seed: what the request held and what the summary call cost.
    request_messages: tuple[Message, ...] = ()
    llm_calls: int = 1
    summary_total_tokens: int | None = None


@dataclass
class ChatSession:
    """One conversation: the recent exact messages, the summary of older ones, and their lock."""

    messages: list[Message] = field(default_factory=list)
    summary: str | None = None
    lock: Lock = field(default_factory=Lock, repr=False, compare=False)


@dataclass(frozen=True)
class SessionSnapshot:
    """A copy of a session's state, safe to read and keep."""

    session_id: str
    messages: tuple[Message, ...]
    summary: str | None


class ChatService:
    def __init__(
        self,
        llm_client: LLMClient,
        history_policy: SlidingWindowHistory,
        summary_service: ConversationSummaryService | None = None,
        prompt: PromptTemplate = SUPPORT_CHAT_PROMPT,
    ) -> None:
        """`summary_service=None` gives the plain sliding window: old turns are just not sent."""
        self._llm_client = llm_client
        self._history_policy = history_policy
        self._summary_service = summary_service
        self._prompt = prompt
        self._instruction = prompt.render()
        self._sessions: dict[str, ChatSession] = {}
        self._sessions_lock = Lock()

    @property
    def history_policy(self) -> SlidingWindowHistory:
        return self._history_policy

    @property
    def prompt(self) -> PromptTemplate:
        return self._prompt

    def reply(self, session_id: str, user_text: str) -> ChatReply:
        session_key = self._normalize_session_id(session_id)
        text = normalize_user_text(user_text)
        session = self._get_or_create_session(session_key)

        with session.lock:
            started_at = perf_counter()
            developer_message = self.build_developer_message()
            user_message = self.build_user_message(text)
            prepared = self._prepare(developer_message, session.messages, user_message, session.summary)

            new_summary = session.summary
            summary_result: LLMResult | None = None
            if prepared.removed_history_messages > 0 and self._summary_service is not None:
                new_summary, summary_result = self._summarize(session.summary, session.messages)
                try:
                    prepared = self._history_policy.prepare(
                        developer_message=developer_message,
                        history=[],
                        user_message=user_message,
                        context_messages=[self.build_summary_message(new_summary)],
                    )
                except ChatHistoryError as error:
                    raise ChatServiceError(f"Новое summary не помещается в бюджет: {error}") from error

            llm_result = self._generate(prepared.messages)
            reply_text = validate_reply(llm_result)
            elapsed_seconds = perf_counter() - started_at

            # The only place the session changes: after a validated reply.
            assistant_message: Message = {"role": "assistant", "content": reply_text}
            summary_updated = summary_result is not None
            if summary_updated:
                session.summary = new_summary
                session.messages = [user_message, assistant_message]
            else:
                session.messages.extend([user_message, assistant_message])
            history_messages = len(session.messages)
            has_summary = session.summary is not None

        return ChatReply(
            text=reply_text,
            session_id=session_key,
            history_messages=history_messages,
            context_history_messages=prepared.context_history_messages,
            removed_history_messages=prepared.removed_history_messages,
            estimated_prompt_tokens=prepared.estimated_tokens,
            summary_updated=summary_updated,
            has_summary=has_summary,
            model=llm_result.model,
            prompt_id=self._prompt.prompt_id,
            prompt_version=self._prompt.version,
            elapsed_seconds=elapsed_seconds,
            prompt_tokens=llm_result.prompt_tokens,
            completion_tokens=llm_result.completion_tokens,
            total_tokens=llm_result.total_tokens,
            response_id=llm_result.response_id,
            request_messages=tuple(prepared.messages),
            llm_calls=2 if summary_updated else 1,
            summary_total_tokens=summary_result.total_tokens if summary_result else None,
        )

    def preview(self, session_id: str, user_text: str, policy: SlidingWindowHistory | None = None) -> PreparedHistory:
        """The request `reply()` would start from, without calling the model or changing anything."""
        session_key = self._normalize_session_id(session_id)
        text = normalize_user_text(user_text)
        snapshot = self.get_session(session_key)
        context = [] if snapshot.summary is None else [self.build_summary_message(snapshot.summary)]
        try:
            return (policy or self._history_policy).prepare(
                developer_message=self.build_developer_message(),
                history=list(snapshot.messages),
                user_message=self.build_user_message(text),
                context_messages=context,
            )
        except ChatHistoryError as error:
            raise ChatServiceError(f"Не удалось подготовить историю: {error}") from error

    def reset_session(self, session_id: str) -> None:
        """Forget a conversation: both its exact messages and its summary (the console's /new)."""
        session_key = self._normalize_session_id(session_id)
        with self._sessions_lock:
            session = self._sessions.get(session_key)
        if session is None:
            return
        with session.lock:
            session.messages = []
            session.summary = None

    def get_session(self, session_id: str) -> SessionSnapshot:
        """A copy of the session's state (empty for an unknown id); never the live objects."""
        session_key = self._normalize_session_id(session_id)
        with self._sessions_lock:
            session = self._sessions.get(session_key)
        if session is None:
            return SessionSnapshot(session_key, (), None)
        with session.lock:
            messages = tuple(dict(message) for message in session.messages)
            return SessionSnapshot(session_key, messages, session.summary)  # type: ignore[arg-type]

    def session_ids(self) -> tuple[str, ...]:
        with self._sessions_lock:
            return tuple(self._sessions)

    def build_developer_message(self) -> Message:
        return {"role": "developer", "content": self._instruction}

    @staticmethod
    def build_user_message(user_text: str) -> Message:
        return {"role": "user", "content": wrap_in_tag("customer_message", user_text)}

    @staticmethod
    def build_summary_message(summary: str) -> Message:
        """The summary travels as user-role data in tags — never as an instruction."""
        return {"role": "user", "content": wrap_in_tag("conversation_summary", summary)}

    def _prepare(
        self,
        developer_message: Message,
        history: list[Message],
        user_message: Message,
        summary: str | None,
    ) -> PreparedHistory:
        context = [] if summary is None else [self.build_summary_message(summary)]
        try:
            return self._history_policy.prepare(
                developer_message=developer_message,
                history=history,
                user_message=user_message,
                context_messages=context,
            )
        except ChatHistoryError as error:
            raise ChatServiceError(f"Не удалось подготовить историю: {error}") from error

    def _summarize(self, previous: str | None, messages: list[Message]) -> tuple[str, LLMResult]:
        assert self._summary_service is not None
        try:
            result = self._summary_service.summarize_detailed(previous, messages)
        except ConversationSummaryError as error:
            raise ChatServiceError(f"Не удалось сократить историю: {error}") from error
        return result.text, result.llm_result

    def _generate(self, messages: list[Message]) -> LLMResult:
        try:
            return self._llm_client.generate(messages)
        except LLMClientError as error:
            raise ChatServiceError(f"Не удалось получить ответ модели: {error}") from error

    def _get_or_create_session(self, session_key: str) -> ChatSession:
        with self._sessions_lock:
            session = self._sessions.get(session_key)
            if session is None:
                session = ChatSession()
                self._sessions[session_key] = session
            return session

    @staticmethod
    def _normalize_session_id(session_id: str) -> str:
        if not isinstance(session_id, str):
            raise ChatServiceError("Session ID должен быть строкой.")
        session_key = session_id.strip()
        if not session_key:
            raise ChatServiceError("Session ID не должен быть пустым.")
        return session_key


def normalize_user_text(user_text: str, error: type[Exception] = ChatServiceError) -> str:
    """The customer's text without surrounding whitespace; `error` if it is not a non-empty string."""
    if not isinstance(user_text, str):
        raise error("Сообщение должно быть строкой.")
    text = user_text.strip()
    if not text:
        raise error("Сообщение не должно быть пустым.")
    return text


def validate_reply(result: LLMResult, error: type[Exception] = ChatServiceError) -> str:
    """The reply's text if the model finished normally and said something; else `error`."""
    if result.finish_reason == "length":
        raise error("Ответ остановлен из-за ограничения длины.")
    if result.finish_reason != "stop":
        raise error(f"Модель не вернула готовый ответ. Причина завершения: {result.finish_reason}.")
    if result.text is None:
        raise error("Модель не вернула текст ответа.")
    cleaned = result.text.strip()
    if not cleaned:
        raise error("Модель вернула пустой ответ.")
    return cleaned
