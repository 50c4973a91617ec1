"""Wiring: build the chat application from settings (the seed's `main.py`, as a function).

Read it bottom-up: the chat service needs a history policy and a summary service; the policy needs
a token counter and the budget; everything that calls the model shares one `LLMClient`.
"""

from __future__ import annotations

from dataclasses import dataclass

from course_lib.chat_history import SlidingWindowHistory, TokenCounter
from course_lib.chat_service import ChatService
from course_lib.config import Settings, load_settings
from course_lib.conversation_summary_service import ConversationSummaryService
from course_lib.llm.client import LLMClient
from course_lib.llm.offline import OfflineModel
from course_lib.memory import LongTermMemory, MemoryExtractor, MemoryStore
from course_lib.prompts.support_chat import SUPPORT_CHAT_PROMPT, get_support_chat_prompt
from course_lib.session_store import SessionStore


@dataclass
class ChatApp:
    settings: Settings
    llm_client: LLMClient
    token_counter: TokenCounter
    history_policy: SlidingWindowHistory
    summary_service: ConversationSummaryService | None
    chat_service: ChatService

    @property
    def backend_label(self) -> str:
        """How the console and notebooks name the backend, honestly."""
        if self.llm_client.backend == "offline":
            return "офлайн-модель (учебная; знает только то, что есть в запросе)"
        return f"OpenAI-совместимый API ({self.settings.openai_base_url or 'api.openai.com'})"

    def close(self) -> None:
        self.llm_client.close()
        self.chat_service.store.close()
        if self.chat_service.memory is not None:
            self.chat_service.memory.close()

    def __enter__(self) -> ChatApp:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def build_chat_app(
    settings: Settings | None = None,
    *,
    offline_model: OfflineModel | None = None,
    with_summary: bool = True,
    store: SessionStore | None = None,
    memory_store: MemoryStore | None = None,
    history_policy: SlidingWindowHistory | None = None,
) -> ChatApp:
    """`store=None` keeps sessions where CHAT_STORE_URL says (a SQLite file or PostgreSQL), or in
    memory when it is empty (gone with the process); see `session_store` and `store_url`.

    `memory_store` turns long-term memory on (`reply(..., user_id=...)`), with the support prompt
    1.2.0 that knows the memory blocks. `history_policy` replaces the library's window with any
    object of the same interface (notebook 04's `ExerciseWindow`, built from the student's code).
    """
    settings = settings or load_settings()
    if store is None and settings.chat_store_url:
        from course_lib.store_url import open_session_store  # psycopg only when a URL asks for it

        store = open_session_store(settings.chat_store_url)
    llm_client = LLMClient(settings, offline_model=offline_model)
    token_counter = TokenCounter()
    history_policy = history_policy or SlidingWindowHistory(
        token_counter=token_counter,
        input_token_budget=settings.chat_input_token_budget,
    )
    summary_service = (
        ConversationSummaryService(
            llm_client,
            model=settings.summary_model,
            max_summary_chars=settings.summary_max_chars,
        )
        if with_summary
        else None
    )
    memory = None
    if memory_store is not None:
        memory = LongTermMemory(
            memory_store, MemoryExtractor(llm_client, model=settings.summary_model), token_counter
        )
    chat_service = ChatService(
        llm_client=llm_client,
        history_policy=history_policy,
        summary_service=summary_service,
        prompt=SUPPORT_CHAT_PROMPT if memory is None else get_support_chat_prompt("1.2.0"),
        memory=memory,
        prices=settings.price_table,
        keep_recent_turns=settings.keep_recent_turns,
        session_ttl_seconds=settings.session_ttl_seconds,
        store=store,
        # A failed summary must not cost the customer a reply: answer from the window, say so.
        summary_failure="window",
    )
    return ChatApp(settings, llm_client, token_counter, history_policy, summary_service, chat_service)
