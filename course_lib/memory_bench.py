"""`python -m course_lib bench memory`: four kinds of memory on one scripted multi-session story.

Anna talks to support in five sessions (facts planted in the first, questions in later ones) and
Boris, another user, in two. Each strategy runs the same script on the offline model:

- `none`: every session starts empty (the chat of notebooks 02–06 after a restart);
- `summary`: the window + summary of notebook 05 — it compresses within a session, not across;
- `facts`: long-term facts per user (notebook 07), extracted after each reply;
- `facts+recall`: facts plus the best FTS5 matches from the user's earlier sessions.

It prints, side by side: cross-session questions answered, leaks of another user's facts, input
tokens per chat request (and the share added over `none`), and the extraction calls memory costs.
All strategies use support prompt 1.2.0, so the differences come from memory alone.
"""

from __future__ import annotations

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
from course_lib.prompts.support_chat import get_support_chat_prompt
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

    @property
    def tokens_per_request(self) -> float:
        return self.chat_prompt_tokens / self.chat_requests


def run_strategy(strategy: str, folder: Path, *, budget: int = 1200, script: Sequence[Step] = SCRIPT) -> MemoryRun:
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
    answered = questions = leaks = chat_tokens = extraction_calls = extraction_tokens = 0
    for step in script:
        reply = service.reply(step.session, step.text, user_id=step.user if memory else None)
        chat_tokens += reply.prompt_tokens or 0
        if reply.memory_extraction and reply.memory_extraction.llm_result:
            extraction_calls += 1
            extraction_tokens += reply.memory_extraction.llm_result.total_tokens or 0
        if step.expect:
            questions += 1
            answered += all(part.lower() in reply.text.lower() for part in step.expect)
        sent = " ".join(message["content"] for message in reply.request_messages) + reply.text
        leaks += sum(part in sent for part in step.forbid)
    if memory is not None:
        memory.close()
    client.close()
    return MemoryRun(
        strategy, answered, questions, leaks, len(script), chat_tokens, extraction_calls, extraction_tokens
    )


def run_all() -> list[MemoryRun]:
    with tempfile.TemporaryDirectory(prefix="course-memory-bench-") as folder:
        return [run_strategy(strategy, Path(folder)) for strategy in STRATEGIES]


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
            f"{run.tokens_per_request:.1f}",
            f"{(run.tokens_per_request / baseline - 1) * 100:+.1f} %",
            str(run.extraction_calls),
            str(run.extraction_tokens),
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) for row in rows)


def main() -> int:
    runs = run_all()
    print(format_runs(runs))
    facts = next(run for run in runs if run.strategy == "facts")
    added = (facts.tokens_per_request / runs[0].tokens_per_request - 1) * 100
    print(
        f"\nЦель: факты отвечают на все вопросы о прошлых сессиях ({facts.answered}/{facts.questions}) "
        f"и добавляют не больше 15 % к токенам запроса ({added:+.1f} %)."
    )
    return 0 if facts.answered == facts.questions and added <= 15 and facts.leaks == 0 else 1
