"""Stage 3 of the course (notebook 03): `SessionChatService`, one history per Session ID.

Notebook 03 shows these classes in its cells; `tests/test_steps_match_notebooks.py` keeps the
notebook's source and this module's source identical, so later notebooks can import them from here.
Two locks: the registry lock makes "find or create a session" one step, the session lock orders the
turns of one conversation (read history → call the model → save the turn) without holding up others.
In the notebook, `build_chat_messages` and `commit_turn` are the student's exercises (through
`course_lib.your_code`) and `get_or_create_session` is the student's fill-in cell; this module runs the
course's versions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from threading import Lock
from time import perf_counter

from course_lib.course_versions.build_chat_messages import build_chat_messages
from course_lib.course_versions.commit_turn import commit_turn
from course_lib.llm.client import LLMClient, Message
from course_lib.llm.errors import LLMClientError
from course_lib.prompts.tags import neutralize_tags
from course_lib.prompts.template import PromptTemplate
from course_lib.steps.common import ChatServiceError, validate_reply
from course_lib.steps.single_history import CHAT_PROMPT, HistoryReply


@dataclass
class ChatSession:
    """One conversation: its exact messages and the lock that orders its turns."""

    messages: list[Message] = field(default_factory=list)
    lock: Lock = field(default_factory=Lock, repr=False, compare=False)


@dataclass(frozen=True, kw_only=True)
class SessionReply(HistoryReply):
    """HistoryReply from notebook 02 plus the Session ID the turn belongs to."""

    session_id: str


def normalize_session_id(session_id: str) -> str:
    key = session_id.strip()
    if not key:
        raise ChatServiceError("Session ID не должен быть пустым.")
    return key


def get_or_create_session(sessions: dict[str, ChatSession], key: str) -> ChatSession:
    """The session stored under `key`; a new empty one, stored first, when there is none yet."""
    if key not in sessions:
        sessions[key] = ChatSession()
    return sessions[key]


class SessionRegistry:
    """dict[session_id, ChatSession] plus the lock that guards the dict itself."""

    def __init__(self) -> None:
        self._sessions: dict[str, ChatSession] = {}
        self._sessions_lock = Lock()

    def _get_or_create_session(self, key: str) -> ChatSession:
        with self._sessions_lock:  # "check, then create" must be one step
            return get_or_create_session(self._sessions, key)

    def _find_session(self, session_id: str) -> ChatSession:
        with self._sessions_lock:  # an unknown id gets a throwaway empty session
            return self._sessions.get(normalize_session_id(session_id)) or ChatSession()

    def reset_session(self, session_id: str) -> None:
        """/new: clear this conversation only."""
        session = self._find_session(session_id)
        with session.lock:  # never in the middle of a turn
            session.messages.clear()

    def history_of(self, session_id: str) -> list[Message]:
        """A copy of the stored history: changing it changes nothing in the service."""
        session = self._find_session(session_id)
        with session.lock:
            return [dict(message) for message in session.messages]


class SessionChatService(SessionRegistry):
    """Stage 3: a history per Session ID; a turn runs under its own session's lock."""

    def __init__(self, llm_client: LLMClient, prompt: PromptTemplate = CHAT_PROMPT) -> None:
        super().__init__()
        self._llm_client = llm_client
        self._prompt = prompt

    def reply(self, session_id: str, user_text: str) -> SessionReply:
        key = normalize_session_id(session_id)
        text = user_text.strip()
        if not text:
            raise ChatServiceError("Сообщение не должно быть пустым.")
        session = self._get_or_create_session(key)
        with session.lock:  # one turn of this conversation at a time
            messages = build_chat_messages(self._prompt.render(), session.messages, neutralize_tags(text))

            started_at = perf_counter()
            try:
                llm_result = self._llm_client.generate(messages)
            except LLMClientError as error:
                raise ChatServiceError(f"Не удалось получить ответ модели: {error}") from error
            elapsed_seconds = perf_counter() - started_at
            reply_text = validate_reply(llm_result)

            # The only place the session changes: after a validated reply, the whole turn at once.
            history_messages = commit_turn(session.messages, messages[-1]["content"], reply_text)
        return SessionReply(
            text=reply_text, session_id=key, history_messages=history_messages, model=llm_result.model,
            prompt_id=self._prompt.prompt_id, prompt_version=self._prompt.version,
            elapsed_seconds=elapsed_seconds, prompt_tokens=llm_result.prompt_tokens,
            completion_tokens=llm_result.completion_tokens, total_tokens=llm_result.total_tokens,
            response_id=llm_result.response_id, request_messages=tuple(messages),
        )
