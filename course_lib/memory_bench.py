"""`python -m course_lib bench memory`: four kinds of memory on one scripted multi-session story.

Anna talks to support in five sessions (facts planted in the first, questions in later ones) and
Boris, another user, in two. Each strategy runs the same script on the offline model:

- `none`: every session starts empty (the chat of notebooks 02–06 after a restart);
- `summary`: the window + summary of notebook 05 — it compresses within a session, not across;
- `facts`: long-term facts per user (notebook 07), extracted after each reply;
- `facts+recall`: facts plus the best FTS5 matches from the user's earlier sessions;
- `tools` (notebook 09, `bench memory` only): the model keeps its own core memory through tool
  calls (`ToolMemoryChat`, prompt 1.3.0) and searches the archive when the request lacks a fact.

It prints, side by side: cross-session questions answered, leaks of another user's facts, input
tokens per chat request (and the share added over `none`), and the extraction calls memory costs;
then notebook 08's `facts` next to notebook 09's `tools`: model calls, input tokens per turn (the
chat and memory's own calls), facts kept across sessions, and invented values stored (a number or a
name the customer never said). The first four strategies use
support prompt 1.2.0, so their differences come from memory alone.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from course_lib.chat_history import SlidingWindowHistory
from course_lib.chat_service import ChatService
from course_lib.config import load_settings
from course_lib.conversation_summary_service import ConversationSummaryService
from course_lib.llm.client import LLMClient
from course_lib.memory import LongTermMemory, MemoryExtractor, MemoryStore
from course_lib.memory.store import PREFIX_CHARS
from course_lib.prompts.support_chat import get_support_chat_prompt
from course_lib.russian import decimal
from course_lib.tokenizer import TokenCounter


@dataclass(frozen=True)
class Step:
    user: str
    session: str
    text: str
    expect: tuple[str, ...] = ()
    """Substrings the reply must contain: a question about an earlier session."""
    forbid: tuple[str, ...] = ()
    """Substrings that must not appear: another user's facts."""


ANNA_FACTS = ("Анна", "7718", "монитор", "трещин")
BORIS_FACTS = ("Борис", "5512", "клавиатур")

SCRIPT: tuple[Step, ...] = (
    Step("anna", "a1", "Здравствуйте! Меня зовут Анна."),
    Step("anna", "a1", "Заказ 7718: монитор, на подставке трещина."),
    Step("anna", "a1", "Коробка была целой, трещину увидела при распаковке."),
    Step("anna", "a1", "Отвечайте мне, пожалуйста, по электронной почте."),
    Step("boris", "b1", "Добрый день, меня зовут Борис."),
    Step("boris", "b1", "Заказ 5512: клавиатура пришла без кабеля."),
    Step("anna", "a2", "Здравствуйте, это снова я."),
    Step("anna", "a2", "Как меня зовут?", expect=("Анна",), forbid=BORIS_FACTS),
    Step("anna", "a2", "Напомните номер заказа.", expect=("7718",), forbid=BORIS_FACTS),
    Step("anna", "a3", "Добрый вечер."),
    Step("anna", "a3", "Напомните, какой у меня товар?", expect=("монитор",), forbid=BORIS_FACTS),
    Step("anna", "a3", "В чём была проблема?", expect=("трещин",), forbid=BORIS_FACTS),
    Step("boris", "b2", "Как меня зовут?", expect=("Борис",), forbid=ANNA_FACTS),
    Step("boris", "b2", "Напомните номер заказа.", expect=("5512",), forbid=ANNA_FACTS),
    Step("anna", "a4", "Подскажите, когда ждать ответа?"),
    Step("anna", "a4", "Напомните номер заказа.", expect=("7718",), forbid=BORIS_FACTS),
    Step("anna", "a5", "Как меня зовут?", expect=("Анна",), forbid=BORIS_FACTS),
)

STRATEGIES = ("none", "summary", "facts", "facts+recall")
TOOLS = "tools"


@dataclass(frozen=True)
class MemoryRun:
    strategy: str
    answered: int
    questions: int
    leaks: int
    chat_requests: int
    chat_prompt_tokens: int
    extraction_calls: int
    extraction_tokens: int
    model_calls: int = 0
    """Every request to the model: chat replies, extractions, the rounds of a tool loop."""
    invented: int = 0
    """Values kept in memory with a number or a name the customer never said (see `grounded`)."""
    extraction_prompt_tokens: int = 0

    @property
    def input_tokens_per_turn(self) -> float:
        """Everything sent to the model per customer message: the chat and what memory costs."""
        return (self.chat_prompt_tokens + self.extraction_prompt_tokens) / self.chat_requests

    @property
    def tokens_per_request(self) -> float:
        return self.chat_prompt_tokens / self.chat_requests


def run_strategy(strategy: str, folder: Path, *, budget: int = 1200, script: Sequence[Step] = SCRIPT) -> MemoryRun:
    if strategy == TOOLS:
        return run_tools(folder, budget=budget, script=script)
    settings = load_settings(llm_backend="offline", _env_file=None)
    client = LLMClient(settings)
    counter = TokenCounter()
    memory = None
    if strategy in ("facts", "facts+recall"):
        memory = LongTermMemory(
            MemoryStore(folder / f"{strategy}.sqlite3"),
            MemoryExtractor(client),
            counter,
            recall_token_budget=150 if strategy == "facts+recall" else 0,
        )
    summary = ConversationSummaryService(client) if strategy == "summary" else None
    window_budget = 400 if strategy == "summary" else budget  # small enough to compress in-session
    service = ChatService(
        client,
        SlidingWindowHistory(counter, window_budget),
        summary,
        get_support_chat_prompt("1.2.0"),
        memory=memory,
    )
    answered = questions = leaks = chat_tokens = extraction_calls = extraction_tokens = reply_calls = extraction_prompt = 0
    for step in script:
        reply = service.reply(step.session, step.text, user_id=step.user if memory else None)
        chat_tokens += reply.prompt_tokens or 0
        reply_calls += reply.llm_calls  # the chat call and any summary call
        if reply.memory_extraction and reply.memory_extraction.llm_result:
            extraction_calls += 1
            extraction_tokens += reply.memory_extraction.llm_result.total_tokens or 0
            extraction_prompt += reply.memory_extraction.llm_result.prompt_tokens or 0
        if step.expect:
            questions += 1
            answered += all(part.lower() in reply.text.lower() for part in step.expect)
        sent = " ".join(message["content"] for message in reply.request_messages) + reply.text
        leaks += sum(part in sent for part in step.forbid)
    invented = 0
    if memory is not None:
        memory.wait()
        for user in {step.user for step in script}:
            said = [step.text for step in script if step.user == user]
            invented += sum(not grounded(fact.value, said) for fact in memory.store.active_facts(user))
        memory.close()
    client.close()
    return MemoryRun(
        strategy, answered, questions, leaks, len(script), chat_tokens, extraction_calls, extraction_tokens,
        model_calls=reply_calls + extraction_calls, invented=invented, extraction_prompt_tokens=extraction_prompt,
    )  # fmt: skip


def run_tools(folder: Path, *, budget: int, script: Sequence[Step]) -> MemoryRun:
    """The same story with notebook 09's chat: one `ToolMemoryChat` per user, `/new` per session."""
    from course_lib.tool_memory.agent import ToolMemoryChat

    client = LLMClient(load_settings(llm_backend="offline", _env_file=None))
    store = MemoryStore(folder / "tools.sqlite3")
    chats: dict[str, ToolMemoryChat] = {}
    sessions: dict[str, str] = {}
    answered = questions = leaks = chat_tokens = calls = 0
    for step in script:
        chat = chats.setdefault(step.user, ToolMemoryChat(client, store, step.user, input_token_budget=budget))
        if sessions.get(step.user) not in (None, step.session):
            chat.new_session()
        sessions[step.user] = step.session
        reply = chat.reply(step.text)
        chat_tokens += reply.input_tokens
        calls += reply.model_calls
        if step.expect:
            questions += 1
            answered += all(part.lower() in reply.text.lower() for part in step.expect)
        requests = client.offline_model.requests[-reply.model_calls :] if client.offline_model else []
        sent = " ".join(str(m.get("content") or "") for request in requests for m in request["messages"]) + reply.text
        leaks += sum(part in sent for part in step.forbid)
    invented = 0
    for user in chats:
        said = [step.text for step in script if step.user == user]
        lines = [line for value in store.core_blocks(user).values() for line in value.splitlines()]
        invented += sum(not grounded(line.partition(":")[2] or line, said) for line in lines)
    store.close()
    client.close()
    return MemoryRun(TOOLS, answered, questions, leaks, len(script), chat_tokens, 0, 0, model_calls=calls, invented=invented)


def grounded(value: str, said: Sequence[str]) -> bool:
    """Whether a stored value's checkable parts — its numbers and capitalized names — were all said
    by the customer. A paraphrase («в комплекте нет кабеля» for «пришла без кабеля») is grounded; an
    order number or a name nobody said is invented."""
    heard = " ".join(said)
    digits = set(re.findall(r"\d+", heard))
    numbers_ok = all(number in digits for number in re.findall(r"\d+", value))
    names_ok = all(name[:PREFIX_CHARS] in heard for name in re.findall(r"\b[А-ЯЁA-Z][а-яёa-z]{2,}", value))
    return numbers_ok and names_ok


def run_all(strategies: Sequence[str] = STRATEGIES) -> list[MemoryRun]:
    with tempfile.TemporaryDirectory(prefix="course-memory-bench-") as folder:
        return [run_strategy(strategy, Path(folder)) for strategy in strategies]


def format_runs(runs: Sequence[MemoryRun]) -> str:
    baseline = runs[0].tokens_per_request
    header = ("память", "ответов на вопросы о прошлых сессиях", "утечек", "токенов на запрос", "прибавка",
              "вызовов извлечения", "их токены")
    rows = [header]
    for run in runs:
        rows.append((
            run.strategy,
            f"{run.answered}/{run.questions}",
            str(run.leaks),
            decimal(run.tokens_per_request, 1),
            f"{(run.tokens_per_request / baseline - 1) * 100:+.1f} %".replace(".", ","),
            str(run.extraction_calls),
            str(run.extraction_tokens),
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) for row in rows)


def format_side_by_side(runs: Sequence[MemoryRun]) -> str:
    """Notebook 08's memory and notebook 09's, per the same story (see the module's docstring)."""
    header = ("память", "вызовов модели", "входных токенов на ход", "ответов о прошлых сессиях",
              "выдуманных значений в памяти", "утечек")  # fmt: skip
    rows = [header] + [
        (run.strategy, str(run.model_calls), decimal(run.input_tokens_per_turn, 1), f"{run.answered}/{run.questions}",
         str(run.invented), str(run.leaks))
        for run in runs
    ]  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) for row in rows)


def main() -> int:
    every = run_all((*STRATEGIES, TOOLS))
    runs = every[: len(STRATEGIES)]
    print(format_runs(runs))
    print("\nНоутбук 08 (приложение извлекает факты) и ноутбук 09 (память ведёт модель):")
    print(format_side_by_side([run for run in every if run.strategy in ("facts", TOOLS)]))
    facts = next(run for run in runs if run.strategy == "facts")
    added = (facts.tokens_per_request / runs[0].tokens_per_request - 1) * 100
    print(
        f"\nЦель: факты отвечают на все вопросы о прошлых сессиях ({facts.answered}/{facts.questions}) "
        f"и добавляют не больше 15 % к токенам запроса ({added:+.1f} %)."
    )
    return 0 if facts.answered == facts.questions and added <= 15 and facts.leaks == 0 else 1
