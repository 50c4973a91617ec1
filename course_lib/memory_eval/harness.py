"""Running the benchmark: every strategy replays every customer, then answers their questions.

For each (strategy, question) the record holds what the model was sent and what it answered, and
three separate judgements:

- **evidence recall** — did the request contain the values the answer needs (the labelled turns'
  values, in any written form)? It does not depend on any model: it measures memory alone;
- **answer accuracy** — did the reply give every expected value and no rejected one (or, for a
  question nobody can answer, did it decline)? By `score_answer`, normalized exact match;
- **leak** — for a forgotten value: is it still anywhere in the request?

Cost is counted twice: the question's own calls (input and output tokens, model calls) and the
upkeep — what memory spent during the replay (summaries, fact extraction, tool rounds).
The cost of a run grows linearly with the customers replayed and the questions asked.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from course_lib.memory_eval.dataset import Customer, Dataset, Question
from course_lib.memory_eval.scoring import ABSTENTION_MARKERS, evidence_present, normalize_answer, score_answer
from course_lib.memory_eval.strategies import BenchStrategy, Upkeep, build
from course_lib.pricing import Price
from course_lib.tokenizer import TokenCounter

ScoreFunction = Callable[[str, list, list, bool], bool]


@dataclass(frozen=True)
class QuestionRecord:
    strategy: str
    question_id: str
    customer: str
    category: str
    question: str
    reply: str
    correct: bool
    abstained: bool
    evidence_total: int
    evidence_found: int
    leaked: bool
    input_tokens: int
    output_tokens: int
    calls: int
    error: str | None = None

    @property
    def evidence_recall(self) -> float | None:
        return self.evidence_found / self.evidence_total if self.evidence_total else None

    def as_json(self) -> dict:
        return {
            "strategy": self.strategy, "question": self.question_id, "category": self.category,
            "reply": self.reply, "correct": self.correct,
            "abstained": self.abstained, "evidence_total": self.evidence_total,
            "evidence_found": self.evidence_found, "leaked": self.leaked, "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens, "calls": self.calls, "error": self.error,
        }  # fmt: skip


@dataclass
class StrategyResult:
    name: str
    title: str
    records: list[QuestionRecord] = field(default_factory=list)
    upkeep_calls: int = 0
    upkeep_input_tokens: int = 0
    upkeep_output_tokens: int = 0
    replayed_turns: int = 0
    refused_turns: int = 0
    """Replayed turns the strategy could not take (a letter longer than the whole budget): not kept."""
    seconds: float = 0.0

    def add_upkeep(self, upkeep: Upkeep) -> None:
        self.upkeep_calls += upkeep.calls
        self.upkeep_input_tokens += upkeep.input_tokens
        self.upkeep_output_tokens += upkeep.output_tokens

    def of(self, category: str | None = None) -> list[QuestionRecord]:
        return [r for r in self.records if category is None or r.category == category]

    def accuracy(self, category: str | None = None) -> float | None:
        records = self.of(category)
        return sum(r.correct for r in records) / len(records) if records else None

    def evidence_recall(self, category: str | None = None) -> float | None:
        """Share of evidence values found in the requests, over every question that has evidence."""
        records = [r for r in self.of(category) if r.evidence_total]
        total = sum(r.evidence_total for r in records)
        return sum(r.evidence_found for r in records) / total if total else None

    def abstention_accuracy(self) -> float | None:
        """Share of questions nobody can answer (never said, or forgotten) that were declined."""
        records = [r for r in self.records if r.category in ("abstention", "forgotten")]
        return sum(r.correct for r in records) / len(records) if records else None

    @property
    def questions(self) -> int:
        return len(self.records)

    @property
    def leaks(self) -> int:
        return sum(r.leaked for r in self.records)

    @property
    def errors(self) -> int:
        return sum(r.error is not None for r in self.records)

    @property
    def input_tokens_per_question(self) -> float:
        return sum(r.input_tokens for r in self.records) / max(1, self.questions)

    @property
    def total_input_per_question(self) -> float:
        """Input tokens per question with memory's own share: the question's calls plus the replay's
        upkeep (summaries, fact extraction, tool rounds) spread over the questions asked."""
        return (sum(r.input_tokens for r in self.records) + self.upkeep_input_tokens) / max(1, self.questions)

    @property
    def calls(self) -> int:
        """Every model call: the questions' and memory's upkeep."""
        return sum(r.calls for r in self.records) + self.upkeep_calls

    def cost_per_question(self, price: Price) -> float:
        """USD per question: the question's calls plus its share of the replay's upkeep."""
        asked = sum(price.cost(r.input_tokens, r.output_tokens) for r in self.records)
        upkeep = price.cost(self.upkeep_input_tokens, self.upkeep_output_tokens)
        return (asked + upkeep) / max(1, self.questions)

    def summary(self, categories: Sequence[str], price: Price) -> dict:
        return {
            "strategy": self.name, "title": self.title, "questions": self.questions,
            "accuracy": self.accuracy(), "evidence_recall": self.evidence_recall(),
            "abstention_accuracy": self.abstention_accuracy(), "leaks": self.leaks, "errors": self.errors,
            "by_category": {c: {"accuracy": self.accuracy(c), "evidence_recall": self.evidence_recall(c),
                                "questions": len(self.of(c))} for c in categories},
            "input_tokens_per_question": self.input_tokens_per_question,
            "total_input_per_question": self.total_input_per_question,
            "upkeep_input_tokens": self.upkeep_input_tokens, "upkeep_output_tokens": self.upkeep_output_tokens,
            "upkeep_calls": self.upkeep_calls,
            "calls": self.calls, "cost_per_question_usd": self.cost_per_question(price),
            "replayed_turns": self.replayed_turns, "refused_turns": self.refused_turns, "seconds": self.seconds,
        }  # fmt: skip


def is_abstention(reply: str) -> bool:
    """Whether a reply declines («не вижу…», «не знаю…»): the course's rule, for the records."""
    text = normalize_answer(reply)
    return any(marker in text for marker in ABSTENTION_MARKERS)


def request_text(request: Iterable[dict]) -> str:
    """Everything a request carries (instruction, messages, tool calls), normalized for searching."""
    parts = []
    for message in request:
        parts.append(str(message.get("content") or ""))
        for call in message.get("tool_calls") or ():
            parts.append(str(call.get("function", {}).get("arguments", "")))
    return normalize_answer("\n".join(parts))


def judge(strategy: str, question: Question, answer, score: ScoreFunction) -> QuestionRecord:
    sent = request_text(answer.request)
    found = sum(evidence_present(item.forms, sent) for item in question.evidence)
    leaked = question.category == "forgotten" and any(evidence_present(g, sent) for g in question.rejected)
    try:
        correct = bool(score(answer.text, [list(g) for g in question.expected], [list(g) for g in question.rejected],
                             question.abstain)) if answer.error is None else False  # fmt: skip
    except Exception as error:  # noqa: BLE001 - a student's score_answer that fails: the answer is not counted
        correct, answer = False, replace(answer, error=f"score_answer: {error}")
    return QuestionRecord(
        strategy, question.id, question.customer, question.category, question.text, answer.text, correct,
        is_abstention(answer.text), len(question.evidence), found, leaked, answer.input_tokens,
        answer.output_tokens, answer.calls, answer.error,
    )  # fmt: skip


def replay(strategy: BenchStrategy, customer: Customer, result: StrategyResult) -> None:
    """Feed the customer's sessions to the strategy: new sessions, forgets, recorded turns."""
    for index, session in enumerate(customer.sessions):
        if index:
            strategy.new_session()
        for turn in session.turns:
            result.replayed_turns += 1
            try:
                result.add_upkeep(strategy.ingest(turn.customer, turn.support))
            except Exception:  # noqa: BLE001 - as in the chat: the turn fails and is not kept; the run goes on
                result.refused_turns += 1
            if turn.action == "forget":
                strategy.forget()
    strategy.new_session()  # the questions come on another day


@dataclass
class BenchmarkRun:
    dataset: Dataset
    budget: int
    model: str
    results: list[StrategyResult]
    questions: tuple[Question, ...]
    seconds: float

    def result(self, name: str) -> StrategyResult:
        return next(r for r in self.results if r.name == name)


def select_questions(dataset: Dataset, limit: int | None) -> tuple[tuple[Customer, tuple[Question, ...]], ...]:
    """The first `limit` questions in the dataset's order, grouped by customer."""
    chosen = []
    left = limit if limit is not None else len(dataset.questions)
    for customer in dataset.customers:
        if left <= 0:
            break
        questions = customer.questions[:left]
        chosen.append((customer, questions))
        left -= len(questions)
    return tuple(chosen)


def run_benchmark(
    dataset: Dataset,
    names: Sequence[str],
    make_client: Callable[[str], object],
    *,
    budget: int = 1000,
    summary_chars: int | None = None,
    limit: int | None = None,
    your_code: bool = False,
    score: ScoreFunction = score_answer,
    model: str = "offline",
    on_question: Callable[[], None] | None = None,
) -> BenchmarkRun:
    """Run the named strategies. `make_client(name)` gives the model client a strategy talks to."""
    counter = TokenCounter()
    started = time.perf_counter()
    chosen = select_questions(dataset, limit)
    results = []
    for name in names:
        client = make_client(name)
        result = None
        began = time.perf_counter()
        for customer, questions in chosen:
            strategy = build(name, client, budget=budget, user_id=customer.id, counter=counter,
                             summary_chars=summary_chars, your_code=your_code)  # fmt: skip
            if result is None:
                result = StrategyResult(name, strategy.title)
            try:
                replay(strategy, customer, result)
                for question in questions:
                    result.records.append(judge(name, question, strategy.ask(question.text), score))
                    if on_question is not None:
                        on_question()
            finally:
                strategy.close()
        if result is not None:
            result.seconds = time.perf_counter() - began
            results.append(result)
        close = getattr(client, "close", None)
        if close is not None:
            close()
    asked = tuple(q for _, questions in chosen for q in questions)
    return BenchmarkRun(dataset, budget, model, results, asked, time.perf_counter() - started)
