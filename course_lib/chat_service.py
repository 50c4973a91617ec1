"""`ChatService`: the support chat's scenario — sessions, history policy, summary, model call.

One rule runs through the whole class: a session changes only after a validated reply. Until then
the new user message, the new summary and the trimmed history live in local variables, so any
failure (bad input, broken history, budget, summary call, model call, empty or cut reply) leaves
the session exactly as it was.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from threading import Lock
from time import monotonic, perf_counter

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
    summary_elapsed_seconds: float | None = None
    """The part of `elapsed_seconds` spent on the summary call (None when there was none)."""
    summarized_messages: int = 0
    """How many history messages were folded into the summary this turn."""


@dataclass
class ChatSession:
    """One conversation: the recent exact messages, the summary of older ones, and their lock."""

    messages: list[Message] = field(default_factory=list)
    summary: str | None = None
    lock: Lock = field(default_factory=Lock, repr=False, compare=False)
    last_used: float = field(default=0.0, repr=False, compare=False)

    def is_empty(self) -> bool:
        return not self.messages and self.summary is None


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
        *,
        keep_recent_turns: int = 0,
        session_ttl_seconds: float | None = None,
        clock: Callable[[], float] = monotonic,
    ) -> None:
        """`summary_service=None` gives the plain sliding window: old turns are just not sent.

        `keep_recent_turns=K`: on a compression, the K newest whole turns that were in the window
        stay verbatim and only the older ones are summarized. K = 0 is the seed's design: the
        request after a compression is instruction + summary + new message.
        `session_ttl_seconds`: sessions idle for longer are forgotten (None: kept for ever, which
        in a long-running server is a memory leak). `clock` is injectable for lessons and tests.
        """
        if isinstance(keep_recent_turns, bool) or not isinstance(keep_recent_turns, int):
            raise TypeError("keep_recent_turns должен быть целым числом.")
        if keep_recent_turns < 0:
            raise ValueError("keep_recent_turns не может быть отрицательным.")
        if session_ttl_seconds is not None and not session_ttl_seconds > 0:
            raise ValueError("Время жизни сессии должно быть больше нуля (или None — без ограничения).")
        self._llm_client = llm_client
        self._history_policy = history_policy
        self._summary_service = summary_service
        self._prompt = prompt
        self._instruction = prompt.render()
        self._keep_recent_turns = keep_recent_turns
        self._session_ttl_seconds = session_ttl_seconds
        self._clock = clock
        # Ordered by last use, oldest first: expiry looks only at the front (amortized O(1)).
        self._sessions: OrderedDict[str, ChatSession] = OrderedDict()
        self._sessions_lock = Lock()

    @property
    def keep_recent_turns(self) -> int:
        return self._keep_recent_turns

    @property
    def session_ttl_seconds(self) -> float | None:
        return self._session_ttl_seconds

    @property
    def history_policy(self) -> SlidingWindowHistory:
        return self._history_policy

    @property
    def prompt(self) -> PromptTemplate:
        return self._prompt

    def reply(self, session_id: str, user_text: str) -> ChatReply:
        session_key = self._normalize_session_id(session_id)
        text = normalize_user_text(user_text)
        session, created = self._get_or_create_session(session_key)
        try:
            return self._reply_in_session(session_key, session, text)
        except BaseException:
            if created:
                self._forget_if_unused(session_key, session)
            raise

    def _reply_in_session(self, session_key: str, session: ChatSession, text: str) -> ChatReply:
        with session.lock:
            started_at = perf_counter()
            developer_message = self.build_developer_message()
            user_message = self.build_user_message(text)
            prepared = self._prepare(developer_message, session.messages, user_message, session.summary)

            new_summary = session.summary
            summary_result: LLMResult | None = None
            summary_elapsed: float | None = None
            kept_history = session.messages
            summarized = 0
            if prepared.removed_history_messages > 0 and self._summary_service is not None:
                # Keep up to K of the turns the window still had; fold everything older.
                recent_turns = min(self._keep_recent_turns, prepared.context_history_messages // 2)
                split = len(session.messages) - 2 * recent_turns
                to_summarize, kept_history = session.messages[:split], session.messages[split:]
                summary_started = perf_counter()
                new_summary, summary_result = self._summarize(session.summary, to_summarize)
                summary_elapsed = perf_counter() - summary_started
                summarized = len(to_summarize)
                try:
                    prepared = self._history_policy.prepare(
                        developer_message=developer_message,
                        history=kept_history,
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
                session.messages = [*kept_history, user_message, assistant_message]
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
            summary_elapsed_seconds=summary_elapsed,
            summarized_messages=summarized,
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
        self._forget_if_unused(session_key, session)

    def get_session(self, session_id: str) -> SessionSnapshot:
        """A copy of the session's state (empty for an unknown id); never the live objects."""
        session_key = self._normalize_session_id(session_id)
        with self._sessions_lock:
            self._expire_idle_locked()
            session = self._sessions.get(session_key)
        if session is None:
            return SessionSnapshot(session_key, (), None)
        with session.lock:
            messages = tuple(dict(message) for message in session.messages)
            return SessionSnapshot(session_key, messages, session.summary)  # type: ignore[arg-type]

    def session_ids(self) -> tuple[str, ...]:
        """Ids of the live sessions, least recently used first."""
        with self._sessions_lock:
            self._expire_idle_locked()
            return tuple(self._sessions)

    def expire_idle_sessions(self) -> int:
        """Forget sessions idle for longer than the TTL now; return how many were removed.

        `reply()` does this on every call anyway; a server may also call it from a timer.
        """
        with self._sessions_lock:
            return self._expire_idle_locked()

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

    def _get_or_create_session(self, session_key: str) -> tuple[ChatSession, bool]:
        with self._sessions_lock:
            self._expire_idle_locked()
            session = self._sessions.get(session_key)
            created = session is None
            if session is None:
                session = ChatSession()
                self._sessions[session_key] = session
            session.last_used = self._clock()
            self._sessions.move_to_end(session_key)
            return session, created

    def _expire_idle_locked(self) -> int:
        """Drop idle sessions from the front of the LRU order; the caller holds the registry lock."""
        if self._session_ttl_seconds is None:
            return 0
        deadline = self._clock() - self._session_ttl_seconds
        expired = []
        for key, session in self._sessions.items():
            if session.last_used > deadline:
                break  # everything after this one was used even later
            if not session.lock.locked():  # a reply in progress keeps its session
                expired.append(key)
        for key in expired:
            del self._sessions[key]
        return len(expired)

    def _forget_if_unused(self, session_key: str, session: ChatSession) -> None:
        """Remove an empty session from the registry (a failed first call, a reset) — no leak."""
        with self._sessions_lock:
            if self._sessions.get(session_key) is session and session.is_empty():
                del self._sessions[session_key]

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
