"""`ChatService`: the support chat's scenario — sessions, history policy, summary, model call.

One rule runs through the whole class: a session changes only after a validated reply. Until then
the new user message, the new summary and the trimmed history live in local variables, so any
failure (bad input, broken history, budget, summary call, model call, empty or cut reply) leaves
the session exactly as it was.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from threading import Lock
from time import perf_counter, time
from typing import Any, Literal

from course_lib.chat_history import ChatHistoryError, PreparedHistory, SlidingWindowHistory
from course_lib.conversation_summary_service import (
    ConversationSummaryError,
    ConversationSummaryService,
)
from course_lib.course_versions.check_reply import ReplyError, check_reply
from course_lib.llm.client import LLMClient, LLMResult, Message
from course_lib.llm.errors import LLMClientError
from course_lib.memory.long_term import ExtractionOutcome, LongTermMemory, MemoryContext
from course_lib.pricing import DEFAULT_PRICES, Price, price_for
from course_lib.prompts.support_chat import SUPPORT_CHAT_PROMPT
from course_lib.prompts.tags import wrap_in_tag
from course_lib.prompts.template import PromptTemplate
from course_lib.russian import tokens
from course_lib.token_calibration import CalibrationEvidence, TokenCalibration
from course_lib.your_code import recording
from course_lib.session_store import (
    InMemorySessionStore,
    SessionState,
    SessionStore,
    SessionStoreError,
    check_owner,
)

MAX_PROBES = 3
"""Server counts of one request at most (llama.cpp: no usage in streams), see `_fitted`."""
_ANYONE = object()  # get_session/reset_session without `user_id`: the application itself, no check


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
    memory: MemoryContext | None = None
    """Long-term memory in this request (facts, recalled turns, their tokens), when it is on."""
    memory_extraction: ExtractionOutcome | None = None
    """The hot-path fact extraction after this reply (None when off or in the background)."""
    cached_tokens: int | None = None
    """Input tokens of the chat call the provider served from its prompt cache."""
    cost_usd: float | None = None
    """Chat call + summary calls, by the price table; None when a model has no price or no usage."""
    token_factor: float = 1.0
    """The provider correction the window used for this request (see `token_calibration`)."""
    calibration: CalibrationEvidence | None = None
    """What the correction rests on after this reply (estimate vs the provider's count)."""
    streamed: bool = False
    first_token_seconds: float | None = None
    """Streamed replies: seconds from the start of the turn (token probe, summary call included) to the
    reply's first piece — what the customer waits before text appears."""
    summary_error: str | None = None
    """Why the history could not be compressed this turn: the reply then used the window alone,
    and the turns that did not fit stay stored, to be folded on a later turn."""
    measured_prompt_tokens: int | None = None
    """The server's count of this request before it was sent (servers with no usage in streams)."""
    implementations: tuple[tuple[str, str], ...] = ()
    """Which implementation of each exercise ran for this reply, in the order of use:
    (("split_into_turns", "yours"), ("select_recent_turns", "course"), ...), recorded by the
    `course_lib.your_code` stand-ins while the reply was made; empty when no exercise ran."""


    def notes(self) -> str | None:
        """What the customer should know besides the reply, in Russian: the history was not
        compressed this turn, or what memory learned (or failed to learn). None when nothing."""
        lines: list[str] = []
        if self.summary_error is not None:
            lines.append(f"Сводка не обновлена ({self.summary_error}); ответ дан по последним сообщениям, "
                         "ваше сообщение и вся история сохранены.")
        if self.memory_extraction is not None:
            lines.append(self.memory_extraction.describe())
        return "\n".join(lines) or None


SummaryFailure = Literal["window", "raise"]
# (history, messages the window kept, K) -> {"fold": [...], "keep": [...]} or None: notebook 05's exercise.
PlanCompression = Callable[[list[Message], int, int], "dict[str, list[Message]] | None"]


@dataclass(frozen=True)
class ForgetReport:
    """What `ChatService.forget` erased, and what it had to leave."""

    records: int
    """Facts and archived turns deleted."""
    sessions: int
    """Sessions deleted: the user's own and ownerless ones the user's turns were said in."""
    ownerless_left: int
    """Sessions without an owner (from a file older than session owners) that nothing ties to
    anyone: left as they were, since they may be someone else's."""


@dataclass(frozen=True)
class ChatSession:
    """A copy of one conversation's state: the recent exact messages and the summary of older ones.

    The live state is in the service's `SessionStore`; this copy is safe to read and keep.
    """

    session_id: str
    messages: tuple[Message, ...]
    summary: str | None


SessionSnapshot = ChatSession  # the name the widgets and earlier lessons use


@dataclass
class _SessionLock:
    """The in-process lock of one session and how many callers hold or wait for it."""

    lock: Lock = field(default_factory=Lock)
    users: int = 0


def _recorded(reply: Callable[..., ChatReply]) -> Callable[..., ChatReply]:
    """`reply()` with the record of which exercise code ran for it: the `course_lib.your_code`
    stand-ins the window, the summary and the memory call note their implementation while the reply
    is made, and the reply carries that record (`ChatReply.implementations`)."""

    @functools.wraps(reply)
    def recorded(*args: Any, **kwargs: Any) -> ChatReply:
        with recording() as used:
            result = reply(*args, **kwargs)
        return replace(result, implementations=tuple(used.items())) if used else result

    return recorded


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
        clock: Callable[[], float] = time,
        store: SessionStore | None = None,
        memory: LongTermMemory | None = None,
        calibration: TokenCalibration | None = None,
        prices: Mapping[str, Price] = DEFAULT_PRICES,
        summary_failure: SummaryFailure = "raise",
        plan_compression: PlanCompression | None = None,
    ) -> None:
        """`summary_service=None` gives the plain sliding window: old turns are just not sent.

        `keep_recent_turns=K`: on a compression, the K newest whole turns that were in the window
        stay verbatim and only the older ones are summarized. K = 0 is the seed's design: the
        request after a compression is instruction + summary + new message.
        `session_ttl_seconds`: sessions idle for longer are forgotten (None: kept for ever, which
        in a long-running server is a memory leak). `clock` (seconds, wall clock by default: a
        persistent store compares times across processes) is injectable for lessons and tests.
        `store`: where sessions live — `InMemorySessionStore()` by default, `SQLiteSessionStore(path)`
        to survive restarts and share sessions between processes.
        `memory`: long-term memory per user, used by `reply(..., user_id=...)` (notebook 07).
        `calibration`: learns how the provider's token count differs from the estimate, so the
        budget holds in the provider's tokens. `prices`: USD per 1M tokens, for `ChatReply.cost_usd`.
        `summary_failure`: when the summary call fails or runs out of tokens, `"raise"` fails the
        turn and changes nothing (the lesson in notebook 05); `"window"` (the console and the chat
        panel, via `build_chat_app`) answers with the window alone and says so in
        `ChatReply.summary_error` — the customer's message is kept, nothing is folded or lost.
        `plan_compression(history, window_kept, keep_recent_turns)`: decides from the window's result
        which stored messages a compression folds (`{"fold": [...], "keep": [...]}`, None for no
        compression) — notebook 05 passes the student's exercise; by default the service decides
        the same way itself.
        """
        if summary_failure not in ("window", "raise"):
            raise ValueError("summary_failure: допустимы 'window' и 'raise'.")
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
        self._store = store if store is not None else InMemorySessionStore()
        self._memory = memory
        self._calibration = calibration if calibration is not None else TokenCalibration()
        self._prices = prices
        self._summary_failure = summary_failure
        self._plan_compression = plan_compression
        # Whether the server sends usage in streams: None until the first streamed reply says.
        self._usage_in_streams: bool | None = None
        # The configured model names the provider's tokenizer (a metered test client may have none).
        self._model_name: str = getattr(llm_client, "model", "model")
        # One lock per session in use (a turn is read-modify-write), and one for that registry.
        self._locks: dict[str, _SessionLock] = {}
        self._locks_lock = Lock()

    @property
    def llm_client(self) -> LLMClient:
        return self._llm_client

    def context_warning(self) -> str | None:
        """A Russian warning when this service's budget plus the reply limit exceeds the server's
        context window (None when it fits or the server does not say)."""
        check = getattr(self._llm_client, "context_warning", None)
        if check is None:
            return None
        try:
            return check(self._history_policy.input_token_budget)
        except Exception:  # noqa: BLE001 — a warning must never stop the chat
            return None

    @property
    def keep_recent_turns(self) -> int:
        return self._keep_recent_turns

    @property
    def session_ttl_seconds(self) -> float | None:
        return self._session_ttl_seconds

    @property
    def store(self) -> SessionStore:
        return self._store

    @property
    def memory(self) -> LongTermMemory | None:
        return self._memory

    @property
    def calibration(self) -> TokenCalibration:
        return self._calibration

    @property
    def summary_service(self) -> ConversationSummaryService | None:
        return self._summary_service

    @property
    def can_stream(self) -> bool:
        """Whether the model client streams (`LLMClient` does; a simple test double may not)."""
        try:
            return "on_delta" in inspect.signature(self._llm_client.generate).parameters
        except (TypeError, ValueError):
            return False

    @property
    def history_policy(self) -> SlidingWindowHistory:
        return self._history_policy

    @property
    def prompt(self) -> PromptTemplate:
        return self._prompt

    @_recorded
    def reply(
        self,
        session_id: str,
        user_text: str,
        *,
        user_id: str | None = None,
        on_delta: Callable[[str], None] | None = None,
    ) -> ChatReply:
        """One turn. With `user_id` and a `memory`, what is remembered about the user is sent too.

        `on_delta` streams the reply: it receives each piece of text as it arrives. The turn is
        still saved only when the stream ended normally (`finish_reason="stop"`) with text; a cut,
        empty or too-long stream raises `ChatServiceError` and leaves the session as it was — the
        pieces already shown are then an unsaved, unfinished reply.

        The reply's `implementations` say which exercise code (the student's or the course's) the
        window, the summary and the memory ran for it (see `_recorded`).
        """
        session_key = self._normalize_session_id(session_id)
        text = normalize_user_text(user_text)
        user_key = self._normalize_user_id(user_id)
        self._expire_idle()
        with self._session_lock(session_key):
            started_at = perf_counter()
            state = self._load(session_key)
            self._check_owner(session_key, state, user_key)  # before anything of it is read or sent
            history = state.messages  # a WholeHistory: the window need not re-check it
            developer_message = self.build_developer_message()
            user_message = self.build_user_message(text)
            memory = self._memory_context(user_key, session_key, text)
            memory_messages = list(memory.messages) if memory else []
            streaming = on_delta is not None
            prepared, measured = self._fitted(
                lambda: self._prepare(developer_message, history, user_message, state.summary, memory_messages),
                streaming,
            )

            new_summary = state.summary
            summary_result: LLMResult | None = None
            summary_elapsed: float | None = None
            summary_error: str | None = None
            kept_history = history
            summarized = 0
            summary_calls: list[LLMResult] = []
            split = self._compression_split(history, prepared) if self._summary_service is not None else None
            if split is not None:
                window_only = prepared
                summary_started = perf_counter()
                try:
                    while True:
                        to_summarize, kept_history = history[:split], history[split:]
                        new_summary, summary_result = self._summarize(state.summary, to_summarize)
                        summary_calls.append(summary_result)
                        # The new summary was never counted by the server: measured like any request.
                        prepared, counted = self._fitted(
                            lambda: self._prepare_after_compression(
                                developer_message, kept_history, user_message, memory_messages, new_summary
                            ),
                            streaming,
                        )
                        measured = counted if counted is not None else measured
                        if prepared.removed_history_messages == 0:
                            break
                        # The new summary is longer than the old one and pushed a kept turn out: a
                        # turn must be either verbatim in the request or folded into the summary.
                        split += prepared.removed_history_messages
                    summarized = len(to_summarize)
                except ChatServiceError as error:
                    if self._summary_failure == "raise":
                        raise
                    # The reply still comes, from the window alone; nothing is folded or lost.
                    summary_error = str(error)
                    prepared, kept_history, new_summary, summary_result = window_only, history, state.summary, None
                summary_elapsed = perf_counter() - summary_started

            reply_started = perf_counter()
            llm_result = self._generate(prepared.messages, on_delta)
            if on_delta is not None:
                self._usage_in_streams = llm_result.prompt_tokens is not None
            # Evidence for the correction, even if the reply fails validation below.
            self._calibration.observe(self._model_name, prepared.estimated_tokens, llm_result.prompt_tokens)
            reply_text = validate_reply(llm_result)
            elapsed_seconds = perf_counter() - started_at

            # The only place the session changes: after a validated reply, in one commit.
            assistant_message: Message = {"role": "assistant", "content": reply_text}
            summary_updated = summary_result is not None
            messages = [*kept_history, user_message, assistant_message]
            committed = self._commit(
                session_key,
                state,
                messages,
                new_summary,
                unchanged_prefix=0 if summary_updated else len(history),
                owner=user_key,
            )
            history_messages = len(committed.messages)
            has_summary = committed.summary is not None

        # Learning from the turn happens after it is saved: a memory failure cannot undo a reply.
        extraction = None
        if self._memory is not None and user_key is not None:
            extraction = self._memory.after_turn(user_key, session_key, committed.version, text, reply_text)
            if extraction is not None:  # the customer waited for it too
                elapsed_seconds += extraction.elapsed_seconds

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
            llm_calls=1 + len(summary_calls),
            summary_total_tokens=_total_tokens(summary_calls),
            summary_elapsed_seconds=summary_elapsed,
            summarized_messages=summarized,
            memory=memory,
            memory_extraction=extraction,
            cached_tokens=llm_result.cached_tokens,
            cost_usd=self._cost(llm_result, summary_calls),
            token_factor=prepared.token_factor,
            calibration=self._calibration.evidence(self._model_name),
            streamed=llm_result.streamed,
            # From the start of the turn, as the customer waits: the token probe and the summary call
            # come before the reply's stream opens.
            first_token_seconds=(None if llm_result.first_token_seconds is None
                                 else reply_started - started_at + llm_result.first_token_seconds),
            summary_error=summary_error,
            measured_prompt_tokens=measured,
        )

    def _compression_split(self, history: Sequence[Message], prepared: PreparedHistory) -> int | None:
        """How many of the oldest stored messages this turn folds into a new summary; None when the
        window dropped nothing (no summary call)."""
        if self._plan_compression is None:
            if prepared.removed_history_messages == 0:
                return None
            # Keep up to K of the turns the window still had; fold everything older.
            recent_turns = min(self._keep_recent_turns, prepared.context_history_messages // 2)
            return len(history) - 2 * recent_turns
        plan = self._plan_compression(
            [dict(message) for message in history], prepared.context_history_messages, self._keep_recent_turns
        )
        return None if plan is None else len(plan["fold"])

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
                token_factor=self._token_factor(),
            )
        except ChatHistoryError as error:
            raise ChatServiceError(f"Не удалось подготовить историю: {error}") from error

    def reset_session(self, session_id: str, *, user_id: str | None | object = _ANYONE) -> None:
        """Forget a conversation: both its exact messages and its summary (the console's /new).

        With `user_id` (None too: a caller without a user), a session of someone else is refused.
        """
        session_key = self._normalize_session_id(session_id)
        with self._session_lock(session_key):
            if user_id is not _ANYONE:
                self._check_owner(session_key, self._load(session_key), self._normalize_user_id(user_id))
            self._call_store(self._store.delete, session_key)

    def forget_user(self, user_id: str) -> int:
        """Erase everything kept about a user; returns how many facts and archived turns were
        deleted (`forget` tells the whole story)."""
        return self.forget(user_id).records

    def forget(self, user_id: str) -> ForgetReport:
        """Erase everything kept about a user: long-term facts, archived turns, their sessions.

        The text is gone from the files' bytes (SQLite's secure_delete, a rebuilt search index,
        VACUUM), not just hidden. Deleted are the sessions the user started, and sessions without
        an owner (a file from before sessions had owners) in which the user's archived turns were
        said; another user's session is never the caller's data. Ownerless sessions nothing ties
        to anyone are left, and counted, so that nobody is told they are gone.
        """
        user_key = self._normalize_user_id(user_id)
        if self._memory is None or user_key is None:
            raise ChatServiceError("Долговременная память не подключена: забывать нечего.")
        self._memory.wait()
        owned = set(self._call_store(self._store.sessions_owned_by, user_key))
        ownerless = set(self._call_store(self._store.sessions_owned_by, None))
        said_in = ownerless & set(self._memory.store.sessions_of(user_key))
        owned |= said_in
        for session_key in sorted(owned):
            with self._session_lock(session_key):
                if self._load(session_key).owner in (None, user_key):  # not taken over meanwhile
                    self._call_store(self._store.delete, session_key)
        self._call_store(self._store.compact)
        return ForgetReport(self._memory.forget(user_key), len(owned), len(ownerless - said_in))

    def get_session(self, session_id: str, *, user_id: str | None | object = _ANYONE) -> ChatSession:
        """A copy of the session's state (empty for an unknown id); never the live objects.

        With `user_id` (None too: a caller without a user), a session of someone else is refused.
        """
        session_key = self._normalize_session_id(session_id)
        self._expire_idle()
        state = self._load(session_key)
        if user_id is not _ANYONE:
            self._check_owner(session_key, state, self._normalize_user_id(user_id))
        messages = tuple(dict(message) for message in state.messages)
        return ChatSession(session_key, messages, state.summary)  # type: ignore[arg-type]

    def session_ids(self) -> tuple[str, ...]:
        """Ids of the stored sessions, least recently used first."""
        self._expire_idle()
        return self._call_store(self._store.session_ids)

    def expire_idle_sessions(self) -> int:
        """Forget sessions idle for longer than the TTL now; return how many were removed.

        `reply()` does this on every call anyway; a server may also call it from a timer.
        """
        return self._expire_idle()

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
        memory_messages: list[Message] | None = None,
    ) -> PreparedHistory:
        # Memory first (the oldest knowledge), then the summary of this session, then its turns.
        context = list(memory_messages or [])
        if summary is not None:
            context.append(self.build_summary_message(summary))
        try:
            return self._history_policy.prepare(
                developer_message=developer_message,
                history=history,
                user_message=user_message,
                context_messages=context,
                token_factor=self._token_factor(),
            )
        except ChatHistoryError as error:
            raise ChatServiceError(f"Не удалось подготовить историю: {error}") from error

    def _prepare_after_compression(
        self,
        developer_message: Message,
        kept_history: list[Message],
        user_message: Message,
        memory_messages: list[Message],
        summary: str,
    ) -> PreparedHistory:
        try:
            return self._history_policy.prepare(
                developer_message=developer_message,
                history=kept_history,
                user_message=user_message,
                context_messages=[*memory_messages, self.build_summary_message(summary)],
                token_factor=self._token_factor(),
            )
        except ChatHistoryError as error:
            raise ChatServiceError(f"Новая сводка не помещается в бюджет: {error}") from error

    def _cost(self, chat: LLMResult, summaries: list[LLMResult]) -> float | None:
        """USD for this turn's calls, priced by the models they were sent to (None if unknown)."""
        summary_model = getattr(self._summary_service, "model", None) or self._model_name
        total = 0.0
        for result, model in [(chat, self._model_name), *((r, summary_model) for r in summaries)]:
            price = price_for(model, self._prices)
            if price is None or result.prompt_tokens is None or result.completion_tokens is None:
                return None
            total += price.cost(result.prompt_tokens, result.completion_tokens, result.cached_tokens or 0)
        return total

    def _fitted(
        self, prepare: Callable[[], PreparedHistory], streaming: bool
    ) -> tuple[PreparedHistory, int | None]:
        """`prepare()`, and when the server's own count is asked for (see `_measure`) and says
        the request is over the budget, `prepare()` again with the correction it taught, until
        the count fits (at most MAX_PROBES counts): no request leaves over the budget because
        its text had another ratio than the texts the correction was learned on. Returns the
        request and the server's last count (None when it was not asked)."""
        prepared = prepare()
        budget = getattr(self._history_policy, "input_token_budget", None)
        counted = None
        for probe in range(MAX_PROBES):
            measured = self._measure(prepared, streaming=streaming)
            if measured is None:
                return prepared, counted
            counted = measured
            if budget is None or measured <= budget:
                return prepared, counted  # what the server counted, and it fits
            if probe + 1 < MAX_PROBES:
                prepared = prepare()  # the window is chosen again with the correction it taught
        raise ChatServiceError(
            f"Запрос не помещается во входной бюджет: сервер насчитал {tokens(counted)} при бюджете "
            f"{tokens(budget)} и после {MAX_PROBES} попыток уменьшить окно. Увеличьте "
            "CHAT_INPUT_TOKEN_BUDGET или начните новый диалог (/new)."
        )

    def _measure(self, prepared: PreparedHistory, *, streaming: bool) -> int | None:
        """Ask the server to count this request when its count cannot come with the reply.

        Before the first request to a server with another tokenizer (so the first request keeps
        the budget too), and before every streamed one when the server sends no usage in streams
        (llama.cpp). Returns the count, already recorded in the calibration; None when not needed.
        """
        measure = getattr(self._llm_client, "measure_prompt_tokens", None)
        if measure is None or not getattr(self._llm_client, "needs_token_probe", False):
            return None
        first = self._calibration.evidence(self._model_name).samples == 0
        if not (first or (streaming and self._usage_in_streams is False)):
            return None
        actual = measure(prepared.messages)
        if actual is None:
            return None
        self._calibration.observe(self._model_name, prepared.estimated_tokens, actual)
        return actual

    def _token_factor(self) -> float:
        return self._calibration.factor(self._model_name)

    def _summarize(self, previous: str | None, messages: list[Message]) -> tuple[str, LLMResult]:
        assert self._summary_service is not None
        try:
            result = self._summary_service.summarize_detailed(previous, messages)
        except ConversationSummaryError as error:
            raise ChatServiceError(f"Не удалось сократить историю: {error}") from error
        return result.text, result.llm_result

    def _generate(self, messages: list[Message], on_delta: Callable[[str], None] | None = None) -> LLMResult:
        try:
            if on_delta is None:
                return self._llm_client.generate(messages)
            return self._llm_client.generate(messages, on_delta=on_delta)
        except LLMClientError as error:
            raise ChatServiceError(f"Не удалось получить ответ модели: {error}") from error

    @contextmanager
    def _session_lock(self, session_key: str) -> Iterator[None]:
        """This process's lock of the session, then the store's (other processes)."""
        entry = self._acquire(session_key)
        try:
            with self._store.session_lock(session_key):
                yield
        except SessionStoreError as error:
            raise ChatServiceError(str(error)) from error
        finally:
            self._release(session_key, entry)

    def _acquire(self, session_key: str) -> _SessionLock:
        with self._locks_lock:
            entry = self._locks.setdefault(session_key, _SessionLock())
            entry.users += 1
        entry.lock.acquire()
        return entry

    def _release(self, session_key: str, entry: _SessionLock) -> None:
        entry.lock.release()
        with self._locks_lock:
            entry.users -= 1
            if entry.users == 0:  # nobody waits: drop the entry, so the registry does not grow
                del self._locks[session_key]

    def _busy_sessions(self) -> set[str]:
        with self._locks_lock:
            return set(self._locks)

    def _expire_idle(self) -> int:
        if self._session_ttl_seconds is None:
            return 0
        # A session with a reply in progress is not idle, however long the model takes.
        return self._call_store(self._store.expire_idle, self._clock(), self._session_ttl_seconds,
                                self._busy_sessions())

    def _load(self, session_key: str) -> SessionState:
        return self._call_store(self._store.load, session_key)

    def _commit(
        self,
        session_key: str,
        state: SessionState,
        messages: list[Message],
        summary: str | None,
        *,
        unchanged_prefix: int,
        owner: str | None,
    ) -> SessionState:
        return self._call_store(
            self._store.commit,
            session_key,
            state.version,
            messages,
            summary,
            unchanged_prefix=unchanged_prefix,
            now=self._clock(),
            owner=owner,
        )

    @staticmethod
    def _check_owner(session_key: str, state: SessionState, user_key: str | None) -> None:
        """A stored session is only for the user who started it (the store checks again on commit)."""
        if state.version > 0:
            ChatService._call_store(check_owner, session_key, state.owner, user_key)

    @staticmethod
    def _call_store(method, *args, **kwargs):
        try:
            return method(*args, **kwargs)
        except SessionStoreError as error:
            raise ChatServiceError(str(error)) from error

    def _memory_context(self, user_key: str | None, session_key: str, text: str) -> MemoryContext | None:
        if self._memory is None or user_key is None:
            return None
        try:
            return self._memory.context_for(user_key, session_key, text)
        except Exception as error:  # sqlite3 errors and the like: the turn fails, state unchanged
            raise ChatServiceError(f"Не удалось прочитать долговременную память: {error}") from error

    @staticmethod
    def _normalize_user_id(user_id: str | None) -> str | None:
        if user_id is None:
            return None
        if not isinstance(user_id, str) or not user_id.strip():
            raise ChatServiceError("Идентификатор пользователя должен быть непустой строкой.")
        return user_id.strip()

    @staticmethod
    def _normalize_session_id(session_id: str) -> str:
        if not isinstance(session_id, str):
            raise ChatServiceError("Session ID должен быть строкой.")
        session_key = session_id.strip()
        if not session_key:
            raise ChatServiceError("Session ID не должен быть пустым.")
        return session_key


def _total_tokens(results: list[LLMResult]) -> int | None:
    if not results or any(result.total_tokens is None for result in results):
        return None
    return sum(result.total_tokens for result in results)  # type: ignore[misc]


def normalize_user_text(user_text: str, error: type[Exception] = ChatServiceError) -> str:
    """The customer's text without surrounding whitespace; `error` if it is not a non-empty string."""
    if not isinstance(user_text, str):
        raise error("Сообщение должно быть строкой.")
    text = user_text.strip()
    if not text:
        raise error("Сообщение не должно быть пустым.")
    return text


def validate_reply(result: LLMResult, error: type[Exception] = ChatServiceError) -> str:
    """The reply's text if the model finished normally and said something; else `error`, with the
    message for the customer. The rules are notebook 01's exercise, in the course's version
    (`course_lib.course_versions.check_reply`): one implementation for every chat of the course."""
    try:
        return check_reply(result.text, result.finish_reason)
    except ReplyError as problem:
        raise error(str(problem)) from None
