"""The strategies the memory benchmark scores, behind one small interface.

A benchmark strategy lives through one customer:

    strategy.ingest(customer_text, support_text)  # a recorded turn: memory does its work, no reply is generated
    strategy.new_session()                        # the customer comes back another day
    strategy.forget()                             # the customer asked to erase their data (/forget)
    strategy.ask(question) -> Answer              # the model answers; the state stays as it was

Replaying recorded support lines (instead of generating replies) keeps every strategy on the same
conversation and makes a run with a real model affordable: during the replay only memory's own
calls reach the model (summaries, fact extraction); the model answers the questions. Memory through
tools is the exception: there the model manages memory while it replies, so its replay generates.

History strategies (full, count, window, window_summary, window_summary_k, rolling) keep one thread
per customer: a new session continues it, like a support chat that shows the customer's whole
history. Long-term memory (facts, facts_recall) and tools start each session empty and carry what
they stored across sessions, as notebooks 08 and 09 do. `forget()` erases everything a strategy
keeps about the customer.

Each strategy here is the course's own class (notebooks 06, 08, 09); `your_code=True` builds the ones
that have an exercise from the student's functions, and `mine` is the student's class from
`exercises/my_strategy.py`.
"""

from __future__ import annotations

import copy
import shutil
import tempfile
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from course_lib.chat_history import SlidingWindowHistory
from course_lib.chat_service import ChatService
from course_lib.messages import Message
from course_lib.strategies import StrategySettings, build_strategy
from course_lib.strategies.base import StrategyBase
from course_lib.tokenizer import TokenCounter

HISTORY = ("full", "count", "window", "window_summary", "window_summary_k", "rolling")
MEMORY = ("facts", "facts_recall", "tools")
MINE = "mine"
STRATEGY_NAMES = (*HISTORY, *MEMORY)
TITLES = {
    "full": "Полная история", "count": "Последние N сообщений", "window": "Окно по токенам",
    "window_summary": "Окно + сводка", "window_summary_k": "Окно + сводка + K ходов",
    "rolling": "Сводка + K сообщений", "facts": "Факты о клиенте (08)", "facts_recall": "Факты + поиск (08)",
    "tools": "Память через инструменты (09)", MINE: "Ваша стратегия",
}  # fmt: skip


@dataclass(frozen=True)
class Answer:
    """One question's answer and what it cost."""

    text: str
    request: tuple[Message, ...]
    """The request that produced the answer (the instruction included)."""
    input_tokens: int
    """All input tokens of the question's calls (a compression it needed included)."""
    output_tokens: int
    calls: int
    error: str | None = None
    """Why no answer came (the strategy failed): the question then counts as not answered."""


@dataclass(frozen=True)
class Upkeep:
    """What memory itself cost during one replayed turn: model calls that answered no one."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class BenchStrategy(ABC):
    name: str
    title: str

    @abstractmethod
    def ingest(self, customer_text: str, support_text: str) -> Upkeep: ...

    def new_session(self) -> None:
        """History strategies continue their one thread."""

    @abstractmethod
    def forget(self) -> None: ...

    @abstractmethod
    def ask(self, question: str) -> Answer: ...

    def close(self) -> None:
        """Release files and connections."""


class HistoryStrategy(BenchStrategy):
    """One of notebook 06's strategies (a `StrategyBase`), fed with recorded turns."""

    def __init__(self, name: str, build: Callable[[], StrategyBase]) -> None:
        self.name, self.title = name, TITLES[name]
        self._build = build
        self.strategy = build()

    def ingest(self, customer_text: str, support_text: str) -> Upkeep:
        with self.strategy._meter.scripted(support_text):
            record = self.strategy.reply(customer_text)
        return Upkeep(record.summary_calls, record.summary_prompt_tokens, record.summary_completion_tokens)

    def forget(self) -> None:
        self.strategy = self._build()

    def ask(self, question: str) -> Answer:
        state = self.strategy.snapshot()
        try:
            record = self.strategy.reply(question)
        except Exception as error:  # noqa: BLE001 - a failed question is a wrong answer, said why
            return Answer("", (), 0, 0, 0, error=f"{type(error).__name__}: {error}")
        finally:
            self.strategy.restore(state)
        return Answer(
            record.reply_text, record.request, record.input_tokens,
            record.completion_tokens + record.summary_completion_tokens, record.model_calls,
        )  # fmt: skip


class StoreBacked(BenchStrategy):
    """A strategy whose memory is a SQLite file: a question runs on a copy of that file."""

    def __init__(self, user_id: str) -> None:
        self.user_id = user_id
        self._folder = Path(tempfile.mkdtemp(prefix="course-memory-eval-"))
        self.path = self._folder / "memory.sqlite3"

    def _question_copy(self) -> Path:
        self._release()
        probe = self._folder / "question.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            source = Path(f"{self.path}{suffix}")
            if source.exists():
                shutil.copyfile(source, f"{probe}{suffix}")
            else:
                Path(f"{probe}{suffix}").unlink(missing_ok=True)
        return probe

    @abstractmethod
    def _release(self) -> None:
        """Close the working store so that its file can be copied whole."""

    def close(self) -> None:
        self._release()
        shutil.rmtree(self._folder, ignore_errors=True)


class FactsStrategy(StoreBacked):
    """Notebook 08: a window per session plus long-term facts (and optionally recalled turns)."""

    def __init__(self, name: str, client, counter: TokenCounter, budget: int, user_id: str, *,
                 recall: bool, your_code: bool = False) -> None:  # fmt: skip
        super().__init__(user_id)
        self.name, self.title = name, TITLES[name]
        self._client, self._counter, self._budget, self._recall = client, counter, budget, recall
        self._your_code = your_code
        self._service = self._memory = self._meter = None
        self.session_id = uuid.uuid4().hex

    def _open(self, path: Path):
        """(service, memory, meter) on the store at `path`; the meter scripts the replay's replies."""
        from course_lib.memory import LongTermMemory, MemoryExtractor, MemoryStore
        from course_lib.prompts.support_chat import get_support_chat_prompt
        from course_lib.strategies.metering import CallMeter

        store, memory_class, extra = MemoryStore(path), LongTermMemory, {}
        if self._your_code:  # notebook 08's memory on the student's merge_facts, select_memories, build_memory_message
            from course_lib.steps.long_term import MemoryWithYourFunctions, MergedStore
            from course_lib.your_code import on_each_call

            store, memory_class = MergedStore(store, on_each_call("merge_facts")), MemoryWithYourFunctions
            extra = {"select_memories": on_each_call("select_memories"),
                     "build_memory_message": on_each_call("build_memory_message")}  # fmt: skip
        memory = memory_class(store, MemoryExtractor(self._client), self._counter,
                              recall_token_budget=150 if self._recall else 0, **extra)  # fmt: skip
        meter = CallMeter(self._client)
        service = ChatService(
            meter.client("chat"), SlidingWindowHistory(self._counter, self._budget), None,  # type: ignore[arg-type]
            get_support_chat_prompt("1.2.0"), memory=memory,
        )  # fmt: skip
        return service, memory, meter

    def _working(self) -> ChatService:
        if self._service is None:
            self._service, self._memory, self._meter = self._open(self.path)
        return self._service

    def ingest(self, customer_text: str, support_text: str) -> Upkeep:
        service = self._working()
        with self._meter.scripted(support_text):
            reply = service.reply(self.session_id, customer_text, user_id=self.user_id)
        extraction = reply.memory_extraction.llm_result if reply.memory_extraction else None
        if extraction is None:
            return Upkeep()
        return Upkeep(1, extraction.prompt_tokens or 0, extraction.completion_tokens or 0)

    def new_session(self) -> None:
        self.session_id = uuid.uuid4().hex

    def forget(self) -> None:
        self._working().forget(self.user_id)
        self.new_session()

    def ask(self, question: str) -> Answer:
        service, memory, _ = self._open(self._question_copy())
        try:
            reply = service.reply(uuid.uuid4().hex, question, user_id=self.user_id)
        except Exception as error:  # noqa: BLE001 - a failed question is a wrong answer, said why
            return Answer("", (), 0, 0, 0, error=f"{type(error).__name__}: {error}")
        finally:
            memory.close()
        # The question's own extraction runs after the answer: memory's upkeep, not the answer's cost.
        return Answer(reply.text, tuple(reply.request_messages), reply.prompt_tokens or 0,
                      reply.completion_tokens or 0, 1)  # fmt: skip

    def _release(self) -> None:
        if self._memory is not None:
            self._memory.close()
        self._service = self._memory = self._meter = None


class ToolsStrategy(StoreBacked):
    """Notebook 09: the model keeps core memory and an archive through tool calls."""

    name, title = "tools", TITLES["tools"]

    def __init__(self, client, counter: TokenCounter, budget: int, user_id: str, *, functions: dict | None = None) -> None:
        super().__init__(user_id)
        self._client, self._counter, self._budget = client, counter, budget
        self._functions = functions or {}
        self._chat = self._open(self.path)

    def _open(self, path: Path):
        from course_lib.memory import MemoryStore
        from course_lib.tool_memory.agent import ToolMemoryChat

        return ToolMemoryChat(self._client, MemoryStore(path), self.user_id, input_token_budget=self._budget,
                              counter=self._counter, **self._functions)  # fmt: skip

    def ingest(self, customer_text: str, support_text: str) -> Upkeep:
        if self._chat is None:
            self._chat = self._open(self.path)
        reply = self._chat.reply(customer_text)
        # The replay generates here (memory is managed while replying): the rounds that only
        # called tools are memory's own cost; the last round is the reply.
        rounds = max(0, reply.model_calls - 1)
        share = reply.input_tokens * rounds // max(1, reply.model_calls)
        return Upkeep(rounds, share, 0)

    def new_session(self) -> None:
        if self._chat is not None:
            self._chat.new_session()

    def forget(self) -> None:
        if self._chat is None:
            self._chat = self._open(self.path)
        self._chat.tools.store.forget(self.user_id)
        self._chat.new_session()

    def ask(self, question: str) -> Answer:
        chat = self._open(self._question_copy())
        try:
            reply = chat.reply(question)
        except Exception as error:  # noqa: BLE001 - a failed question is a wrong answer, said why
            return Answer("", (), 0, 0, 0, error=f"{type(error).__name__}: {error}")
        finally:
            chat.tools.store.close()
        return Answer(reply.text, reply.request, reply.input_tokens, 0, reply.model_calls)

    def _release(self) -> None:
        if self._chat is not None:
            self._chat.tools.store.close()
            self._chat = None


class MineStrategy(BenchStrategy):
    """The student's class from `exercises/my_strategy.py` (see its statement): it builds each request;
    the benchmark sends it, and asks each question on a deep copy of the student's object."""

    name, title = MINE, TITLES[MINE]

    def __init__(self, strategy_class: Callable[..., object], client, counter: TokenCounter, budget: int) -> None:
        from course_lib.conversation_summary_service import ConversationSummaryService
        from course_lib.prompts.support_chat import SUPPORT_CHAT_PROMPT
        from course_lib.strategies.metering import CallMeter

        self._meter = CallMeter(client)
        self._summaries = ConversationSummaryService(self._meter.client("summary"))  # type: ignore[arg-type]
        self._instruction: Message = {"role": "developer", "content": SUPPORT_CHAT_PROMPT.render()}
        self.policy = strategy_class(budget, counter.count_messages, self.summarize)

    def summarize(self, previous_summary: str | None, messages: Sequence[Message]) -> str:
        """What the student's strategy may call: the course's summarizer (its calls are counted)."""
        return self._summaries.summarize(previous_summary, list(messages))

    def _upkeep(self, first: int) -> Upkeep:
        calls = [call for call in self._meter.calls[first:] if call.purpose == "summary"]
        return Upkeep(len(calls), sum(c.prompt_tokens for c in calls), sum(c.completion_tokens for c in calls))

    def ingest(self, customer_text: str, support_text: str) -> Upkeep:
        first = len(self._meter.calls)
        user = ChatService.build_user_message(customer_text)
        check_request(self.policy.build_request(self._instruction, user), user)  # what it would send
        self.policy.commit(user, {"role": "assistant", "content": support_text})
        return self._upkeep(first)

    def new_session(self) -> None:
        self.policy.new_session()

    def forget(self) -> None:
        self.policy.forget()

    def ask(self, question: str) -> Answer:
        first = len(self._meter.calls)
        probe = copy.deepcopy(self.policy)
        user = ChatService.build_user_message(question)
        try:
            request = check_request(probe.build_request(self._instruction, user), user)
            result = self._meter.client("chat").generate(request)
        except Exception as error:  # noqa: BLE001 - the student's code or the model failed: said, not raised
            return Answer("", (), 0, 0, 0, error=f"{type(error).__name__}: {error}")
        upkeep = self._upkeep(first)
        return Answer(result.text or "", tuple(request), (result.prompt_tokens or 0) + upkeep.input_tokens,
                      (result.completion_tokens or 0) + upkeep.output_tokens, 1 + upkeep.calls)  # fmt: skip


def check_request(request: object, user: Message) -> list[Message]:
    """A request a provider would take: a list of {role, content} messages, the new message last."""
    if not isinstance(request, list) or not request:
        raise ValueError("build_request должен вернуть непустой список сообщений.")
    for index, message in enumerate(request):
        if not isinstance(message, dict) or set(message) != {"role", "content"}:
            raise ValueError(f"Сообщение {index}: нужен словарь ровно с ключами role и content (лишний ключ провайдер отклонит).")
        if message["role"] not in ("developer", "system", "user", "assistant") or not isinstance(message["content"], str):
            raise ValueError(f"Сообщение {index}: неизвестная роль или содержимое не строка.")
    if request[-1] != user:
        raise ValueError("Последним в запросе должно идти новое сообщение клиента.")
    return request  # type: ignore[return-value]


def build(name: str, client, *, budget: int, user_id: str, counter: TokenCounter,
          summary_chars: int | None = None, your_code: bool = False) -> BenchStrategy:  # fmt: skip
    """A fresh benchmark strategy by name for one customer (notebook 06's knobs, `budget` for the window
    and the summary's trigger, `summary_chars` for the summary's length cap)."""
    settings = StrategySettings(input_token_budget=budget, **({"max_summary_chars": summary_chars} if summary_chars else {}))
    if name in HISTORY:
        options = _student_options(name) if your_code else {}
        return HistoryStrategy(name, lambda: _history_strategy(name, client, settings, counter, options))
    if name in ("facts", "facts_recall"):
        return FactsStrategy(name, client, counter, budget, user_id, recall=name == "facts_recall", your_code=your_code)
    if name == "tools":
        functions = _student_tool_functions() if your_code else {}
        return ToolsStrategy(client, counter, budget, user_id, functions=functions)
    if name == MINE:
        from course_lib.your_code import your_code as student

        return MineStrategy(student("my_strategy", announce=False), client, counter, budget)  # the stand-in: it counts
    raise ValueError(f"Неизвестная стратегия {name!r}. Доступны: {', '.join((*STRATEGY_NAMES, MINE))}.")


def _history_strategy(name, client, settings, counter, options) -> StrategyBase:
    from course_lib.strategies import MessageCountStrategy, RollingSummaryStrategy, TokenWindowStrategy

    if name == "count" and "trim" in options:
        return MessageCountStrategy(client, settings.max_messages, trim=options["trim"])
    if name == "rolling" and "compress" in options:
        return RollingSummaryStrategy(client, counter, settings.input_token_budget, settings.keep_recent,
                                      compress=options["compress"], max_summary_chars=settings.max_summary_chars)  # fmt: skip
    if name == "window" and "window" in options:
        return TokenWindowStrategy(client, options["window"](counter, settings.input_token_budget))
    strategy = build_strategy(name, client, settings, token_counter=counter)
    assert isinstance(strategy, StrategyBase)
    return strategy


def _student_options(name: str) -> dict:
    from course_lib.your_code import on_each_call

    if name == "count":
        return {"trim": on_each_call("trim_by_message_count")}
    if name == "rolling":
        return {"compress": on_each_call("rolling_compress")}
    if name == "window":
        from course_lib.steps.window import ExerciseWindow

        return {"window": ExerciseWindow}
    return {}


def _student_tool_functions() -> dict:
    from course_lib.your_code import on_each_call

    return {name: on_each_call(name) for name in ("group_tool_exchanges", "run_tool_calls", "edit_core_memory",
                                                  "run_tool_loop")}
