"""Stage 3 of the course (notebook 03): `SessionChatService`, one history per Session ID.

Notebook 03 shows these classes in its cells; `tests/test_steps_match_notebooks.py` keeps the
notebook's source and this module's source identical, so later notebooks can import them from here.
The messages of every session live in one `SessionHistory` (03's exercise), `self._histories`; a
`ChatSession` holds what a session needs besides its messages (its lock; 05 adds the summary).
Two locks: the registry lock makes "find or create a session" one step, the session lock orders the
turns of one conversation (read history → call the model → save the turn) without holding up others.
The lock is not inside `SessionHistory`: the store keeps data, ordering a conversation's turns is the
service's job, and one lock must span the whole turn, model call included.
`SessionHistory` is the student's class here too (through `course_lib.your_code`: theirs once it
passes its public cases, the course's version until then), so 04's and 05's services, which inherit
this registry, keep history in it. `build_chat_messages` (02's exercise) is the student's here too, as
in the notebook. `get_or_create_session` is the student's fill-in cell in 03; this module holds the
course's lines of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from threading import Lock
from time import perf_counter

from course_lib.llm.client import LLMClient, Message
from course_lib.llm.errors import LLMClientError
from course_lib.prompts.tags import neutralize_tags
from course_lib.prompts.template import PromptTemplate
from course_lib.steps.common import ChatServiceError, validate_reply
from course_lib.steps.single_history import CHAT_PROMPT, HistoryReply
from course_lib.your_code import on_each_call

# In the notebook this is one line: `SessionHistory = your_code("SessionHistory")`. Notebooks 04 and 05
# inherit the registry from here, so their services keep history in the student's class too.
SessionHistory = on_each_call("SessionHistory")
build_chat_messages = on_each_call("build_chat_messages")  # 02's exercise, as in the notebook
validate_history = on_each_call("validate_history")  # 02's too: a broken history is never sent


@dataclass
class ChatSession:
    """One conversation's lock, which orders its turns; its messages live in SessionHistory."""

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
    """The store of every session's messages, dict[session_id, ChatSession], and the dict's own lock."""

    def __init__(self) -> None:
        self._histories = SessionHistory()  # the messages of every session
        self._sessions: dict[str, ChatSession] = {}
        self._sessions_lock = Lock()

    def _get_or_create_session(self, key: str) -> ChatSession:
        with self._sessions_lock:  # "check, then create" must be one step
            return get_or_create_session(self._sessions, key)

    def _find_session(self, key: str) -> ChatSession:
        with self._sessions_lock:  # an unknown key gets a throwaway session (a lock of its own)
            return self._sessions.get(key) or ChatSession()

    def reset_session(self, session_id: str) -> None:
        """/new: clear this conversation only."""
        key = normalize_session_id(session_id)
        with self._find_session(key).lock:  # never in the middle of a turn
            self._histories.reset(key)

    def history_of(self, session_id: str) -> list[Message]:
        """The stored history; get_messages() returns copies, so changing it changes nothing."""
        key = normalize_session_id(session_id)
        with self._find_session(key).lock:
            return self._histories.get_messages(key)


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
            history = self._histories.get_messages(key)
            try:  # as in 02: a broken history is not sent, the model gets nothing
                validate_history(history)
            except (TypeError, ValueError) as error:
                raise ChatServiceError(f"История повреждена, запрос не отправлен. {error}") from None
            messages = build_chat_messages(self._prompt.render(), history, neutralize_tags(text))

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
        return SessionReply(
            text=reply_text, session_id=key, history_messages=history_messages, model=llm_result.model,
            prompt_id=self._prompt.prompt_id, prompt_version=self._prompt.version,
            elapsed_seconds=elapsed_seconds, prompt_tokens=llm_result.prompt_tokens,
            completion_tokens=llm_result.completion_tokens, total_tokens=llm_result.total_tokens,
            response_id=llm_result.response_id, request_messages=tuple(messages),
        )
